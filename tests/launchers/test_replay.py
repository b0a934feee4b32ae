"""Zero-cost replay of a real recording: a cache recorded with the tinker sampler replays with `--sampler cache`,
no key and no provider, at 0 USD with every call a hit and the same receipts head; a miss is an error, never debt."""

import json
import os
import sqlite3

import pytest
from click.testing import CliRunner

from launchers import _sampler_tinker
from tests.launchers.specs import execute_kw as execute
from launchers._claims import Grant, authorise
from launchers._controller import Limits
from launchers._errors import CacheMiss
from launchers._prices import load_prices
from launchers._record import read_record
from launchers._sampler_cache import CacheSampler
from launchers._sampler_tinker import TinkerSampler
from launchers._sandbox_local import LocalSandbox
from fundbook.cli.launch import cli

from .conftest import CREDENTIALS, plan_for, schema_valid
from .fakes import FakeRetryConfig, FakeTinker, mock_answer


@pytest.fixture
def recording(tmp_path, state, prices_file):
    """An attempt recorded with the tinker sampler (the network faked) through a write-through decision cache."""
    claim, out, db = str(tmp_path / "c.json"), str(tmp_path / "recorded"), str(tmp_path / "cache.sqlite")
    authorise(
        claim,
        "FUND_01",
        "public-practice",
        "test-model",
        10_000_000,
        20_000_000,
        1,
        grant=Grant(state=state, cap_sandbox_micro_usd=10**6, plan=plan_for()),
    )
    fake = FakeTinker(answer=mock_answer)
    record = execute(
        claim_path=claim,
        out=out,
        family="FUND_01",
        seed=1,
        split="public-practice",
        model="test-model",
        sampler_name="tinker",
        sandbox_name="local",
        make_sampler=lambda m: CacheSampler(
            db, m, inner=TinkerSampler(m, 30, temperature_milli=700, seed=5, sdk=(fake, FakeRetryConfig))
        ),
        make_sandbox=LocalSandbox,
        prices=load_prices(prices_file),
        limits=Limits(),
        horizon=6,
        state=state,
        sampling={"temperature_milli": 700, "seed": 5},
        environ=dict(CREDENTIALS),
    )
    assert record["content"]["termination"]["status"] == "completed" and record["content"]["cost"]["micro_usd"] > 0
    return {"out": out, "db": db, "record": record, "prices": prices_file}


@pytest.fixture
def no_provider(monkeypatch):
    monkeypatch.delenv("TINKER_API_KEY", raising=False)

    def refuse():
        raise AssertionError("a replay reached for the provider")

    monkeypatch.setattr(_sampler_tinker, "_default_sdk", refuse)


def _replay(tmp_path, recording, name="replay", extra=()):
    runner = CliRunner()
    claim = str(tmp_path / f"{name}.json")
    assert (
        runner.invoke(
            cli,
            [
                "authorise",
                "--family",
                "FUND_01",
                "--model",
                "test-model",
                "--cap-micro-usd",
                "0",
                "--cap-tokens",
                "1",
                "--out",
                claim,
                "--sandbox",
                "local",
                "--prices",
                recording["prices"],
                "--accept-partial-budget",
            ],
        ).exit_code
        == 0
    )  # a replay costs 0
    out = str(tmp_path / name)
    result = runner.invoke(
        cli,
        [
            "execute",
            "--claim",
            claim,
            "--out",
            out,
            "--sampler",
            "cache",
            "--cache",
            recording["db"],
            "--replay-of",
            recording["out"],
            *extra,
        ],
    )
    return result, out


def test_a_tinker_recording_replays_at_zero_cost_with_the_same_head(tmp_path, recording, no_provider):
    result, out = _replay(tmp_path, recording)
    assert result.exit_code == 0, result.output
    first, replay = recording["record"]["content"], read_record(os.path.join(out, "record.json"))["content"]
    schema_valid(out)
    assert replay["label"] == "cached replay" and replay["model"] == {"id": "test-model", "provider": "cache"}
    assert replay["cost"]["calls"] == first["cost"]["calls"] == replay["cost"]["cache_hits"] > 0  # 100 % hits
    assert replay["cost"]["micro_usd"] == 0 and replay["ledger"]["totals"]["committed_micro_usd"] == 0
    assert replay["receipts_head"] == first["receipts_head"] and replay["replay_of"]["head_matches"] is True
    assert replay["replay_of"]["attempt_id"] == first["attempt_id"] and replay["salt"] == first["salt"]
    assert replay["proposals"] == first["proposals"] and replay["result"] == first["result"]
    assert replay["sampling"] == first["sampling"] == {"temperature_milli": 700, "seed": 5, "max_tokens_per_call": 2048}
    with open(os.path.join(out, "receipts.json")) as a, open(os.path.join(recording["out"], "receipts.json")) as b:
        assert a.read() == b.read()
    assert "receipts head matches the recorded one" in result.output


def test_a_miss_in_a_cache_only_replay_is_an_error_never_debt(tmp_path, recording, no_provider):
    conn = sqlite3.connect(recording["db"])
    with conn:
        keys = [row[0] for row in conn.execute("SELECT cache_key FROM answers ORDER BY rowid")]
        conn.execute("DELETE FROM answers WHERE cache_key = ?", (keys[len(keys) // 2],))
    conn.close()
    result, out = _replay(tmp_path, recording)
    assert result.exit_code == 1
    c = read_record(os.path.join(out, "record.json"))["content"]
    assert c["termination"]["status"] == "infrastructure_interruption" and c["termination"]["limit"] == "cache_miss"
    assert "no cached answer" in c["termination"]["reason"]
    assert (
        c["cost"]["unresolved_micro_usd"] == 0 and c["cost"]["micro_usd"] == 0 and c["cost"]["unresolved_calls"] == []
    )
    assert not any(e["kind"] == "unresolved" for e in c["ledger"]["entries"])
    assert c["cost"]["calls"] == c["cost"]["cache_hits"]  # the miss was never reserved as a call


def test_the_recorded_settings_are_checked_on_every_hit(recording):
    from launchers.worker import protocol
    from launchers.worker.agent import SYSTEM
    import engine

    with open(os.path.join(recording["out"], "record.json")) as fh:
        salt = json.load(fh)["content"]["salt"]  # the recording's world salt: the packets it showed
    packet = engine.Run(engine.with_horizon(engine.generate("FUND_01", 1), 6), salt).packet()
    messages = [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                f"{protocol.CHECKPOINT_MARK} day 1 of 6.\nYour last outcomes: []\nYour notes:\n(none)\n{protocol.PACKET_OPEN}\n"
                f"{json.dumps(protocol.prompt_packet(packet), sort_keys=True)}\n{protocol.FENCE_CLOSE}"
            ),
        },
    ]
    adopting = CacheSampler(recording["db"], "test-model")
    assert adopting.prepare(messages, 2048).cached and adopting.sampling == {"temperature_milli": 700, "seed": 5}
    other = CacheSampler(recording["db"], "test-model", sampling={"temperature_milli": 0, "seed": 5})
    with pytest.raises(CacheMiss, match="was recorded with sampling"):
        other.prepare(messages, 2048)


def test_a_replay_needs_a_cache_and_makes_no_provider_call(tmp_path, recording):
    result = CliRunner().invoke(
        cli,
        [
            "execute",
            "--claim",
            "c.json",
            "--out",
            str(tmp_path / "x"),
            "--sampler",
            "tinker",
            "--replay-of",
            recording["out"],
        ],
    )
    assert result.exit_code == 64 and "--replay-of needs --sampler cache" in result.output
