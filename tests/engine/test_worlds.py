"""The worlds exercise every rule the engine implements: a quote withdrawal and
a market holiday (FUND_02), tenor authority (FUND_03) and buffer authority
(FUND_04) that matter -- in family runs over many seeds and in published
fixtures."""

import functools

import pytest

import engine
from engine._calendar import weekday_offsets
from engine._report import gold_report
from engine._units import accrual
from tests.engine.helpers import play

SEEDS = range(1, 31)


@functools.lru_cache(maxsize=None)
def _gold_run(family, seed):
    run = play(engine.generate(family, seed))
    run.finalize()
    return run


def _executed(run):
    """Kinds of authority under which an EXECUTE was accepted, in order."""
    kinds = []
    for r in run.receipts:
        p = r["payload"]
        if r["kind"] == "ACTION" and p["type"] == "EXECUTE" and p["decision"] == "ACCEPTED":
            kinds.append(run.book["approvals"][p["effects"]["approval"]]["kind"])
    return kinds


def _events(receipts, kind):
    return [r for r in receipts if r["kind"] == "EVENT" and r["payload"]["kind"] == kind]


def _holiday_nights(instance):
    """Business days whose night spans a skipped weekday."""
    offsets = instance["calendar"]["offsets"]
    weekdays = set(weekday_offsets(instance["carry_end"] + 10))
    return [d for d in range(1, len(offsets) - 1) if any(c in weekdays for c in range(offsets[d] + 1, offsets[d + 1]))]


# -- every seed --------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_fund_02_withdraws_a_quote_and_has_a_holiday(seed):
    run = _gold_run("FUND_02", seed)
    withdrawals = _events(run.receipts, "quote_withdrawal")
    assert len(withdrawals) == 1
    quote = withdrawals[0]["payload"]["effects"]["quote"]
    assert quote in run.book["withdrawn_quotes"]
    # the withdrawn quote had been offered before it was pulled (no id is revealed early)
    q = next(q for q in run.instance["quotes"] if q["id"] == quote)
    assert q["offered_day"] < withdrawals[0]["day"] <= q["valid_through"]
    nights = _holiday_nights(run.instance)
    assert len(nights) == 1 and 3 <= nights[0] <= 11
    assert any(s["published_day"] == 1 and "market holiday" in s["text"] for s in run.instance["sources"])


@pytest.mark.parametrize("seed", SEEDS)
def test_fund_03_executes_under_tenor_then_capacity_authority(seed):
    run = _gold_run("FUND_03", seed)
    assert _executed(run) == ["tenor", "capacity"]
    desk = run.instance["desk"]
    tenors = [t for t in run.book["trades"].values() if t["maturity"] - t["start"] > desk["max_tenor"]]
    assert len(tenors) == 1  # the limit binds on one trade, which the tenor authority allowed


@pytest.mark.parametrize("seed", SEEDS)
def test_fund_04_executes_under_buffer_authority(seed):
    run = _gold_run("FUND_04", seed)
    assert _executed(run) == ["buffer"]
    approval = next(a for a in run.book["approvals"].values() if a["kind"] == "buffer")
    day = approval["consumed_day"]
    close = next(r for r in run.receipts if r["kind"] == "CLOSE" and r["day"] == day)["payload"]["cash"]
    buffer = run.instance["desk"]["min_buffer"]
    assert 0 <= close < buffer and buffer - close <= approval["amount"]
    codes = {b["code"] for b in run.book["breaches"]}
    assert codes == {"BUFFER_BREACH"} and min(b["day"] for b in run.book["breaches"]) == day
    assert _events(run.receipts, "haircut_change")[0]["payload"]["effects"]["margin_calls"]


# -- the rules fire: refusals without authority, acceptance with it ------------------


def _batch(run, actions):
    return {"day": run.open_day, "report": gold_report(run.book, run.open_day), "actions": actions}


def _decisions(run, actions):
    decisions, _ = run.submit(_batch(run, actions))
    return [(d["decision"], d["reason"]) for d in decisions]


def _gold_batches(instance):
    return {b["day"]: b for b in engine.gold_candidate(instance)["batches"]}


def _play_gold_until(instance, day):
    run = engine.Run(instance)
    batches = _gold_batches(instance)
    while run.open_day < day:
        run.submit(batches[run.open_day])
    return run, batches


def _first_execute(batches, kind_of):
    for day in sorted(batches):
        for action in batches[day]["actions"]:
            if action["type"] == "EXECUTE" and kind_of(action):
                return day, action
    raise AssertionError("no execution")


def test_tenor_limit_refuses_then_authority_allows():
    instance = engine.generate("FUND_03", 1)
    batches = _gold_batches(instance)
    escalate = next(a for d in sorted(batches) for a in batches[d]["actions"] if a.get("kind") == "tenor")
    day, execute = _first_execute(batches, lambda a: True)
    fund = dict(execute["action"], id="plain")
    quote = next(q for q in instance["quotes"] if q["id"] == fund["quote"])
    assert escalate["amount"] == quote["tenor"] - instance["desk"]["max_tenor"] > 0
    run, _ = _play_gold_until(instance, day)
    # without authority: TIMING (tenor over the limit)
    trial, _ = _play_gold_until(instance, day)
    assert _decisions(trial, [fund]) == [("REFUSED", "TIMING")]
    # authority one day too small: AUTHORITY
    small, _ = _play_gold_until(instance, day)
    small.book["approvals"][execute["approval"]]["amount"] = escalate["amount"] - 1
    assert _decisions(small, [execute]) == [("REFUSED", "AUTHORITY")]
    # the approved authority: ACCEPTED, once
    assert _decisions(run, [execute, dict(execute, id="again")]) == [("ACCEPTED", None), ("REFUSED", "AUTHORITY")]


def test_buffer_refuses_then_authority_allows_by_its_amount():
    instance = engine.generate("FUND_04", 1)
    batches = _gold_batches(instance)
    ask_day, escalate = next(
        (d, a) for d in sorted(batches) for a in batches[d]["actions"] if a.get("kind") == "buffer"
    )
    day, execute = _first_execute(batches, lambda a: True)
    assert day == ask_day + 1
    roll = dict(execute["action"], id="plain")
    # the day the refinancing is first offered, the plain roll is refused CASH (buffer only)
    first, _ = _play_gold_until(instance, ask_day)
    lender = next(q["counterparty"] for q in instance["quotes"] if q["id"] == roll["quote"])
    first_quote = next(q for q in first.packet()["quotes"] if q["start_day"] == ask_day and q["counterparty"] == lender)
    assert _decisions(first, [dict(roll, quote=first_quote["id"]), escalate]) == [
        ("REFUSED", "CASH"),
        ("ACCEPTED", None),
    ]
    # on the execution day: plain CASH, too small AUTHORITY, under zero CASH, approved ACCEPTED
    plain, _ = _play_gold_until(instance, day)
    assert _decisions(plain, [roll]) == [("REFUSED", "CASH")]
    small, _ = _play_gold_until(instance, day)
    approval = small.book["approvals"][execute["approval"]]
    assert approval["kind"] == "buffer" and approval["status"] == "approved"
    shortfall = _shortfall(small, execute)
    assert 0 < shortfall <= approval["amount"]
    approval["amount"] = shortfall - 1
    assert _decisions(small, [execute]) == [("REFUSED", "AUTHORITY")]
    exact, _ = _play_gold_until(instance, day)
    exact.book["approvals"][execute["approval"]]["amount"] = shortfall
    assert _decisions(exact, [execute]) == [("ACCEPTED", None)]
    broke, _ = _play_gold_until(instance, day)
    broke.book["cash"] -= instance["desk"]["min_buffer"]  # now the roll would end under zero
    assert _decisions(broke, [execute]) == [("REFUSED", "CASH")]


def _shortfall(run, execute):
    """Cents under the buffer the execution leaves at today's close (dry run)."""
    packet = run.packet()
    projection = engine.project(packet, [execute])
    assert projection["decisions"][0]["decision"] == "ACCEPTED"
    return run.instance["desk"]["min_buffer"] - projection["cash"]


def test_a_withdrawn_quote_is_refused_and_a_waiting_desk_pays_for_it():
    instance = engine.generate("FUND_02", 1)
    event = instance["events"][0]
    quote = next(q for q in instance["quotes"] if q["id"] == event["quote"])
    # the reference rolls the day the offers appear, before the withdrawal
    run, _ = _play_gold_until(instance, event["effective_day"])
    packet = run.packet()
    assert event["quote"] in packet["withdrawn_quotes"] and event["quote"] not in {q["id"] for q in packet["quotes"]}
    asset = next(a for a in packet["assets"] if a["status"] == "held")
    probe = {"id": "late", "type": "FUND", "asset": asset["id"], "quote": quote["id"], "notional": 10**8}
    assert _decisions(run, [probe]) == [("REFUSED", "TIMING")]
    # shortest-cheapest waits for the maturity day: the shorter offer is gone, it takes the longer one
    waiting = play(instance, "shortest-cheapest")
    used = {t["quote"] for t in waiting.book["trades"].values()}
    sibling = next(
        q["id"]
        for q in instance["quotes"]
        if q["id"] != quote["id"]
        and q["start_day"] == quote["start_day"]
        and q["offered_day"] == quote["offered_day"]
        and q["counterparty"] != quote["counterparty"]
    )
    assert quote["id"] not in used and sibling in used


def test_the_holiday_night_is_charged_its_calendar_days():
    instance = engine.generate("FUND_02", 1)
    [night] = _holiday_nights(instance)
    offsets = instance["calendar"]["offsets"]
    span = offsets[night + 1] - offsets[night]
    assert span in (2, 4)
    run = _gold_run("FUND_02", 1)
    across = [t for t in run.book["trades"].values() if t["start"] <= night < t["end_day"]]
    assert across
    plain = weekday_offsets(instance["carry_end"])
    for t in across:
        days = offsets[t["end_day"]] - offsets[t["start"]]
        assert t["interest"] == accrual(t["principal"], t["rate_bps"], days)
        # the holiday is a calendar day more than the same business days would span without it
        assert days == plain[t["end_day"] + 1] - plain[t["start"]]


def _shown_quote(run):
    """A quote the desk has been shown: one valid today, else the latest offered."""
    visible = run.packet()["quotes"]
    if visible:
        return visible[0]["id"]
    return max(
        (q for q in run.instance["quotes"] if q["offered_day"] <= run.open_day),
        key=lambda q: (q["offered_day"], q["id"]),
    )["id"]


def test_roll_after_maturity_is_timing_not_title():
    instance = engine.load_episode("W2")
    run = play(instance, days=10)
    ended = sorted(t["id"] for t in run.book["trades"].values() if t["status"] == "ended")
    assert ended  # the first funding matured (rolled) before day 11
    decisions, _ = run.submit(
        _batch(
            run,
            [
                {"id": f"late{i}", "type": "ROLL", "trade": tid, "quote": _shown_quote(run)}
                for i, tid in enumerate(ended)
            ],
        )
    )
    assert [(d["decision"], d["reason"]) for d in decisions] == [("REFUSED", "TIMING")] * len(ended)
    assert all("a roll must be at or before maturity" in d["message"] for d in decisions)


def test_roll_of_a_repaid_trade_is_timing():
    instance = engine.load_episode("W1")
    run = play(instance, days=3)
    live = sorted(t["id"] for t in run.book["trades"].values() if t["status"] == "live")
    run.book["cash"] += 10**10  # plenty: the repayment itself must pass CASH
    assert _decisions(run, [{"id": "r", "type": "REPAY", "trade": live[0]}]) == [("ACCEPTED", None)]
    decisions, _ = run.submit(_batch(run, [{"id": "x", "type": "ROLL", "trade": live[0], "quote": _shown_quote(run)}]))
    assert (decisions[0]["decision"], decisions[0]["reason"]) == ("REFUSED", "TIMING")
    assert "a roll must be at or before maturity" in decisions[0]["message"]


# -- published fixtures show each rule ----------------------------------------------


@pytest.mark.parametrize(
    "run_id, check",
    [
        ("baseline-FUND_02-seed-1-reference", "withdrawal"),
        ("baseline-FUND_02-seed-2-shortest-cheapest", "holiday"),
        ("baseline-FUND_03-seed-1-reference", "tenor"),
        ("baseline-FUND_04-seed-3-reference", "buffer"),
    ],
)
def test_published_fixtures_show_each_rule(run_id, check):
    spec = next(s for s in engine.fixture_specs() if s["run_id"] == run_id)
    execution = engine.execute_fixture(spec)
    receipts = execution["receipts"]
    assert execution["result"]["status"] == "SCORED"
    if check == "withdrawal":
        assert _events(receipts, "quote_withdrawal")
    elif check == "holiday":
        instance = engine.fixture_input(spec)["instance"]
        assert _holiday_nights(instance)
    else:
        executed = [
            r
            for r in receipts
            if r["kind"] == "ACTION" and r["payload"]["type"] == "EXECUTE" and r["payload"]["decision"] == "ACCEPTED"
        ]
        escalated = {
            r["payload"]["effects"]["approval"]: r["payload"]["action"]["kind"]
            for r in receipts
            if r["kind"] == "ACTION" and r["payload"]["type"] == "ESCALATE" and r["payload"]["decision"] == "ACCEPTED"
        }
        assert check in [escalated[r["payload"]["effects"]["approval"]] for r in executed]
        assert execution["result"]["verdict"] == "QUALIFIED" and execution["result"]["score"]["points"] == 100
