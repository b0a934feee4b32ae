"""Calculation tools for desks and model workers: public information only.

Each tool reads a packet (and what the caller proposes), never the world
behind it, and checks the packet first (a hostile one is a one-line
InputError). `project` is the dry run: it checks the actions exactly as the
engine checks a batch -- an id the desk has not been shown rejects the whole
batch with the engine's own message, whether the id exists later or never --
then replays the accepted actions on a book rebuilt from the packet and
settles the day. So it gives the decisions the engine will make, the exact
report a truthful desk should send, and the state hash the day's CLOSE
receipt will carry.
"""

from ._batch import MAX_ACTIONS, MAX_BATCH_BYTES, check_action_shape
from ._book import cal_days, copy_book, counterparty_usage, forward_exposure, new_trade, state_hash
from ._canon import NotCanonical, _dumps, canonical_json
from ._errors import BatchRejected, InputError, shown
from ._packet import book_from_packet, check_packet, market_from_packet
from ._report import gold_report
from ._rules import Refusal, _quote, check_references, decide
from ._settle import close_day
from ._units import accrual, haircut_amount

TOOL_NAMES = ("interest", "project", "exposure", "headroom")
MAX_TOOL_AMOUNT = 10**14  # cents: the largest amount a world can hold


def _amount(value, name, low=0, high=MAX_TOOL_AMOUNT):
    if type(value) is not int or not low <= value <= high:
        raise InputError(f"{name}: expected an integer in {low}..{high}, got {shown(value)}")
    return value


def _exact(tool, out):
    """A tool's result, checked to be exact JSON: a hand-made packet may hold
    amounts (a 20,000-day calendar, a trade of 2^53 cents) whose results leave
    +-(2^53-1), which no reader can take exactly."""
    try:
        canonical_json(out)
    except NotCanonical as exc:
        raise InputError(f"{tool}: the packet's amounts give a result beyond the exact integer range: {exc}") from None
    return out


def interest(packet, principal: int, rate_bps: int, start_day: int, end_day: int) -> dict:
    """ACT/360 interest on a principal between two business days of the packet's calendar."""
    check_packet(packet)
    _amount(principal, "interest: principal")
    _amount(rate_bps, "interest: rate_bps", 0, 100_000)
    last = len(packet["calendar"]) - 1
    _amount(start_day, "interest: start_day", 0, last)
    _amount(end_day, "interest: end_day", start_day, last)
    days = cal_days({"calendar": packet["calendar"]}, start_day, end_day)
    return _exact("interest", {"calendar_days": days, "interest": accrual(principal, rate_bps, days)})


def _check_actions(actions, book, market):
    """The engine's batch checks that concern actions (shape, unique ids, ids shown to the desk)."""
    if not isinstance(actions, list):
        raise BatchRejected("batch.actions: expected array")
    if len(actions) > MAX_ACTIONS:
        raise BatchRejected(f"batch.actions: at most {MAX_ACTIONS} actions a day")
    seen = set()
    for i, action in enumerate(actions):
        check_action_shape(action, f"batch.actions[{i}]")
        if action["id"] in seen:
            raise BatchRejected(f"batch.actions[{i}].id: duplicate action id {shown(action['id'])}")
        seen.add(action["id"])
    try:
        size = len(_dumps(actions).encode("utf-8"))
    except UnicodeEncodeError:
        raise BatchRejected("batch.actions: a lone surrogate is not Unicode text") from None
    if size > MAX_BATCH_BYTES:
        raise BatchRejected(f"batch.actions: {size} bytes is over the {MAX_BATCH_BYTES}-byte batch limit")
    check_references({"report": {"assets": {}}, "actions": actions}, book, market)


def project(packet, actions, trusted=False) -> dict:
    """Dry-run a batch's actions on the packet: decisions, closing cash, report, state hash.

    If the engine would reject the batch, `rejected` carries its message and
    nothing is applied (cash and report are those of the day closed as it stands).
    `trusted=True` skips the packet check, for packets the engine just built
    (the scripted policies call this every day)."""
    if not trusted:
        check_packet(packet)
    book = book_from_packet(packet)
    market = market_from_packet(packet)
    day = packet["day"]
    decisions, rejected = [], None
    try:
        _check_actions(actions, book, market)
    except BatchRejected as exc:
        rejected = exc.message
    if rejected is None:
        for action in actions:
            decisions.append(decide(book, market, day, action))
    close_day(book, day, None)
    out = {"day": day, "rejected": rejected, "decisions": decisions, "cash": book["cash"],
           "report": gold_report(book, day), "state_hash": None if rejected else state_hash(book)}
    return out if trusted else _exact("project", out)


def exposure(packet, asset_id: str, quote_id: str, notional=None) -> dict:
    """Maturity gap and tail of an asset now, and if funded from a quote."""
    check_packet(packet)
    book = book_from_packet(packet)
    market = market_from_packet(packet)
    day = packet["day"]
    if not isinstance(asset_id, str) or asset_id not in book["assets"]:
        raise InputError(f"exposure: unknown asset {shown(asset_id)}")
    if not isinstance(quote_id, str) or quote_id not in market["quotes"]:
        raise InputError(f"exposure: unknown quote {shown(quote_id)}")
    try:
        quote = _quote(market, book, quote_id, day)
    except Refusal as refusal:
        raise InputError(f"exposure: {refusal.message}")
    amount = book["assets"][asset_id]["notional"] if notional is None else _amount(notional, "exposure: notional", 1)
    gap, tail = forward_exposure(book, asset_id, day)
    trial = copy_book(book)
    trade = new_trade(trial, asset_id, quote, amount, day)
    gap2, tail2 = forward_exposure(trial, asset_id, day)
    return _exact("exposure", {"asset": asset_id, "now": {"maturity_gap_days": gap, "tail_cent_days": tail},
                               "with_quote": {"quote": quote_id, "maturity": trade["maturity"], "maturity_gap_days": gap2,
                                              "tail_cent_days": tail2, "principal": trade["principal"],
                                              "haircut": haircut_amount(amount, trade["haircut_bps"])}})


def headroom(packet) -> dict:
    """Counterparty capacity headroom and what is left on each valid quote."""
    check_packet(packet)
    book = book_from_packet(packet)
    cps = {}
    for cid, cp in sorted(book["counterparties"].items()):
        usage = counterparty_usage(book, cid)
        cps[cid] = {"capacity": cp["capacity"], "peak_usage": usage, "headroom": cp["capacity"] - usage}
    quotes = {q["id"]: {"max_notional": q["max_notional"], "remaining": q["max_notional"] - q["used"]}
              for q in packet["quotes"]}
    return _exact("headroom", {"counterparties": cps, "quotes": quotes})
