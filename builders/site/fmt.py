"""Small display helpers shared by the page templates and the OG cards."""

import json
import re
import shlex

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def money(cents) -> str:
    """Integer cents as a grouped currency amount; None as an em dash."""
    if cents is None:
        return "—"
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(int(cents)), 100)
    return f"{sign}{whole:,}.{frac:02d}"


def usd(amount) -> str:
    """Integer micro-USD as dollars for reading: cents always, sub-cent digits only
    when there are any ($0.00, $50.00, $0.001234); None as an em dash."""
    if amount is None or isinstance(amount, bool) or not isinstance(amount, int):
        return "—"
    sign = "-" if amount < 0 else ""
    whole, frac = divmod(abs(amount), 1_000_000)
    digits = f"{frac:06d}".rstrip("0").ljust(2, "0")
    return f"{sign}${whole:,}.{digits}"


micro_usd = usd  # the name the comparison templates use: "$0.00", never "$0.000000"


def usd_cents(amount) -> str:
    """Integer micro-USD to the cent, for pages that print at most two decimals (a decision's page): rounded half
    up, and an amount under a cent but above zero says so ("under $0.01") rather than rounding it away."""
    if amount is None or isinstance(amount, bool) or not isinstance(amount, int):
        return "—"
    if 0 < abs(amount) < 10_000:
        return "under $0.01" if amount > 0 else "under -$0.01"
    sign = "-" if amount < 0 else ""
    cents = (abs(amount) + 5_000) // 10_000
    return f"{sign}${cents // 100:,}.{cents % 100:02d}"


def count(n) -> str:
    """An integer count with thousands separators (1,000); anything else as it is."""
    if isinstance(n, int) and not isinstance(n, bool):
        return f"{n:,}"
    return "—" if n is None else str(n)


def per_call(total, calls):
    """`total` / `calls` rounded half up in integers (a mean per model call), or None without calls."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (total, calls)) or calls <= 0 or total < 0:
        return None
    return (2 * total + calls) // (2 * calls)


def decimal(text, places=2, rounding="half-even") -> str:
    """A decision's decimal string ("22.955000000") at `places` decimals ("22.96"),
    rounded exactly: "floor" for a lower bound, "ceiling" for an upper one, so a
    shortened bound never claims more than the exact one. Grouped thousands.
    Anything that is not a decimal string is returned as it is."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, InvalidOperation

    modes = {"half-even": ROUND_HALF_EVEN, "floor": ROUND_FLOOR, "ceiling": ROUND_CEILING}
    if not isinstance(text, str) or not DECIMAL.match(text):
        return "—" if text is None else str(text)
    try:
        value = Decimal(text).quantize(Decimal(1).scaleb(-places), rounding=modes[rounding])
    except InvalidOperation:
        return text
    return f"{value.copy_abs() if value == 0 else value:,.{places}f}"


DECIMAL = re.compile(r"^-?[0-9]{1,30}(\.[0-9]{1,30})?$", re.ASCII)


def short(sha) -> str:
    return (sha or "")[:12] or "—"


def score_text(score) -> str:
    if not score:
        return "no score"
    return f"{score['points']}/{score['denominator']}"


def duration(ms) -> str:
    """Milliseconds as read: "850 ms", or seconds to a tenth rounded half up in integers ("1.3 s" for 1250),
    so the page and checks.js `duration` give the same digits (a float's rounding differs between the two)."""
    if not isinstance(ms, int) or isinstance(ms, bool):
        return "—"
    if ms < 1000:
        return f"{ms} ms"
    tenths = (ms + 50) // 100
    return f"{tenths // 10:,}.{tenths % 10} s"


def shell(argv) -> str:
    return " ".join(shlex.quote(a if isinstance(a, str) else _text(a)) for a in argv or [])


def fixture_label(fixture) -> str:
    """W3 · M4_fully_hedged_tail, FUND_01 seed 2 · do-nothing, or W1 (checks.js `fixtureLabel`)."""
    if not isinstance(fixture, dict) or not fixture:
        return "—"
    if "episode" in fixture:
        return " · ".join(_text(x) for x in (fixture["episode"], fixture.get("mutation")) if x)
    if "family" in fixture:
        return (
            f"{_text(fixture['family'])} seed {_text(fixture.get('seed'))} · {_text(fixture.get('policy', ''))}"
        ).rstrip(" ·")
    return ", ".join(f"{k}={_text(v)}" for k, v in sorted(fixture.items()) if k != "kind")


def compact(obj) -> str:
    """JSON for reading: sorted keys, ", " and ": " separators (checks.js `compact`)."""
    return json.dumps(obj, sort_keys=True, separators=(", ", ": "), ensure_ascii=False)


def _text(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return compact(value)


def _score(v):
    return f"{_text(v.get('points'))}/{_text(v.get('denominator'))}" if isinstance(v, dict) else "no score"


def _points(v):
    return f"{_text(v.get('points'))}/{_text(v.get('max'))}" if isinstance(v, dict) else _text(v)


def _decision(x):
    x = x if isinstance(x, dict) else {}
    reason = f" ({_text(x['reason'])})" if x.get("reason") else ""
    return f"{_text(x.get('action'))} {_text(x.get('type'))} {_text(x.get('decision'))}{reason}"


def _report(d):
    d = d if isinstance(d, dict) else {}
    return f"{_text(d.get('report_matched'))}/{_text(d.get('report_fields'))}"


def _command(c):
    """The allow-listed environment then the quoted argv, as a shell line (checks.js `command`)."""
    c = c if isinstance(c, dict) else {}
    env = c.get("env") if isinstance(c.get("env"), dict) else {}
    argv = c.get("argv") if isinstance(c.get("argv"), list) else []
    parts = [f"{k}={_text(v)}" for k, v in sorted(env.items())]
    if argv:
        parts.append(shell(argv))
    return " ".join(parts)


# A gate's detail names the report figures it faults in the engine's integers
# ("day 1 cash 740000000 vs 600000000 (2333 bps)"); a person reads them as
# money and money-days. Only these two phrases, ASCII only and at most 15
# digits (exact in JavaScript too): site/assets/desk/readable.js `gateDetail`
# is the same rewrite (the desk's result and verify use it).
_DETAIL_MONEY = re.compile(
    r"\b(cash|assets\.[A-Za-z0-9_]+\.(?:funded|unfunded)) (-?[0-9]{1,15}) vs (-?[0-9]{1,15}) \(", re.ASCII
)
_DETAIL_TAIL = re.compile(r"\btail_cent_days (-?[0-9]{1,15}) < ([0-9]{1,15}) cent-days\b", re.ASCII)


def _gate_detail(v) -> str:
    if not isinstance(v, str):
        return _text(v)
    v = _DETAIL_MONEY.sub(lambda m: f"{m[1]} {money(int(m[2]))} vs {money(int(m[3]))} (", v)
    return _DETAIL_TAIL.sub(lambda m: f"tail {money(int(m[1]))} < {money(int(m[2]))} money-days", v)


# How a figure reads on a page, by format. site/assets/desk/checks.js
# FORMATS must give the same text for the same value: verify compares them.
FORMATS = {
    "text": _text,
    "money": lambda v: money(v) if isinstance(v, int) and not isinstance(v, bool) or v is None else _text(v),
    # a tail in cent-days read as money-days (cents / 100 x days)
    "money_days": lambda v: money(v) + " money-days" if isinstance(v, int) and not isinstance(v, bool) else _text(v),
    "short": lambda v: v[:12] if isinstance(v, str) and v else "—",
    "score": _score,
    "points": _points,
    "verdict": lambda v: "no verdict" if v is None else _text(v),
    "passed": lambda v: "passed" if v is True else "did not pass",
    "json": compact,
    "list": lambda v: ", ".join(_text(x) for x in v) if isinstance(v, list) and v else "none",
    "report": _report,
    "decision": _decision,
    "fixture": lambda v: fixture_label(v),
    "count": lambda v: str(len(v) if isinstance(v, list) else 0),
    "command": _command,
    "gate_detail": _gate_detail,
}


def figure_text(value, format: str) -> str:
    return FORMATS[format](value)


def _expectation(e) -> str:
    """An adversarial or reference fixture's expected (or observed) outcome in words (checks.js `expectation`)."""
    if not isinstance(e, dict) or not e:
        return "—"
    parts = []
    for key in sorted(e):
        v = e[key]
        if key == "refusal" and isinstance(v, dict):
            parts.append(f"refuses {_text(v.get('action'))} on day {_text(v.get('day'))} ({_text(v.get('reason'))})")
        elif key == "failed_gates" and isinstance(v, list):
            parts.append("fails " + ", ".join(_text(x) for x in v))
        else:
            parts.append(f"{key} {_text(v)}")
    return "; ".join(parts)


FORMATS["expectation"] = _expectation

# Keys whose integer values are money (cents) or money-days (cent-days) in the
# engine's receipts, reports and tool outputs. site/assets/desk/checks.js
# PAYLOAD_MONEY_KEYS and PAYLOAD_MONEY_DAY_KEYS are the same sets.
MONEY_KEYS = frozenset(
    {
        "all_in_cost",
        "amount",
        "capacity",
        "capacity_before",
        "cash",
        "coupon",
        "funded",
        "funding_cost_to_date",
        "haircut",
        "headroom",
        "interest",
        "margin_returned",
        "max_notional",
        "notional",
        "peak_usage",
        "principal",
        "reference_all_in_cost",
        "remaining",
        "treasury_charge",
        "unfunded",
        "usage",
        "used",
    }
)
MONEY_DAY_KEYS = frozenset({"tail_cent_days", "realized_tail", "unfunded_tail", "reference_realized_tail"})
_HASH64 = re.compile(r"^[0-9a-f]{64}$", re.ASCII)


def _payload_value(key, v) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        if key in MONEY_KEYS:
            return money(v)
        if key in MONEY_DAY_KEYS:
            return money(v) + " money-days"
        return str(v)
    if isinstance(v, str) and _HASH64.match(v):
        return v[:12] + "…"
    return _text(v)


def _payload(value) -> str:
    """A receipt's payload as a person reads it (checks.js `payloadText`): the scalars in key
    order, grouped by the object that holds them -- "batch.report.assets.A1: funded
    14,000,000.00 · unfunded 0.00; day 4" -- money as money, tails in money-days, a 64-hex
    hash by its first 12 digits, list items numbered from 1. Walked with a stack, so no
    nesting depth can overflow it."""
    leaves, stack = [], [("", "", value, None)]  # (parent label, name in the parent, value, governing key)
    while stack:
        parent, name, v, key = stack.pop()
        label = f"{parent}.{name}" if parent and name and not name.startswith("[") else parent + name
        if isinstance(v, dict) and v:
            stack.extend((label, k, v[k], k) for k in sorted(v, reverse=True))
        elif isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v):
            stack.extend((label, f"[{i + 1}]", v[i], key) for i in range(len(v) - 1, -1, -1))
        else:
            if isinstance(v, (dict, list)) and not v:
                shown = "none"
            elif isinstance(v, list):
                shown = ", ".join(_payload_value(None, x) for x in v)
            else:
                shown = _payload_value(key, v)
            leaves.append((parent, f"{name} {shown}" if name else shown))
    parts = []
    for i, (parent, field) in enumerate(leaves):
        if parent and i and leaves[i - 1][0] == parent:
            parts[-1] += f" · {field}"
        else:
            parts.append(f"{parent}: {field}" if parent else field)
    return "; ".join(parts) if parts else "—"


FORMATS["payload"] = _payload


def _whole(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def cost_texts(content) -> tuple:
    """(the Attempts table's cost, the transcript page's cost line) of a worker attempt's content: dollars from
    the ledger; a local model's CPU time and tokens, in total and per model call (checks.js `costLine`)."""
    model, cost = _dict(_dict(content).get("model")), _dict(_dict(content).get("cost"))
    local = model.get("provider") == "llama-cpp"
    money = usd(cost.get("micro_usd")) + (" (local)" if local else "")
    if _whole(cost.get("unresolved_micro_usd")):
        money += f" + {usd(cost['unresolved_micro_usd'])} unresolved"
    calls, cpu = _whole(cost.get("calls")), _whole(cost.get("cpu_ms"))
    t_in, t_out = _whole(cost.get("tokens_in")), _whole(cost.get("tokens_out"))
    short, detail = [money], [money + (": a model run on this host, no charge" if local else "")]
    if calls is not None:
        detail.append(f"{count(calls)} model call{'s' if calls != 1 else ''}")
    if cpu is not None:
        short.append(f"CPU {duration(cpu)}")
        per = per_call(cpu, calls)
        detail.append(f"CPU {duration(cpu)} in total" + (f", {duration(per)} per call" if per is not None else ""))
    if t_in is not None and t_out is not None:
        short.append(f"{count(t_in)} / {count(t_out)} tokens")
        per_in, per_out = per_call(t_in, calls), per_call(t_out, calls)
        detail.append(
            f"tokens {count(t_in)} in and {count(t_out)} out in total"
            + (f", {count(per_in)} in and {count(per_out)} out per call" if per_in is not None else "")
        )
    return " · ".join(short), " · ".join(detail)


def inspect_usage(content) -> dict:
    """{tokens_in, tokens_out} an Inspect attempt's log reports (content.inspect.usage, summed over its models):
    provenance, outside fundbook's ledger."""
    usage = _dict(_dict(content).get("inspect")).get("usage")
    out = {"tokens_in": 0, "tokens_out": 0}
    for per_model in usage.values() if isinstance(usage, dict) else []:
        out["tokens_in"] += _whole(_dict(per_model).get("input_tokens")) or 0
        out["tokens_out"] += _whole(_dict(per_model).get("output_tokens")) or 0
    return out


def inspect_cost_texts(content) -> tuple:
    """An Inspect attempt's cost: none in fundbook's ledger; the tokens Inspect logged, as provenance."""
    u = inspect_usage(content)
    return (
        f"outside the ledger · {count(u['tokens_in'])} / {count(u['tokens_out'])} tokens (Inspect's log)",
        f"not in fundbook's ledger (Inspect made these calls, not fundbook) · Inspect logged "
        f"{count(u['tokens_in'])} tokens in and {count(u['tokens_out'])} out, copied as provenance",
    )


def inspect_end(limit) -> str:
    """How an Inspect attempt ended: the limit Inspect stopped the sample at, if any."""
    if isinstance(limit, dict) and limit:
        return f"Inspect's {_text(limit.get('type'))} limit: {_text(limit.get('reason'))}"
    return "the model stopped; the desk closed the remaining checkpoints"


def end_reason(term) -> str:
    """A worker attempt's end: its termination reason, else the limit that ended it."""
    t = _dict(term)
    return _text(t.get("reason") or t.get("limit") or "—")


_TRY = re.compile(r"\.([2-9][0-9]*)$")


def hms(ms) -> str:
    """Milliseconds as h:mm:ss (whole seconds, cut), a participant's task clock."""
    if _whole(ms) is None:
        return _text(ms)
    sign, s = ("-", -ms // 1000) if ms < 0 else ("", ms // 1000)
    return f"{sign}{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _model(m) -> str:
    m = _dict(m)
    return f"{_text(m.get('provider', '?'))}:{_text(m.get('id', '?'))}"


# Figures of attempt pages and of the pages built over many records (checks.js FORMATS holds the same).
FORMATS.update(
    {
        "duration": duration,
        "usd": usd,
        "number": lambda v: count(v) if _whole(v) is not None else _text(v),
        "points100": lambda v: f"{_text(v)}/100",
        # a decimal string at two decimals, half to even (decimal(); checks.js roundDecimal)
        "decimal2": lambda v: decimal(v, 2) if isinstance(v, str) else _text(v),
        "world": lambda v: fixture_label(
            {k: x for k, x in v.items() if k != "policy"} if isinstance(v, dict) else None
        ),
        "model": _model,
        "date": lambda v: v[:10] if isinstance(v, str) and v else "undated",
        "hms": hms,
        # an attempt id as its try (builders/counting.py try_number: "NAME.2" is the second try of NAME)
        "try": lambda v: f"try {int(_TRY.search(v).group(1)) if isinstance(v, str) and _TRY.search(v) else 1}",
        "cost": lambda c: cost_texts(c)[1],
        "inspect_cost": lambda c: inspect_cost_texts(c)[1],
        "inspect_end": inspect_end,
        "end_reason": end_reason,
    }
)


_RAW_MICRO_USD = re.compile(r"(?<![\w.,])(-?[0-9]{1,18}) micro-USD\b", re.ASCII)
_RAW_COUNT = re.compile(r"(?<![\w.,/-])([0-9]{4,18})(?= (?:tokens|calls|steps|actions|out)\b)", re.ASCII)


def readable_units(text: str) -> str:
    """A launcher-written summary with its raw units read: "0 micro-USD" as "$0.00", "25555 tokens" as
    "25,555 tokens" (the transcript file keeps the text as written)."""
    if not isinstance(text, str):
        return text
    text = _RAW_MICRO_USD.sub(lambda m: usd(int(m.group(1))), text)
    return _RAW_COUNT.sub(lambda m: f"{int(m.group(1)):,}", text)
