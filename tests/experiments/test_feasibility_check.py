"""The held-out feasibility pilot licenses only the sweep it was made for: same evaluator, same items, every arm.

Held back: the check compared only the evaluator id, so a one-arm pilot let a two-arm held-out sweep run (and a
pilot over other items let the sweep through too).
"""

import os

import pytest

from experiments import sweep
from experiments.errors import ExperimentError

EID = "e" * 64
PLAN = {"split": "heldout", "families": ["FUND_01", "FUND_02"], "count": 4, "commitment_sha256": "c" * 64}
ROWS = [{"item_id": f"i{n}"} for n in range(4)]
ONE = [{"name": "baseline:reference"}]
TWO = ONE + [{"name": "baseline:do-nothing"}]


def _pilot(out, eid=EID, plan=PLAN, count=4, arms=ONE):
    os.makedirs(out, exist_ok=True)
    doc = {"plan": {"evaluator_id": eid, "items": plan, "item_count": count, "arms": [a["name"] for a in arms]}}
    sweep.write_atomic(os.path.join(out, "feasibility.json"), sweep.pretty(doc))


def test_the_pilot_made_for_this_sweep_passes(tmp_path):
    _pilot(tmp_path, arms=TWO)
    sweep._check_feasibility(str(tmp_path), EID, dict(PLAN), ROWS, TWO)
    sweep._check_feasibility(str(tmp_path), EID, dict(PLAN), ROWS, ONE)  # a sweep of fewer arms: all piloted


def test_a_one_arm_pilot_does_not_license_a_two_arm_sweep(tmp_path):
    _pilot(tmp_path, arms=ONE)
    with pytest.raises(
        ExperimentError,
        match=r"plan.arms: the pilot was made for arms \['baseline:reference'\], "
        r"this sweep also runs \['baseline:do-nothing'\]",
    ):
        sweep._check_feasibility(str(tmp_path), EID, dict(PLAN), ROWS, TWO)


@pytest.mark.parametrize(
    "plan, count",
    [
        (dict(PLAN, count=8), 4),
        (dict(PLAN, families=["FUND_01"]), 4),
        (dict(PLAN, commitment_sha256="d" * 64), 4),
        (PLAN, 3),
    ],
)
def test_a_pilot_over_other_items_is_refused(tmp_path, plan, count):
    _pilot(tmp_path, plan=plan, count=count, arms=TWO)
    with pytest.raises(ExperimentError, match="plan.items: the pilot was made for other items"):
        sweep._check_feasibility(str(tmp_path), EID, dict(PLAN), ROWS, TWO)


def test_a_pilot_for_another_evaluator_is_refused(tmp_path):
    _pilot(tmp_path, eid="f" * 64, arms=TWO)
    with pytest.raises(ExperimentError, match="the pilot was made for evaluator f+, this sweep is e+"):
        sweep._check_feasibility(str(tmp_path), EID, dict(PLAN), ROWS, TWO)


def test_the_published_heldout_pilots_match_their_sweeps():
    """The committed held-out sweeps' pilots name every arm their sweeps ran, over the same items."""
    import json

    REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for rel in ("runs/comparisons/heldout-baselines", "runs/studies/smollm2-heldout/sweep"):
        folder = os.path.join(REPO, rel)
        with open(os.path.join(folder, "feasibility.json")) as fh:
            made = json.load(fh)["plan"]
        if not os.path.exists(os.path.join(folder, "sweep.json")):
            continue  # a study's sweep still running has no manifest yet
        with open(os.path.join(folder, "sweep.json")) as fh:
            manifest = json.load(fh)
        arms = [a["name"] for a in manifest["arms"]]
        assert set(arms) <= set(made["arms"]), (rel, arms, made["arms"])
        assert made["items"]["count"] == made["item_count"] == manifest["items"]["count"], (rel, made)
