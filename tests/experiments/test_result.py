"""Seed 004's structured result (result.json) for every comparison, decided or not: a failed status for a
sweep that never finished (it was "sweep.json: no such file" and nothing recorded), the arms completed, and
original_hypothesis_tested / tested_instead when a deviation changed what was tested."""

import json
import math
from fractions import Fraction

from experiments import result as result_mod

from .conftest import invoke, one_line_error, pyodide_test
from .test_compare import copy_study, edit_json


@pyodide_test
def test_a_decided_comparison_has_its_succeeded_result_and_verify_requires_it(practice_study, tmp_path):
    cmp_dir, _ = copy_study(practice_study, tmp_path)
    doc = json.loads((cmp_dir / "result.json").read_text())
    decision = json.loads((cmp_dir / "decision.json").read_text())
    sweep_dir = next(p for p in (cmp_dir.parent).iterdir() if (p / "observations.jsonl").exists())
    items = [json.loads(line)["item_id"] for line in (sweep_dir / "items.jsonl").read_text().splitlines()]
    rows = [json.loads(line) for line in (sweep_dir / "observations.jsonl").read_text().splitlines()]
    used = items[: decision["n"]]
    want_arms = {}
    for arm in ("baseline:reference", "baseline:shortest-cheapest"):  # the first n worlds' scores, summed here
        values = [r["value"] for r in rows if r["arm"] == arm and r["metric"] == "score" and r["item_id"] in used]
        total = sum(values)
        g = math.gcd(total, len(values))
        want_arms[arm] = {
            "n": len(values),
            "total": total,
            "mean": str(total // g) if len(values) // g == 1 else f"{total // g}/{len(values) // g}",
        }
    assert {k: doc[k] for k in doc if k not in ("summary", "reasoning")} == {
        "schema": "fundbook.result/2",
        "comparison": "ref-vs-sc",
        "status": "succeeded",
        "outcome_reason": None,
        "reason": None,
        "completed_arms": ["baseline:reference", "baseline:shortest-cheapest"],
        "verdict": decision["verdict"],
        "confidence": decision["confidence"],
        "n": 6,
        "original_hypothesis_tested": True,
        "tested_instead": "",
        "deviations": [],
        "per_arm": want_arms,
        "effect": {
            "estimate": doc["effect"]["estimate"],  # held to the summed scores just below
            "interval": [decision["lower_bound"], decision["upper_bound"]],
        },
    }
    diff = want_arms["baseline:reference"]["total"] - want_arms["baseline:shortest-cheapest"]["total"]
    assert Fraction(doc["effect"]["estimate"]) == Fraction(diff, 6)
    assert f"Verdict: {decision['verdict']} ({decision['confidence']} confidence) at n = 6 worlds" in doc["summary"]
    assert f"baseline:reference {want_arms['baseline:reference']['mean']}" in doc["summary"]
    assert doc["reasoning"].startswith(f"The pre-registered rule is {decision['method']}")
    assert f"[{decision['lower_bound']}, {decision['upper_bound']}]" in doc["reasoning"]
    edit_json(cmp_dir / "result.json", lambda d: d["per_arm"]["baseline:reference"].update(mean="99"))
    code, _, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "result.json: not the structured result of the verified decision" in one_line_error(err)
    edit_json(
        cmp_dir / "result.json",
        lambda d: d["per_arm"]["baseline:reference"].update(mean=want_arms["baseline:reference"]["mean"]),
    )
    edit_json(
        cmp_dir / "result.json", lambda d: d.update(verdict="supported", status="succeeded", confidence="strong", n=7)
    )
    code, _, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "result.json: not the structured result of the verified decision" in one_line_error(err)


@pyodide_test
def test_an_interrupted_sweep_gets_a_failed_result_not_a_missing_file(practice_study, tmp_path):
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path)
    for name in ("decision.json", "evidence.json", "result.json", "rules.py"):
        (cmp_dir / name).unlink()
    (sweep_dir / "sweep.json").unlink()  # interrupted: the journal holds the first two worlds' rows
    lines = (sweep_dir / "journal.jsonl").read_bytes().splitlines(keepends=True)
    (sweep_dir / "journal.jsonl").write_bytes(b"".join(lines[:4]))
    code, _, err = invoke("compare", cmp_dir, "--sweep", sweep_dir)
    assert code == 1
    assert one_line_error(err) == (
        f"error: {sweep_dir}/sweep.json: no such file: the sweep has not finished "
        f"(interrupted, or still running): no decision; the failed result is recorded "
        f"in {cmp_dir}/result.json"
    )
    doc = json.loads((cmp_dir / "result.json").read_text())
    assert doc == {
        "schema": "fundbook.result/2",
        "comparison": "ref-vs-sc",
        "status": "failed",
        "outcome_reason": "incomplete_execution",
        "reason": f"{sweep_dir}/sweep.json: no such file: the sweep has not finished (interrupted, or still running)",
        "completed_arms": [],
        "worlds_journalled": {"baseline:reference": 2, "baseline:shortest-cheapest": 2},
        "original_hypothesis_tested": True,
        "tested_instead": "",
        "deviations": [],
    }
    assert "verdict" not in doc and not (cmp_dir / "decision.json").exists()


@pyodide_test
def test_a_decided_comparison_keeps_its_decision_when_its_sweep_is_gone(practice_study, tmp_path):
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path)
    before = (cmp_dir / "result.json").read_bytes()
    (sweep_dir / "sweep.json").unlink()
    code, _, err = invoke("compare", cmp_dir, "--sweep", sweep_dir)
    assert code == 1 and "keeps the decision it has" in one_line_error(err)
    assert (cmp_dir / "result.json").read_bytes() == before


@pyodide_test
def test_a_deviation_says_the_original_hypothesis_was_not_tested_and_what_was(practice_study, tmp_path):
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path)
    edit_json(
        cmp_dir / "deviations.json",
        lambda d: d["deviations"].append(
            {
                "date": "2026-03-01",
                "field": "evaluator",
                "original": "grader 1",
                "effective": "grader 2",
                "reason": "a recorded example",
            }
        ),
    )
    code, _, err = invoke("compare", cmp_dir, "--sweep", sweep_dir)
    assert code == 0, err
    doc = json.loads((cmp_dir / "result.json").read_text())
    assert (doc["original_hypothesis_tested"], doc["tested_instead"]) == (
        False,
        "evaluator: grader 2 instead of grader 1 (a recorded example)",
    )
    assert invoke("compare", cmp_dir, "--verify")[0] == 0


def test_the_failed_result_lists_only_arms_with_every_planned_world():
    doc = result_mod.failed("c", {"a": 3, "b": 3}, [], {"a": 3, "b": 1}, "why")
    assert (doc["completed_arms"], doc["worlds_journalled"]) == (["a"], {"a": 3, "b": 1})
