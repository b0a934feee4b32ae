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
    assert _decide(
        run,
        [
            {"id": "ok", "type": "FUND", "asset": "A1", "quote": "Q1", "notional": 14 * 10**8},
            {"id": "twice", "type": "FUND", "asset": "A1", "quote": "Q2", "notional": 10**8},  # already pledged
        ],
    ) == [("ACCEPTED", None), ("REFUSED", "TITLE")]
    run.skip()
    run.skip()  # day 3: Q1 and Q2 (valid through day 1) are stale, A2 is announced and settles on day 5
    assert _decide(
        run,
        [
            {"id": "stale", "type": "FUND", "asset": "A2", "quote": "Q1", "notional": 10**9},
            {"id": "tight", "type": "FUND", "asset": "A2", "quote": "Q3", "notional": 10**9},  # CP1 is full
            {"id": "other", "type": "FUND", "asset": "A2", "quote": "Q4", "notional": 10**9},  # starts day 5: ok
        ],
    ) == [("REFUSED", "TIMING"), ("REFUSED", "CAPACITY"), ("ACCEPTED", None)]


def test_ids_not_yet_shown_are_answered_like_ids_that_never_exist():
    run = engine.Run(engine.load_episode("W3"))  # day 1: A2 is announced on day 2, Q3 offered on day 2
    report = _report(run)
    for body, field in ((("asset", "A2"), ("quote", "Q1")), "asset"), ((("asset", "A1"), ("quote", "Q3")), "quote"):
        messages = []
        for fake in (None, "Z9"):
            action = dict(body, id="x", type="FUND", notional=10**9)
            if fake:
                action[field] = fake
            try:
                run.submit({"day": 1, "report": report, "actions": [action]})
            except engine.BatchRejected as exc:
                messages.append(exc.message.replace(repr(action[field]), "<id>"))
        assert len(messages) == 2 and messages[0] == messages[1], messages
    assert run.open_day == 1 and run.head["size"] == len(run.receipts)


def test_capacity_counts_overlap_not_rolls():
    instance = engine.load_episode("W3")
    run = engine.Run(instance)
    _decide(run, [{"id": "a", "type": "FUND", "asset": "A1", "quote": "Q1", "notional": 14 * 10**8}])
    # CP1 capacity 16m: 14m outstanding over A2's whole life, so 10m more is over capacity
    assert _decide(run, [{"id": "b", "type": "FUND", "asset": "A2", "quote": "Q3", "notional": 10**9}]) == [
        ("REFUSED", "CAPACITY")
    ]
    # with a request pending, a second request for the same authority is refused TIMING
    assert _decide(
        run,
        [
            {"id": "e1", "type": "ESCALATE", "kind": "capacity", "counterparty": "CP1", "amount": 8 * 10**8},
            {"id": "e2", "type": "ESCALATE", "kind": "capacity", "counterparty": "CP1", "amount": 8 * 10**8},
        ],
    ) == [("ACCEPTED", None), ("REFUSED", "TIMING")]
    # ids must exist when the batch arrives; the next day the approval is still pending
    execute = {
        "id": "x",
        "type": "EXECUTE",
        "approval": "AP001",
        "action": {"type": "FUND", "asset": "A2", "quote": "Q3", "notional": 10**9},
    }
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
