"""The packet: everything a desk may see on day d, and nothing else.

Read-only JSON: the day, the public book (cash, positions with title status,
funding trades, limits and usage, approvals, breaches), quotes offered and
still valid today, sources published on or before today, and the receipts of
earlier days. Never: future events or sources, unannounced assets or quotes,
dated approval responses, the reference plan, gold reports or mutations.
"""

from ._book import copy_book, counterparty_usage, funding_cost_to_date
from ._rules import quote_visible

PACKET_FORMAT = 1  # bump when a field changes meaning

PUBLIC_BOOK_KEYS = ("cash", "desk", "calendar", "assets", "trades", "quote_usage", "withdrawn_quotes",
                    "approvals", "breaches", "counters")


def build_packet(instance, book, day, receipts, fixture_sha256) -> dict:
    """The packet for the open day `day` (the book as opened, before the batch)."""
    cps = []
    for cid in sorted(book["counterparties"]):
        cp = book["counterparties"][cid]
        usage = counterparty_usage(book, cid)
        cps.append({"id": cid, "name": cp["name"], "capacity": cp["capacity"], "usage": usage,
                    "headroom": cp["capacity"] - usage, "eligible_kinds": list(cp["eligible_kinds"])})
    quotes = [dict(q, used=book["quote_usage"].get(q["id"], 0))
              for q in sorted(instance["quotes"], key=lambda q: q["id"]) if quote_visible(book, q, day)]
    sources = [dict(s) for s in sorted(instance["sources"], key=lambda s: (s["published_day"], s["id"]))
               if s["published_day"] <= day]
    earlier = [r for r in receipts if r["day"] < day]
    packet = {
        "format": PACKET_FORMAT,
        "instance_id": instance["instance_id"],
        "family": instance["family"],
        "fixture_sha256": fixture_sha256,
        "day": day,
        "horizon": book["horizon"],
        "carry_end": instance["carry_end"],
        "funding_cost_to_date": funding_cost_to_date(book, day - 1),
        "counterparties": cps,
        "quotes": quotes,
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
    """What the tools check actions against: only the quotes in the packet."""
    return {
        "quotes": {q["id"]: {k: v for k, v in q.items() if k != "used"} for q in packet["quotes"]},
        "asset_ids": sorted(a["id"] for a in packet["assets"]),
        "approval_policy": [],
        "open_world": True,
    }
