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
from launchers._claims import authorise, check
from launchers._project import ProjectLedger
from launchers._verify import verify_attempt
from fundbook.cli.launch import cli

from .conftest import REPO, plan_for

HOST = """
import sys
claim, out, prices, state = sys.argv[1:5]
from launchers._attempt import execute
from launchers._controller import Limits
from launchers._prices import load_prices
from launchers._sandbox_local import LocalSandbox
from tests.launchers.conftest import HealthyHost, PricedMock
execute(claim_path=claim, out=out, family="FUND_01", seed=1, split="public-practice", model="test-model",
        sampler_name="fake", sandbox_name="local", make_sampler=PricedMock, make_sandbox=LocalSandbox,
        prices=load_prices(prices), limits=Limits(), horizon=6, state=state, host=HealthyHost())
"""
NOTHING_SPENT = ("consume:before-start", "consume:before-marker", "consume:marker-written")


def _die_at(tmp_path, state, prices_file, where):
    claim, out = str(tmp_path / "c.json"), str(tmp_path / "attempt")
    authorise(claim, "FUND_01", "public-practice", "test-model", 10_000_000, 20_000_000, 1, state=state,
              plan=plan_for())
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.run([sys.executable, "-c", HOST, claim, out, prices_file, state], cwd=REPO, timeout=120,
                          env=dict(os.environ, TMPDIR=str(scratch), FUNDBOOK_LAUNCH_DIE_AT=where),
                          capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr  # it died there, as a host does
    return claim, out


@pytest.mark.parametrize("where", _crash.BOUNDARIES)
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
    assert sorted(os.listdir(out)) == sorted(["receipts.json", "record.json", "transcript.json"] + (
        [] if consumed_only else ["ledger.jsonl", "retained.json"]))  # no working file, no lock left behind
    result = runner.invoke(cli, ["ledger", "--project", project, "--attempts", str(tmp_path)])
    assert result.exit_code == 0 and "1 claims (0 open)" in result.output, result.output


def test_a_normal_run_passes_every_boundary_in_order(run_attempt, monkeypatch):
    """The list of boundaries is the run's own: a boundary the code no longer reaches would be a test of nothing."""
    seen = []
    monkeypatch.setattr(_crash, "reached", seen.append)
    run_attempt(horizon=6)
    assert seen == list(_crash.BOUNDARIES)
