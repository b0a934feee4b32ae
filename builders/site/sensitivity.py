"""A study decision's dependence on worlds whose counted attempt ended without a result.

The one rule (builders/counting.py) counts such an attempt as the engine grades its accepted batches (world 20
of the SmolLM2 study: 9 points, do-nothing 49). When the pre-registered rule stopped at or after such a world,
the decision page says so and shows the sensitivity: the same rule (the decision's own rules.py, pinned in its
evidence) fed the same differences with that world made a tie, and with it left out, continued over the worlds
the sweep never read (attempts run past the stopping point, the baselines graded on them by the engine) until
the rule stops or the recorded worlds run out. Not the pre-registered decision: a statement of how much the
stopping point rests on the world the harness lost.
"""

import types

from . import counted

MODEL_PREFIX = "model:"


def _rules_module(text):
    module = types.ModuleType("fundbook_decision_rules")
    exec(compile(text, "rules.py", "exec"), module.__dict__)  # the decision's own, sha256-checked against its evidence
    return module


def _scores(status_rows, arm_names):
    """[(item_id, {arm: points})] of the journalled worlds, in the committed order."""
    return [(str(w.get("item_id")), {a: (w.get("score") or {}).get(a) for a in arm_names}) for w in status_rows]


def _past_stop(pub, items, played, model_arm, other_arm):
    """[(item_id, {arm: points})] for the committed worlds after the journalled ones that have a counted model
    attempt, in the committed order, the other arm graded by the engine (a scripted policy)."""
    counts = counted.counting_map(pub)
    by_world = {c["world"]: c for c in counts.values() if c["counted"] and c["agent"].startswith("model:")}
    policy = other_arm.split(":", 1)[1] if other_arm.startswith("baseline:") else None
    out = []
    for item in items[len(played) :]:
        got = by_world.get(item["item_id"])
        if got is None or policy is None:
            break  # the recorded worlds run out: the committed order has no gap
        points = counted.policy_points(item, policy)
        if points is None:
            break
        out.append((item["item_id"], {model_arm: got["score"]["points"], other_arm: points}))
    return out


def _run(rules, spec, worlds):
    """(verdict, n, wealth against at the end) of the rule over `worlds` [(item_id, {arm: points})]."""
    values = {(iid, arm, 0): v for iid, scores in worlds for arm, v in scores.items()}
    d = rules.decide(spec, [iid for iid, _ in worlds], values)
    seq = d.get("sequential") or {}
    return {
        "verdict": d["verdict"],
        "n": d["n"],
        "wealth_against": seq.get("wealth_against"),
        "wealth_for": seq.get("wealth_for"),
        "stopped": seq.get("stopped_at") is not None,
        "of": len(worlds),
    }


def analyse(pub, comparison, status, items, spec):
    """[{world, position, points, other, ...}] for each world in the decision's first n whose counted attempt
    ended without a result, with the rule's outcome when it is a tie and when it is left out."""
    decision = comparison["decision"]
    arms = list((decision.get("arms") or {}).keys())
    model_arm = next((a for a in arms if a.startswith(MODEL_PREFIX)), None)
    other_arm = next((a for a in arms if a != model_arm), None)
    rules_text = comparison.get("rules")
    if not model_arm or not other_arm or not rules_text or not isinstance(status, dict):
        return []
    played = _scores(status.get("per_world") or [], arms)
    n = decision.get("n") if isinstance(decision.get("n"), int) else 0
    counts = counted.counting_map(pub)
    lost = {
        c["world"]
        for c in counts.values()
        if c["counted"] and c["agent"].startswith("model:") and c["score"]["source"] == "engine"
    }
    found = [(i, iid, sc) for i, (iid, sc) in enumerate(played[:n]) if iid in lost]
    if not found:
        return []
    rules = _rules_module(rules_text)
    worlds = played + _past_stop(pub, items, played, model_arm, other_arm)
    out = []
    drawn = (decision.get("verdict"), n)
    for i, iid, sc in found:
        tie = [(w, dict(s, **{model_arm: s[other_arm]}) if w == iid else s) for w, s in worlds]
        left_out = [(w, s) for w, s in worlds if w != iid]
        out.append(
            {
                "world": iid,
                "position": i + 1,
                "points": sc[model_arm],
                "other": sc[other_arm],
                "other_arm": other_arm,
                "difference": sc[model_arm] - sc[other_arm],
                "largest": all(
                    abs(sc[model_arm] - sc[other_arm]) >= abs(s[model_arm] - s[other_arm]) for _, s in played[:n]
                ),
                "recorded": len(worlds),
                "past_stop": len(worlds) - len(played),
                "tie": _run(rules, spec, tie),
                "left_out": _run(rules, spec, left_out),
                "as_drawn": {"verdict": drawn[0], "n": n},
            }
        )
        x = out[-1]
        x["moved"] = any((r["verdict"], r["n"]) != drawn or not r["stopped"] for r in (x["tie"], x["left_out"]))
    return out
