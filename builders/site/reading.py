"""A decision in words: which arm scored higher or lower, and the bounds in the order that informs. Shared by the
comparison pages (comparisons.py), the Studies page and a decision's figure marks (figures.py "@direction"; the
browser's decisions.js derives it alike), in a module of its own so that none of them imports another in a circle.
"""

from . import fmt


def arm_words(arm) -> str:
    """An arm as a sentence names it: "the model (SmolLM2-135M-Instruct.Q4_1)", "doing nothing"."""
    arm = str(arm)
    if arm.startswith("model:"):
        return f"the model ({arm.split(':')[1]})"
    policy = arm.split(":", 1)[-1]
    return {"do-nothing": "doing nothing", "reference": "the reference policy"}.get(policy, f"the {policy} policy")


def arm_role(arm) -> str:
    """An arm by its role, without the names and versions a figure would carry: "the model", "doing nothing"."""
    return "the model" if str(arm).startswith("model:") else arm_words(arm)


def reading(d) -> dict:
    """The decision in words: which arm scored higher or lower, and the bounds in the order that informs (the
    one that decided first: the upper bound for "not supported", the lower one otherwise)."""
    arms = d.get("arms") if isinstance(d.get("arms"), dict) else {}
    plus = [a for a, w in sorted(arms.items()) if w > 0]
    minus = [a for a, w in sorted(arms.items()) if w < 0]
    estimate = str((d.get("estimate") or {}).get("decimal"))
    from decimal import Decimal, InvalidOperation

    try:
        value = Decimal(estimate)
        sign = (value > 0) - (value < 0)
    except InvalidOperation:
        sign = None
    direction = None
    if len(plus) == 1 and len(minus) == 1 and sign is not None:
        word = {-1: "lower than", 1: "higher than", 0: "the same as"}[sign]
        direction = f"{arm_words(plus[0])} scored {word} {arm_words(minus[0])}"
        direction = direction[0].upper() + direction[1:]
    lower = ("lower_bound", "Lower bound", "floor")
    upper = ("upper_bound", "Upper bound", "ceiling")
    order = [upper, lower] if d.get("verdict") == "not supported" else [lower, upper]
    return {"direction": direction, "bounds": order, "estimate2": fmt.decimal(estimate, 2)}
