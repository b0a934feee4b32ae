"""kill -9 at every step boundary of consumption, journal, record and rename: `recover` always accounts for it.

Held back (a hostile suite run against main): a kill right after the consumed marker was written left a spent claim
with no journal, so `recover` answered "not an unfinished attempt" and no record could ever be made; a kill between
writing the record and renaming the folder let `recover` write a record whose receipts.json was empty under a
57-receipt head (it then failed `verify`), or refuse and leave the project ledger's claim open forever. Here the
host is a real process killed with SIGKILL at each boundary in `launchers._crash.BOUNDARIES` (the die-here hook),
then `recover` runs: nothing was spent and the folder is cleared, or the record verifies against its receipts and
its project ledger, settled exactly once.
"""

import json
import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from launchers import _crash
from launchers._claims import Grant, authorise, check
from launchers._project import ProjectLedger
from launchers._verify import verify_attempt
from fundbook.cli.launch import cli

from .conftest import REPO, plan_for

HOST = """
import sys
claim, out, prices, state = sys.argv[1:5]
from tests.launchers.specs import execute_kw as execute
from launchers._controller import Limits
from launchers._prices import load_prices
from launchers._sandbox_local import LocalSandbox
from tests.launchers.conftest import HealthyHost, PricedMock
execute(claim_path=claim, out=out, family="FUND_01", seed=1, split="public-practice", model="test-model",
        sampler_name="fake", sandbox_name="local", make_sampler=PricedMock, make_sandbox=LocalSandbox,
        prices=load_prices(prices), limits=Limits(), horizon=6, state=state, host=HealthyHost())
"""
NOTHING_SPENT = ("consume:before-start", "consume:before-marker", "consume:marker-written")
IN_RUN = ("call:after-step", "settle:after-charge", "settle:after-sandbox-charge")  # inside the ledger's settle
RECOVER = """
import sys
from launchers._recover import recover
recover(sys.argv[1], sys.argv[2])
"""


def _die_at(tmp_path, state, prices_file, where):
    """Run the host until it kills itself at `where` (NAME or NAME@N: the N-th pass)."""
    claim, out = str(tmp_path / "c.json"), str(tmp_path / "attempt")
    authorise(
        claim,
        "FUND_01",
        "public-practice",
        "test-model",
        10_000_000,
        20_000_000,
        1,
        grant=Grant(state=state, plan=plan_for()),
    )
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", HOST, claim, out, prices_file, state],
        cwd=REPO,
        timeout=120,
        env=dict(os.environ, TMPDIR=str(scratch), FUNDBOOK_LAUNCH_DIE_AT=where),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr  # it died there, as a host does
    return claim, out


@pytest.mark.parametrize("where", [b for b in _crash.BOUNDARIES if b not in IN_RUN])
def test_a_kill_at_any_step_boundary_is_recovered(tmp_path, state, project, prices_file, where):
    claim, out = _die_at(tmp_path, state, prices_file, where)
    runner = CliRunner()
    result = runner.invoke(cli, ["recover", out + ".partial", "--out", out])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    book = ProjectLedger(project)
    if where in NOTHING_SPENT:
        assert "nothing was spent and the claim was not consumed; the folder was removed" in result.output
        assert not os.path.exists(out + ".partial") and not os.path.exists(out)
        check(claim, "FUND_01", "public-practice", "test-model", state=state)  # still usable: never consumed
        assert [e["kind"] for e in book.entries] == ["authorise"]
        return
    if where == "record:after-rename":  # nothing left to do: the record is in place and settled
        assert "no such folder" in result.output
    assert not os.path.exists(out + ".partial")
    found = verify_attempt(os.path.join(out, "record.json"), project=project)  # receipts, ledger, project ledger
    c = found["record"]["content"]
    with open(os.path.join(out, "receipts.json")) as fh:
        receipts = json.load(fh)
    consumed_only = where.startswith(("consume:", "project:"))
    assert len(receipts) == c["receipts_head"]["size"]  # never an empty receipts.json under a 57-receipt head
    assert (len(receipts) > 0) is not consumed_only
    assert c["termination"]["status"] == ("incomplete_execution" if consumed_only else "completed")
    assert [e["kind"] for e in book.entries] == ["authorise", "claim", "settle"]  # settled exactly once
    assert book.entries[2]["record_content_sha256"] == found["record"]["content_sha256"]
    assert sorted(os.listdir(out)) == sorted(
        ["receipts.json", "record.json", "transcript.json"]
        + ([] if consumed_only else ["ledger.jsonl", "retained.json"])
    )  # no working file, no lock left behind
    result = runner.invoke(cli, ["ledger", "--project", project, "--attempts", str(tmp_path)])
    assert result.exit_code == 0 and "1 claims (0 open)" in result.output, result.output


def _settled_whole(out, project):
    """The recovered record verifies; every reservation of its ledger.jsonl that was charged is released right
    after its charge; the project ledger is settled once by it and `ledger` reconciles. Returns the record's
    content and the ledger's entries."""
    found = verify_attempt(os.path.join(out, "record.json"), project=project)
    c = found["record"]["content"]
    with open(os.path.join(out, "ledger.jsonl")) as fh:
        entries = [json.loads(line) for line in fh]
    assert entries == c["ledger"]["entries"]
    for i, e in enumerate(entries):
        if e["kind"] == "charge":
            assert entries[i + 1]["kind"] == "release" and entries[i + 1]["call"] == e["call"]
    assert [e["kind"] for e in ProjectLedger(project).entries] == ["authorise", "claim", "settle"]
    result = CliRunner().invoke(cli, ["ledger", "--project", project, "--attempts", os.path.dirname(out)])
    assert result.exit_code == 0 and "1 claims (0 open)" in result.output, result.output
    assert sorted(set(os.listdir(out)) - {"retained.json"}) == [
        "ledger.jsonl",
        "receipts.json",
        "record.json",
        "transcript.json",
    ]
    return c, entries


@pytest.mark.parametrize(
    "where",
    [
        "call:after-step",
        "call:after-step@3",
        "settle:after-charge",
        "settle:after-charge@3",
        "settle:after-sandbox-charge",
    ],
)
def test_a_kill_inside_a_settlement_is_completed_by_recover(tmp_path, state, project, prices_file, where):
    """Held back: a kill between a call's charge and its release (or, with the step written first, between the
    answer's step and its charge) left a record that failed verify ("expected kind release") and a project ledger
    `ledger` refused. `recover` books what the dead host left half done, from the reservation, the charge and the
    journal's step alone."""
    claim, out = _die_at(tmp_path, state, prices_file, where)
    with open(os.path.join(out + ".partial", "ledger.jsonl")) as fh:
        before = [json.loads(line) for line in fh]
    kinds = [e["kind"] for e in before]
    if where.startswith("call:"):  # the answer's step is journaled; its reservation is the ledger's last word
        assert kinds[-1] == "reserve"
    else:  # a charge with no release
        assert kinds[-1] == "charge"
    result = CliRunner().invoke(cli, ["recover", out + ".partial", "--out", out])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    c, entries = _settled_whole(out, project)
    assert entries[: len(before)] == before  # completed by appending, nothing rewritten
    last = before[-1]
    completed = [e["kind"] for e in entries[len(before) :]]
    assert completed == (["charge", "release"] if where.startswith("call:") else ["release"])
    assert all(e["call"] == last["call"] and e["account"] == last["account"] for e in entries[len(before) :])
    if where.startswith("call:"):
        n = int(where.partition("@")[2] or 1)
        assert last["call"] == n and c["termination"]["status"] == "incomplete_execution"
        with open(os.path.join(out, "transcript.json")) as fh:
            steps = json.load(fh)["steps"]
        shown = [s["call"] for s in steps if s["role"] == "model" and (s.get("call") or {}).get("index") == n]
        assert len(shown) == 1 and shown[0]["micro_usd"] == entries[len(before)]["micro_usd"]


@pytest.mark.parametrize(
    "where", ["recover:after-ledger", "record:after-files", "record:after-record", "record:after-settle"]
)
def test_a_kill_during_recover_is_recovered_again(tmp_path, state, project, prices_file, where):
    """`recover` itself dies (after it completed the ledger, after it wrote the files, the record, the
    settlement): run again, it finishes, and the record verifies with the project ledger settled once."""
    claim, out = _die_at(tmp_path, state, prices_file, "settle:after-charge@2")
    proc = subprocess.run(
        [sys.executable, "-c", RECOVER, out + ".partial", out],
        cwd=REPO,
        timeout=120,
        env=dict(os.environ, FUNDBOOK_LAUNCH_DIE_AT=where),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    result = CliRunner().invoke(cli, ["recover", out + ".partial", "--out", out])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    c, entries = _settled_whole(out, project)
    assert c["termination"]["status"] == "incomplete_execution"
    assert [e["kind"] for e in entries if e["call"] == 2 and e["account"] == "inference"] == [
        "reserve",
        "charge",
        "release",
    ]


def test_a_normal_run_passes_every_boundary_in_order(run_attempt, monkeypatch):
    """The list of boundaries is the run's own: a boundary the code no longer reaches would be a test of nothing.
    The call and settle boundaries are passed once per answered call, each call's in the order listed."""
    seen = []
    monkeypatch.setattr(_crash, "reached", seen.append)
    record, _ = run_attempt(horizon=6)
    assert list(dict.fromkeys(seen)) == list(_crash.BOUNDARIES)
    answered = record["content"]["cost"]["calls"] - len(record["content"]["cost"]["unresolved_calls"])
    per_call = [b for b in seen if b in ("call:after-step", "settle:after-charge")]
    assert answered > 1 and per_call == ["call:after-step", "settle:after-charge"] * answered
    assert seen.count("settle:after-sandbox-charge") == 1


def _series_ok(summary):
    assert summary["failures"] == [], "\n".join(f"trial {i} {d}: {m}" for i, d, m in summary["failures"])


def test_a_few_kills_at_random_moments_are_recovered(tmp_path):
    """The fast sibling of the series below: kill -9 at uniformly random moments of `execute` (seeded), a kill of
    `recover` in two of them, then recover: each ends with nothing spent or a record that verifies, the project
    ledger settled once and `ledger` reconciling."""
    from .killseries import run_series

    summary = run_series(4, seed=20261205, recover_share=2, root=str(tmp_path), measure_runs=1)
    _series_ok(summary)
    assert summary["trials"] == 4


@pytest.mark.long
def test_two_hundred_kills_at_random_moments_are_recovered(tmp_path):
    """Held back: 16 kills at random moments left 2 records failing `verify` (a charge without its release; an
    answer charged that the transcript never showed). At least 200 kills across the attempt's lifetime and 40 of
    `recover` at a random moment of its own run (tried every third trial): no failure."""
    from .killseries import run_series

    summary = run_series(0, seed=32, recover_share=3, root=str(tmp_path), kills=200, recover_kills=40)
    print({k: v for k, v in summary.items() if k != "failures"})
    _series_ok(summary)
    assert summary["kills"] >= 200 and summary["recover_kills"] >= 40
