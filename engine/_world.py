"""A family instance or episode: the fixed world a run is played in.

An instance is plain JSON (see `instance.json` in a family root, or
`engine/episodes/W*.json`). It is validated once on load; everything after that
trusts its shape. Its sha256 (canonical JSON) is the fixture hash that every
receipt chain and record is bound to.
"""

from ._canon import content_sha256
from ._errors import InputError

INSTANCE_FORMAT = 1  # bump when a field below changes meaning
ASSET_KINDS = ("ABS", "CLO", "LOAN")
EVENT_KINDS = ("capacity_cut", "haircut_change", "exit_delay", "quote_withdrawal")
AUTHORITY_KINDS = ("capacity", "tenor", "buffer")


def _need(obj, key, kind, where):
    if not isinstance(obj, dict) or key not in obj:
        raise InputError(f"{where}: missing field '{key}'")
    value = obj[key]
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind is list:
        ok = isinstance(value, list)
    elif kind is dict:
        ok = isinstance(value, dict)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise InputError(f"{where}.{key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def validate_instance(instance, where="instance"):
    """Check an instance's shape and cross-references; raise InputError naming the field."""
    if not isinstance(instance, dict):
        raise InputError(f"{where}: expected a JSON object")
    fmt = _need(instance, "format", int, where)
    if fmt != INSTANCE_FORMAT:
        raise InputError(f"{where}.format: expected {INSTANCE_FORMAT}, got {fmt} (newer formats are refused)")
    _need(instance, "instance_id", str, where)
    _need(instance, "family", str, where)
    horizon = _need(instance, "horizon", int, where)
    carry_end = _need(instance, "carry_end", int, where)
    if not 1 <= horizon <= carry_end:
        raise InputError(f"{where}.horizon: expected 1 <= horizon <= carry_end")
    offsets = _need(_need(instance, "calendar", dict, where), "offsets", list, where + ".calendar")
    if len(offsets) != carry_end + 2 or any(not isinstance(o, int) or isinstance(o, bool) for o in offsets):
        raise InputError(f"{where}.calendar.offsets: expected {carry_end + 2} integers (days 0..carry_end+1)")
    if any(b <= a for a, b in zip(offsets, offsets[1:])):
        raise InputError(f"{where}.calendar.offsets: expected strictly increasing calendar offsets")
    desk = _need(instance, "desk", dict, where)
    for key in ("opening_cash", "min_buffer", "max_tenor", "treasury_rate_bps"):
        _need(desk, key, int, where + ".desk")
    cps = {}
    for i, cp in enumerate(_need(instance, "counterparties", list, where)):
        w = f"{where}.counterparties[{i}]"
        cid = _need(cp, "id", str, w)
        _need(cp, "capacity", int, w)
        _need(cp, "name", str, w)
        kinds = _need(cp, "eligible_kinds", list, w)
        if any(k not in ASSET_KINDS for k in kinds):
            raise InputError(f"{w}.eligible_kinds: expected kinds from {ASSET_KINDS}")
        if cid in cps:
            raise InputError(f"{w}.id: duplicate id {cid}")
        cps[cid] = cp
    assets = {}
    for i, a in enumerate(_need(instance, "assets", list, where)):
        w = f"{where}.assets[{i}]"
        aid = _need(a, "id", str, w)
        if _need(a, "kind", str, w) not in ASSET_KINDS:
            raise InputError(f"{w}.kind: expected one of {ASSET_KINDS}")
        for key in ("notional", "coupon_bps", "announce_day", "settle_day", "exit_day", "haircut_floor_bps"):
            _need(a, key, int, w)
        _need(a, "name", str, w)
        _need(a, "rating", str, w)
        if a["notional"] <= 0:
            raise InputError(f"{w}.notional: expected a positive amount of cents")
        if not 1 <= a["announce_day"] <= a["settle_day"] < a["exit_day"] <= carry_end:
            raise InputError(f"{w}: expected 1 <= announce_day <= settle_day < exit_day <= carry_end")
        if aid in assets:
            raise InputError(f"{w}.id: duplicate id {aid}")
        assets[aid] = a
    quotes = {}
    for i, q in enumerate(_need(instance, "quotes", list, where)):
        w = f"{where}.quotes[{i}]"
        qid = _need(q, "id", str, w)
        for key in ("offered_day", "valid_through", "start_day", "tenor", "rate_bps", "max_notional", "haircut_bps"):
            _need(q, key, int, w)
        if _need(q, "counterparty", str, w) not in cps:
            raise InputError(f"{w}.counterparty: unknown counterparty {q['counterparty']}")
        if any(k not in ASSET_KINDS for k in _need(q, "eligible_kinds", list, w)):
            raise InputError(f"{w}.eligible_kinds: expected kinds from {ASSET_KINDS}")
        if not 1 <= q["offered_day"] <= q["valid_through"] or q["tenor"] < 1:
            raise InputError(f"{w}: expected offered_day <= valid_through and tenor >= 1")
        if qid in quotes:
            raise InputError(f"{w}.id: duplicate id {qid}")
        quotes[qid] = q
    for i, e in enumerate(_need(instance, "events", list, where)):
        w = f"{where}.events[{i}]"
        _need(e, "id", str, w)
        kind = _need(e, "kind", str, w)
        if kind not in EVENT_KINDS:
            raise InputError(f"{w}.kind: expected one of {EVENT_KINDS}")
        _need(e, "effective_day", int, w)
        _need(e, "source", str, w)
        if kind == "capacity_cut":
            if _need(e, "counterparty", str, w) not in cps:
                raise InputError(f"{w}.counterparty: unknown counterparty")
            _need(e, "capacity", int, w)
        elif kind == "haircut_change":
            if _need(e, "asset", str, w) not in assets:
                raise InputError(f"{w}.asset: unknown asset")
            _need(e, "haircut_floor_bps", int, w)
        elif kind == "exit_delay":
            if _need(e, "asset", str, w) not in assets:
                raise InputError(f"{w}.asset: unknown asset")
            new_exit = _need(e, "exit_day", int, w)
            if not assets[e["asset"]]["exit_day"] < new_exit <= carry_end:
                raise InputError(f"{w}.exit_day: expected a later exit within carry_end")
            if e["effective_day"] > assets[e["asset"]]["exit_day"]:
                raise InputError(f"{w}.effective_day: expected on or before the old exit day")
        elif kind == "quote_withdrawal":
            if _need(e, "quote", str, w) not in quotes:
                raise InputError(f"{w}.quote: unknown quote")
    sources = {}
    for i, s in enumerate(_need(instance, "sources", list, where)):
        w = f"{where}.sources[{i}]"
        sid = _need(s, "id", str, w)
        _need(s, "published_day", int, w)
        _need(s, "title", str, w)
        _need(s, "text", str, w)
        sources[sid] = s
    for i, e in enumerate(instance["events"]):
        src = sources.get(e["source"])
        if src is None or src["published_day"] > e["effective_day"]:
            raise InputError(f"{where}.events[{i}].source: expected a source published on or before the effective day")
    for i, p in enumerate(_need(instance, "approval_policy", list, where)):
        w = f"{where}.approval_policy[{i}]"
        if _need(p, "kind", str, w) not in AUTHORITY_KINDS:
            raise InputError(f"{w}.kind: expected one of {AUTHORITY_KINDS}")
        for key in ("max_amount", "lag", "valid_days"):
            _need(p, key, int, w)
        if p["lag"] < 1:
            raise InputError(f"{w}.lag: expected at least 1 day")
        if "counterparty" in p and p["counterparty"] not in cps:
            raise InputError(f"{w}.counterparty: unknown counterparty")
    return instance


def fixture_sha256(instance) -> str:
    """The fixture hash: sha256 of the instance's canonical JSON."""
    return content_sha256(instance)


def with_horizon(instance, horizon: int):
    """The same world observed to a different end day (1..carry_end)."""
    if not isinstance(horizon, int) or isinstance(horizon, bool) or not 1 <= horizon <= instance["carry_end"]:
        raise InputError(f"observation end day: expected 1..{instance['carry_end']}, got {horizon}")
    if horizon == instance["horizon"]:
        return instance
    out = dict(instance)
    out["horizon"] = horizon
    return out


def span(instance, day: int) -> int:
    """Calendar days from business day `day` to the next one."""
    offsets = instance["calendar"]["offsets"]
    return offsets[day + 1] - offsets[day]


def calendar_days(instance, start: int, end: int) -> int:
    offsets = instance["calendar"]["offsets"]
    return offsets[end] - offsets[start]
