"""Replay from receipts reproduces the runtime; every tampering is detected and named."""

import copy
import sqlite3

import pytest

import engine
from engine._book import state_hash
from tests.engine.helpers import play


@pytest.fixture(scope="module")
def finished():
    instance = engine.load_episode("W3")
    run = play(instance)
    run.finalize()
    result = engine.final_result(run)
    run.seal(engine.content_sha256(result))
    return instance, run


def test_replay_reaches_the_same_state(finished):
    instance, run = finished
    rebuilt = engine.replay(instance, copy.deepcopy(run.receipts), run.head)
    assert state_hash(rebuilt.book) == state_hash(run.book)
    assert rebuilt.head == run.head and rebuilt.finalized


def test_replay_midway_equals_runtime():
    instance = engine.generate("FUND_03", 2)
    run = play(instance, days=7)
    rebuilt = engine.replay(instance, copy.deepcopy(run.receipts), run.head)
    assert state_hash(rebuilt.book) == state_hash(run.book) and rebuilt.open_day == run.open_day == 8


def _mismatch(instance, receipts, head=None):
    with pytest.raises(engine.ReplayMismatch) as info:
        engine.replay(instance, receipts, head)
    return info.value


def test_every_edited_receipt_is_named(finished):
    instance, run = finished
    for index in range(len(run.receipts)):
        receipts = copy.deepcopy(run.receipts)
        receipts[index]["payload"]["tampered"] = 1
        err = _mismatch(instance, receipts, run.head)
        assert err.seq == index + 1 and err.field == "hash", err.message
        assert f"receipt {index + 1}" in err.message


def test_an_edit_rehashed_forward_is_caught_by_replay(finished):
    instance, run = finished
    from engine._receipts import extend

    receipts = copy.deepcopy(run.receipts)
    target = next(i for i, r in enumerate(receipts) if r["kind"] == "FLOW")
    entries = [{"day": r["day"], "kind": r["kind"], "payload": r["payload"]} for r in receipts]
    entries[target]["payload"]["amount"] += 1
    forged = []
    extend(forged, entries, run.world_commitment)
    err = _mismatch(instance, forged)  # a consistent chain, but not what the desk produces
    assert err.seq == target + 1 and "amount" in err.field
    err = _mismatch(instance, forged, run.head)  # and the published head no longer matches
    assert err.field == "head"


def test_every_dropped_receipt_is_named(finished):
    instance, run = finished
    for index in range(len(run.receipts) - 1):
        receipts = copy.deepcopy(run.receipts)
        del receipts[index]
        err = _mismatch(instance, receipts, run.head)
        assert err.seq == index + 1, err.message
        assert "missing" in err.message


def test_every_reordered_pair_is_named(finished):
    instance, run = finished
    for index in range(len(run.receipts) - 1):
        receipts = copy.deepcopy(run.receipts)
        receipts[index], receipts[index + 1] = receipts[index + 1], receipts[index]
        err = _mismatch(instance, receipts, run.head)
        assert err.seq == index + 1, err.message


def test_truncated_tail_against_the_stored_head(finished):
    instance, run = finished
    for keep in (len(run.receipts) - 1, len(run.receipts) // 2, 3):
        err = _mismatch(instance, copy.deepcopy(run.receipts[:keep]), run.head)
        assert err.field == "head" and "truncated" in err.message


def test_history_edits_are_detected_in_sqlite(tmp_path):
    db = tmp_path / "h.sqlite"
    history = engine.History(db)
    history.init(engine.load_episode("W1"))
    from engine._baselines import policy_batch

    for _ in range(3):
        history.submit(policy_batch("reference", history.packet()))
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE receipts SET payload = replace(payload, '\"amount\":-', '\"amount\":-1') WHERE seq = (SELECT min(seq) FROM receipts WHERE kind = 'FLOW')"
    )
    conn.commit()
    conn.close()
    with pytest.raises(engine.ReplayMismatch, match=r"receipt \d+ \(FLOW"):
        history.load()
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM receipts WHERE seq > 5")
    conn.commit()
    conn.close()
    with pytest.raises(engine.ReplayMismatch, match="truncated"):
        history.load()
