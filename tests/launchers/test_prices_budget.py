import json

import pytest
from click.testing import CliRunner

from launchers._budget import Planned, estimate
from launchers._errors import InputError
from launchers._prices import call_cost, format_usd, load_prices, model_price
from fundbook.cli.launch import cli

PRICE = {"input_micro_usd_per_mtok": 130000, "output_micro_usd_per_mtok": 400000}


def test_call_cost_rounds_up_never_down():
    assert call_cost(PRICE, 0, 0) == 0
    assert call_cost(PRICE, 1, 0) == 1  # 0.13 micro-USD is charged as 1, not rounded away
    assert call_cost(PRICE, 6000, 2000) == 1580
    assert call_cost(PRICE, 1_000_000, 1_000_000) == 530000


def test_format_usd_is_exact():
    assert format_usd(1580) == "$0.001580"
    assert format_usd(12_345_678_901) == "$12,345.678901"


def test_shipped_price_table_loads_and_mock_is_free():
    table = load_prices()
    assert model_price(table, "mock") == {
        "input_micro_usd_per_mtok": 0,
        "output_micro_usd_per_mtok": 0,
        "cached_input_micro_usd_per_mtok": 0,
    }
    assert model_price(table, "Qwen/Qwen3-8B")["input_micro_usd_per_mtok"] > 0


def _worst_day(tokens_in, max_tokens):
    """The worker's 8 calls on one checkpoint, each prompt grown by an answer at max_tokens and a tool result at
    its 12,000-character limit (+128 for its prefix and the cut's marker, +2 x 16 template tokens): (micro-USD,
    tokens)."""
    growth = max_tokens + 12_128 + 32
    calls = [(tokens_in + k * growth, max_tokens) for k in range(8)]
    return sum(call_cost(PRICE, i, o) for i, o in calls), sum(i + o for i, o in calls)


def test_estimate_counts_calls_and_worst_case(prices_file):
    est = estimate(
        load_prices(prices_file),
        "test-model",
        Planned(tokens_in=6000, max_tokens=2000, max_calls=None, checkpoints=20, worker_seconds=1200, sandbox="modal"),
        attempts=2,
        calls_per_checkpoint=3,
        tokens_out=500,
    )
    assert est["calls"] == 120 and est["worst_case_calls"] == 2 * 20 * 8  # the worker may make 8 calls a checkpoint
    assert est["tokens_in"] == 720_000 and est["tokens_out"] == 60_000
    assert est["sandbox_micro_usd"] == 40 * (1200 + 60) * 2  # the time limit plus Modal's setup grace, apart
    assert est["expected_micro_usd"] == 120 * 980
    usd, tokens = _worst_day(6000, 2000)
    assert (usd, tokens) == (64_185, 460_480)  # 1580 + 3421 + 5262 + 7103 + 8944 + 10784 + 12625 + 14466
    assert est["worst_case_micro_usd"] == 2 * 20 * usd and est["worst_case_tokens"] == 2 * 20 * tokens


def test_the_worst_case_is_the_ledgers_bound(run_attempt):
    """A worker that uses every call it may make on every checkpoint: the ledger reserves no more than `budget`'s
    worst case with the same opening prompt, and the controller refuses a ninth call."""
    from launchers._budget import step_growth
    from launchers._controller import Limits
    from launchers.worker import protocol

    from .conftest import PricedMock

    class Greedy(PricedMock):
        def answer(self, messages, request_hash):
            return '{"tool": "headroom", "arguments": {}}'  # a tool every time: all 8 calls, never a batch

    record, out = run_attempt(sampler=Greedy(), horizon=6, limits=Limits(max_tokens_per_call=64))
    c = record["content"]
    reserves = [e for e in c["ledger"]["entries"] if e["kind"] == "reserve" and e["account"] == "inference"]
    assert len(reserves) == 6 * protocol.MAX_CALLS_PER_CHECKPOINT and c["termination"]["status"] == "completed"
    opening = min(e["tokens_in"] for e in reserves)
    for e in reserves:
        assert e["tokens_in"] <= opening + (protocol.MAX_CALLS_PER_CHECKPOINT - 1) * step_growth(64)


@pytest.mark.parametrize(
    "body, message",
    [
        ("{", "not valid JSON"),
        ('{"schema": "other"}', "schema: expected"),
        (
            '{"schema": "fundbook.prices/1", "models": {"m": {"input_micro_usd_per_mtok": 1.5, '
            '"output_micro_usd_per_mtok": 1}}}',
            "the number 1.5 is not an integer",
        ),
        (
            '{"schema": "fundbook.prices/1", "models": {"m": {"input_micro_usd_per_mtok": -1, '
            '"output_micro_usd_per_mtok": 1}}}',
            "models.m.input_micro_usd_per_mtok: expected a non-negative integer",
        ),
    ],
)
def test_bad_price_table_is_one_line_naming_file_and_field(tmp_path, body, message):
    path = tmp_path / "p.json"
    path.write_text(body)
    with pytest.raises(InputError) as err:
        load_prices(str(path))
    assert str(path) in err.value.format_message() and message in err.value.format_message()


def test_unknown_model_is_refused(prices_file):
    with pytest.raises(InputError, match="no price for this model"):
        estimate(
            load_prices(prices_file),
            "gpt-x",
            Planned(tokens_in=10, max_tokens=100, max_calls=None, checkpoints=20),
            calls_per_checkpoint=3,
            tokens_out=10,
        )


def test_budget_cli_text_and_json(prices_file):
    runner = CliRunner()
    result = runner.invoke(
        cli,
        [
            "budget",
            "--model",
            "test-model",
            "--prices",
            prices_file,
            "--tokens-in",
            "6000",
            "--tokens-out",
            "500",
            "--max-tokens",
            "2000",
            "--sandbox",
            "local",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "calls expected      60" in result.output and "$0.058800" in result.output
    assert "worst case calls    160" in result.output
    result = runner.invoke(
        cli,
        [
            "budget",
            "--model",
            "test-model",
            "--prices",
            prices_file,
            "--tokens-in",
            "6000",
            "--tokens-out",
            "500",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    est = json.loads(result.output)
    assert est["worst_case_micro_usd"] == 20 * _worst_day(6000, 2048)[0] and est["sandbox"] == "modal"
    result = runner.invoke(
        cli,
        [
            "budget",
            "--model",
            "test-model",
            "--prices",
            prices_file,
            "--tokens-in",
            "6000",
            "--tokens-out",
            "500",
            "--max-calls",
            "10",
            "--json",
        ],
    )
    assert json.loads(result.output)["worst_case_calls"] == 10  # the attempt's own call limit bounds it too


def test_an_unpriced_sandbox_is_refused(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps(
            {
                "schema": "fundbook.prices/1",
                "models": {"m": {"input_micro_usd_per_mtok": 1, "output_micro_usd_per_mtok": 1}},
            }
        )
    )
    with pytest.raises(InputError, match="sandboxes.modal: no price"):
        estimate(
            load_prices(str(path)),
            "m",
            Planned(tokens_in=10, max_tokens=100, max_calls=None, checkpoints=20, sandbox="modal"),
            calls_per_checkpoint=3,
            tokens_out=10,
        )


def test_prompt_cache_hits_are_charged_at_the_cached_rate():
    price = dict(PRICE, cached_input_micro_usd_per_mtok=13000)
    assert call_cost(price, 6000, 500, cached_in=4000) == -(-(2000 * 130000 + 4000 * 13000 + 500 * 400000) // 10**6)
    assert call_cost(PRICE, 6000, 500, cached_in=4000) == call_cost(PRICE, 6000, 500)  # no cached rate: full price


def test_budget_defaults_the_worker_time_to_executes(prices_file):
    """Held back: `budget` priced sandbox compute at 0 unless --worker-seconds was given, while `execute` runs
    1,200 s by default. Now both default to 1,200 s."""
    result = CliRunner().invoke(
        cli,
        [
            "budget",
            "--model",
            "test-model",
            "--prices",
            prices_file,
            "--tokens-in",
            "6000",
            "--tokens-out",
            "500",
            "--json",
        ],
    )
    est = json.loads(result.output)
    assert est["worker_seconds"] == 1200 and est["sandbox_micro_usd"] == 40 * (1200 + 60)


@pytest.mark.parametrize(
    "option, value",
    [
        ("--checkpoints", "9007199254740991"),
        ("--checkpoints", "10000000"),
        ("--attempts", "9007199254740991"),
        ("--max-calls", "9007199254740991"),
        ("--tokens-in", "9007199254740991"),
        ("--max-tokens", "9007199254740991"),
    ],
)
def test_budget_options_are_bounded(prices_file, option, value):
    """Held back: `budget --checkpoints 9007199254740991` died of MemoryError (mid-size values allocated
    gigabytes). Every option has a bound: a usage error in one line, exit 64."""
    result = CliRunner().invoke(
        cli,
        [
            "budget",
            "--model",
            "test-model",
            "--prices",
            prices_file,
            "--tokens-in",
            "6000",
            "--tokens-out",
            "500",
            option,
            value,
        ],
    )
    assert result.exit_code == 64 and option in result.output and result.output.count("\n") == 1, result.output


def test_the_worst_case_costs_the_same_to_compute_for_any_horizon(prices_file):
    """No list as long as the attempt: a million checkpoints is the same sum, computed at once."""
    table = load_prices(prices_file)
    one = estimate(
        table,
        "test-model",
        Planned(tokens_in=6000, max_tokens=2000, max_calls=None, checkpoints=1),
        calls_per_checkpoint=3,
        tokens_out=500,
    )
    many = estimate(
        table,
        "test-model",
        Planned(tokens_in=6000, max_tokens=2000, max_calls=None, checkpoints=1_000_000),
        calls_per_checkpoint=3,
        tokens_out=500,
    )
    assert many["worst_case_micro_usd"] == 1_000_000 * one["worst_case_micro_usd"]
    capped = estimate(
        table,
        "test-model",
        Planned(tokens_in=6000, max_tokens=2000, max_calls=3, checkpoints=1_000_000),
        calls_per_checkpoint=3,
        tokens_out=500,
    )
    assert capped["worst_case_micro_usd"] == 3 * 14466  # three calls at the dearest size (one a checkpoint)


def test_budget_usage_error_exits_64(prices_file):
    result = CliRunner().invoke(cli, ["budget", "--model", "test-model"])
    assert result.exit_code == 64
    assert "error: --tokens-in and --tokens-out are required" in result.output
