"""A randomised kill -9 series against a real host process: kill it at a uniformly random moment of its `execute`
(and, in some trials, `recover` at a random moment of its own run), then `recover`, and require what the docs promise.

Each trial is its own claim registry, project and attempt folder. The host imports everything first and says
"ready" on stdout; the clock starts there, so every kill lands inside `execute` (or `recover`), uniformly across a
lifetime measured from an unkilled run. After the kill, `recover` (a real process too, itself killed in a share of
the trials, then run again) must leave either nothing spent (no folder, the claim still usable) or a record that
`verify_attempt` accepts against its project ledger, the project ledger settled exactly once, and
`fundbook-launch ledger` reconciling with no problem.

`python -m tests.launchers.killseries N [SEED]` prints the trial counts and each failure (the figures the note
gives); the tests import `run_series` and `run_trial`.
"""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from .conftest import REPO, TEST_PRICES, plan_for

HOST = """
import os, sys
claim, out, prices, state, project = sys.argv[1:6]
os.environ["FUNDBOOK_LAUNCH_PROJECT"] = project
from tests.launchers.specs import execute_kw as execute
from launchers._controller import Limits
from launchers._prices import load_prices
from launchers._sandbox_local import LocalSandbox
from tests.launchers.conftest import HealthyHost, PricedMock
table = load_prices(prices)
print("ready", flush=True)
execute(claim_path=claim, out=out, family="FUND_01", seed=1, split="public-practice", model="test-model",
        sampler_name="fake", sandbox_name="local", make_sampler=PricedMock, make_sandbox=LocalSandbox,
        prices=table, limits=Limits(), horizon=HORIZON, state=state, project=project, host=HealthyHost())
"""
RECOVER = """
import sys
partial, out, project, state = sys.argv[1:5]
from launchers._recover import NothingSpent, recover
print("ready", flush=True)
try:
    recover(partial, out, project, state)
except NothingSpent:
    pass
"""
HORIZON = 6


def _env(scratch, extra=None):
    env = dict(os.environ, TMPDIR=scratch, PYTHONHASHSEED="0")
    env.pop("FUNDBOOK_LAUNCH_DIE_AT", None)
    return dict(env, **(extra or {}))


def _spawn(code, args, scratch, env=None):
    return subprocess.Popen(
        [sys.executable, "-c", code.replace("HORIZON", str(HORIZON)), *args],
        cwd=REPO,
        env=env or _env(scratch),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _run_killed(proc, after_s):
    """Wait for "ready", then SIGKILL after `after_s` (None: let it end). Returns (killed, seconds from ready)."""
    line = proc.stdout.readline()
    if line.strip() != b"ready":
        proc.wait()
        raise AssertionError(f"the process never got ready: {proc.stderr.read().decode()[-2000:]}")
    started = time.monotonic()
    killed = False
    if after_s is not None:
        try:
            proc.wait(timeout=after_s)  # returns early if the process ended first
        except subprocess.TimeoutExpired:
            proc.kill()
            killed = True
    proc.wait()
    elapsed = time.monotonic() - started
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.stdout.close()
    proc.stderr.close()
    if not killed and proc.returncode != 0 and "Traceback" in err:
        raise AssertionError(f"exit {proc.returncode}: {err[-1500:]}")
    return killed, elapsed


class Trial:
    """One trial's private world: a claim registry, a project, a prices file, a claim."""

    def __init__(self, root):
        import json
        from launchers._claims import Grant, authorise

        self.root = root
        os.makedirs(root)
        self.state, self.project = os.path.join(root, "state"), os.path.join(root, "project")
        self.prices = os.path.join(root, "prices.json")
        with open(self.prices, "w") as fh:
            json.dump(TEST_PRICES, fh)
        self.scratch = os.path.join(root, "tmp")
        os.makedirs(self.scratch)
        self.claim, self.out = os.path.join(root, "claim.json"), os.path.join(root, "attempts", "attempt")
        os.makedirs(os.path.dirname(self.out))
        authorise(
            self.claim,
            "FUND_01",
            "public-practice",
            "test-model",
            10_000_000,
            20_000_000,
            1,
            grant=Grant(state=self.state, project=self.project, plan=plan_for()),
        )

    def execute(self, kill_after, die_at=None):
        env = _env(self.scratch, {"FUNDBOOK_LAUNCH_DIE_AT": die_at} if die_at else None)
        return _run_killed(
            _spawn(HOST, [self.claim, self.out, self.prices, self.state, self.project], self.scratch, env), kill_after
        )

    def recover(self, kill_after=None):
        return _run_killed(
            _spawn(RECOVER, [self.out + ".partial", self.out, self.project, self.state], self.scratch), kill_after
        )

    def check(self):
        """What the docs promise after recover; returns the outcome's name or raises AssertionError."""
        from click.testing import CliRunner
        from fundbook.cli.launch import cli
        from launchers._claims import check
        from launchers._project import ProjectLedger
        from launchers._verify import verify_attempt

        assert not os.path.exists(self.out + ".partial"), "recover left the partial folder"
        book = ProjectLedger(self.project)
        if not os.path.exists(self.out):
            check(self.claim, "FUND_01", "public-practice", "test-model", state=self.state)  # never consumed
            assert [e["kind"] for e in book.entries] == ["authorise"], book.entries
            return "nothing spent"
        found = verify_attempt(os.path.join(self.out, "record.json"), project=self.project)
        assert [e["kind"] for e in book.entries] == ["authorise", "claim", "settle"], [e["kind"] for e in book.entries]
        result = CliRunner().invoke(cli, ["ledger", "--project", self.project, "--attempts", os.path.dirname(self.out)])
        assert result.exit_code == 0 and "1 claims (0 open)" in result.output, result.output
        return found["record"]["content"]["termination"]["status"]


def lifetimes(root, runs=3):
    """(execute, recover) seconds of unkilled runs from "ready": the spans the kill moments are drawn from (the
    shortest of `runs` measurements, so a slow first run on a loaded machine does not stretch them past the end;
    then 1.2 times it, since a run varies, so the span reaches past its measured end)."""
    execute_s, recover_s = [], []
    for i in range(runs):
        trial = Trial(os.path.join(root, f"measure-{i}"))
        execute_s.append(trial.execute(None)[1])
        trial2 = Trial(os.path.join(root, f"measure-recover-{i}"))
        trial2.execute(None, die_at="settle:after-charge@3")  # a host that died mid-run: what recover finishes
        recover_s.append(trial2.recover(None)[1])
    return min(execute_s) * 1.2, min(recover_s) * 1.2


def run_trial(root, rng, execute_s, recover_s, kill_recover, details=None):
    """One trial: kill `execute` at U(0, execute_s); if asked, kill the first `recover` at U(0, recover_s); recover
    to the end. Returns (outcome, details) or raises AssertionError naming what broke."""
    trial = Trial(root)
    at = rng.uniform(0, execute_s)
    details = {} if details is None else details
    details["kill_at_s"] = round(at, 3)
    details["killed"], _ = trial.execute(at)
    if os.path.exists(trial.out + ".partial"):
        if kill_recover:
            r_at = rng.uniform(0, recover_s)
            details["recover_kill_at_s"] = round(r_at, 3)
            details["recover_killed"], _ = trial.recover(r_at)
        if os.path.exists(trial.out + ".partial"):
            trial.recover(None)
    return trial.check(), details


def run_series(
    n, seed, recover_share=4, root=None, log=None, kills=None, recover_kills=0, max_trials=1000, measure_runs=3
):
    """`n` trials, or (`kills`) as many as it takes for that many kills of `execute` and `recover_kills` kills of
    `recover` (every `recover_share`-th trial also kills a recover; at most `max_trials`); returns {"trials",
    "kills", "recover_kills",
    "failures": [(i, details, message)], "outcomes": {name: count}, "execute_s", "recover_s"}."""
    own = root is None
    root = root or tempfile.mkdtemp(prefix="fundbook-killseries-")
    rng = random.Random(seed)
    try:
        execute_s, recover_s = lifetimes(root, measure_runs)
        out = {
            "trials": 0,
            "kills": 0,
            "recover_kills": 0,
            "failures": [],
            "outcomes": {},
            "execute_s": round(execute_s, 3),
            "recover_s": round(recover_s, 3),
        }
        i = 0
        while ((out["kills"] < kills or out["recover_kills"] < recover_kills) if kills else i < n) and i < max_trials:
            where = os.path.join(root, f"t{i}")
            details = {}
            try:
                outcome, _ = run_trial(
                    where, rng, execute_s, recover_s, kill_recover=i % recover_share == 0, details=details
                )
            except Exception as exc:  # a failure is counted and named, the series goes on
                outcome = "FAILED"
                out["failures"].append((i, details, f"{type(exc).__name__}: {exc}"[:600]))
            out["trials"] += 1
            out["kills"] += bool(details.get("killed"))
            out["recover_kills"] += bool(details.get("recover_killed"))
            out["outcomes"][outcome] = out["outcomes"].get(outcome, 0) + 1
            if log:
                log(f"trial {i}: {outcome} {details}")
            shutil.rmtree(where, ignore_errors=True)
            i += 1
        return out
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    os.environ.setdefault("FUNDBOOK_LAUNCH_PROJECT", tempfile.mkdtemp(prefix="fundbook-killseries-project-"))
    summary = run_series(n, seed, log=lambda s: print(s, flush=True))
    print({k: v for k, v in summary.items() if k != "failures"})
    for i, details, message in summary["failures"]:
        print(f"FAILURE trial {i} {details}: {message}")
