"""Engine JSON as a person reads it: money in currency units, tails in
money-days, every other value as it is.

A receipt's payload (or a transcript's tool output) is flattened into
(label, path, format) leaves; a page shows each leaf as a figure at its path,
so verify compares every value shown with the re-executed record, and the
record itself keeps the engine's integers. The keys are the engine's own:
site/assets/desk/readable.js lists the same money keys for the desk.
"""

import json

MONEY_KEYS = frozenset({
    "all_in_cost", "amount", "capacity", "capacity_before", "cash", "coupon", "funded", "funding_cost_to_date",
    "haircut", "headroom", "interest", "margin_returned", "max_notional", "notional", "peak_usage", "principal",
    "reference_all_in_cost", "remaining", "treasury_charge", "unfunded", "usage", "used"})
MONEY_DAY_KEYS = frozenset({"tail_cent_days", "realized_tail", "unfunded_tail", "reference_realized_tail"})
MAX_LEAVES = 2000        # a pathological payload is shown as JSON instead


def format_for(key) -> str:
    """The figure format of an integer under `key`."""
    if key in MONEY_KEYS:
        return "money"
    if key in MONEY_DAY_KEYS:
        return "money_days"
    return "text"


def _label(keys) -> str:
    out = ""
    for k in keys:
        out += f"[{k + 1}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out


def leaves(value, prefix=()) -> list | None:
    """[(label, relative path, format)] for every scalar in `value`; None when there are too many."""
    out = []
    stack = [(prefix, value, None)]
    while stack:
        keys, v, key = stack.pop()
        if isinstance(v, dict):
            stack.extend((keys + (k,), v[k], k) for k in sorted(v, reverse=True))
        elif isinstance(v, list) and v and any(isinstance(x, (dict, list)) for x in v):
            stack.extend((keys + (i,), v[i], key) for i in range(len(v) - 1, -1, -1))
        else:
            integer = isinstance(v, int) and not isinstance(v, bool)
            fmt = format_for(key) if integer else "list" if isinstance(v, list) else "text"
            out.append((_label(keys), list(keys), fmt))
        if len(out) > MAX_LEAVES:
            return None
    return out


def pretty(value) -> str:
    """JSON text, indented, with money and money-days integers written as amounts ("cash": 15,000,000.00)."""
    from .fmt import money

    def walk(v, key, depth):
        pad = "  " * depth
        if isinstance(v, dict):
            if not v:
                return "{}"
            items = [f'{pad}  {json.dumps(k, ensure_ascii=False)}: {walk(v[k], k, depth + 1)}' for k in v]
            return "{\n" + ",\n".join(items) + f"\n{pad}}}"
        if isinstance(v, list):
            if not v:
                return "[]"
            if all(not isinstance(x, (dict, list)) for x in v) and len(v) <= 12:
                return "[" + ", ".join(walk(x, key, depth + 1) for x in v) + "]"
            return "[\n" + ",\n".join(f"{pad}  {walk(x, key, depth + 1)}" for x in v) + f"\n{pad}]"
        if isinstance(v, int) and not isinstance(v, bool) and format_for(key) != "text":
            return money(v) + (" money-days" if key in MONEY_DAY_KEYS else "")
        return json.dumps(v, ensure_ascii=False)

    try:
        return walk(value, None, 0)
    except RecursionError:
        return json.dumps(value, ensure_ascii=False)
