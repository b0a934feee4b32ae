"""The desk's book: the settled state a run carries from day to day.

The book is plain JSON-able data so that it hashes canonically and crosses the
Pyodide boundary unchanged. Everything in it except `hidden` is public: the
packet shows it, and the calculation tools rebuild a book from a packet.
`hidden` holds what the desk cannot know yet (dated approval responses).
"""

from ._canon import engine_sha256
from ._units import accrual, haircut_amount
from ._vocabulary import OPEN_APPROVAL_STATUSES


def new_book(instance) -> dict:
    desk = instance["desk"]
    return {
        "day": 0,
        "closed_day": 0,
        "cash": desk["opening_cash"],
        "desk": {k: desk[k] for k in ("opening_cash", "min_buffer", "max_tenor", "treasury_rate_bps")},
        "calendar": list(instance["calendar"]["offsets"]),
        "horizon": instance["horizon"],
        "assets": {},
        "trades": {},
        "counterparties": {
            cp["id"]: {"id": cp["id"], "name": cp["name"], "capacity": cp["capacity"],
                       "eligible_kinds": list(cp["eligible_kinds"])}
            for cp in instance["counterparties"]
        },
        "quote_usage": {},
        "withdrawn_quotes": [],
        "approvals": {},
        "breaches": [],
        "counters": {"trade": 0, "approval": 0},
        "hidden": {"responses": {}},
    }


def _copy(value):
    t = type(value)
    if t is dict:
        return {k: (v if type(v) in _ATOMS else _copy(v)) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _ATOMS else _copy(v) for v in value]
    return value


_ATOMS = frozenset((int, str, bool, type(None)))


def copy_book(book) -> dict:
    """A deep copy of JSON-shaped data (the book holds nothing else); several
    times faster than copy.deepcopy, which the engine calls on every action."""
    return _copy(book)


def public_book(book) -> dict:
    """The book without its hidden part: everything a desk may know."""
    return {k: v for k, v in book.items() if k != "hidden"}


def state_hash(book) -> str:
    """sha256 of the public book. The hidden part (dated approval answers) is
    left out: a desk sees this hash in the CLOSE receipt, and it can compute
    it itself (the `project` tool does), so it tells the desk nothing new.
    Replay still rebuilds the hidden part from the world and checks it through
    every later receipt."""
    return engine_sha256(public_book(book))


def cal_days(book, start: int, end: int) -> int:
    offsets = book["calendar"]
    return offsets[end] - offsets[start]


def night_span(book, day: int) -> int:
    offsets = book["calendar"]
    return offsets[day + 1] - offsets[day]


# -- trades -----------------------------------------------------------------

def planned_end(book, trade) -> int:
    """The day a trade will end if nothing else happens: its (rolled/repaid) end
    or the asset's exit, whichever comes first."""
    asset = book["assets"][trade["asset"]]
    return min(trade["ends"], asset["exit_day"])


def open_trades(book, asset_id=None, counterparty=None):
    """Trades not yet ended (scheduled or live), sorted by id."""
    out = []
    for tid in sorted(book["trades"]):
        t = book["trades"][tid]
        if t["status"] == "ended":
            continue
        if asset_id is not None and t["asset"] != asset_id:
            continue
        if counterparty is not None and t["counterparty"] != counterparty:
            continue
        out.append(t)
    return out


def counterparty_usage(book, counterparty, exclude=None, start=None, end=None) -> int:
    """Peak funded notional outstanding with a counterparty over the nights
    [start, end) (default: from the current day on), counting live and scheduled
    trades over the nights they cover. A roll's old and new trades never overlap,
    so replacing a trade does not double its usage."""
    trades = [t for t in open_trades(book, counterparty=counterparty) if t["id"] != exclude]
    if not trades:
        return 0
    first = book["day"] if start is None else start
    last = max(planned_end(book, t) for t in trades) if end is None else end
    peak = 0
    for night in range(first, last):
        peak = max(peak, sum(t["notional"] for t in trades if t["start"] <= night < planned_end(book, t)))
    return peak


def trade_interest(book, trade, until_day: int) -> int:
    """Interest accrued on a started trade from its start to `until_day`."""
    if until_day <= trade["start"]:
        return 0
    return accrual(trade["principal"], trade["rate_bps"], cal_days(book, trade["start"], until_day))


def new_trade(book, asset_id, quote, notional, day) -> dict:
    asset = book["assets"][asset_id]
    book["counters"]["trade"] += 1
    haircut = max(quote["haircut_bps"], asset["haircut_floor_bps"])
    trade = {
        "id": "FT%03d" % book["counters"]["trade"],
        "asset": asset_id,
        "quote": quote["id"],
        "counterparty": quote["counterparty"],
        "notional": notional,
        "haircut_bps": haircut,
        "principal": notional - haircut_amount(notional, haircut),
        "rate_bps": quote["rate_bps"],
        "start": quote["start_day"],
        "maturity": quote["start_day"] + quote["tenor"],
        "ends": quote["start_day"] + quote["tenor"],
        "agreed_day": day,
        "status": "scheduled",
        "margin": 0,
        "end_day": None,
        "interest": 0,
    }
    book["trades"][trade["id"]] = trade
    usage = book["quote_usage"]
    usage[quote["id"]] = usage.get(quote["id"], 0) + notional
    return trade


# -- coverage, tail and cost --------------------------------------------------

def covered(book, asset_id, night: int) -> int:
    """Notional funded over the night after business day `night` by open trades."""
    total = 0
    for t in open_trades(book, asset_id=asset_id):
        if t["start"] <= night < planned_end(book, t):
            total += t["notional"]
    return total


def forward_exposure(book, asset_id, from_day: int):
    """(gap calendar days, tail cent-days) from the night of `from_day` to exit,
    given the trades agreed so far and no further action."""
    asset = book["assets"][asset_id]
    spans = [(t["start"], planned_end(book, t), t["notional"]) for t in open_trades(book, asset_id=asset_id)]
    gap = 0
    tail = 0
    for night in range(max(asset["settle_day"], from_day), asset["exit_day"]):
        cover = sum(n for start, end, n in spans if start <= night < end)
        short = asset["notional"] - min(asset["notional"], cover)
        if short > 0:
            span = night_span(book, night)
            gap += span
            tail += short * span
    return gap, tail


def funding_cost_to_date(book, day: int) -> int:
    """Interest accrued on every started trade up to the end of `day`."""
    total = 0
    for tid in sorted(book["trades"]):
        t = book["trades"][tid]
        if t["start"] > day:
            continue
        if t["status"] == "ended":
            if t["end_day"] is None or t["end_day"] <= t["start"]:
                continue
            total += trade_interest(book, t, min(day, t["end_day"]))
        elif t["status"] == "live":
            total += trade_interest(book, t, day)
    return total


def realized_tail(book) -> int:
    """Cent-days every held asset spent unfunded, from its settlement to its exit,
    using the trades' actual lives (call after the carry horizon)."""
    total = 0
    for aid in sorted(book["assets"]):
        asset = book["assets"][aid]
        trades = [t for t in book["trades"].values()
                  if t["asset"] == aid and t["end_day"] is not None and t["end_day"] > t["start"]]
        for night in range(asset["settle_day"], asset["exit_day"]):
            cover = sum(t["notional"] for t in trades if t["start"] <= night < t["end_day"])
            short = asset["notional"] - min(asset["notional"], cover)
            total += short * night_span(book, night)
    return total


def unfunded_tail(book) -> int:
    """Cent-days of every held asset from settlement to exit: the tail of a desk
    that funds nothing."""
    total = 0
    for aid in sorted(book["assets"]):
        a = book["assets"][aid]
        total += a["notional"] * cal_days(book, a["settle_day"], a["exit_day"])
    return total


def total_interest(book) -> int:
    return sum(book["trades"][tid]["interest"] for tid in sorted(book["trades"]))


def open_approval_ids(book):
    return [aid for aid in sorted(book["approvals"]) if book["approvals"][aid]["status"] in OPEN_APPROVAL_STATUSES]


def asset_coupon(book, asset) -> int:
    return accrual(asset["notional"], asset["coupon_bps"], cal_days(book, asset["settle_day"], asset["exit_day"]))
