"""Calculation tools for desks and model workers: public information only.

Each tool reads a packet (and what the caller proposes), never the world
behind it. `project` is the dry run: it replays the proposed actions on a book
rebuilt from the packet and settles the day, so it gives the decisions the
engine will make and the exact report a truthful desk should send -- with one
honest difference: a quote id the packet does not show is refused TIMING here,
while the engine rejects an id that exists nowhere in the world.
"""

from ._batch import check_action_shape
from ._book import cal_days, copy_book, counterparty_usage, forward_exposure, new_trade
from ._errors import BatchRejected, InputError
from ._packet import book_from_packet, market_from_packet
from ._report import gold_report
from ._rules import decide
from ._settle import close_day
from ._units import accrual, haircut_amount

TOOL_NAMES = ("interest", "project", "exposure", "headroom")


def interest(packet, principal: int, rate_bps: int, start_day: int, end_day: int) -> dict:
    """ACT/360 interest on a principal between two business days of the packet's calendar."""
    if not (0 <= start_day <= end_day < len(packet["calendar"])):
        raise InputError(f"interest: days must satisfy 0 <= start_day <= end_day <= {len(packet['calendar']) - 1}")
    days = cal_days({"calendar": packet["calendar"]}, start_day, end_day)
    return {"calendar_days": days, "interest": accrual(principal, rate_bps, days)}


def project(packet, actions) -> dict:
    """Dry-run a batch's actions on the packet: decisions, closing cash, report."""
    if not isinstance(actions, list):
        raise InputError("project: actions must be a list")
    book = book_from_packet(packet)
    market = market_from_packet(packet)
    day = packet["day"]
    decisions = []
    for i, action in enumerate(actions):
        try:
            check_action_shape(action, f"actions[{i}]")
            if action["type"] in ("ROLL", "REPAY") and action["trade"] not in book["trades"]:
                raise BatchRejected(f"actions[{i}].trade: unknown funding trade {action['trade']!r}")
            if action["type"] == "EXECUTE" and action["approval"] not in book["approvals"]:
                raise BatchRejected(f"actions[{i}].approval: unknown approval {action['approval']!r}")
        except BatchRejected as exc:
            decisions.append({"action": action.get("id") if isinstance(action, dict) else None,
                              "decision": "REJECTED", "reason": None, "message": exc.message})
            continue
        decisions.append(decide(book, market, day, action))
    close_day(book, day, None)
    return {"day": day, "decisions": decisions, "cash": book["cash"], "report": gold_report(book, day)}


def exposure(packet, asset_id: str, quote_id: str, notional=None) -> dict:
    """Maturity gap and tail of an asset now, and if funded from a quote."""
    book = book_from_packet(packet)
    if asset_id not in book["assets"]:
        raise InputError(f"exposure: asset {asset_id!r} is not in the packet")
    quotes = {q["id"]: q for q in packet["quotes"]}
    if quote_id not in quotes:
        raise InputError(f"exposure: quote {quote_id!r} is not in the packet")
    day = packet["day"]
    gap, tail = forward_exposure(book, asset_id, day)
    trial = copy_book(book)
    amount = book["assets"][asset_id]["notional"] if notional is None else notional
    trade = new_trade(trial, asset_id, quotes[quote_id], amount, day)
    gap2, tail2 = forward_exposure(trial, asset_id, day)
    return {"asset": asset_id, "now": {"maturity_gap_days": gap, "tail_cent_days": tail},
            "with_quote": {"quote": quote_id, "maturity": trade["maturity"], "maturity_gap_days": gap2,
                           "tail_cent_days": tail2, "principal": trade["principal"],
                           "haircut": haircut_amount(amount, trade["haircut_bps"])}}


def headroom(packet) -> dict:
    """Counterparty capacity headroom and what is left on each valid quote."""
    book = book_from_packet(packet)
    cps = {}
    for cid, cp in sorted(book["counterparties"].items()):
        usage = counterparty_usage(book, cid)
        cps[cid] = {"capacity": cp["capacity"], "peak_usage": usage, "headroom": cp["capacity"] - usage}
    quotes = {q["id"]: {"max_notional": q["max_notional"], "remaining": q["max_notional"] - q["used"]}
              for q in packet["quotes"]}
    return {"counterparties": cps, "quotes": quotes}
