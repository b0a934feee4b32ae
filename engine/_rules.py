"""Why each action is accepted or refused, and what an accepted one changes.

A well-formed batch is processed in order; every action is ACCEPTED or REFUSED
with exactly one reason code, and an accepted action changes the book the next
action sees. The checks run in the order of the contract table: TIMING, TITLE,
CAPACITY, CASH; the first failure is the reason. An EXECUTE checks its approval
first (AUTHORITY), then the action's own checks, where the authority waives one
limit: an excess over the limit larger than the authority's amount is refused
AUTHORITY at that limit's check (tenor at TIMING, capacity at CAPACITY, buffer
at CASH).
"""

from ._book import copy_book, counterparty_usage, new_trade, open_trades, planned_end
from ._errors import BatchRejected, shown
from ._settle import projected_close_cash
from ._vocabulary import REASON_CODES, approval_id

REASONS = REASON_CODES


class Refusal(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def market_from_instance(instance):
    """What the engine checks actions against: every quote of the world. Which
    of them the desk may name depends on the day (see `known_quote`)."""
    return {
        "quotes": {q["id"]: q for q in instance["quotes"]},
        "approval_policy": instance["approval_policy"],
        "open_world": False,
    }


def quote_visible(book, quote, day) -> bool:
    return quote["offered_day"] <= day <= quote["valid_through"] and quote["id"] not in book["withdrawn_quotes"]


def known_quote(market, quote_id, day):
    """The quote if the desk has been shown it (offered on or before `day`), else None.

    A quote offered later gets exactly the answer a quote that never exists
    gets: the batch is rejected as naming an unknown quote. Nothing a desk sees
    tells a future id from a made-up one."""
    quote = market["quotes"].get(quote_id) if isinstance(quote_id, str) else None
    if quote is None or quote["offered_day"] > day:
        return None
    return quote


def check_references(batch, book, market):
    """Ids the desk has not been shown make a batch not well-formed (rejected
    whole, with the same message whether the id exists later or never)."""
    day = book["day"]
    for aid in sorted(batch["report"]["assets"]):
        if aid not in book["assets"]:
            raise BatchRejected(f"batch.report.assets: unknown asset {shown(aid)}")
    for i, action in enumerate(batch["actions"]):
        where = f"batch.actions[{i}]"
        body = action
        if action["type"] == "EXECUTE":
            if action["approval"] not in book["approvals"]:
                raise BatchRejected(f"{where}.approval: unknown approval {shown(action['approval'])}")
            body = action["action"]
            where += ".action"
        if "asset" in body and body["asset"] not in book["assets"]:
            raise BatchRejected(f"{where}.asset: unknown asset {shown(body['asset'])}")
        if "quote" in body and known_quote(market, body["quote"], day) is None:
            raise BatchRejected(f"{where}.quote: unknown quote {shown(body['quote'])}")
        if "trade" in body and body["trade"] not in book["trades"]:
            raise BatchRejected(f"{where}.trade: unknown funding trade {shown(body['trade'])}")
        if "counterparty" in body and body["counterparty"] not in book["counterparties"]:
            raise BatchRejected(f"{where}.counterparty: unknown counterparty {shown(body['counterparty'])}")


# -- shared funding checks ------------------------------------------------------

def _quote(market, book, quote_id, day):
    quote = known_quote(market, quote_id, day)
    if quote is None:  # only reachable through the tools' direct calls: references are checked first
        raise Refusal("TIMING", f"quote {quote_id} is not offered on day {day}")
    if not quote_visible(book, quote, day):
        if quote["id"] in book["withdrawn_quotes"]:
            raise Refusal("TIMING", f"quote {quote_id} was withdrawn")
        raise Refusal("TIMING", f"quote {quote_id} was valid on days {quote['offered_day']}..{quote['valid_through']}, not on day {day}")
    return quote


def _timing(book, quote, day, waiver):
    start = quote["start_day"]
    if start < day:
        raise Refusal("TIMING", f"quote {quote['id']} starts on day {start}, in the past")
    if quote["tenor"] < 1:
        raise Refusal("TIMING", f"quote {quote['id']} matures before it starts")
    excess = quote["tenor"] - book["desk"]["max_tenor"]
    if excess > 0:
        if waiver is None or waiver["kind"] != "tenor":
            raise Refusal("TIMING", f"tenor {quote['tenor']} days exceeds the desk limit of {book['desk']['max_tenor']} without tenor authority")
        if excess > waiver["amount"]:
            raise Refusal("AUTHORITY", f"tenor authority of {waiver['amount']} days is too small for {excess} days over the limit")


def _title(book, quote, asset_id, notional, replacing=None):
    asset = book["assets"].get(asset_id)
    if asset is None:
        raise Refusal("TITLE", f"asset {asset_id} is not owned or settling (not yet committed)")
    if asset["status"] == "exited":
        raise Refusal("TITLE", f"asset {asset_id} has exited")
    cp = book["counterparties"][quote["counterparty"]]
    if asset["kind"] not in quote["eligible_kinds"] or asset["kind"] not in cp["eligible_kinds"]:
        raise Refusal("TITLE", f"{asset['kind']} collateral is not eligible for quote {quote['id']}")
    start = quote["start_day"]
    if start < asset["settle_day"]:
        raise Refusal("TITLE", f"asset {asset_id} settles on day {asset['settle_day']}, after the funding start {start}")
    if start >= asset["exit_day"]:
        raise Refusal("TITLE", f"asset {asset_id} exits on day {asset['exit_day']}, before the funding starts")
    end = min(start + quote["tenor"], asset["exit_day"])
    pledged = 0
    for t in open_trades(book, asset_id=asset_id):
        if t["id"] == replacing:
            continue
        if t["start"] < end and start < planned_end(book, t):
            pledged += t["notional"]
    if pledged + notional > asset["notional"]:
        raise Refusal("TITLE", f"asset {asset_id}: {pledged} already pledged over that period, {notional} more exceeds the notional {asset['notional']}")


def _capacity(book, quote, asset_id, notional, waiver, replacing=None):
    used = book["quote_usage"].get(quote["id"], 0)
    if used + notional > quote["max_notional"]:
        raise Refusal("CAPACITY", f"quote {quote['id']} has {quote['max_notional'] - used} left, {notional} asked")
    cp = book["counterparties"][quote["counterparty"]]
    start = quote["start_day"]
    end = min(start + quote["tenor"], book["assets"][asset_id]["exit_day"])
    usage = counterparty_usage(book, cp["id"], exclude=replacing, start=start, end=end)
    excess = usage + notional - cp["capacity"]
    if excess > 0:
        if waiver is None or waiver["kind"] != "capacity":
            raise Refusal("CAPACITY", f"counterparty {cp['id']}: peak usage {usage} over days {start}..{end} + {notional} exceeds capacity {cp['capacity']}")
        if excess > waiver["amount"]:
            raise Refusal("AUTHORITY", f"capacity authority of {waiver['amount']} is too small for {excess} over capacity")


def _projected_close_cash(book, day):
    return projected_close_cash(book, day)


# -- the actions ------------------------------------------------------------------

def _fund(book, market, day, body, waiver):
    quote = _quote(market, book, body["quote"], day)
    _timing(book, quote, day, waiver)
    _title(book, quote, body["asset"], body["notional"])
    _capacity(book, quote, body["asset"], body["notional"], waiver)
    trade = new_trade(book, body["asset"], quote, body["notional"], day)
    return {"trade": trade["id"], "start": trade["start"], "maturity": trade["maturity"],
            "principal": trade["principal"], "haircut_bps": trade["haircut_bps"]}


def _roll(book, market, day, body, waiver):
    old = book["trades"][body["trade"]]
    # TIMING comes first, as in the contract: a trade that has ended (matured,
    # repaid, rolled or at its asset's exit) always ended before today, so a
    # roll of it is refused TIMING, never TITLE.
    end = planned_end(book, old)
    if day > end or old["status"] == "ended":
        raise Refusal("TIMING", f"trade {old['id']} ended on day {end}; a roll must be at or before maturity")
    quote = _quote(market, book, body["quote"], day)
    if quote["start_day"] > end:
        raise Refusal("TIMING", f"quote {quote['id']} starts on day {quote['start_day']}, after {old['id']} ends on day {end}")
    if quote["start_day"] <= old["start"]:
        raise Refusal("TIMING", f"quote {quote['id']} starts before {old['id']} does")
    _timing(book, quote, day, waiver)
    _title(book, quote, old["asset"], old["notional"], replacing=old["id"])
    _capacity(book, quote, old["asset"], old["notional"], waiver, replacing=old["id"])
    old["ends"] = quote["start_day"]
    trade = new_trade(book, old["asset"], quote, old["notional"], day)
    trade["rolled_from"] = old["id"]
    return {"trade": trade["id"], "replaces": old["id"], "start": trade["start"], "maturity": trade["maturity"],
            "principal": trade["principal"], "haircut_bps": trade["haircut_bps"]}


def _repay(book, market, day, body, waiver):
    trade = book["trades"][body["trade"]]
    if trade["status"] == "ended":
        raise Refusal("TITLE", f"funding trade {trade['id']} is not an open trade of the desk")
    trade["ends"] = day
    return {"trade": trade["id"], "ends": day}


def _match_policy(market, action):
    for policy in market.get("approval_policy", ()):
        if policy["kind"] != action["kind"]:
            continue
        if "counterparty" in policy and policy["counterparty"] != action.get("counterparty"):
            continue
        return policy
    return None


def _escalate(book, market, day, body, waiver):
    for apid in sorted(book["approvals"]):
        ap = book["approvals"][apid]
        if ap["kind"] == body["kind"] and ap["counterparty"] == body.get("counterparty") and ap["status"] in ("pending", "approved"):
            raise Refusal("TIMING", f"{apid} is already open for {body['kind']} authority")
    book["counters"]["approval"] += 1
    apid = approval_id(book["counters"]["approval"])
    book["approvals"][apid] = {
        "id": apid, "kind": body["kind"], "counterparty": body.get("counterparty"), "amount": body["amount"],
        "note": body.get("note", ""), "requested_day": day, "status": "pending", "resolved_day": None,
        "expires": None, "consumed_day": None,
    }
    if not market["open_world"]:
        book["hidden"]["responses"][apid] = approval_response(market, book["approvals"][apid])
    return {"approval": apid}


def approval_response(market, approval) -> dict:
    """The parent's dated answer to a request: hidden from the desk until its
    day, and a function of the request and the world's policy alone (so the
    runtime can rebuild it instead of trusting a stored copy)."""
    day = approval["requested_day"]
    policy = _match_policy(market, approval)
    lag = policy["lag"] if policy is not None else 1
    if policy is not None and approval["amount"] <= policy["max_amount"]:
        return {"day": day + lag, "status": "approved", "expires": day + lag + policy["valid_days"]}
    return {"day": day + lag, "status": "denied", "expires": None}


def _execute(book, market, day, body, waiver):
    ap = book["approvals"][body["approval"]]
    if ap["status"] != "approved":
        raise Refusal("AUTHORITY", f"approval {ap['id']} is {ap['status']}, not approved")
    if ap["expires"] is not None and ap["expires"] < day:
        raise Refusal("AUTHORITY", f"approval {ap['id']} expired on day {ap['expires']}")
    inner = body["action"]
    quote = _quote(market, book, inner["quote"], day)
    if ap["counterparty"] is not None and ap["counterparty"] != quote["counterparty"]:
        raise Refusal("AUTHORITY", f"approval {ap['id']} is for {ap['counterparty']}, not {quote['counterparty']}")
    grant = {"kind": ap["kind"], "amount": ap["amount"]}
    effects = (_fund if inner["type"] == "FUND" else _roll)(book, market, day, inner, grant)
    ap["status"] = "consumed"
    ap["consumed_day"] = day
    effects["approval"] = ap["id"]
    return effects


HANDLERS = {"FUND": _fund, "ROLL": _roll, "REPAY": _repay, "ESCALATE": _escalate, "EXECUTE": _execute}


def _cash(book, trial, day, action):
    """CASH, the last check: an action that lowers today's projected close may
    not take it under the buffer, nor ever under zero. Buffer authority (an
    EXECUTE under an approved `buffer` approval) lets the action go under the
    buffer by at most the approval's amount, in cents."""
    before = _projected_close_cash(book, day)
    after = _projected_close_cash(trial, day)
    if after >= before:
        return  # bringing cash in, or leaving it be, is never refused for cash
    buffer = book["desk"]["min_buffer"]
    if after < 0:
        raise Refusal("CASH", f"projected cash at the close of day {day} would be {after}, under zero")
    if after >= buffer:
        return
    grant = book["approvals"][action["approval"]] if action["type"] == "EXECUTE" else None
    if grant is None or grant["kind"] != "buffer":
        raise Refusal("CASH", f"projected cash at the close of day {day} would be {after}, under the buffer {buffer}")
    shortfall = buffer - after
    if shortfall > grant["amount"]:
        raise Refusal("AUTHORITY", f"buffer authority of {grant['amount']} is too small for {shortfall} under the buffer")


def decide(book, market, day, action) -> dict:
    """Accept or refuse one well-formed action; an accepted one changes `book` in place."""
    trial = copy_book(book)
    try:
        effects = HANDLERS[action["type"]](trial, market, day, action, None)
        _cash(book, trial, day, action)
    except Refusal as refusal:
        return {"action": action["id"], "type": action["type"], "decision": "REFUSED",
                "reason": refusal.code, "message": refusal.message}
    book.clear()
    book.update(trial)
    return {"action": action["id"], "type": action["type"], "decision": "ACCEPTED", "reason": None,
            "message": "accepted", "effects": effects}
