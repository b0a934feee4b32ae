"""A family instance or episode: the fixed world a run is played in.

An instance is plain JSON (see `instance.json` in a family root, or
`engine/episodes/W*.json`). It is validated once on load; everything after that
trusts its shape. Its sha256 (canonical JSON) is the fixture hash that every
receipt chain and record is bound to.
"""

import re

from ._canon import MAX_SAFE_INTEGER, NotCanonical, canonical_json, content_sha256
from ._errors import InputError
from ._vocabulary import AUTHORITY_KINDS

INSTANCE_FORMAT = 1  # bump when a field below changes meaning
ASSET_KINDS = ("ABS", "CLO", "LOAN")
EVENT_KINDS = ("capacity_cut", "haircut_change", "exit_delay", "quote_withdrawal")

# Limits on a world (documented on the contract page): ids are short ASCII
# names, so every object key the engine writes is ASCII; amounts and counts are
# bounded so that no sum, tail or interest numerator leaves +-(2^53-1).
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
_INSTANCE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]{0,63}")
MAX_CARRY_END = 200
MAX_NOTIONAL = 10**12          # cents: 10 billion per position
MAX_AMOUNT = 10**14            # cents: cash, capacities, limits
MAX_RATE_BPS = 100_000         # 1,000 % a year
MAX_HAIRCUT_BPS = 10_000       # 100 %
MAX_OFFSET = 10_000            # calendar days from day 0
MAX_NAME, MAX_SOURCE_TEXT = 200, 20_000
MAX_ASSETS, MAX_COUNTERPARTIES, MAX_QUOTES, MAX_EVENTS, MAX_SOURCES, MAX_POLICIES = 50, 20, 1000, 200, 1000, 20


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


def _int(obj, key, where, low, high):
    """An integer field within [low, high]: the bounds keep every derived amount
    (cent-days of tail, interest numerators) inside the exact JSON integer range."""
    value = _need(obj, key, int, where)
    if not low <= value <= high:
        raise InputError(f"{where}.{key}: expected an integer in {low}..{high}, got {value}")
    return value


def _id(obj, key, where, pattern=None):
    value = _need(obj, key, str, where)
    if not (pattern or _ID).fullmatch(value):
        raise InputError(f"{where}.{key}: expected an id of 1..32 letters, digits, '_', '-' or '.', got {value[:40]!r}")
    return value


def _text(obj, key, where, limit):
    value = _need(obj, key, str, where)
    if len(value) > limit:
        raise InputError(f"{where}.{key}: longer than {limit} characters")
    return value


def _list(obj, key, where, limit):
    value = _need(obj, key, list, where)
    if len(value) > limit:
        raise InputError(f"{where}.{key}: more than {limit} entries")
    return value


def validate_instance(instance, where="instance"):
    """Check an instance's shape, bounds and cross-references; raise InputError naming the field."""
    if not isinstance(instance, dict):
        raise InputError(f"{where}: expected a JSON object")
    fmt = _need(instance, "format", int, where)
    if fmt != INSTANCE_FORMAT:
        raise InputError(f"{where}.format: expected {INSTANCE_FORMAT}, got {fmt} (newer formats are refused)")
    _id(instance, "instance_id", where, _INSTANCE_ID)
    _id(instance, "family", where)
    if instance.get("seed") is not None:  # episodes have none
        _int(instance, "seed", where, 1, MAX_SAFE_INTEGER)
    if "title" in instance:
        _text(instance, "title", where, MAX_NAME)
    carry_end = _int(instance, "carry_end", where, 1, MAX_CARRY_END)
    horizon = _int(instance, "horizon", where, 1, carry_end)
    days = (1, carry_end)
    calendar = _need(instance, "calendar", dict, where)
    offsets = _need(calendar, "offsets", list, where + ".calendar")
    if len(offsets) != carry_end + 2 or any(not isinstance(o, int) or isinstance(o, bool) or abs(o) > MAX_OFFSET
                                            for o in offsets):
        raise InputError(f"{where}.calendar.offsets: expected {carry_end + 2} integers within +-{MAX_OFFSET} "
                         f"(days 0..carry_end+1)")
    if any(b <= a for a, b in zip(offsets, offsets[1:])):
        raise InputError(f"{where}.calendar.offsets: expected strictly increasing calendar offsets")
    if "start_date" in calendar:
        _text(calendar, "start_date", where + ".calendar", 10)
    desk = _need(instance, "desk", dict, where)
    _int(desk, "opening_cash", where + ".desk", 0, MAX_AMOUNT)
    _int(desk, "min_buffer", where + ".desk", 0, MAX_AMOUNT)
    _int(desk, "max_tenor", where + ".desk", 1, MAX_OFFSET)
    _int(desk, "treasury_rate_bps", where + ".desk", 0, MAX_RATE_BPS)
    cps = {}
    for i, cp in enumerate(_list(instance, "counterparties", where, MAX_COUNTERPARTIES)):
        w = f"{where}.counterparties[{i}]"
        cid = _id(cp, "id", w)
        _int(cp, "capacity", w, 0, MAX_AMOUNT)
        _text(cp, "name", w, MAX_NAME)
        kinds = _need(cp, "eligible_kinds", list, w)
        if any(k not in ASSET_KINDS for k in kinds):
            raise InputError(f"{w}.eligible_kinds: expected kinds from {ASSET_KINDS}")
        if cid in cps:
            raise InputError(f"{w}.id: duplicate id {cid}")
        cps[cid] = cp
    assets = {}
    for i, a in enumerate(_list(instance, "assets", where, MAX_ASSETS)):
        w = f"{where}.assets[{i}]"
        aid = _id(a, "id", w)
        if _need(a, "kind", str, w) not in ASSET_KINDS:
            raise InputError(f"{w}.kind: expected one of {ASSET_KINDS}")
        _int(a, "notional", w, 1, MAX_NOTIONAL)
        _int(a, "coupon_bps", w, 0, MAX_RATE_BPS)
        _int(a, "haircut_floor_bps", w, 0, MAX_HAIRCUT_BPS)
        for key in ("announce_day", "settle_day", "exit_day"):
            _int(a, key, w, *days)
        _text(a, "name", w, MAX_NAME)
        _text(a, "rating", w, MAX_NAME)
        if not a["announce_day"] <= a["settle_day"] < a["exit_day"]:
            raise InputError(f"{w}: expected 1 <= announce_day <= settle_day < exit_day <= carry_end")
        if aid in assets:
            raise InputError(f"{w}.id: duplicate id {aid}")
        assets[aid] = a
    quotes = {}
    for i, q in enumerate(_list(instance, "quotes", where, MAX_QUOTES)):
        w = f"{where}.quotes[{i}]"
        qid = _id(q, "id", w)
        for key in ("offered_day", "valid_through", "start_day"):
            _int(q, key, w, *days)
        _int(q, "tenor", w, 1, MAX_OFFSET)
        _int(q, "rate_bps", w, 0, MAX_RATE_BPS)
        _int(q, "max_notional", w, 0, MAX_AMOUNT)
        _int(q, "haircut_bps", w, 0, MAX_HAIRCUT_BPS)
        if _need(q, "counterparty", str, w) not in cps:
            raise InputError(f"{w}.counterparty: unknown counterparty {q['counterparty'][:40]!r}")
        if any(k not in ASSET_KINDS for k in _need(q, "eligible_kinds", list, w)):
            raise InputError(f"{w}.eligible_kinds: expected kinds from {ASSET_KINDS}")
        if not q["offered_day"] <= q["valid_through"]:
            raise InputError(f"{w}: expected offered_day <= valid_through")
        if qid in quotes:
            raise InputError(f"{w}.id: duplicate id {qid}")
        quotes[qid] = q
    event_ids = set()
    for i, e in enumerate(_list(instance, "events", where, MAX_EVENTS)):
        w = f"{where}.events[{i}]"
        if _id(e, "id", w) in event_ids:
            raise InputError(f"{w}.id: duplicate id {e['id']}")
        event_ids.add(e["id"])
        kind = _need(e, "kind", str, w)
        if kind not in EVENT_KINDS:
            raise InputError(f"{w}.kind: expected one of {EVENT_KINDS}")
        _int(e, "effective_day", w, *days)
        _id(e, "source", w)
        if kind == "capacity_cut":
            if _need(e, "counterparty", str, w) not in cps:
                raise InputError(f"{w}.counterparty: unknown counterparty")
            _int(e, "capacity", w, 0, MAX_AMOUNT)
        elif kind == "haircut_change":
            if _need(e, "asset", str, w) not in assets:
                raise InputError(f"{w}.asset: unknown asset")
            if e["effective_day"] < assets[e["asset"]]["announce_day"]:
                raise InputError(f"{w}.effective_day: expected on or after the asset's announce day")
            _int(e, "haircut_floor_bps", w, 0, MAX_HAIRCUT_BPS)
        elif kind == "exit_delay":
            if _need(e, "asset", str, w) not in assets:
                raise InputError(f"{w}.asset: unknown asset")
            new_exit = _int(e, "exit_day", w, *days)
            if not assets[e["asset"]]["exit_day"] < new_exit:
                raise InputError(f"{w}.exit_day: expected a later exit within carry_end")
            if not assets[e["asset"]]["announce_day"] <= e["effective_day"] <= assets[e["asset"]]["exit_day"]:
                raise InputError(f"{w}.effective_day: expected between the asset's announce day and its old exit day")
        elif kind == "quote_withdrawal":
            if _need(e, "quote", str, w) not in quotes:
                raise InputError(f"{w}.quote: unknown quote")
            if e["effective_day"] <= quotes[e["quote"]]["offered_day"]:
                # a quote withdrawn before it is ever shown would leak its id through the withdrawal
                raise InputError(f"{w}.effective_day: expected after the quote's offered day")
    sources = {}
    for i, s in enumerate(_list(instance, "sources", where, MAX_SOURCES)):
        w = f"{where}.sources[{i}]"
        sid = _id(s, "id", w)
        _int(s, "published_day", w, *days)
        _text(s, "title", w, MAX_NAME)
        _text(s, "text", w, MAX_SOURCE_TEXT)
        if sid in sources:  # (an event's disclosing source must be one document)
            raise InputError(f"{w}.id: duplicate id {sid}")
        sources[sid] = s
    for i, e in enumerate(instance["events"]):
        src = sources.get(e["source"])
        if src is None or src["published_day"] > e["effective_day"]:
            raise InputError(f"{where}.events[{i}].source: expected a source published on or before the effective day")
    for i, p in enumerate(_list(instance, "approval_policy", where, MAX_POLICIES)):
        w = f"{where}.approval_policy[{i}]"
        if _need(p, "kind", str, w) not in AUTHORITY_KINDS:
            raise InputError(f"{w}.kind: expected one of {AUTHORITY_KINDS}")
        _int(p, "max_amount", w, 0, MAX_AMOUNT)
        _int(p, "lag", w, 1, MAX_CARRY_END)
        _int(p, "valid_days", w, 0, MAX_CARRY_END)
        if "counterparty" in p and (not isinstance(p["counterparty"], str) or p["counterparty"] not in cps):
            raise InputError(f"{w}.counterparty: expected the id of a counterparty of this world")
    try:
        canonical_json(instance)  # extra fields too: a world must hash canonically
    except NotCanonical as exc:
        raise InputError(f"{where}: {exc}") from None
    span = offsets[-1] - offsets[0]
    if sum(a["notional"] for a in assets.values()) * span > MAX_SAFE_INTEGER:
        raise InputError(f"{where}.assets: total notional over {span} calendar days is too large for exact "
                         f"integer tails (at most {MAX_SAFE_INTEGER // span} cents in all)")
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
