"""Engine JSON as a person reads it: the transcript's model and tool JSON
indented, with money in currency units and tails in money-days (the keys are
fmt.MONEY_KEYS and fmt.MONEY_DAY_KEYS, the engine's own; the transcript file
keeps the integers). A key that names its unit (`tail_cent_days`) keeps its integer in that unit, its
money-days reading beside it, so the key and the number never disagree. A receipt's payload on a run page is a figure instead
(fmt "payload"), so verify can check it.
"""

import json

from .fmt import MONEY_DAY_KEYS, MONEY_KEYS, money


def pretty(value) -> str | None:
    """JSON text, indented, with money and money-days integers written as amounts ("cash": 15,000,000.00);
    None for a value nested too deeply to walk (the page then shows the text as written)."""

    def walk(v, key, depth):
        pad = "  " * depth
        if isinstance(v, dict):
            if not v:
                return "{}"
            items = [f"{pad}  {json.dumps(k, ensure_ascii=False)}: {walk(v[k], k, depth + 1)}" for k in v]
            return "{\n" + ",\n".join(items) + f"\n{pad}}}"
        if isinstance(v, list):
            if not v:
                return "[]"
            if all(not isinstance(x, (dict, list)) for x in v) and len(v) <= 12:
                return "[" + ", ".join(walk(x, key, depth + 1) for x in v) + "]"
            return "[\n" + ",\n".join(f"{pad}  {walk(x, key, depth + 1)}" for x in v) + f"\n{pad}]"
        if isinstance(v, int) and not isinstance(v, bool) and "cent" in str(key) and key in MONEY_DAY_KEYS:
            # the key names its unit (cent-days): the integer as written in that unit, then its reading
            return f"{v:,} cent-days ({money(v)} money-days)"
        if isinstance(v, int) and not isinstance(v, bool) and (key in MONEY_KEYS or key in MONEY_DAY_KEYS):
            return money(v) + (" money-days" if key in MONEY_DAY_KEYS else "")
        return json.dumps(v, ensure_ascii=False)

    try:
        return walk(value, None, 0)
    except RecursionError:
        return None
