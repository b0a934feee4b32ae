"""The desk runtime over a SQLite history.

The history file holds the world (as initialised, with its observation
horizon), the receipts and their head. Every command rebuilds the run from the
receipts (verifying them) before it acts; `submit` writes one batch's receipts
and the new head in one IMMEDIATE transaction, so a rejected batch, a crash or
a kill leaves the history exactly as it was. `init` writes a new file beside
the target and renames it into place.
"""

import json
import os
import sqlite3

from ._canon import canonical_json
from ._candidate import reference_economics
from ._errors import DeskError, HistoryError, InputError, RunClosed
from ._replay import finalize_and_grade, replay
from ._world import fixture_sha256, validate_instance, with_horizon

SCHEMA_VERSION = 1  # bump when the tables change
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE receipts (
  seq INTEGER PRIMARY KEY, day INTEGER NOT NULL, kind TEXT NOT NULL,
  payload TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL
);
"""


def _connect(path, must_exist=True):
    if must_exist and not os.path.exists(path):
        raise InputError(f"{path}: no such history (run `fundbook desk init` first)")
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"{path}: not a readable fundbook history ({exc})")
    return conn


def _meta(conn, path):
    try:
        rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"{path}: not a readable fundbook history ({exc})")
    version = rows.get("schema_version")
    if version is None or not version.isdigit():
        raise HistoryError(f"{path}: meta.schema_version missing: not a fundbook history")
    if int(version) > SCHEMA_VERSION:
        raise HistoryError(f"{path}: meta.schema_version {version} is newer than this engine ({SCHEMA_VERSION})")
    for key in ("instance", "fixture_sha256", "status", "head_size", "head_hash"):
        if key not in rows:
            raise HistoryError(f"{path}: meta.{key} missing")
    return rows


def _receipts(conn, path):
    out = []
    try:
        rows = conn.execute("SELECT seq, day, kind, payload, prev_hash, hash FROM receipts ORDER BY rowid").fetchall()
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"{path}: receipts unreadable ({exc})")
    for seq, day, kind, payload, prev_hash, h in rows:
        try:
            body = json.loads(payload)
        except ValueError:
            raise HistoryError(f"{path}: receipt {seq}: payload is not JSON")
        out.append({"seq": seq, "day": day, "kind": kind, "payload": body, "prev_hash": prev_hash, "hash": h})
    return out


def _insert(conn, receipts):
    conn.executemany(
        "INSERT INTO receipts (seq, day, kind, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)",
        [(r["seq"], r["day"], r["kind"], canonical_json(r["payload"]).decode("utf-8"), r["prev_hash"], r["hash"])
         for r in receipts])


def _set(conn, **values):
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", sorted((k, str(v)) for k, v in values.items()))


class History:
    """A desk history file; each method is one command."""

    def __init__(self, path):
        self.path = str(path)

    # -- init ------------------------------------------------------------------
    def init(self, instance, horizon=20):
        from ._run import Run
        validate_instance(instance)
        instance = with_horizon(instance, horizon)
        try:
            reference_economics(instance)
        except DeskError:
            raise InputError(f"--observation-end-day {horizon}: the reference plan cannot carry {instance['instance_id']} "
                             f"observed to day {horizon} without a settlement failure, so no run on it could be scored; "
                             f"observe it longer")
        if os.path.exists(self.path) and os.path.getsize(self.path) > 0:
            raise InputError(f"{self.path}: a history already exists here (choose a new --db path)")
        run = Run(instance)
        tmp = self.path + ".init-tmp"
        if os.path.exists(tmp):
            os.remove(tmp)
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.executescript(SCHEMA)
            conn.execute("BEGIN")
            _set(conn, schema_version=SCHEMA_VERSION, instance=canonical_json(instance).decode("utf-8"),
                 fixture_sha256=run.fixture_sha256, horizon=instance["horizon"], status="open",
                 head_size=run.head["size"], head_hash=run.head["hash"])
            _insert(conn, run.receipts)
            conn.execute("COMMIT")
        finally:
            conn.close()
        os.replace(tmp, self.path)
        return run

    # -- loading -----------------------------------------------------------------
    def _load(self, conn, family_instance=None):
        meta = _meta(conn, self.path)
        try:
            instance = json.loads(meta["instance"])
        except ValueError:
            raise HistoryError(f"{self.path}: meta.instance is not JSON")
        if fixture_sha256(instance) != meta["fixture_sha256"]:
            raise HistoryError(f"{self.path}: meta.instance does not match meta.fixture_sha256 (edited)")
        if family_instance is not None:
            expected = with_horizon(family_instance, instance["horizon"])
            if fixture_sha256(expected) != meta["fixture_sha256"]:
                raise InputError(f"--family-root: this family instance is not the one the history was initialised with "
                                 f"({fixture_sha256(expected)[:12]} != {meta['fixture_sha256'][:12]})")
        head = {"size": int(meta["head_size"]), "hash": meta["head_hash"]}
        return meta, instance, _receipts(conn, self.path), head

    def load(self, family_instance=None, expected_head=None):
        """(meta, run): the run rebuilt from the receipts and verified against the stored head."""
        conn = _connect(self.path)
        try:
            meta, instance, receipts, head = self._load(conn, family_instance)
        finally:
            conn.close()
        run = replay(instance, receipts, expected_head or head)
        return meta, run

    # -- commands ------------------------------------------------------------------
    def packet(self, family_instance=None):
        meta, run = self.load(family_instance)
        return run.packet()

    def _write(self, family_instance, move):
        conn = _connect(self.path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                meta, instance, receipts, head = self._load(conn, family_instance)
                if meta["status"] != "open":
                    raise RunClosed("the run is finalised: no further batches are accepted")
                run = replay(instance, receipts, head)
                before = len(run.receipts)
                outcome = move(run)
                _insert(conn, run.receipts[before:])
                extra = {}
                if run.finalized:
                    extra = {"status": "finalized", "result": canonical_json(outcome).decode("utf-8")}
                _set(conn, head_size=run.head["size"], head_hash=run.head["hash"], **extra)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            raise HistoryError(f"{self.path}: write failed, history unchanged ({exc})")
        finally:
            conn.close()
        return run, outcome

    def submit(self, batch, family_instance=None):
        """Validate and settle one batch; returns (run, decisions)."""
        run, (decisions, record) = self._write(family_instance, lambda r: r.submit(batch))
        return run, decisions, record

    def advance(self, family_instance=None):
        """Close the open checkpoint without a batch."""
        run, record = self._write(family_instance, lambda r: r.skip())
        return run, record

    def finalize(self, family_instance=None):
        run, result = self._write(family_instance, finalize_and_grade)
        return run, result

    def result(self, family_instance=None):
        """(status, result or None, run)."""
        meta, run = self.load(family_instance)
        if meta["status"] == "finalized":
            return "finalized", json.loads(meta["result"]), run
        return "open", None, run


def load_family_root(root) -> dict:
    """The instance in a family root written by the family generator."""
    path = os.path.join(str(root), "instance.json")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})")
    try:
        instance = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: not valid JSON ({exc})")
    return validate_instance(instance, where=path)


def write_family_root(root, instance):
    """Write instance.json (temp file, then rename)."""
    from ._canon import pretty_json
    os.makedirs(str(root), exist_ok=True)
    path = os.path.join(str(root), "instance.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(pretty_json(instance))
    os.replace(tmp, path)
    return path
