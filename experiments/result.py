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
  summary                    one paragraph a reader can quote: the question, the verdict, n, the arms'
                             means and the effect with its interval (succeeded only)
  per_arm                    {arm: {n, total, mean}}: the worlds the decision used, the arm's summed metric
                             over them and its mean as an exact fraction ("1798/23", or "100" when whole):
                             never a rounded number
  effect                     {estimate, interval}: the mean paired difference, exact, and the decision's
                             interval [lower, upper] as the rule states it (bounds rounded outward)
  reasoning                  why this verdict: the rule, where it stopped and why, the bound against the margin

It is derived: from decision.json and the spec's deviations when succeeded (`--verify` recomputes it and
requires the file byte for byte), from the spec and the sweep's journal when failed.
"""

import math
import os

from .errors import ExperimentError

SCHEMA = "fundbook.result/2"  # 2: summary, per_arm, effect, reasoning
RESULT = "result.json"


def _tested(deviations):
    if not deviations:
        return True, ""
    return False, "; ".join(
        f"{d['field']}: {d['effective']} instead of {d['original']} ({d['reason']})" for d in deviations
    )


def _fraction(num, den) -> str:
    """num/den, reduced: "1798/23", or "100" when whole (exact, never rounded)."""
    g = math.gcd(num, den) or 1
    num, den = num // g, den // g
    return str(num) if den == 1 else f"{num}/{den}"


def per_arm(decision, rows, item_ids) -> dict:
    """{arm: {n, total, mean}} over the worlds the decision used (its first n, in sweep order): n counts the
    arm's rows of the decision's metric there (a world a seed)."""
    used = set(item_ids[: decision["n"]])
    out = {}
    for arm in sorted(decision["arms"]):
        values = [
            r["value"]
            for r in rows
            if r["arm"] == arm
            and r["item_id"] in used
            and r["metric"] == decision["metric"]
            and isinstance(r["value"], int)
        ]
        out[arm] = {
            "n": len(values),
            "total": sum(values),
            "mean": _fraction(sum(values), len(values)) if values else None,
        }
    return out


def _reduced(text) -> str:
    num, _, den = str(text).partition("/")
    return _fraction(int(num), int(den or 1))


def _arm_words(decision):
    plus = [a for a, w in sorted(decision["arms"].items()) if w > 0]
    minus = [a for a, w in sorted(decision["arms"].items()) if w < 0]
    return " + ".join(plus), " + ".join(minus)


def reasoning(decision) -> str:
    seq = decision.get("sequential")
    rule = (
        f"{decision['method']} ({', '.join(f'{k} {v}' for k, v in decision['parameters'].items())}), alpha "
        f"{decision['alpha']}, margin {decision['margin']}"
    )
    bounds = (
        f"the interval was [{decision['lower_bound']}, {decision['upper_bound']}] against the margin "
        f"{decision['margin']}"
    )
    if seq:
        why = {
            "supported": "the wealth for the claim reached 1/alpha",
            "not supported": "the wealth against the claim reached 1/alpha",
        }.get(decision["verdict"], decision.get("inconclusive_because") or "neither wealth reached 1/alpha")
        return (
            f"The pre-registered rule is {rule}, valid at every n. It stopped at n = {decision['n']} of at "
            f"most {seq.get('max_n')}: {why}; at the stop {bounds}."
        )
    why = {
        "supported": "the lower bound clears the margin",
        "not supported": "the upper bound falls below the margin",
    }.get(decision["verdict"], decision.get("inconclusive_because") or "the bound straddles the margin")
    return f"The pre-registered rule is {rule}, at the fixed n = {decision['n']}: {bounds}, so {why}."


def _about(fraction) -> str:
    """A mean for reading: the exact fraction, and when it is not whole, "about" its value to two decimals."""
    if fraction is None or "/" not in fraction:
        return str(fraction)
    num, den = (int(x) for x in fraction.split("/"))
    hundredths = (abs(num) * 200 + den) // (2 * den)  # to the nearest hundredth (exact integers, halves up)
    return f"{fraction} (about {'-' if num < 0 else ''}{hundredths // 100}.{hundredths % 100:02d})"


def summary(decision, arms) -> str:
    plus, minus = _arm_words(decision)
    means = "; ".join(f"{a} {_about(v['mean'])}" for a, v in arms.items())
    return (
        f"{decision.get('question') or decision['estimand']} Verdict: {decision['verdict']} "
        f"({decision['confidence']} confidence) at n = {decision['n']} worlds. Mean {decision['metric']} a world: "
        f"{means}. The mean paired difference ({plus} minus {minus}) is {_about(_reduced(decision['estimate']['exact']))}, "
        f"with the interval [{decision['lower_bound']}, {decision['upper_bound']}]."
    )


def succeeded(decision, rows, item_ids) -> dict:
    """The result of a decision; `rows` and `item_ids`: the evidence's observation rows and items, in order."""
    tested, instead = _tested(decision.get("deviations") or [])
    arms = per_arm(decision, rows, item_ids)
    return {
        "schema": SCHEMA,
        "comparison": decision["comparison"],
        "status": "succeeded",
        "outcome_reason": None,
        "reason": None,
        "completed_arms": sorted(decision["arms"]),
        "verdict": decision["verdict"],
        "confidence": decision["confidence"],
        "n": decision["n"],
        "original_hypothesis_tested": tested,
        "tested_instead": instead,
        "deviations": decision.get("deviations") or [],
        "summary": summary(decision, arms),
        "per_arm": arms,
        "effect": {
            "estimate": _reduced(decision["estimate"]["exact"]),
            "interval": [decision["lower_bound"], decision["upper_bound"]],
        },
        "reasoning": reasoning(decision),
    }


def failed(name, arms, deviations, worlds, reason) -> dict:
    """`worlds`: {arm: worlds journalled with rows}; `arms`: {arm: planned worlds} (the spec's arms)."""
    tested, instead = _tested(deviations)
    done = sorted(a for a, planned in arms.items() if planned and worlds.get(a, 0) >= planned)
    return {
        "schema": SCHEMA,
        "comparison": name,
        "status": "failed",
        "outcome_reason": "incomplete_execution",
        "reason": reason,
        "completed_arms": done,
        "worlds_journalled": {a: worlds.get(a, 0) for a in sorted(arms)},
        "original_hypothesis_tested": tested,
        "tested_instead": instead,
        "deviations": deviations,
    }


def check(directory, decision, rows, item_ids, pretty):
    """result.json, when present, is the one the verified decision implies (byte for byte)."""
    path = os.path.join(directory, RESULT)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as fh:
        data = fh.read()
    want = succeeded(decision, rows, item_ids)
    if data != pretty(want):
        raise ExperimentError(
            f"{path}: not the structured result of the verified decision (status succeeded, "
            f"verdict {want['verdict']} at n {want['n']}): decide again to rewrite it"
        )
    return want
