"""One ledger across claims with the project caps; sandbox compute apart from inference; the attempts and their
calls in Parquet; the ledgers' invariants under any sequence of moves."""

import json
import os

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from launchers._errors import BudgetHalt, ClaimRefused
from launchers._ledger import Ledger, load_ledger
from launchers._project import ProjectLedger
from fundbook.cli.launch import cli

from .conftest import REPO


def load(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


PRICE = {"input_micro_usd_per_mtok": 130000, "output_micro_usd_per_mtok": 400000}


def _doc(claim_id, cap=1000, sandbox=100):
    return {
        "claim": {
            "id": claim_id,
            "scope": {"family": "FUND_01", "split": "public-practice", "model": "m"},
            "cap_micro_usd": cap,
            "cap_sandbox_micro_usd": sandbox,
        },
        "sha256": "a" * 64,
        "consumption": {"nonce": claim_id, "consumed_at": "2026-11-29T09:00:00Z"},
    }


def _record(claim_id, charged, unresolved, sandbox):
    totals = {
        "charged_micro_usd": charged,
        "unresolved_micro_usd": unresolved,
        "sandbox_charged_micro_usd": sandbox,
        "sandbox_unresolved_micro_usd": 0,
    }
    return {
        "content": {
            "claim": {"id": claim_id},
            "attempt_id": f"a-{claim_id}",
            "termination": {"status": "completed"},
            "ledger": {"totals": totals},
        },
        "content_sha256": "b" * 64,
    }


def test_the_project_caps_hold_across_claims(tmp_path):
    caps = {"project_micro_usd": 2500, "project_sandbox_micro_usd": 1000}
    book = ProjectLedger(str(tmp_path))
    for claim_id in ("c1", "c2", "c3"):
        book.register(_doc(claim_id))  # as `authorise` does
    book.open_claim(_doc("c1"), "a-c1", caps)
    book.open_claim(_doc("c2"), "a-c2", caps)  # 2000 reserved of 2500
    with pytest.raises(BudgetHalt, match="would pass the project's inference cap") as err:
        book.check_claim(_doc("c3")["claim"], caps)
    assert err.value.limit == "project"
    book.settle(_record("c1", charged=300, unresolved=100, sandbox=40))  # settles to spend + liabilities
    t = book.totals()
    assert (t["committed_micro_usd"], t["open_claims"], t["sandbox_committed_micro_usd"]) == (1400, ["c2"], 140)
    book.check_claim(_doc("c3")["claim"], caps)  # 1400 + 1000 <= 2500 now
    with pytest.raises(ClaimRefused, match="already used by attempt a-c1"):
        book.check_claim(_doc("c1")["claim"], caps)
    assert ProjectLedger(str(tmp_path)).entries == book.entries  # re-read, the chain verified


def test_a_claim_above_the_project_cap_is_refused_before_consumption(
    tmp_path, state, project, monkeypatch, prices_file
):
    from launchers import _attempt, _freeze

    from .test_paid_path import CLEAN, PUBLISHED, FREEZE

    for module in (_attempt, _freeze):
        monkeypatch.setattr(module, "code_revision", lambda: dict(CLEAN))
        monkeypatch.setattr(module, "engine_identity", lambda: dict(PUBLISHED))
    from .conftest import CREDENTIALS

    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    runner = CliRunner()
    freeze = [a if a != "50000000" else "6000000" for a in FREEZE]  # room for one claim of 5 USD, not two
    assert (
        runner.invoke(
            cli, ["freeze", "--out", os.path.join(project, "freeze.json"), "--prices", prices_file, *freeze]
        ).exit_code
        == 0
    )
    assert (
        runner.invoke(
            cli, ["deviate", "--field", "pilot.required", "--effective", "false", "--reason", "machinery test"]
        ).exit_code
        == 0
    )
    book = ProjectLedger(project)
    book.register(_doc("clm-earlier", cap=5_000_000, sandbox=0))
    book.open_claim(_doc("clm-earlier", cap=5_000_000, sandbox=0), "earlier", None)  # an attempt still open
    claim = str(tmp_path / "c.json")
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
                "5000000",
                "--cap-tokens",
                "20000000",
                "--cap-sandbox-micro-usd",
                "20000",
                "--out",
                claim,
                "--prices",
                prices_file,
                "--worker-seconds",
                "300",
                "--horizon",
                "6",
            ],
        ).exit_code
        == 0
    )
    result = runner.invoke(
        cli,
        [
            "execute",
            "--claim",
            claim,
            "--out",
            str(tmp_path / "a"),
            "--family",
            "FUND_01",
            "--seed",
            "1",
            "--sampler",
            "tinker",
            "--model",
            "test-model",
            "--prices",
            prices_file,
            "--worker-seconds",
            "300",
            "--horizon",
            "6",
        ],
    )
    assert result.exit_code == 1 and "project's inference cap" in result.output, result.output
    assert not os.path.exists(os.path.join(state, "consumed")) and not os.path.exists(tmp_path / "a.partial")


def test_sandbox_compute_halts_apart_from_inference():
    ledger = Ledger("a" * 64, 10**9, 10**9, PRICE, cap_sandbox_micro_usd=1000, sandbox_rate=40)
    with pytest.raises(BudgetHalt) as err:
        ledger.reserve_sandbox(26)  # 1040 > 1000
    assert err.value.limit == "sandbox" and ledger.entries == []
    ledger.reserve_sandbox(25)
    ledger.reserve(1, 6000, 2000)  # inference is not touched by the sandbox account, nor the other way round
    t = ledger.totals()
    assert (t["sandbox_committed_micro_usd"], t["committed_micro_usd"]) == (1000, 1580)
    ledger.settle_sandbox(10)
    assert ledger.totals()["sandbox_charged_micro_usd"] == 400 and not ledger.has_open_sandbox()


def test_an_attempt_whose_sandbox_does_not_fit_its_cap_is_refused_before_consumption(run_attempt, monkeypatch, state):
    """Nothing is consumed that a check could have saved: a claim whose sandbox cap cannot cover the worker's time
    limit is refused before it is spent, whatever the sampler (it used to be consumed, then halted at once)."""
    from launchers import _attempt

    monkeypatch.setattr(_attempt, "sandbox_rate", lambda prices, name: 40)
    with pytest.raises(BudgetHalt, match="sandbox cap of 1000 micro-USD cannot cover the worker's 1200 s") as err:
        run_attempt(cap_sandbox_micro_usd=1000, horizon=6, partial=True)
    assert err.value.limit == "sandbox" and not os.path.exists(os.path.join(state, "consumed"))


def test_attempts_and_calls_are_exported_to_parquet(tmp_path):
    result = CliRunner().invoke(
        cli, ["export", "--attempts", os.path.join(REPO, "runs", "attempts"), "--out-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    attempts = pq.read_table(tmp_path / "attempts.parquet").to_pylist()
    calls = pq.read_table(tmp_path / "calls.parquet").to_pylist()
    with open(os.path.join(REPO, "runs", "attempts", "mock-FUND_01-seed-1", "record.json")) as fh:
        record = json.load(fh)
    c = record["content"]
    (row,) = [r for r in attempts if r["attempt_id"] == "mock-FUND_01-seed-1"]  # beside the local-model attempts
    calls = [r for r in calls if r["attempt_id"] == "mock-FUND_01-seed-1"]
    assert row["content_sha256"] == record["content_sha256"] and row["cpu_ms"] is None
    assert (row["status"], row["settled_days"], row["points"], row["calls"]) == (
        "completed",
        20,
        100,
        c["cost"]["calls"],
    )
    assert row["config_hash"] == c["config_hash"] and row["bundle_sha256"] == c["engine"]["bundle_sha256"]
    assert len(calls) == c["cost"]["calls"] and [r["call"] for r in calls] == list(range(1, len(calls) + 1))
    assert sum(r["tokens_in"] for r in calls) == c["cost"]["tokens_in"]
    # the published tables are these, byte for byte
    for name in ("attempts.parquet", "calls.parquet"):
        with open(tmp_path / name, "rb") as a, open(os.path.join(REPO, "runs", name), "rb") as b:
            assert a.read() == b.read(), name


moves = st.lists(
    st.tuples(
        st.sampled_from(["reserve", "settle", "unresolved", "sandbox"]), st.integers(0, 20000), st.integers(0, 4000)
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(moves=moves, cap=st.integers(0, 50000), sandbox_cap=st.integers(0, 5000))
def test_the_ledger_never_commits_past_its_caps_and_reloads_the_same(tmp_path_factory, moves, cap, sandbox_cap):
    path = str(tmp_path_factory.mktemp("ledger") / "ledger.jsonl")
    ledger = Ledger("c" * 64, cap, 10**9, PRICE, path=path, cap_sandbox_micro_usd=sandbox_cap, sandbox_rate=3)
    call = 0
    for kind, a, b in moves:
        try:
            if kind == "reserve":
                call += 1
                ledger.reserve(call, a, b)
            elif kind == "settle" and ("inference", call) in ledger._open:
                opened = ledger._open[("inference", call)]  # the provider bills no more than was reserved
                ledger.settle(call, min(a, opened["tokens_in"]), min(b, opened["tokens_out"]))
            elif kind == "unresolved" and ("inference", call) in ledger._open:
                ledger.mark_unresolved(call, "timeout")
            elif kind == "sandbox" and not ledger.has_open_sandbox():
                ledger.reserve_sandbox(b // 4)
                ledger.settle_sandbox(a % 50)
        except BudgetHalt:
            pass
        t = ledger.totals()
        assert t["committed_micro_usd"] <= cap and t["sandbox_committed_micro_usd"] <= sandbox_cap
    if ledger.entries:  # nothing is written until something is booked
        again = load_ledger(path, "c" * 64, cap, 10**9, PRICE, cap_sandbox_micro_usd=sandbox_cap, sandbox_rate=3)
        assert again.entries == ledger.entries and again.totals() == ledger.totals()


def test_self_check_fails_when_a_new_control_is_broken(monkeypatch):
    from launchers import _project

    monkeypatch.setattr(_project.ProjectLedger, "check_claim", lambda self, claim, caps, sha256=None: None)
    result = CliRunner().invoke(cli, ["self-check"])
    assert result.exit_code == 1 and "FAIL a deleted consumed marker does not renew the claim" in result.output


def test_export_check_holds_the_published_tables_to_the_verified_records(tmp_path):
    # `make verify` runs `export --check`: every record verified, both tables byte for byte, nothing written.
    import shutil

    attempts = os.path.join(REPO, "runs", "attempts")
    for name in ("attempts.parquet", "calls.parquet"):
        shutil.copy(os.path.join(REPO, "runs", name), tmp_path / name)
    result = CliRunner().invoke(cli, ["export", "--attempts", attempts, "--out-dir", str(tmp_path), "--check"])
    from launchers.inspect._kind import is_inspect_record

    records = [
        os.path.join(attempts, name, "record.json")
        for name in sorted(os.listdir(attempts))
        if os.path.isfile(os.path.join(attempts, name, "record.json"))
    ]
    # an Inspect attempt (harness inspect) has no calls in fundbook's ledger (Inspect made them): it adds no row
    calls = sum(load(path)["content"]["cost"]["calls"] for path in records if not is_inspect_record(path))
    inspected = [load(path)["content"]["attempt_id"] for path in records if is_inspect_record(path)]
    exported = {r["attempt_id"] for r in pq.read_table(os.path.join(REPO, "runs", "calls.parquet")).to_pylist()} | {
        r["attempt_id"] for r in pq.read_table(os.path.join(REPO, "runs", "attempts.parquet")).to_pylist()
    }
    assert not exported & set(inspected)
    assert (
        result.exit_code == 0
        and f"calls.parquet: the export of the {calls} verified rows, byte for byte" in result.output
    )
    data = bytearray((tmp_path / "calls.parquet").read_bytes())
    data[len(data) // 2] ^= 1
    (tmp_path / "calls.parquet").write_bytes(bytes(data))
    result = CliRunner().invoke(cli, ["export", "--attempts", attempts, "--out-dir", str(tmp_path), "--check"])
    assert result.exit_code == 1 and result.output.strip().endswith(
        "calls.parquet: not the export of the verified records in "
        + attempts
        + f" ({calls} rows; `fundbook-launch export` "
        "rewrites it)"
    )
    assert len(result.output.strip().splitlines()) <= 2
    assert (tmp_path / "calls.parquet").read_bytes() == bytes(data)  # --check writes nothing
