"""Opening and closing a day.

A day opens with the events effective that day and the approval responses due
that day (so the packet shows the book the desk must act on), then takes the
desk's batch, then closes with the day's scheduled flows in a fixed order:
asset settlements, funding starts, funding ends, asset exits, breach checks.
Every change is logged as a receipt entry `(kind, payload)`.
"""

from ._book import asset_coupon, open_trades, planned_end, trade_interest
from ._units import haircut_amount
from ._vocabulary import BUFFER_BREACH, SETTLEMENT_FAIL


def _log(log, day, kind, payload):
    if log is not None:
        log.append({"day": day, "kind": kind, "payload": payload})


def _announce(instance, book, day, log):
    for a in instance["assets"]:
        if a["announce_day"] == day:
            asset = {k: a[k] for k in ("id", "name", "kind", "rating", "notional", "coupon_bps",
                                          "settle_day", "exit_day", "haircut_floor_bps")}
            asset["status"] = "committed"
            book["assets"][a["id"]] = asset
            _log(log, day, "ASSET", {"asset": a["id"], "notional": a["notional"],
                                     "settle_day": a["settle_day"], "exit_day": a["exit_day"]})


def _apply_event(book, event, day, log):
    kind = event["kind"]
    effects = {}
    if kind == "capacity_cut":
        cp = book["counterparties"][event["counterparty"]]
        effects = {"counterparty": cp["id"], "capacity_before": cp["capacity"], "capacity": event["capacity"]}
        cp["capacity"] = event["capacity"]
    elif kind == "quote_withdrawal":
        if event["quote"] not in book["withdrawn_quotes"]:
            book["withdrawn_quotes"].append(event["quote"])
            book["withdrawn_quotes"].sort()
        effects = {"quote": event["quote"]}
    elif kind == "exit_delay":
        asset = book["assets"][event["asset"]]
        effects = {"asset": asset["id"], "exit_before": asset["exit_day"], "exit_day": event["exit_day"]}
        asset["exit_day"] = event["exit_day"]
    elif kind == "haircut_change":
        asset = book["assets"][event["asset"]]
        new = event["haircut_floor_bps"]
        effects = {"asset": asset["id"], "floor_before": asset["haircut_floor_bps"], "floor": new, "margin_calls": []}
        asset["haircut_floor_bps"] = new
        for t in open_trades(book, asset_id=asset["id"]):
            if t["haircut_bps"] >= new:
                continue
            if t["status"] == "live":
                call = haircut_amount(t["notional"], new) - haircut_amount(t["notional"], t["haircut_bps"])
                t["margin"] += call
                book["cash"] -= call
                effects["margin_calls"].append({"trade": t["id"], "amount": call})
            else:
                t["principal"] = t["notional"] - haircut_amount(t["notional"], new)
            t["haircut_bps"] = new
    _log(log, day, "EVENT", {"event": event["id"], "kind": kind, "source": event["source"], "effects": effects})


def open_day(instance, book, day, log=None):
    """Start business day `day`: announcements, effective events, approval responses."""
    book["day"] = day
    _announce(instance, book, day, log)
    for event in sorted(instance["events"], key=lambda e: e["id"]):
        if event["effective_day"] == day:
            _apply_event(book, event, day, log)
    responses = book["hidden"]["responses"]
    for apid in sorted(book["approvals"]):
        approval = book["approvals"][apid]
        due = responses.get(apid)
        if approval["status"] == "pending" and due is not None and due["day"] == day:
            approval["status"] = due["status"]
            approval["resolved_day"] = day
            approval["expires"] = due["expires"]
            del responses[apid]
            _log(log, day, "APPROVAL", {"approval": apid, "status": approval["status"], "expires": approval["expires"]})
        elif approval["status"] == "approved" and approval["expires"] is not None and approval["expires"] < day:
            approval["status"] = "expired"
            _log(log, day, "APPROVAL", {"approval": apid, "status": "expired", "expires": approval["expires"]})


def _close_plan(book, day):
    """The day's scheduled flows in settlement order, as (flow, ref, amount, extra)
    entries, without changing the book: settlements, funding starts (or
    cancellations), funding ends (or cancellations), exits."""
    plan = []
    held = set()
    for aid in sorted(book["assets"]):
        asset = book["assets"][aid]
        if asset["settle_day"] == day and asset["status"] == "committed":
            plan.append(("ASSET_SETTLE", aid, -asset["notional"], None))
            held.add(aid)
        elif asset["status"] == "held":
            held.add(aid)
    started = set()
    for t in open_trades(book):
        if t["status"] == "scheduled" and t["start"] <= day:
            if planned_end(book, t) <= day:
                plan.append(("FUNDING_CANCEL", t["id"], 0, None))
            else:
                plan.append(("FUNDING_START", t["id"], t["principal"], None))
                started.add(t["id"])
    for t in open_trades(book):
        if t["status"] == "scheduled" and t["start"] <= day:
            continue  # started or cancelled above
        if t["status"] == "live" and planned_end(book, t) <= day:
            interest = trade_interest(book, t, day)
            plan.append(("FUNDING_END", t["id"], t["margin"] - t["principal"] - interest, interest))
        elif t["status"] == "scheduled" and planned_end(book, t) <= day:
            plan.append(("FUNDING_CANCEL", t["id"], 0, None))
    for aid in sorted(book["assets"]):
        asset = book["assets"][aid]
        if asset["exit_day"] == day and aid in held:
            coupon = asset_coupon(book, asset)
            plan.append(("ASSET_EXIT", aid, asset["notional"] + coupon, coupon))
    return plan


def projected_close_cash(book, day) -> int:
    """Cash after the close of `day` if nothing else is done (the book is not changed)."""
    return book["cash"] + sum(amount for _, _, amount, _ in _close_plan(book, day))


def close_day(book, day, log=None):
    """Settle business day `day`'s scheduled flows and record breaches."""
    for flow, ref, amount, extra in _close_plan(book, day):
        book["cash"] += amount
        payload = {"flow": flow, "ref": ref, "amount": amount}
        if flow == "ASSET_SETTLE":
            book["assets"][ref]["status"] = "held"
        elif flow == "ASSET_EXIT":
            book["assets"][ref]["status"] = "exited"
            payload["coupon"] = extra
        else:
            t = book["trades"][ref]
            if flow == "FUNDING_START":
                t["status"] = "live"
            else:
                t["status"] = "ended"
                t["end_day"] = day
                if flow == "FUNDING_END":
                    t["interest"] = extra
                    payload["interest"] = extra
                    payload["margin_returned"] = t["margin"]
        _log(log, day, "FLOW", payload)
    if book["cash"] < 0:
        breach = {"day": day, "code": SETTLEMENT_FAIL}
    elif book["cash"] < book["desk"]["min_buffer"]:
        breach = {"day": day, "code": BUFFER_BREACH}
    else:
        breach = None
    if breach is not None:
        book["breaches"].append(breach)
        _log(log, day, "BREACH", {"code": breach["code"], "cash": book["cash"]})
    book["closed_day"] = day
