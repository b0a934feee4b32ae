"""Invariants over generated families and random batches."""

from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine import _run
from engine._book import counterparty_usage, open_trades, planned_end
from engine._errors import BatchRejected
from tests.engine.strategies import actions_for, truthful_report


def _cash_from_receipts(instance, receipts):
    cash = instance["desk"]["opening_cash"]
    for r in receipts:
        if r["kind"] == "FLOW":
            cash += r["payload"]["amount"]
        elif r["kind"] == "EVENT":
            cash -= sum(c["amount"] for c in r["payload"]["effects"].get("margin_calls", []))
    return cash


def _pledges_within_notional(book):
    for aid, asset in book["assets"].items():
        trades = open_trades(book, asset_id=aid)
        for night in range(asset["settle_day"], asset["exit_day"]):
            pledged = sum(t["notional"] for t in trades if t["start"] <= night < planned_end(book, t))
            assert pledged <= asset["notional"], (aid, night)


def _checked_decide(real):
    """decide() plus the capacity rule: usage never rises above capacity unless
    the accepted action consumed authority covering the excess."""

    def decide(book, market, day, action):
        before = {cid: counterparty_usage(book, cid) for cid in book["counterparties"]}
        decision = real(book, market, day, action)
        authority = 0
        if decision["decision"] == "ACCEPTED" and action["type"] == "EXECUTE":
            ap = book["approvals"][action["approval"]]
            assert ap["status"] == "consumed"
            authority = ap["amount"] if ap["kind"] == "capacity" else 0
        for cid, cp in book["counterparties"].items():
            after = counterparty_usage(book, cid)
            if after > before[cid]:
                assert after <= cp["capacity"] + authority, (cid, after, cp["capacity"], authority)
        _pledges_within_notional(book)
        return decision

    return decide


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(family=st.sampled_from(engine.FAMILIES), seed=st.integers(1, 40), data=st.data())
def test_random_batches_keep_the_invariants(family, seed, data):
    instance = engine.generate(family, seed)
    with mock.patch.object(_run, "decide", _checked_decide(_run.decide)):
        run = engine.Run(instance)
        accepted = 0
        while run.open_day is not None:
            packet = run.packet()
            batch = {"day": run.open_day, "report": truthful_report(run), "actions": data.draw(actions_for(packet))}
            projection = engine.project(packet, batch["actions"])
            try:
                decisions, record = run.submit(batch)
                accepted += sum(d["decision"] == "ACCEPTED" for d in decisions)
                # the dry-run tool predicts every decision and the exact gold report
                assert [(d["decision"], d["reason"]) for d in projection["decisions"]] == [
                    (d["decision"], d["reason"]) for d in decisions
                ]
                assert projection["report"] == record["gold_report"]
            except BatchRejected:
                run.skip()
            assert run.book["cash"] == _cash_from_receipts(instance, run.receipts)
        run.finalize()
    assert run.book["cash"] == _cash_from_receipts(instance, run.receipts)
    rebuilt = engine.replay(instance, run.receipts, run.head)
    assert engine.content_sha256(rebuilt.book) == engine.content_sha256(run.book)
    assert all(t["status"] == "ended" for t in run.book["trades"].values())
    assert all(a["status"] == "exited" for a in run.book["assets"].values())
