"""The reference policy: a careful desk that reads only the packet.

For each committed asset (by id) it looks at the first night that needs
funding. Unfunded: FUND the full notional from the cheapest quote that starts
that night and protects to exit. Funded but maturing before exit: ROLL into the
cheapest protecting quote that starts by the maturity. When the only protecting
quotes are over a counterparty's capacity or the desk's tenor limit, it
ESCALATEs for the exact excess and EXECUTEs once approved. When the funding it
chose would be refused CASH only because of the buffer (a dry run on the same
rules), it ESCALATEs for buffer authority -- the shortfall under the buffer,
plus a week of the replaced trade's interest for the days the request may
wait -- and EXECUTEs under it once approved. With no protecting quote at all
it funds from the longest available quote and rolls later. Its reports come
from the projection tool, so they are exactly what a truthful desk could
compute. It is deterministic and never reads the world.
"""

from ._book import copy_book, counterparty_usage, new_trade, open_trades, planned_end
from ._packet import book_from_packet, market_from_packet
from ._rules import decide, quote_visible
from ._settle import close_day
from ._tools import project
from ._units import accrual

BUFFER_WAIT_DAYS = 7  # calendar days of interest a buffer request allows for


def _options(book, quotes, asset, start_lo, start_hi, notional, replacing=None):
    out = []
    for q in quotes:
        start = q["start_day"]
        if not start_lo <= start <= start_hi or start >= asset["exit_day"] or start < asset["settle_day"]:
            continue
        if asset["kind"] not in q["eligible_kinds"]:
            continue
        cp = book["counterparties"][q["counterparty"]]
        if asset["kind"] not in cp["eligible_kinds"]:
            continue
        if q["max_notional"] - book["quote_usage"].get(q["id"], 0) < notional:
            continue
        end = min(start + q["tenor"], asset["exit_day"])
        capacity_excess = counterparty_usage(book, cp["id"], replacing, start, end) + notional - cp["capacity"]
        tenor_excess = q["tenor"] - book["desk"]["max_tenor"]
        out.append({
            "quote": q,
            "protects": start + q["tenor"] >= asset["exit_day"],
            "capacity_excess": max(0, capacity_excess),
            "tenor_excess": max(0, tenor_excess),
        })
    return out


def _cheapest(options, prefer_start=None):
    def key(o):
        q = o["quote"]
        return (0 if prefer_start is None or q["start_day"] == prefer_start else 1, q["rate_bps"], q["haircut_bps"], q["id"])
    return min(options, key=key) if options else None


def _authority(book, day, kind, counterparty, amount, used):
    """An approved, unexpired, unconsumed approval big enough (not already planned), or None."""
    for apid in sorted(book["approvals"]):
        ap = book["approvals"][apid]
        if (ap["status"] == "approved" and apid not in used and ap["kind"] == kind and ap["amount"] >= amount
                and (ap["counterparty"] in (None, counterparty)) and (ap["expires"] is None or ap["expires"] >= day)):
            return apid
    return None


def _open_request(book, kind, counterparty, requested):
    return (kind, counterparty) in requested or any(
        ap["kind"] == kind and ap["counterparty"] == counterparty and ap["status"] in ("pending", "approved")
        for ap in book["approvals"].values())


def _plan_asset(book, market, day, quotes, asset, actions, next_id, requested, used_approvals):
    first = max(asset["settle_day"], day)
    if first >= asset["exit_day"]:
        return
    trades = [t for t in open_trades(book, asset_id=asset["id"]) if planned_end(book, t) > first]
    if trades:
        current = max(trades, key=lambda t: (planned_end(book, t), t["id"]))
        end = planned_end(book, current)
        if end >= asset["exit_day"] or current["start"] > first:
            return
        if any(t["start"] >= end for t in open_trades(book, asset_id=asset["id"])):
            return  # already rolled forward
        options = [o for o in _options(book, quotes, asset, max(day, current["start"] + 1), end,
                                       current["notional"], replacing=current["id"]) if o["protects"]]
        body = {"type": "ROLL", "trade": current["id"]}
        notional = current["notional"]
        prefer = end
    else:
        notional = asset["notional"]
        options = _options(book, quotes, asset, first, first, notional)
        body = {"type": "FUND", "asset": asset["id"], "notional": notional}
        prefer = first
    protecting = [o for o in options if o["protects"]]
    clean = [o for o in protecting if o["capacity_excess"] == 0 and o["tenor_excess"] == 0]
    choice = _cheapest(clean, prefer)
    if choice is not None:
        planned = dict(body, quote=choice["quote"]["id"])
        shortfall = _buffer_shortfall(book, market, day, planned)
        if shortfall == 0:
            actions.append(dict(planned, id=next_id()))
        elif shortfall is not None:
            _under_buffer(book, day, planned, shortfall, actions, next_id, requested, used_approvals)
        return
    blocked = [o for o in protecting if (o["capacity_excess"] > 0) != (o["tenor_excess"] > 0)]
    choice = _cheapest(blocked, prefer)
    if choice is not None:
        q = choice["quote"]
        kind, amount = ("capacity", choice["capacity_excess"]) if choice["capacity_excess"] else ("tenor", choice["tenor_excess"])
        approval = _authority(book, day, kind, q["counterparty"], amount, used_approvals)
        if approval is not None:
            used_approvals.add(approval)
            actions.append({"id": next_id(), "type": "EXECUTE", "approval": approval, "action": dict(body, quote=q["id"])})
        elif not _open_request(book, kind, q["counterparty"], requested):
            requested.add((kind, q["counterparty"]))
            actions.append({"id": next_id(), "type": "ESCALATE", "kind": kind, "counterparty": q["counterparty"],
                            "amount": amount, "note": f"{asset['id']}: {kind} exception to fund from {q['id']} to exit"})
        return
    if body["type"] == "FUND":
        fallback = [o for o in options if o["capacity_excess"] == 0 and o["tenor_excess"] == 0]
        if fallback:
            best = min(fallback, key=lambda o: (-(o["quote"]["start_day"] + o["quote"]["tenor"]), o["quote"]["rate_bps"], o["quote"]["id"]))
            actions.append(dict(body, id=next_id(), quote=best["quote"]["id"]))


def _buffer_shortfall(book, market, day, body):
    """0 if the action passes every check; the cents it would take today's
    projected close under the buffer if CASH refuses it because of the buffer
    alone; None if anything else refuses it."""
    probe = dict(body, id="probe")
    if decide(copy_book(book), market, day, probe)["decision"] == "ACCEPTED":
        return 0
    relaxed = copy_book(book)
    relaxed["desk"] = dict(relaxed["desk"], min_buffer=0)
    if decide(relaxed, market, day, probe)["decision"] != "ACCEPTED":
        return None
    close_day(relaxed, day, None)
    return book["desk"]["min_buffer"] - relaxed["cash"]


def _under_buffer(book, day, body, shortfall, actions, next_id, requested, used_approvals):
    """EXECUTE under approved buffer authority, or ask for it."""
    approval = _authority(book, day, "buffer", None, shortfall, used_approvals)
    if approval is not None:
        used_approvals.add(approval)
        actions.append({"id": next_id(), "type": "EXECUTE", "approval": approval, "action": body})
        return
    if _open_request(book, "buffer", None, requested):
        return
    cushion = 0
    if body["type"] == "ROLL":
        old = book["trades"][body["trade"]]
        cushion = accrual(old["principal"], old["rate_bps"], BUFFER_WAIT_DAYS)
    requested.add(("buffer", None))
    target = body.get("asset") or book["trades"][body["trade"]]["asset"]
    actions.append({"id": next_id(), "type": "ESCALATE", "kind": "buffer", "amount": shortfall + cushion,
                    "note": f"{target}: {body['type']} from {body['quote']} goes {shortfall} under the buffer"})


def reference_actions(packet):
    """The reference policy's actions for the packet's day."""
    book = book_from_packet(packet)
    market = market_from_packet(packet)
    day = packet["day"]
    quotes = sorted(packet["quotes"], key=lambda q: q["id"])
    quotes = [q for q in quotes if quote_visible(book, q, day)]
    actions = []
    requested, used_approvals = set(), set()
    counter = [0]

    def next_id():
        counter[0] += 1
        return "d%02d-a%d" % (day, counter[0])

    for aid in sorted(book["assets"]):
        asset = book["assets"][aid]
        if asset["status"] == "exited":
            continue
        before = len(actions)
        _plan_asset(book, market, day, quotes, asset, actions, next_id, requested, used_approvals)
        if len(actions) > before and actions[-1]["type"] in ("FUND", "ROLL", "EXECUTE"):
            # later assets must see this one's capacity and quote use
            _apply_scratch(book, packet, actions[-1])
    return actions


def _apply_scratch(book, packet, action):
    """Record the capacity and quote use of a planned action in the scratch book."""
    body = action["action"] if action["type"] == "EXECUTE" else action
    quote = next(q for q in packet["quotes"] if q["id"] == body["quote"])
    if body["type"] == "FUND":
        new_trade(book, body["asset"], quote, body["notional"], packet["day"])
    else:
        old = book["trades"][body["trade"]]
        old["ends"] = quote["start_day"]
        new_trade(book, old["asset"], quote, old["notional"], packet["day"])


def reference_batch(packet) -> dict:
    """A whole batch: the reference actions and the report they will produce."""
    actions = reference_actions(packet)
    projection = project(packet, actions, trusted=True)
    return {"day": packet["day"], "report": projection["report"], "actions": actions}
