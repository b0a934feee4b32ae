"""Fault injection: a `submit` process killed at points spread over its whole life
leaves a history that replays and verifies, holding either none or all of the
batch (one SQLite transaction per submit)."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

import engine
from engine._baselines import policy_batch
from tests.conftest import REPO

TRIALS = int(os.environ.get("FUNDBOOK_FAULT_TRIALS", "24"))
# The submit under test is the real CLI; the wrapper only stretches its write
# transaction (a short pause after each receipt insert) so that kills spread
# over the process's life also land inside the transaction.
WRAPPER = """
import time, engine._runtime as rt
insert = rt._insert
def slow_insert(conn, receipts):
    for r in receipts:
        insert(conn, [r])
        time.sleep(0.03)
rt._insert = slow_insert
from fundbook.cli import main
main()
"""
SUBMIT = [sys.executable, "-c", WRAPPER, "desk", "submit"]


@pytest.mark.slow
def test_killed_submits_leave_a_verifiable_history(tmp_path):
    base = tmp_path / "base.sqlite"
    history = engine.History(base)
    history.init(engine.generate("FUND_04", 3))
    for _ in range(9):
        history.submit(policy_batch("reference", history.packet()))
    old = history.load()[1].head
    batch = tmp_path / "batch.json"
    batch.write_text(engine.pretty_json(policy_batch("reference", history.packet())))

    # one clean submit gives the expected new head and the process's duration
    clean = tmp_path / "clean.sqlite"
    shutil.copy(base, clean)
    started = time.monotonic()
    subprocess.run(SUBMIT + ["--db", str(clean), "--input", str(batch)], cwd=REPO, check=True, capture_output=True)
    duration = time.monotonic() - started
    new = engine.History(clean).load()[1].head

    outcomes = {"old": 0, "new": 0}
    # kills spread over the measured life of one submit; on a busy machine a
    # process may live longer than the measured one, so while one outcome is
    # still unseen, further trials wait longer (up to twice as many trials)
    for trial in range(2 * TRIALS):
        if trial >= TRIALS and outcomes["old"] and outcomes["new"]:
            break
        db = tmp_path / f"trial-{trial}.sqlite"
        shutil.copy(base, db)
        proc = subprocess.Popen(
            SUBMIT + ["--db", str(db), "--input", str(batch)],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        stretch = 1.2 if trial < TRIALS else 1.2 + 2.0 * (trial - TRIALS + 1) / TRIALS
        time.sleep(duration * ((trial % TRIALS) + 0.5) / TRIALS * stretch)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
        head = engine.History(db).load()[1].head  # replays and verifies every receipt
        assert head in (old, new), (trial, head)
        outcomes["old" if head == old else "new"] += 1
        if head == old:  # the batch can still be submitted after the crash
            engine.History(db).submit(json.loads(batch.read_text()))
            assert engine.History(db).load()[1].head == new
    assert outcomes["old"] and outcomes["new"], outcomes
