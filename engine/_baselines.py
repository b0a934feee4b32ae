"""Scripted baselines that give the score scale a meaning.

They are policies over the packet, labelled as scripted, never as models. Each
reports truthfully (its report comes from the projection tool), so the
differences between them are in what they fund.
"""

from ._book import open_trades, planned_end
from ._packet import book_from_packet
from ._reference import reference_actions
from ._tools import project


def do_nothing_actions(packet):
    return []


def shortest_cheapest_actions(packet):
    """Fund every unfunded asset from the shortest, then cheapest, quote that
    starts on its first unfunded night; never roll, never escalate."""
    book = book_from_packet(packet)
    day = packet["day"]
    actions = []
    usage = {}
    for aid in sorted(book["assets"]):
        asset = book["assets"][aid]
        first = max(asset["settle_day"], day)
        if asset["status"] == "exited" or first >= asset["exit_day"]:
            continue
        if any(t["start"] <= first < planned_end(book, t) for t in open_trades(book, asset_id=aid)):
            continue
        best = None
        for q in sorted(packet["quotes"], key=lambda q: (q["tenor"], q["rate_bps"], q["id"])):
            cp = next(c for c in packet["counterparties"] if c["id"] == q["counterparty"])
            if (q["start_day"] == first and asset["kind"] in q["eligible_kinds"] and asset["kind"] in cp["eligible_kinds"]
                    and q["max_notional"] - q["used"] - usage.get(q["id"], 0) >= asset["notional"]
                    and cp["headroom"] - usage.get(cp["id"], 0) >= asset["notional"]
                    and q["tenor"] <= book["desk"]["max_tenor"]):
                best = q
                break
        if best is not None:
            usage[best["id"]] = usage.get(best["id"], 0) + asset["notional"]
            usage[best["counterparty"]] = usage.get(best["counterparty"], 0) + asset["notional"]
            actions.append({"id": "d%02d-a%d" % (day, len(actions) + 1), "type": "FUND", "asset": aid,
                            "quote": best["id"], "notional": asset["notional"]})
    return actions


POLICIES = {
    "do-nothing": do_nothing_actions,
    "shortest-cheapest": shortest_cheapest_actions,
    "reference": reference_actions,
}


def policy_batch(name, packet) -> dict:
    """A scripted policy's batch for the packet's day, with a truthful report."""
    actions = POLICIES[name](packet)
    return {"day": packet["day"], "report": project(packet, actions, trusted=True)["report"], "actions": actions}
