import json

import pytest
from click.testing import CliRunner

from launchers._budget import estimate
from launchers._errors import InputError
from launchers._prices import call_cost, format_usd, load_prices, model_price
from launchers.cli import cli

PRICE = {"input_micro_usd_per_mtok": 130000, "output_micro_usd_per_mtok": 400000}


def test_call_cost_rounds_up_never_down():
    assert call_cost(PRICE, 0, 0) == 0
    assert call_cost(PRICE, 1, 0) == 1            # 0.13 micro-USD is charged as 1, not rounded away
    assert call_cost(PRICE, 6000, 2000) == 1580
    assert call_cost(PRICE, 1_000_000, 1_000_000) == 530000


def test_format_usd_is_exact():
    assert format_usd(1580) == "$0.001580"
    assert format_usd(12_345_678_901) == "$12,345.678901"


def test_shipped_price_table_loads_and_mock_is_free():
    table = load_prices()
    assert model_price(table, "mock") == {"input_micro_usd_per_mtok": 0, "output_micro_usd_per_mtok": 0}
    assert model_price(table, "Qwen/Qwen3-8B")["input_micro_usd_per_mtok"] > 0


def test_estimate_counts_calls_and_worst_case(prices_file):
    est = estimate(load_prices(prices_file), "test-model", attempts=2, checkpoints=20, calls_per_checkpoint=3,
                   tokens_in=6000, tokens_out=500, max_tokens=2000, worker_seconds=1200, sandbox="modal")
    assert est["calls"] == 120
    assert est["tokens_in"] == 720_000 and est["tokens_out"] == 60_000
    assert est["sandbox_micro_usd"] == 40 * 1200 * 2
    assert est["expected_micro_usd"] == 120 * 980 + 96_000
    assert est["worst_case_micro_usd"] == 120 * 1580 + 96_000
    assert est["worst_case_tokens"] == 120 * 8000


@pytest.mark.parametrize("body, message", [
    ("{", "not valid JSON"),
    ('{"schema": "other"}', "schema: expected"),
    ('{"schema": "fundbook.prices/1", "models": {"m": {"input_micro_usd_per_mtok": 1.5, '
     '"output_micro_usd_per_mtok": 1}}}', "models.m.input_micro_usd_per_mtok: expected a non-negative integer"),
])
def test_bad_price_table_is_one_line_naming_file_and_field(tmp_path, body, message):
    path = tmp_path / "p.json"
    path.write_text(body)
    with pytest.raises(InputError) as err:
        load_prices(str(path))
    assert str(path) in err.value.format_message() and message in err.value.format_message()


def test_unknown_model_is_refused(prices_file):
    with pytest.raises(InputError, match="no price for this model"):
        estimate(load_prices(prices_file), "gpt-x", 1, 20, 3, 10, 10, 100)


def test_budget_cli_text_and_json(prices_file):
    runner = CliRunner()
    result = runner.invoke(cli, ["budget", "--model", "test-model", "--prices", prices_file, "--tokens-in", "6000",
                                 "--tokens-out", "500", "--max-tokens", "2000", "--sandbox", "local"])
    assert result.exit_code == 0, result.output
    assert "calls               60" in result.output and "$0.058800" in result.output
    result = runner.invoke(cli, ["budget", "--model", "test-model", "--prices", prices_file, "--tokens-in", "6000",
                                 "--tokens-out", "500", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["worst_case_micro_usd"] == 60 * call_cost(PRICE, 6000, 2048)


def test_budget_usage_error_exits_64(prices_file):
    result = CliRunner().invoke(cli, ["budget", "--model", "test-model"])
    assert result.exit_code == 64
    assert "error: Missing option" in result.output
