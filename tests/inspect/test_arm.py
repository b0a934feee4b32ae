"""Two models' Inspect logs over the same worlds get a pre-registered paired decision (the anytime-valid
betting rule): `fundbook compare --freeze`, `fundbook sweep --arm NAME=inspect:LOG ...`, `fundbook compare`."""

import json
import os

import pytest
from click.testing import CliRunner
from inspect_ai import eval as inspect_eval

from fundbook.cli import cli
from inspect_fundbook._task import desk

from . import policies as P

pytestmark = P.WARNINGS + [pytest.mark.long, pytest.mark.pyodide]


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


def test_two_inspect_logs_get_a_paired_decision(tmp_path):
    logs = {}
    for name, plan in (("fund", P.always_fund), ("idle", P.do_nothing)):
        (log,) = inspect_eval(
            desk(worlds="practice:FUND_01:1..3", days=20),
            model=P.scripted(plan),
            log_dir=str(tmp_path / name),
            display="none",
        )
        assert log.status == "success"
        logs[name] = log.location
    cmp_dir, sweep_dir = tmp_path / "cmp", tmp_path / "sweep"
    os.makedirs(cmp_dir)
    spec = {
        "version": 2,
        "name": "fund-vs-idle",
        "estimand": "score points, always-fund minus do-nothing",
        "question": "Does the always-fund model score higher than the idle one on these worlds?",
        "unit": "items",
        "items": {"split": "practice", "families": ["FUND_01"], "seeds": "1..3"},
        "arms": {"fund": 1, "idle": -1},
        "seeds": [0],
        "metric": "score",
        "bounds": [0, 100],
        "margin": "0",
        "alpha": "0.05",
        "method": {"name": "paired_betting", "bet": "agrapa", "truncation": "0.75"},
        "stopping": {"futility": None, "max_n": 3},
    }
    (cmp_dir / "spec.json").write_text(json.dumps(spec, indent=2, sort_keys=True))
    code, out, err = invoke("compare", cmp_dir, "--freeze")
    assert code == 0, err
    code, out, err = invoke(
        "sweep",
        "--out",
        sweep_dir,
        "--family",
        "FUND_01",
        "--seeds",
        "1..3",
        "--arm",
        f"fund=inspect:{logs['fund']}",
        "--arm",
        f"idle=inspect:{logs['idle']}",
        "--pyodide-sample",
        0,
        "--comparison",
        cmp_dir,
        "--no-progress",
    )
    assert code == 0, err
    code, out, err = invoke("compare", cmp_dir, "--sweep", sweep_dir, "--json")
    assert code == 0, err
    decision = json.loads(out)
    assert decision["n"] == 3 if "n" in decision else True
    assert invoke("compare", cmp_dir, "--verify")[0] == 0
