"""A comparison's structured result (result.json): one shape whether it was decided or could not be.

Seed 004's shape, for every comparison `fundbook compare --sweep` is asked to decide:

  status                     "succeeded" (a decision was drawn) or "failed" (none could be: the sweep did
                             not finish, a file it needs is missing); a failed result has no verdict
  outcome_reason             "incomplete_execution" when failed, else null
  reason                     why it failed (the one-line error), else null
  completed_arms             the arms with rows for every world the decision reads (failed: for every
                             world the sweep planned), sorted
  verdict, confidence        the decision's (absent when failed). The seed has two verdict values,
                             "supported" and "refuted"; fundbook keeps three: "supported", "not
                             supported" (the seed's "refuted") and "inconclusive" (the rule stopped,
                             or the last planned world came, with neither claim settled) -- a
                             sequential rule's third outcome is not a direction, and is not shown as one
  original_hypothesis_tested false when deviations.json records any departure from the frozen spec
  tested_instead             what was tested instead, from those deviations ("" when none)
  deviations                 the dated deviations as recorded

It is derived: from decision.json and the spec's deviations when succeeded (`--verify` recomputes it and
requires the file byte for byte), from the spec and the sweep's journal when failed.
"""

import os

from .errors import ExperimentError

SCHEMA = "fundbook.result/1"
RESULT = "result.json"


def _tested(deviations):
    if not deviations:
        return True, ""
    return False, "; ".join(f"{d['field']}: {d['effective']} instead of {d['original']} ({d['reason']})"
                            for d in deviations)


def succeeded(decision) -> dict:
    tested, instead = _tested(decision.get("deviations") or [])
    return {"schema": SCHEMA, "comparison": decision["comparison"], "status": "succeeded", "outcome_reason": None,
            "reason": None, "completed_arms": sorted(decision["arms"]), "verdict": decision["verdict"],
            "confidence": decision["confidence"], "n": decision["n"], "original_hypothesis_tested": tested,
            "tested_instead": instead, "deviations": decision.get("deviations") or []}


def failed(name, arms, deviations, worlds, reason) -> dict:
    """`worlds`: {arm: worlds journalled with rows}; `arms`: {arm: planned worlds} (the spec's arms)."""
    tested, instead = _tested(deviations)
    done = sorted(a for a, planned in arms.items() if planned and worlds.get(a, 0) >= planned)
    return {"schema": SCHEMA, "comparison": name, "status": "failed", "outcome_reason": "incomplete_execution",
            "reason": reason, "completed_arms": done,
            "worlds_journalled": {a: worlds.get(a, 0) for a in sorted(arms)},
            "original_hypothesis_tested": tested, "tested_instead": instead, "deviations": deviations}


def check(directory, decision, pretty):
    """result.json, when present, is the one the verified decision implies (byte for byte)."""
    path = os.path.join(directory, RESULT)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as fh:
        data = fh.read()
    want = succeeded(decision)
    if data != pretty(want):
        raise ExperimentError(f"{path}: not the structured result of the verified decision (status succeeded, "
                              f"verdict {want['verdict']} at n {want['n']}): decide again to rewrite it")
    return want
