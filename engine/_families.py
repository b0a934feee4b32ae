"""Practice families FUND_01..FUND_04: world generators by seed.

A family is a template; `(family, seed)` is an instance. Every number is drawn
from the hash-based generator, so an instance is the same everywhere. What each
family exercises:

  FUND_01  plain match funding: a protecting quote exists for every asset
  FUND_02  rolls: at settlement only short quotes exist; protecting roll
           quotes are offered a few days before the first funding matures
  FUND_03  capacity: the cheap protecting lender runs out of capacity, so the
           desk must escalate and execute under approved authority; a second
           lender's capacity is cut mid-window
  FUND_04  shocks: a downgrade raises an asset's haircut (a margin call) and a
           client delays an exit, opening a tail the desk must roll away
"""

from ._calendar import calendar
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


class _World:
    def __init__(self, family, seed):
        self.rng = HashRng(family, seed)
        self.family = family
        self.seed = seed
        self.assets, self.cps, self.quotes, self.events, self.sources, self.policy = [], [], [], [], [], []

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

    def instance(self, title, max_tenor=40, buffer=2 * MILLION, extra_need=0):
        need = buffer + extra_need + MILLION
        for a in self.assets:
            worst = max([q["haircut_bps"] for q in self.quotes] + [a["haircut_floor_bps"]]) + 500
            need += haircut_amount(a["notional"], worst) + accrual(a["notional"], 1200, 60)
        inst = {
            "format": INSTANCE_FORMAT,
            "instance_id": f"{self.family}/seed-{self.seed}",
            "family": self.family,
            "seed": self.seed,
            "title": title,
            "horizon": HORIZON,
            "carry_end": CARRY_END,
            "calendar": calendar(CARRY_END),
            "desk": {"opening_cash": need, "min_buffer": buffer, "max_tenor": max_tenor, "treasury_rate_bps": 1500},
            "assets": self.assets,
            "counterparties": self.cps,
            "quotes": self.quotes,
            "events": self.events,
            "approval_policy": self.policy,
            "sources": sorted(self.sources, key=lambda s: s["id"]),
        }
        return validate_instance(inst, where=inst["instance_id"])


def _spread(rng, label, count, low, high):
    return sorted(rng.randint(f"{label}{i}", low, high) for i in range(count))


def _match_funding(w, lenders, protect=True):
    """Quotes at each asset's settlement: one short and cheap, one protecting."""
    r = w.rng
    for a in w.assets:
        n = a["id"]
        life = a["exit_day"] - a["settle_day"]
        big = 25 * MILLION
        short_cp, long_cp = r.choice(f"short{n}", lenders), r.choice(f"long{n}", lenders)
        w.quote(short_cp, a["announce_day"], a["settle_day"], a["settle_day"], max(1, life // 3),
                r.step(f"srate{n}", 350, 450, 5), big, r.step(f"shc{n}", 200, 400, 50), KINDS)
        if protect:
            w.quote(long_cp, a["announce_day"], a["settle_day"], a["settle_day"], life + r.randint(f"extra{n}", 0, 4),
                    r.step(f"lrate{n}", 460, 560, 5), big, r.step(f"lhc{n}", 300, 600, 50), KINDS)
            w.quote(short_cp, a["announce_day"], a["settle_day"], a["settle_day"], life + 6,
                    r.step(f"xrate{n}", 570, 650, 5), big, r.step(f"xhc{n}", 300, 600, 50), KINDS)


def _fund_01(w):
    r = w.rng
    lenders = [w.counterparty("Harbour Bank", 80 * MILLION, KINDS), w.counterparty("Ridge Capital", 80 * MILLION, KINDS)]
    for i, settle in enumerate(_spread(r, "settle", r.randint("count", 3, 4), 1, 8)):
        announce = max(1, settle - r.randint(f"lead{i}", 0, 3))
        w.asset(announce, settle, min(CARRY_END, settle + r.randint(f"life{i}", 8, 20)))
    _match_funding(w, lenders)
    return w.instance("Plain match funding")


def _fund_02(w):
    r = w.rng
    lenders = [w.counterparty("Harbour Bank", 90 * MILLION, KINDS), w.counterparty("Ridge Capital", 90 * MILLION, KINDS)]
    for i, settle in enumerate(_spread(r, "settle", 3, 1, 5)):
        w.asset(max(1, settle - 1), settle, min(CARRY_END, settle + r.randint(f"life{i}", 14, 22)))
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
        for j, lender in enumerate(lenders):
            w.quote(lender, offered, maturity, maturity, a["exit_day"] - maturity + j * 2,
                    r.step(f"roll{n}{j}", 450, 560, 5), 60 * MILLION, r.step(f"rh{n}{j}", 300, 700, 50), KINDS)
        w.source(offered, f"Roll offers for {n}",
                 f"Harbour Bank and Ridge Capital quote term funding for {n} starting day {maturity}, "
                 f"the maturity of its initial funding.")
    return w.instance("Rolls before maturity")


def _fund_03(w):
    r = w.rng
    cheap = w.counterparty("Harbour Bank", 0, KINDS)
    dear = w.counterparty("Ridge Capital", 60 * MILLION, KINDS)
    a1 = w.asset(1, r.randint("s1", 1, 3), r.randint("x1", 16, 24))
    a2 = w.asset(r.randint("ann2", 2, 4), 0, 0)
    a2["settle_day"] = a2["announce_day"] + 3
    a2["exit_day"] = a2["settle_day"] + r.randint("life2", 10, 16)
    w.sources[-1]["text"] = (f"The desk commits to carry {a2['id']}, a {a2['kind']} position rated {a2['rating']}, "
                             f"notional {a2['notional']} cents, coupon {a2['coupon_bps']} bps. It settles on day "
                             f"{a2['settle_day']} and the client takes it out on day {a2['exit_day']}. Minimum haircut "
                             f"{a2['haircut_floor_bps']} bps.")
    cheap["capacity"] = a1["notional"] + r.step("cap", MILLION, 3 * MILLION, MILLION // 2)
    for a in (a1, a2):
        life = a["exit_day"] - a["settle_day"]
        w.quote(cheap, a["announce_day"], a["settle_day"], a["settle_day"], life + 1, r.step(f"c{a['id']}", 420, 470, 5),
                25 * MILLION, 400, KINDS)
        w.quote(dear, a["announce_day"], a["settle_day"], a["settle_day"], max(2, life // 2),
                r.step(f"d{a['id']}", 600, 700, 5), 25 * MILLION, 600, KINDS)
    w.policy.append({"kind": "capacity", "counterparty": cheap["id"], "max_amount": 30 * MILLION, "lag": 2, "valid_days": 3})
    w.source(1, "Treasury memo: limit exceptions",
             f"Capacity exceptions for {cheap['name']} ({cheap['id']}) are reviewed within 2 business days "
             "of a request and, if approved, stay valid for 3 business days. Buffer exceptions are never granted.")
    cut_day = r.randint("cut", 8, 12)
    sid = w.source(cut_day - 2, f"Counterparty notice: {dear['name']}",
                   f"{dear['name']} ({dear['id']}) reduces its funding capacity to 10,000,000.00 from day {cut_day}.")
    w.events.append({"id": "E1", "kind": "capacity_cut", "effective_day": cut_day, "source": sid,
                     "counterparty": dear["id"], "capacity": 10 * MILLION})
    return w.instance("Capacity exhausted: escalate, then execute")


def _fund_04(w):
    r = w.rng
    lenders = [w.counterparty("Harbour Bank", 90 * MILLION, KINDS), w.counterparty("Ridge Capital", 90 * MILLION, KINDS)]
    w.asset(1, 1, r.randint("x1", 14, 18), kind="CLO")
    w.asset(1, r.randint("s2", 2, 4), r.randint("x2", 12, 15))
    w.asset(r.randint("a3", 2, 5), 6, r.randint("x3", 18, 24))
    _match_funding(w, lenders)
    shocked, delayed = w.assets[0], w.assets[1]
    shock_day = r.randint("shock", 6, 9)
    floor = shocked["haircut_floor_bps"] + r.step("jump", 500, 1000, 100)
    sid = w.source(shock_day - 2, f"Credit memo: {shocked['id']} downgraded",
                   f"{shocked['id']} is downgraded; from day {shock_day} every lender applies a haircut of at least "
                   f"{floor} bps to it, and margin on existing funding is called that day.")
    w.events.append({"id": "E1", "kind": "haircut_change", "effective_day": shock_day, "source": sid,
                     "asset": shocked["id"], "haircut_floor_bps": floor})
    old_exit = delayed["exit_day"]
    new_exit = min(CARRY_END, old_exit + r.randint("delay", 4, 8))
    effective = old_exit - r.randint("notice", 2, 4)
    sid = w.source(effective - 1, f"Client notice: {delayed['id']} exit delayed",
                   f"The client will take {delayed['id']} out on day {new_exit} instead of day {old_exit}, "
                   f"effective day {effective}.")
    w.events.append({"id": "E2", "kind": "exit_delay", "effective_day": effective, "source": sid,
                     "asset": delayed["id"], "exit_day": new_exit})
    for j, lender in enumerate(lenders):
        w.quote(lender, effective, old_exit, old_exit, new_exit - old_exit + j, r.step(f"ext{j}", 480, 600, 5),
                25 * MILLION, 500, KINDS)
    return w.instance("Haircut shock and exit delay", extra_need=haircut_amount(shocked["notional"], floor))


_BUILDERS = {"FUND_01": _fund_01, "FUND_02": _fund_02, "FUND_03": _fund_03, "FUND_04": _fund_04}


def generate(family: str, seed: int) -> dict:
    """The instance `(family, seed)`."""
    if family not in _BUILDERS:
        raise ValueError(f"unknown family {family!r}; expected one of {FAMILIES}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 1:
        raise ValueError("seed: expected a positive integer")
    return _BUILDERS[family](_World(family, seed))
