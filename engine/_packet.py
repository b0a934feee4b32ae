"""The packet: everything a desk may see on day d, and nothing else.

Read-only JSON: the day, the public book (cash, positions with title status,
funding trades, limits and usage, approvals, breaches), quotes offered and
still valid today, sources published on or before today, and the receipts of
earlier days; quotes shown on earlier days that have expired or been
withdrawn since are listed apart (`expired_quotes`), so the tools can answer
exactly as the engine does. Never: future events or sources, unannounced assets or quotes,
dated approval responses, the reference plan, gold reports or mutations -- nor the
instance id, whose seed would let anyone regenerate the whole world.
"""

from ._book import copy_book, counterparty_usage, funding_cost_to_date
from ._errors import shown
from ._rules import known_quote, quote_visible
from ._vocabulary import APPROVAL_STATUSES

PACKET_FORMAT = 3  # bump when a field changes meaning (2: world_commitment, expired_quotes; 3: no instance_id)

PUBLIC_BOOK_KEYS = ("cash", "desk", "calendar", "assets", "trades", "quote_usage", "withdrawn_quotes",
                    "approvals", "breaches", "counters")


def build_packet(instance, market, book, day, receipts, commitment) -> dict:
    """The packet for the open day `day` (the book as opened, before the batch)."""
    cps = []
    for cid in sorted(book["counterparties"]):
        cp = book["counterparties"][cid]
        usage = counterparty_usage(book, cid)
        cps.append({"id": cid, "name": cp["name"], "capacity": cp["capacity"], "usage": usage,
                    "headroom": cp["capacity"] - usage, "eligible_kinds": list(cp["eligible_kinds"])})
    quotes, expired = [], []
    for qid in sorted(market["quotes"]):
        q = market["quotes"][qid]
        if quote_visible(book, q, day):
            quotes.append(dict(q, used=book["quote_usage"].get(qid, 0)))
        elif known_quote(market, qid, day) is not None:  # shown earlier: expired or withdrawn since
            expired.append(dict(q, used=book["quote_usage"].get(qid, 0)))
    sources = [dict(s) for s in sorted(instance["sources"], key=lambda s: (s["published_day"], s["id"]))
               if s["published_day"] <= day]
    earlier = [r for r in receipts if r["day"] < day]
    packet = {
        "format": PACKET_FORMAT,
        # the family, not the instance id: with the public generator, a seed
        # (`FUND_02/seed-N`) would be the whole world, future included
        "family": instance["family"],
        "world_commitment": commitment,
        "day": day,
        "horizon": book["horizon"],
        "carry_end": instance["carry_end"],
        "funding_cost_to_date": funding_cost_to_date(book, day - 1),
        "counterparties": cps,
        "quotes": quotes,
        "expired_quotes": expired,
        "sources": sources,
        "receipts": earlier,
    }
    public = copy_book(book)
    for key in PUBLIC_BOOK_KEYS:
        packet[key] = public[key]
    packet["assets"] = [packet["assets"][k] for k in sorted(packet["assets"])]
    packet["trades"] = [packet["trades"][k] for k in sorted(packet["trades"])]
    packet["approvals"] = [packet["approvals"][k] for k in sorted(packet["approvals"])]
    return packet


def book_from_packet(packet) -> dict:
    """Rebuild the public book from a packet (hidden parts are empty)."""
    return {
        "day": packet["day"],
        "closed_day": packet["day"] - 1,
        "cash": packet["cash"],
        "desk": dict(packet["desk"]),
        "calendar": list(packet["calendar"]),
        "horizon": packet["horizon"],
        "assets": {a["id"]: dict(a) for a in packet["assets"]},
        "trades": {t["id"]: dict(t) for t in packet["trades"]},
        "counterparties": {cp["id"]: {"id": cp["id"], "name": cp["name"], "capacity": cp["capacity"],
                                      "eligible_kinds": list(cp["eligible_kinds"])} for cp in packet["counterparties"]},
        "quote_usage": dict(packet["quote_usage"]),
        "withdrawn_quotes": list(packet["withdrawn_quotes"]),
        "approvals": {a["id"]: dict(a) for a in packet["approvals"]},
        "breaches": [dict(b) for b in packet["breaches"]],
        "counters": dict(packet["counters"]),
        "hidden": {"responses": {}},
    }


def market_from_packet(packet) -> dict:
    """What the tools check actions against: every quote the desk has been
    shown (valid today, or expired or withdrawn since), and no approval policy."""
    quotes = {}
    for q in list(packet["quotes"]) + list(packet["expired_quotes"]):
        quotes[q["id"]] = {k: v for k, v in q.items() if k != "used"}
    return {"quotes": quotes, "approval_policy": [], "open_world": True}


# -- checking a packet handed to the tools --------------------------------------------
# The tools read packets from files, browsers and model workers: a packet is
# checked field by field before anything is computed from it, so a hostile or
# hand-edited one gets a one-line InputError, never a traceback.

_MAX = 2**53 - 1
_ASSET = {"id": str, "kind": str, "notional": int, "coupon_bps": int, "settle_day": int, "exit_day": int,
          "haircut_floor_bps": int, "status": str}
_TRADE = {"id": str, "asset": str, "quote": str, "counterparty": str, "notional": int, "haircut_bps": int,
          "principal": int, "rate_bps": int, "start": int, "maturity": int, "ends": int, "status": str, "margin": int,
          "interest": int}
_QUOTE = {"id": str, "counterparty": str, "offered_day": int, "valid_through": int, "start_day": int, "tenor": int,
          "rate_bps": int, "max_notional": int, "haircut_bps": int, "eligible_kinds": list, "used": int}
_CP = {"id": str, "name": str, "capacity": int, "eligible_kinds": list}
_APPROVAL = {"id": str, "kind": str, "amount": int, "requested_day": int, "status": str}
_DESK = {"opening_cash": int, "min_buffer": int, "max_tenor": int, "treasury_rate_bps": int}
_STATUSES = {"asset": ("committed", "held", "exited"), "trade": ("scheduled", "live", "ended"),
             "approval": APPROVAL_STATUSES}


def _bad(where, expected):
    from ._errors import InputError
    raise InputError(f"packet{where}: expected {expected}")


def _fields(obj, spec, where):
    if not isinstance(obj, dict):
        _bad(where, "an object")
    for key, kind in spec.items():
        value = obj.get(key)
        if kind is int:
            if type(value) is not int or not -_MAX <= value <= _MAX:
                _bad(f"{where}.{key}", "an integer within +-(2^53-1)")
        elif not isinstance(value, kind):
            _bad(f"{where}.{key}", f"a {kind.__name__}")
    return obj


def _nullable(obj, key, kind, where):
    """A field that is present, and null or of its kind (the engine reads it)."""
    value = obj.get(key)
    if key not in obj or value is not None and (type(value) is not kind or (kind is int and not -_MAX <= value <= _MAX)):
        _bad(f"{where}.{key}", f"null or a {kind.__name__}")


def _entries(packet, key, spec, where=""):
    items = packet.get(key)
    if not isinstance(items, list):
        _bad(f".{key}", "a list")
    seen = {}
    for i, item in enumerate(items):
        _fields(item, spec, f".{key}[{i}]")
        seen[item["id"]] = item
    return seen


def check_packet(packet) -> dict:
    """Check everything the tools read from a packet; returns it unchanged."""
    _fields(packet, {"day": int, "cash": int, "horizon": int, "desk": dict, "calendar": list, "quote_usage": dict,
                     "withdrawn_quotes": list, "breaches": list, "counters": dict}, "")
    _fields(packet["desk"], _DESK, ".desk")
    calendar = packet["calendar"]
    if not 2 <= len(calendar) <= 1000 or any(type(o) is not int or abs(o) > 10_000 for o in calendar) \
            or any(b <= a for a, b in zip(calendar, calendar[1:])):
        _bad(".calendar", "2..1000 strictly increasing integer day offsets")
    last = len(calendar) - 1
    if not 1 <= packet["day"] < last:
        _bad(".day", f"a checkpoint day within the calendar (1..{last - 1})")
    _fields(packet["counters"], {"trade": int, "approval": int}, ".counters")
    cps = _entries(packet, "counterparties", _CP)
    assets = _entries(packet, "assets", _ASSET)
    quotes = _entries(packet, "quotes", _QUOTE)
    quotes.update(_entries(packet, "expired_quotes", _QUOTE))
    trades = _entries(packet, "trades", _TRADE)
    approvals = _entries(packet, "approvals", _APPROVAL)
    for aid, a in assets.items():
        if a["status"] not in _STATUSES["asset"] or not 0 <= a["settle_day"] < a["exit_day"] <= last:
            _bad(f".assets[{shown(aid)}]", "a status and 0 <= settle_day < exit_day within the calendar")
    for qid, q in quotes.items():
        if q["counterparty"] not in cps or not 0 <= q["start_day"] <= last or q["tenor"] < 1:
            _bad(f".quotes[{shown(qid)}]", "a known counterparty, a start day within the calendar and a tenor >= 1")
    for tid, t in trades.items():
        if t["asset"] not in assets or t["counterparty"] not in cps or t["status"] not in _STATUSES["trade"] \
                or not 0 <= t["start"] <= last or t["ends"] < 0:
            _bad(f".trades[{shown(tid)}]", "a known asset and counterparty, a status and a start within the calendar")
    for apid, ap in approvals.items():
        if ap["status"] not in _STATUSES["approval"]:
            _bad(f".approvals[{shown(apid)}].status", f"one of {_STATUSES['approval']}")
        _nullable(ap, "counterparty", str, f".approvals[{shown(apid)}]")
        _nullable(ap, "expires", int, f".approvals[{shown(apid)}]")
    for tid, t in trades.items():
        _nullable(t, "end_day", int, f".trades[{shown(tid)}]")
    for i, b in enumerate(packet["breaches"]):
        _fields(b, {"day": int, "code": str}, f".breaches[{i}]")
    if any(not isinstance(q, str) for q in packet["withdrawn_quotes"]):
        _bad(".withdrawn_quotes", "a list of quote ids")
    for key, value in packet["quote_usage"].items():
        if type(value) is not int or not 0 <= value <= _MAX:
            _bad(f".quote_usage[{shown(key)}]", "a non-negative integer")
    return packet
