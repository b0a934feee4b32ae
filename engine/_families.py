"""Practice families FUND_01..FUND_04: world generators by seed.

A family is a template; `(family, seed)` is an instance. Every number is drawn
from the hash-based generator, so an instance is the same everywhere. What each
family exercises:

  FUND_01  plain match funding: a protecting quote exists for every asset
  FUND_02  rolls: at settlement only short quotes exist; protecting roll
           quotes are offered a few days before the first funding matures,
           and one lender withdraws its roll offer before that maturity; a
           market holiday lengthens one night
  FUND_03  authority: the only protecting quote for the first asset is longer
           than the desk's tenor limit, and the cheap lender runs out of
           capacity for the second, so the desk escalates twice (tenor, then
           capacity) and executes under each approval; a second lender's
           capacity is cut mid-window
  FUND_04  shocks: a downgrade raises an asset's haircut (a margin call that
           leaves cash between the buffer and the buffer plus 1,000,000.00)
           and a client delays an exit; the only funding to the new exit is a
           spot-start refinancing at a higher haircut, which takes cash about
           half the buffer under it, so the desk escalates for buffer
           authority and executes under it

No family's opening cash depends on anything the desk has not been shown by
day 1 (the cash is in the first packet).
"""

import copy
import datetime

from ._calendar import calendar, weekday_offsets
from ._rng import HashRng
from ._units import accrual, haircut_amount
from ._world import INSTANCE_FORMAT, validate_instance

FAMILIES = ("FUND_01", "FUND_02", "FUND_03", "FUND_04")
HORIZON = 20
CARRY_END = 30
KINDS = ("ABS", "CLO", "LOAN")
RATINGS = {"ABS": "AA", "CLO": "A", "LOAN": "BBB"}
FLOORS = {"ABS": 300, "CLO": 500, "LOAN": 800}
MILLION = 100_000_000  # cents
# What one position can need in cash at most: the haircut at the highest haircut
# any family quotes or floors (800 bps) plus 500 bps of margin room, and two
# months of carry at 12 %, on the largest notional any family draws.
MAX_DRAWN_NOTIONAL = 20 * MILLION
SLOT_ALLOWANCE = haircut_amount(MAX_DRAWN_NOTIONAL, 800 + 500) + accrual(MAX_DRAWN_NOTIONAL, 1200, 60)


class _World:
    def __init__(self, family, seed):
        self.rng = HashRng(family, seed)
        self.family = family
        self.seed = seed
        self.assets, self.cps, self.quotes, self.events, self.sources, self.policy = [], [], [], [], [], []
        self.holidays = ()

    def source(self, day, title, text):
        sid = "S%02d" % (len(self.sources) + 1)
        self.sources.append({"id": sid, "published_day": day, "title": title, "text": text})
        return sid

    def counterparty(self, name, capacity, kinds):
        cp = {"id": "CP%d" % (len(self.cps) + 1), "name": name, "capacity": capacity, "eligible_kinds": list(kinds)}
        self.cps.append(cp)
        return cp

    def asset(self, announce, settle, exit_day, kind=None):
        r = self.rng
        n = len(self.assets) + 1
        kind = kind or r.choice(f"kind{n}", KINDS)
        a = {
            "id": "A%d" % n, "name": f"{kind} note {n}", "kind": kind, "rating": RATINGS[kind],
            "notional": r.step(f"notional{n}", 5 * MILLION, 20 * MILLION, MILLION // 2),
            "coupon_bps": r.step(f"coupon{n}", 550, 900, 25),
            "announce_day": announce, "settle_day": settle, "exit_day": exit_day,
            "haircut_floor_bps": FLOORS[kind],
        }
        self.assets.append(a)
        self.source(announce, f"Term sheet: {a['name']} ({a['id']})",
                    f"The desk commits to carry {a['id']}, a {a['kind']} position rated {a['rating']}, "
                    f"notional {a['notional']} cents, coupon {a['coupon_bps']} bps. It settles on day {settle} "
                    f"(the desk pays) and the client takes it out on day {exit_day}. Minimum haircut "
                    f"{a['haircut_floor_bps']} bps.")
        return a

    def quote(self, cp, offered, valid_through, start, tenor, rate, max_notional, haircut, kinds):
        q = {"id": "Q%02d" % (len(self.quotes) + 1), "counterparty": cp["id"], "offered_day": offered,
             "valid_through": valid_through, "start_day": start, "tenor": tenor, "rate_bps": rate,
             "max_notional": max_notional, "haircut_bps": haircut, "eligible_kinds": list(kinds)}
        self.quotes.append(q)
        return q

    def published_sources(self):
        """The sources numbered in the order they are published (and the events
        pointed at the new ids). Numbered as they were written, the ids of the
        sources shown so far left gaps that told a desk what was still to come
        -- in FUND_02, which asset's roll offer would be withdrawn, days before
        the notice. Source ids appear in no text, so renumbering is safe."""
        order = sorted(range(len(self.sources)), key=lambda i: (self.sources[i]["published_day"], i))
        rename = {self.sources[i]["id"]: "S%02d" % (k + 1) for k, i in enumerate(order)}
        self.events = [dict(e, source=rename[e["source"]]) for e in self.events]
        return [dict(self.sources[i], id=rename[self.sources[i]["id"]]) for i in order]

    def instance(self, title, slots, max_tenor=40, buffer=2 * MILLION, extra_need=0, opening_cash=None):
        """The instance. Its opening cash is set from the family's bounds (the
        most positions it can hold, each at the largest notional and haircut
        the family draws), never from this world's draws: the desk sees its cash
        on day 1, and cash computed from every position would tell it about the
        ones still to be announced."""
        need = buffer + extra_need + MILLION + slots * SLOT_ALLOWANCE
        inst = {
            "format": INSTANCE_FORMAT,
            "instance_id": f"{self.family}/seed-{self.seed}",
            "family": self.family,
            "seed": self.seed,
            "title": title,
            "horizon": HORIZON,
            "carry_end": CARRY_END,
            "calendar": calendar(CARRY_END, holidays=self.holidays),
            "desk": {"opening_cash": need if opening_cash is None else opening_cash, "min_buffer": buffer,
                     "max_tenor": max_tenor, "treasury_rate_bps": 1500},
            "assets": self.assets,
            "counterparties": self.cps,
            "quotes": self.quotes,
            "sources": self.published_sources(),
            "events": self.events,
            "approval_policy": self.policy,
        }
        return validate_instance(inst, where=inst["instance_id"])


def _spread(rng, label, count, low, high):
    return sorted(rng.randint(f"{label}{i}", low, high) for i in range(count))


def _term_quotes(w, a, lenders, extra=None):
    """Quotes at an asset's settlement: one short and cheap, two protecting (the
    cheaper matures `extra` days after exit, drawn 0..4 unless given)."""
    r = w.rng
    n = a["id"]
    life = a["exit_day"] - a["settle_day"]
    big = 25 * MILLION
    short_cp, long_cp = r.choice(f"short{n}", lenders), r.choice(f"long{n}", lenders)
    extra = r.randint(f"extra{n}", 0, 4) if extra is None else extra
    w.quote(short_cp, a["announce_day"], a["settle_day"], a["settle_day"], max(1, life // 3),
            r.step(f"srate{n}", 350, 450, 5), big, r.step(f"shc{n}", 200, 400, 50), KINDS)
    long_q = w.quote(long_cp, a["announce_day"], a["settle_day"], a["settle_day"], life + extra,
                     r.step(f"lrate{n}", 460, 560, 5), big, r.step(f"lhc{n}", 300, 600, 50), KINDS)
    w.quote(short_cp, a["announce_day"], a["settle_day"], a["settle_day"], life + 6,
            r.step(f"xrate{n}", 570, 650, 5), big, r.step(f"xhc{n}", 300, 600, 50), KINDS)
    return long_q


def _match_funding(w, lenders):
    for a in w.assets:
        _term_quotes(w, a, lenders)


def _date(offset):
    start = datetime.date.fromisoformat(calendar(CARRY_END)["start_date"])
    return (start + datetime.timedelta(days=offset)).isoformat()


def _fund_01(w):
    r = w.rng
    lenders = [w.counterparty("Harbour Bank", 80 * MILLION, KINDS), w.counterparty("Ridge Capital", 80 * MILLION, KINDS)]
    plans = []
    for i, settle in enumerate(_spread(r, "settle", r.randint("count", 3, 4), 1, 8)):
        announce = max(1, settle - r.randint(f"lead{i}", 0, 3))
        plans.append((announce, settle, min(CARRY_END, settle + r.randint(f"life{i}", 8, 20))))
    # positions (and so their quotes and term sheets) are numbered in the order
    # they are announced: a gap in the ids shown would tell that one is to come
    for announce, settle, exit_day in sorted(plans):
        w.asset(announce, settle, exit_day)
    _match_funding(w, lenders)
    return w.instance("Plain match funding", slots=4)


def _fund_02(w):
    r = w.rng
    lenders = [w.counterparty("Harbour Bank", 90 * MILLION, KINDS), w.counterparty("Ridge Capital", 90 * MILLION, KINDS)]
    # a market holiday: one weekday between business days 4 and 12 is skipped,
    # so the night before it spans 2 or 4 calendar days
    plain = weekday_offsets(CARRY_END + 5)
    holiday_day = r.randint("holiday", 4, 12)
    w.holidays = (plain[holiday_day],)
    w.source(1, "Settlement calendar",
             f"{_date(plain[holiday_day])} is a market holiday: nothing settles that day, so the night after "
             f"business day {holiday_day - 1} runs {plain[holiday_day + 1] - plain[holiday_day - 1]} calendar days "
             f"(to business day {holiday_day}).")
    for i, settle in enumerate(_spread(r, "settle", 3, 1, 5)):
        w.asset(max(1, settle - 1), settle, min(CARRY_END, settle + r.randint(f"life{i}", 14, 22)))
    withdrawn = r.choice("withdrawn", w.assets)
    for a in w.assets:
        n = a["id"]
        life = a["exit_day"] - a["settle_day"]
        first = r.randint(f"first{n}", 5, max(5, min(9, life - 4)))
        cp = r.choice(f"cp{n}", lenders)
        w.quote(cp, a["announce_day"], a["settle_day"], a["settle_day"], 3, r.step(f"s{n}", 330, 400, 5),
                25 * MILLION, 300, KINDS)
        w.quote(cp, a["announce_day"], a["settle_day"], a["settle_day"], first, r.step(f"m{n}", 400, 460, 5),
                25 * MILLION, r.step(f"mh{n}", 300, 500, 50), KINDS)
        maturity = a["settle_day"] + first
        offered = max(a["settle_day"] + 1, maturity - 3)
        rolls = []
        for j, lender in enumerate(lenders):
            rolls.append(w.quote(lender, offered, maturity, maturity, a["exit_day"] - maturity + j * 2,
                                 r.step(f"roll{n}{j}", 450, 560, 5), 60 * MILLION, r.step(f"rh{n}{j}", 300, 700, 50), KINDS))
        w.source(offered, f"Roll offers for {n}",
                 f"Harbour Bank and Ridge Capital quote term funding for {n} starting day {maturity}, "
                 f"the maturity of its initial funding.")
        if a is withdrawn:
            # the shorter roll offer is pulled two days after it is made: a desk
            # that waits for the maturity day finds only the longer one
            quote = rolls[0]
            effective = offered + 2
            sid = w.source(offered + 1, f"Counterparty notice: {lenders[0]['name']}",
                           f"{lenders[0]['name']} ({lenders[0]['id']}) withdraws its roll offer {quote['id']} for {n} "
                           f"from day {effective}.")
            w.events.append({"id": "E1", "kind": "quote_withdrawal", "effective_day": effective, "source": sid,
                             "quote": quote["id"]})
    return w.instance("Rolls before maturity, a withdrawn offer and a holiday", slots=3)


def _fund_03(w):
    r = w.rng
    cheap = w.counterparty("Harbour Bank", 0, KINDS)
    dear = w.counterparty("Ridge Capital", 60 * MILLION, KINDS)
    # the desk's tenor limit covers the second asset's protecting quote but not
    # the first's, which settles late enough for a tenor approval to arrive
    settle1, announce2 = r.randint("s1", 2, 3), r.randint("ann2", 2, 4)
    life2 = r.randint("life2", 10, 13)
    max_tenor = life2 + 1
    life1 = r.randint("life1", max_tenor + 1, 20)
    a1 = w.asset(1, settle1, settle1 + life1)
    a2 = w.asset(announce2, announce2 + 3, announce2 + 3 + life2)
    cheap["capacity"] = a1["notional"] + r.step("cap", MILLION, 3 * MILLION, MILLION // 2)
    for a in (a1, a2):
        life = a["exit_day"] - a["settle_day"]
        w.quote(cheap, a["announce_day"], a["settle_day"], a["settle_day"], life + 1, r.step(f"c{a['id']}", 420, 470, 5),
                25 * MILLION, 400, KINDS)
        w.quote(dear, a["announce_day"], a["settle_day"], a["settle_day"], max(2, life // 2),
                r.step(f"d{a['id']}", 600, 700, 5), 25 * MILLION, 600, KINDS)
    w.policy.append({"kind": "capacity", "counterparty": cheap["id"], "max_amount": 30 * MILLION, "lag": 2, "valid_days": 3})
    w.policy.append({"kind": "tenor", "max_amount": 15, "lag": 1, "valid_days": 3})
    w.source(1, "Treasury memo: limit exceptions",
             f"The desk's tenor limit is {max_tenor} business days. Tenor exceptions of up to 15 days are answered "
             f"the next business day and, if approved, stay valid for 3 business days. Capacity exceptions for "
             f"{cheap['name']} ({cheap['id']}) are reviewed within 2 business days of a request and, if approved, "
             "stay valid for 3 business days. Buffer exceptions are never granted.")
    cut_day = r.randint("cut", 8, 12)
    sid = w.source(cut_day - 2, f"Counterparty notice: {dear['name']}",
                   f"{dear['name']} ({dear['id']}) reduces its funding capacity to 10,000,000.00 from day {cut_day}.")
    w.events.append({"id": "E1", "kind": "capacity_cut", "effective_day": cut_day, "source": sid,
                     "counterparty": dear["id"], "capacity": 10 * MILLION})
    return w.instance("Tenor and capacity exhausted: escalate, then execute", slots=2, max_tenor=max_tenor)


BUFFER = 2 * MILLION
PROXY_SHOCK_DAY, PROXY_JUMP = 7, 500  # the proxy world's downgrade: the latest day and the smallest jump drawn
QUIET_MARGIN = MILLION  # the proxy's cash after the downgrade: the buffer plus this


def _fund_04(w):
    r = w.rng
    lenders = [w.counterparty("Harbour Bank", 90 * MILLION, KINDS), w.counterparty("Ridge Capital", 90 * MILLION, KINDS)]
    # every position is committed on day 1, so day-1 facts fix the opening cash (below)
    w.asset(1, 1, r.randint("x1", 16, 18), kind="CLO")
    w.asset(1, r.randint("s2", 2, 4), r.randint("x2", 12, 14))
    w.asset(1, 6, r.randint("x3", 18, 24))
    shocked, delayed, third = w.assets
    _term_quotes(w, shocked, lenders)
    current = _term_quotes(w, delayed, lenders, extra=0)  # matures at the old exit
    _term_quotes(w, third, lenders)
    w.policy.append({"kind": "buffer", "max_amount": BUFFER, "lag": 1, "valid_days": 3})
    w.source(1, "Treasury memo: buffer exceptions",
             "A buffer exception lets one funding action take the desk's cash under its minimum buffer by at most "
             "the amount approved (never under zero). Requests of up to the whole buffer are answered the next "
             "business day and, if approved, stay valid for 3 business days.")
    title = "Haircut shock, exit delay and a refinancing under buffer authority"
    # The opening cash comes from a proxy of the world holding only what the desk
    # sees on day 1 (positions, quotes, memo) and a fixed downgrade (day 7, the
    # smallest jump): its cash after the margin call is the buffer plus
    # QUIET_MARGIN. Nothing still hidden on day 1 moves it.
    proxy = copy.deepcopy(w)
    _downgrade(proxy, shocked, PROXY_SHOCK_DAY, shocked["haircut_floor_bps"] + PROXY_JUMP)
    roomy = proxy.instance(title, slots=3, buffer=BUFFER, extra_need=haircut_amount(MAX_DRAWN_NOTIONAL, 1000))
    closes = _reference_closes(roomy, PROXY_SHOCK_DAY)
    if min(closes.values()) != closes[PROXY_SHOCK_DAY]:
        raise ValueError(f"{roomy['instance_id']}: the proxy's cash is lowest before the downgrade")
    opening = roomy["desk"]["opening_cash"] - (closes[PROXY_SHOCK_DAY] - (BUFFER + QUIET_MARGIN))
    # the real downgrade: a draw, disclosed two days ahead; its jump is at least
    # the proxy's, so the quiet cash is between the buffer and buffer + margin
    shock_day = r.randint("shock", 6, 7)
    floor = shocked["haircut_floor_bps"] + r.step("jump", PROXY_JUMP, 1000, 100)
    _downgrade(w, shocked, shock_day, floor)
    old_exit = delayed["exit_day"]
    new_exit = old_exit + r.randint("delay", 4, 8)
    effective = old_exit - r.randint("notice", 2, 4)
    sid = w.source(effective - 1, f"Client notice: {delayed['id']} exit delayed",
                   f"The client will take {delayed['id']} out on day {new_exit} instead of day {old_exit}, "
                   f"effective day {effective}.")
    w.events.append({"id": "E2", "kind": "exit_delay", "effective_day": effective, "source": sid,
                     "asset": delayed["id"], "exit_day": new_exit})
    # the current lender will not extend; the other refinances to the new exit,
    # starting the day the desk agrees, at a stricter haircut set (from what the
    # desk already knows when it is offered) so that refinancing takes cash
    # about half the buffer under it, never under zero
    other = next(cp for cp in lenders if cp["id"] != current["counterparty"])
    held = max(current["haircut_bps"], delayed["haircut_floor_bps"])
    rate = r.step("rfrate", 480, 600, 5)
    refis = [w.quote(other, day, day, day, new_exit - day, rate, 25 * MILLION, held + 200, KINDS)
             for day in range(effective, old_exit)]
    offer = w.source(effective, f"Refinancing offer for {delayed['id']}", "")
    tight = w.instance(title, slots=3, buffer=BUFFER, opening_cash=opening)
    haircut = _refinancing_haircut(tight, effective, delayed, refis[0]["id"], held + 200)
    for q in refis:
        q["haircut_bps"] = haircut
    text = (f"{other['name']} ({other['id']}) offers to fund {delayed['id']} to its new exit on day {new_exit}, "
            f"starting the day the desk agrees, on any day from {effective} to {old_exit - 1}, at a {haircut} bps "
            f"haircut; the current lender will not extend.")
    w.sources[[x["id"] for x in w.sources].index(offer)]["text"] = text
    return w.instance(title, slots=3, buffer=BUFFER, opening_cash=opening)


def _downgrade(w, asset, day, floor):
    sid = w.source(day - 2, f"Credit memo: {asset['id']} downgraded",
                   f"{asset['id']} is downgraded; from day {day} every lender applies a haircut of at least "
                   f"{floor} bps to it, and margin on existing funding is called that day.")
    w.events.append({"id": "E1", "kind": "haircut_change", "effective_day": day, "source": sid,
                     "asset": asset["id"], "haircut_floor_bps": floor})


def _reference_closes(instance, last_day):
    """{day: cash at its close} of the reference plan (which reads only packets) up to `last_day`."""
    from ._baselines import policy_batch
    from ._run import Run
    run = Run(instance, receipts=False)
    closes = {}
    while run.open_day is not None and run.open_day <= last_day:
        _, record = run.submit(policy_batch("reference", run.packet()))
        closes[record["day"]] = record["cash"]
    return closes


def _refinancing_haircut(instance, day, asset, quote_id, placeholder):
    """The refinancing quote's haircut (a multiple of 50 bps) that takes the
    reference's cash at the close of `day`, after rolling into it, to about half
    the buffer. The cost of the roll grows with the haircut by the notional per
    basis point, so one dry run at a placeholder haircut is enough."""
    from ._tools import project
    from ._run import Run
    from ._baselines import policy_batch
    run = Run(instance, receipts=False)
    while run.open_day < day:
        run.submit(policy_batch("reference", run.packet()))
    packet = run.packet()
    trade = next(t for t in packet["trades"] if t["asset"] == asset["id"] and t["status"] == "live")
    dry = project(packet, [{"id": "refi", "type": "ROLL", "trade": trade["id"], "quote": quote_id}], trusted=True)
    target = BUFFER // 2
    extra_bps = (dry["cash"] - target) * 10_000 // asset["notional"]
    haircut = placeholder + -(-extra_bps // 50) * 50
    if not placeholder <= haircut <= 9_000:
        raise ValueError(f"{instance['instance_id']}: no refinancing haircut fits the buffer scenario")
    return haircut


_BUILDERS = {"FUND_01": _fund_01, "FUND_02": _fund_02, "FUND_03": _fund_03, "FUND_04": _fund_04}


def generate(family: str, seed: int) -> dict:
    """The instance `(family, seed)`."""
    if family not in _BUILDERS:
        raise ValueError(f"unknown family {family!r}; expected one of {FAMILIES}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 1:
        raise ValueError("seed: expected a positive integer")
    return _BUILDERS[family](_World(family, seed))
