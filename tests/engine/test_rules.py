"""Reason codes on hand-made situations (W3: two positions, a tight lender)."""

import engine
from tests.engine.helpers import play


def _report(run):
    from engine._report import gold_report
    return gold_report(run.book, run.open_day)


def _decide(run, actions):
    decisions, _ = run.submit({"day": run.open_day, "report": _report(run), "actions": actions})
    return [(d["decision"], d["reason"]) for d in decisions]


def test_funding_checks_in_order():
    run = engine.Run(engine.load_episode("W3"))
    assert _decide(run, [
        {"id": "stale", "type": "FUND", "asset": "A1", "quote": "Q3", "notional": 10**9},      # offered day 2
        {"id": "unannounced", "type": "FUND", "asset": "A2", "quote": "Q1", "notional": 10**9},  # announced day 2
        {"id": "ok", "type": "FUND", "asset": "A1", "quote": "Q1", "notional": 14 * 10**8},
        {"id": "twice", "type": "FUND", "asset": "A1", "quote": "Q2", "notional": 10**8},       # already pledged
    ]) == [("REFUSED", "TIMING"), ("REFUSED", "TITLE"), ("ACCEPTED", None), ("REFUSED", "TITLE")]


def test_capacity_counts_overlap_not_rolls():
    instance = engine.load_episode("W3")
    run = engine.Run(instance)
    _decide(run, [{"id": "a", "type": "FUND", "asset": "A1", "quote": "Q1", "notional": 14 * 10**8}])
    # CP1 capacity 16m: 14m outstanding over A2's whole life, so 10m more is over capacity
    assert _decide(run, [{"id": "b", "type": "FUND", "asset": "A2", "quote": "Q3", "notional": 10**9}]) == [("REFUSED", "CAPACITY")]
    # with a request pending, a second request for the same authority is refused TIMING
    assert _decide(run, [{"id": "e1", "type": "ESCALATE", "kind": "capacity", "counterparty": "CP1", "amount": 8 * 10**8},
                         {"id": "e2", "type": "ESCALATE", "kind": "capacity", "counterparty": "CP1", "amount": 8 * 10**8}]) == \
        [("ACCEPTED", None), ("REFUSED", "TIMING")]
    # ids must exist when the batch arrives; the next day the approval is still pending
    execute = {"id": "x", "type": "EXECUTE", "approval": "AP001",
               "action": {"type": "FUND", "asset": "A2", "quote": "Q3", "notional": 10**9}}
    assert _decide(run, [execute]) == [("REFUSED", "AUTHORITY")]
    # approved on day 5 (lag 2): the execution goes through once, then the authority is consumed
    assert run.packet()["approvals"][0]["status"] == "approved"
    assert _decide(run, [execute, dict(execute, id="again")]) == [("ACCEPTED", None), ("REFUSED", "AUTHORITY")]


def test_roll_with_the_same_lender_does_not_double_usage():
    instance = engine.load_episode("W2")
    run = play(instance, days=5)
    cp1 = next(c for c in run.packet()["counterparties"] if c["id"] == "CP1")
    trades = run.packet()["trades"]
    assert cp1["usage"] == sum(t["notional"] for t in trades if t["counterparty"] == "CP1" and t["status"] != "ended")
    run = play(instance)
    rolled = [t for t in run.book["trades"].values() if t.get("rolled_from")]
    assert rolled
    for t in rolled:
        old = run.book["trades"][t["rolled_from"]]
        assert old["ends"] == t["start"]


def test_repay_overdraw_is_cash_and_ended_trade_is_title():
    run = play(engine.load_episode("W1"), days=3)
    live = [t["id"] for t in run.book["trades"].values() if t["status"] == "live"]
    assert _decide(run, [{"id": "r", "type": "REPAY", "trade": live[0]}]) == [("REFUSED", "CASH")]
    run = play(engine.load_episode("W1"))
    run.finalize()
    assert all(t["status"] == "ended" for t in run.book["trades"].values())
