"""Fuzz: random and mutated batches against the SQLite desk runtime.

No crash, only documented exit codes, no partial settlement (a batch changes the
history by exactly one day's receipts or not at all), integrity_check ok.
`make fuzz` and `make test-long` run the full profile (10,000); `make test` runs FUNDBOOK_FUZZ (default 1,000).
"""

import os
import random
import sqlite3

import pytest
from click.testing import CliRunner

import engine
from fundbook.cli import cli
from fundbook.fuzzing import as_file_bytes, fuzz_batch

TOTAL = int(os.environ.get("FUNDBOOK_FUZZ", "1000"))
FULL = 10_000  # the full profile
SOURCES = [("episode", e) for e in engine.EPISODES] + [(f, s) for f in engine.FAMILIES for s in (1, 2, 3, 4, 5)]


def _rows(db):
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT seq, hash FROM receipts ORDER BY seq").fetchall(), dict(
            conn.execute("SELECT key, value FROM meta")
        )
    finally:
        conn.close()


def _integrity(db):
    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    "total", [pytest.param(TOTAL, id="make-test"), pytest.param(FULL, id="full-profile", marks=pytest.mark.long)]
)
def test_fuzzed_batches(tmp_path, total):
    rng = random.Random(20261129)
    done = accepted = rejected = 0
    via_cli = 0
    runner = CliRunner()
    n = 0
    while done < total:
        key = SOURCES[n % len(SOURCES)]
        n += 1
        instance = engine.load_episode(key[1]) if key[0] == "episode" else engine.generate(*key)
        db = str(tmp_path / f"fuzz-{n}.sqlite")
        history = engine.History(db)
        history.init(instance, rng.choice([20, 20, 12]))
        while done < total:
            try:
                packet = history.packet()
            except engine.RunClosed:
                break
            batch = fuzz_batch(rng, packet)
            before_rows, before_meta = _rows(db)
            if rng.random() < 0.1:
                path = tmp_path / "batch.json"
                path.write_bytes(as_file_bytes(rng, batch))
                res = runner.invoke(cli, ["desk", "submit", "--db", db, "--input", str(path)])
                via_cli += 1
                assert res.exit_code in (0, 1), res.output
                assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
                ok = res.exit_code == 0
            else:
                try:
                    history.submit(batch)
                    ok = True
                except engine.BatchRejected as exc:
                    assert exc.exit_code == 1 and "\n" not in exc.message
                    ok = False
            after_rows, after_meta = _rows(db)
            if ok:
                accepted += 1
                assert after_rows[: len(before_rows)] == before_rows
                closes = [1 for _ in after_rows[len(before_rows) :]]
                assert closes and int(after_meta["head_size"]) == len(after_rows)
            else:
                rejected += 1
                assert (after_rows, after_meta) == (before_rows, before_meta)
            done += 1
            if done % 250 == 0:
                assert _integrity(db) == "ok"
        assert _integrity(db) == "ok"
        history.load()  # replays and verifies
        if rng.random() < 0.5:
            history.finalize()
            history.load()
    assert accepted > total // 10 and rejected > total // 10 and via_cli > 0
