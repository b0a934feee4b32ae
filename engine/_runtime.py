"""The desk runtime over a SQLite history.

The history file holds the world (as initialised, with its observation
horizon and the salt of its world commitment), the receipts, their head, and
a snapshot of the run's state after the last write. Nothing stored is trusted
on its own:

* every command checks the receipt chain link by link against the stored head
  (and a caller's `--expect-head`), and every stored value's type and range;
* `packet` and `submit` continue from the snapshot only when it is bound to
  that very head, so their cost does not grow with the day; otherwise they
  replay the whole history first;
* `replay` and `result` always rebuild the run from the world and the
  receipts alone, and `result` re-grades it and checks the grade against the
  FINAL receipt and the stored result, naming any difference.

`submit` writes one batch's receipts, the new head and the new snapshot in one
IMMEDIATE transaction, so a rejected batch, a crash or a kill leaves the
history exactly as it was. `init` writes a new file beside the target and
renames it into place.
"""

import hashlib
import json
import os
import re
import sqlite3
import tempfile

from ._candidate import reference_economics
from ._canon import canonical_json
from ._commitment import check_salt, new_salt, world_commitment
from ._diff import first_difference
from ._errors import DeskError, HistoryError, InputError, ReplayMismatch, RunClosed
from ._jsonin import MAX_INSTANCE_BYTES, MAX_PACKET_BYTES, parse_json, read_limited
from ._receipts import RECEIPT_KINDS
from ._replay import finalize_and_grade, replay
from ._world import fixture_sha256, validate_instance, with_horizon

SCHEMA_VERSION = 2  # bump when the tables or meta keys change (2: salt, snapshot)
SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE receipts (
  seq INTEGER PRIMARY KEY, day INTEGER NOT NULL, kind TEXT NOT NULL,
  payload TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL
);
"""
_HEX64 = re.compile(r"[0-9a-f]{64}")
_COUNT = re.compile(r"(0|[1-9][0-9]{0,8})")
MAX_RECEIPTS = 1_000_000


def _schema_objects(sql):
    """{(type, name): normalised SQL} of a schema: what `init` creates, exactly."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(sql)
        return _objects(conn)
    finally:
        conn.close()


def _objects(conn):
    return {(kind, name): " ".join((text or "").split())
            for kind, name, text in conn.execute("SELECT type, name, sql FROM sqlite_master")}


_SCHEMA_OBJECTS = _schema_objects(SCHEMA)


def _connect(path):
    """An open history whose schema is exactly the runtime's two tables: a
    trigger or a view would run inside the runtime's own transactions (one
    that deletes each receipt as it is written made `submit` succeed while
    writing nothing), so anything else is refused before any use."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such history (run `fundbook desk init` first)")
    try:
        # (an absolute path: a file named ':memory:' is that file, not a new in-memory database)
        conn = sqlite3.connect(os.path.abspath(path), isolation_level=None, timeout=30)
        objects = _objects(conn)
    except sqlite3.Error as exc:
        raise HistoryError(f"{path}: not a readable fundbook history ({exc})")
    if objects != _SCHEMA_OBJECTS:
        conn.close()
        odd = sorted(set(objects.items()) ^ set(_SCHEMA_OBJECTS.items()))
        what = f"{odd[0][0][0]} {odd[0][0][1]!r}" if odd else "?"
        if not objects:
            raise HistoryError(f"{path}: not a fundbook history (no tables: an empty database)")
        raise HistoryError(f"{path}: the schema is not a fundbook history's (unexpected or changed {what}; "
                           f"tampered, or written by another program)")
    return conn


def _check_head(value, where):
    if not isinstance(value, dict) or set(value) != {"size", "hash"}:
        raise InputError(f"{where}: expected a head {{size, hash}}")
    if type(value["size"]) is not int or not 0 <= value["size"] <= MAX_RECEIPTS:
        raise InputError(f"{where}.size: expected a receipt count")
    if not isinstance(value["hash"], str) or not _HEX64.fullmatch(value["hash"]):
        raise InputError(f"{where}.hash: expected 64 lowercase hexadecimal characters")
    return value


class _Stored:
    """The meta table of a history, every value checked before use."""

    def __init__(self, conn, path):
        self.path = path
        try:
            rows = conn.execute("SELECT key, value FROM meta").fetchall()
        except sqlite3.Error as exc:
            raise HistoryError(f"{path}: not a readable fundbook history ({exc})")
        self.rows = {}
        for key, value in rows:
            if not isinstance(key, str) or not isinstance(value, str):
                raise HistoryError(f"{path}: meta.{key if isinstance(key, str) else '?'} is not text (corrupted)")
            self.rows[key] = value
        version = self.rows.get("schema_version")
        if version is None or not _COUNT.fullmatch(version):
            raise HistoryError(f"{path}: meta.schema_version missing: not a fundbook history")
        if int(version) > SCHEMA_VERSION:
            raise HistoryError(f"{path}: meta.schema_version {version} is newer than this engine ({SCHEMA_VERSION})")
        if int(version) < SCHEMA_VERSION:
            raise HistoryError(f"{path}: meta.schema_version {version} was written by an older engine; "
                               f"start a new history with `fundbook desk init`")
        for key in ("instance", "fixture_sha256", "salt", "status", "head_size", "head_hash"):
            if key not in self.rows:
                raise HistoryError(f"{path}: meta.{key} missing")
        self.status = self.rows["status"]
        if self.status not in ("open", "finalized"):
            raise HistoryError(f"{path}: meta.status: expected open or finalized, got {self.status[:20]!r}")
        if self.status == "finalized" and "result" not in self.rows:
            raise HistoryError(f"{path}: meta.status is finalized but meta.result is missing")
        if not _COUNT.fullmatch(self.rows["head_size"]):
            raise HistoryError(f"{path}: meta.head_size: expected a receipt count, got {self.rows['head_size'][:20]!r}")
        for key in ("fixture_sha256", "head_hash", "salt"):
            if not _HEX64.fullmatch(self.rows[key]):
                raise HistoryError(f"{path}: meta.{key}: expected 64 lowercase hexadecimal characters")
        self.head = {"size": int(self.rows["head_size"]), "hash": self.rows["head_hash"]}
        self.salt = self.rows["salt"]
        self.instance = self._json("instance", "the initialised instance", MAX_INSTANCE_BYTES)
        try:
            validate_instance(self.instance, where=f"{path}: meta.instance")
        except InputError as exc:
            raise HistoryError(exc.message)
        if fixture_sha256(self.instance) != self.rows["fixture_sha256"]:
            raise HistoryError(f"{path}: meta.instance does not match meta.fixture_sha256 (edited)")
        if self.rows.get("horizon") != str(self.instance["horizon"]):
            raise HistoryError(f"{path}: meta.horizon does not match the initialised instance's horizon "
                               f"{self.instance['horizon']} (edited)")

    def _json(self, key, what, limit):
        try:
            return parse_json(self.rows[key], f"{self.path}: meta.{key}", what, limit)
        except InputError as exc:
            raise HistoryError(exc.message)

    def result(self):
        return self._json("result", "the stored result", MAX_PACKET_BYTES)

    def snapshot(self):
        """The stored run state, or None when absent or not bound to the current head."""
        if "snapshot" not in self.rows:
            return None
        try:
            snap = parse_json(self.rows["snapshot"], "snapshot", "a run snapshot", MAX_PACKET_BYTES)
        except InputError:
            return None
        if not isinstance(snap, dict) or snap.get("head") != self.head:
            return None
        return snap


def _rows(conn, path):
    """Every receipt row, each column type-checked (payloads stay text)."""
    try:
        rows = conn.execute("SELECT seq, day, kind, payload, prev_hash, hash FROM receipts ORDER BY seq").fetchall()
    except sqlite3.Error as exc:
        raise HistoryError(f"{path}: receipts unreadable ({exc})")
    if len(rows) > MAX_RECEIPTS:
        raise HistoryError(f"{path}: more than {MAX_RECEIPTS} receipts")
    for seq, day, kind, payload, prev_hash, h in rows:
        where = f"{path}: receipt {seq if type(seq) is int else '?'}"
        if type(seq) is not int or type(day) is not int or not 0 <= day <= 10_000:
            raise HistoryError(f"{where}: seq and day must be small integers (corrupted)")
        if kind not in RECEIPT_KINDS or not isinstance(payload, str):
            raise HistoryError(f"{where}: kind must be a receipt kind and the payload text (corrupted)")
        if not isinstance(prev_hash, str) or not isinstance(h, str) or not _HEX64.fullmatch(prev_hash) \
                or not _HEX64.fullmatch(h):
            raise HistoryError(f"{where}: prev_hash and hash must be 64 lowercase hexadecimal characters (corrupted)")
    return rows


def _parse(path, row):
    seq, day, kind, payload, prev_hash, h = row
    try:
        body = parse_json(payload, f"{path}: receipt {seq} payload", "a receipt payload", MAX_PACKET_BYTES)
    except InputError as exc:
        raise HistoryError(exc.message)
    return {"seq": seq, "day": day, "kind": kind, "payload": body, "prev_hash": prev_hash, "hash": h}


def _verify_rows(path, rows, genesis, expected_head):
    """The chain checked on the stored text, without parsing any payload.

    Payloads are stored as canonical JSON, so a receipt's canonical form is
    its columns spliced around the stored payload text; a payload that is not
    canonical (edited, or corrupt) cannot hash right. A bad receipt is then
    parsed, to name what is wrong with it when it is not merely edited."""
    prev = genesis
    for index, row in enumerate(rows):
        seq, day, kind, payload, prev_hash, h = row
        want = index + 1
        if seq != want:
            raise ReplayMismatch(f"receipt {want} is missing (found receipt {seq} after {want - 1})" if seq > want else
                                 f"receipt at position {want} has seq {seq} (reordered or duplicated)", seq=want, field="seq")
        if prev_hash != prev:
            raise ReplayMismatch(f"receipt {want}: prev_hash does not link to receipt {want - 1} (reordered, dropped or edited)",
                                 seq=want, field="prev_hash")
        text = f'{{"day":{day},"kind":"{kind}","payload":{payload},"prev_hash":"{prev_hash}","seq":{seq}}}'
        try:
            ok = hashlib.sha256(text.encode("utf-8")).hexdigest() == h
        except UnicodeEncodeError:
            ok = False
        if not ok:
            _parse(path, row)  # a corrupt payload names itself
            raise ReplayMismatch(f"receipt {want} ({kind}, day {day}): hash does not match its content (edited)",
                                 seq=want, field="hash")
        prev = h
    size = len(rows)
    if size < expected_head["size"]:
        raise ReplayMismatch(f"truncated: the head says {expected_head['size']} receipts ending {expected_head['hash'][:12]}, "
                             f"found {size}", seq=size + 1, field="head")
    if size > expected_head["size"]:
        raise ReplayMismatch(f"extended: the head says {expected_head['size']} receipts, found {size}",
                             seq=expected_head["size"] + 1, field="head")
    if prev != expected_head["hash"]:
        raise ReplayMismatch(f"receipt {size}: hash {prev[:12]} differs from the head {expected_head['hash'][:12]}",
                             seq=size, field="head")


def _insert(conn, receipts):
    conn.executemany(
        "INSERT INTO receipts (seq, day, kind, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)",
        [(r["seq"], r["day"], r["kind"], canonical_json(r["payload"]).decode("utf-8"), r["prev_hash"], r["hash"])
         for r in receipts])


def _set(conn, **values):
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", sorted((k, str(v)) for k, v in values.items()))


def _snapshot(run):
    """The public book as of the last close, bound to the head it was written
    with (None before the first close: replaying day 1 is cheap)."""
    if run.closed_book is None:
        return None
    return canonical_json({"head": run.head, "closed_day": run.closed_book["closed_day"],
                           "book": run.closed_book}).decode("utf-8")


def parse_head(value, where="--expect-head"):
    """`SIZE:SHA256` -> {size, hash}; InputError otherwise."""
    size, _, digest = str(value).partition(":")
    if not _COUNT.fullmatch(size) or not _HEX64.fullmatch(digest):
        raise InputError(f"{where}: expected SIZE:SHA256 (a receipt count, a colon, 64 lowercase hex digits)")
    return {"size": int(size), "hash": digest}


class History:
    """A desk history file; each method is one command."""

    def __init__(self, path):
        self.path = str(path)

    # -- init ------------------------------------------------------------------
    def init(self, instance, horizon=20, salt=None):
        """Create the history. `salt` (64 hex) fixes the world commitment's salt
        (to reproduce a recorded run); by default a fresh secret one is drawn."""
        from ._run import Run
        validate_instance(instance)
        instance = with_horizon(instance, horizon)
        salt = new_salt() if salt is None else check_salt(salt, "--salt")
        folder = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(folder):
            raise InputError(f"{self.path}: the folder {folder} does not exist")
        if os.path.exists(self.path) and (not os.path.isfile(self.path) or os.path.getsize(self.path) > 0):
            raise InputError(f"{self.path}: a history (or something else) already exists here (choose a new --db path)")
        try:
            reference_economics(instance)
        except DeskError:
            raise InputError(f"--observation-end-day {horizon}: the reference plan cannot carry {instance['instance_id']} "
                             f"observed to day {horizon} without a settlement failure, so no run on it could be scored; "
                             f"observe it longer")
        run = Run(instance, salt)
        tmp = None
        try:
            # a file of its own (never a fixed name another init may be using),
            # linked into place only if nothing has appeared there meanwhile
            fd, tmp = tempfile.mkstemp(prefix=os.path.basename(self.path) + ".", suffix=".init-tmp", dir=folder)
            os.close(fd)
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                conn.executescript(SCHEMA)
                conn.execute("BEGIN")
                _set(conn, schema_version=SCHEMA_VERSION, instance=canonical_json(instance).decode("utf-8"),
                     fixture_sha256=run.fixture_sha256, salt=salt, horizon=instance["horizon"], status="open",
                     head_size=run.head["size"], head_hash=run.head["hash"])
                _insert(conn, run.receipts)
                conn.execute("COMMIT")
            finally:
                conn.close()
            self._publish(tmp)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"{self.path}: cannot write the history ({exc})")
        finally:
            if tmp is not None and os.path.lexists(tmp):
                try:
                    os.remove(tmp)
                except OSError:
                    pass
        return run

    def _publish(self, tmp):
        """Put a finished history file in place without ever replacing one."""
        if os.path.isfile(self.path) and os.path.getsize(self.path) == 0:
            os.replace(tmp, self.path)  # an empty file stands in for a new history
            return
        try:
            os.link(tmp, self.path)  # fails if a history appeared since the check above
        except FileExistsError:
            raise InputError(f"{self.path}: a history (or something else) already exists here "
                             f"(choose a new --db path)") from None
        except OSError:
            if os.path.lexists(self.path):  # a filesystem without hard links: replace, as before
                raise
            os.replace(tmp, self.path)

    # -- loading -----------------------------------------------------------------
    def _stored(self, conn, family_instance=None):
        stored = _Stored(conn, self.path)
        if family_instance is not None:
            expected = with_horizon(family_instance, stored.instance["horizon"])
            if fixture_sha256(expected) != stored.rows["fixture_sha256"]:
                raise InputError(f"--family-root: this family instance is not the one the history was initialised with "
                                 f"({fixture_sha256(expected)[:12]} != {stored.rows['fixture_sha256'][:12]})")
        return stored

    def _checked(self, conn, stored, expected_head):
        """The receipt rows, the chain checked to the stored head and to the caller's head."""
        rows = _rows(conn, self.path)
        _verify_rows(self.path, rows, world_commitment(stored.rows["fixture_sha256"], stored.salt), stored.head)
        if expected_head is not None and expected_head != stored.head:
            have, want = stored.head["size"], expected_head["size"]
            how = ("truncated or rolled back" if have < want else "extended" if have > want else "rewritten")
            raise ReplayMismatch(f"{self.path}: {how}: the history's head is {have}:{stored.head['hash'][:12]}..., "
                                 f"not the expected {want}:{expected_head['hash'][:12]}...", field="head")
        return rows

    def _replayed(self, conn, family_instance=None, expected_head=None):
        stored = self._stored(conn, family_instance)
        rows = self._checked(conn, stored, expected_head)
        receipts = [_parse(self.path, row) for row in rows]
        run = replay(stored.instance, receipts, stored.head, stored.salt)
        if (bool(run.receipts) and run.receipts[-1]["kind"] == "FINAL") != (stored.status == "finalized"):
            raise HistoryError(f"{self.path}: meta.status says {stored.status} but the receipts "
                               f"{'end with' if stored.status == 'open' else 'have no'} a FINAL receipt")
        if stored.status == "finalized":
            # re-graded by replay and checked against the FINAL receipt; the stored copy must agree
            derived = dict(run.sealed_result, receipts_head=run.head)
            kept = stored.result()
            where = first_difference(derived, kept, "result")
            if where is not None:
                raise HistoryError(f"{self.path}: the stored result differs from the result re-derived from the "
                                   f"receipts at {where}: stored {_brief(_at(kept, where))}, "
                                   f"re-derived {_brief(_at(derived, where))}")
            run.result = derived
        return stored, run

    def _current(self, conn, act, family_instance=None, expected_head=None, tail=False):
        """(stored, run, act(stored, run)) for the run as it stands: continued
        from the snapshot bound to the head, else rebuilt by replay.

        The whole chain is checked either way (on the stored text: cheap).
        `tail=True` (submit, advance) then parses only the receipts from the
        last CLOSE on, which is all a continuation needs, so the cost barely
        grows with the day; `packet` parses them all, since it shows them.

        The snapshot is a cache, not a record: its book need only hash to the
        last CLOSE receipt, which a forger who re-hashes the chain can make
        any book do. So if acting on the continued run fails in any way but
        the desk's own expected errors (a malformed book), it is dropped and
        the history is replayed from its receipts, which names the forgery."""
        from ._run import Run
        stored = self._stored(conn, family_instance)
        rows = self._checked(conn, stored, expected_head)
        snap = stored.snapshot() if stored.status == "open" else None
        if snap is not None and type(snap.get("closed_day")) is int:
            closes = [i for i, row in enumerate(rows) if row[2] == "CLOSE"]
            start = closes[-1] if (tail and closes) else 0
            receipts = [_parse(self.path, row) for row in rows[start:]]
            try:
                run = Run.restore(stored.instance, stored.salt, receipts, snap.get("book"), snap["closed_day"])
                if run is not None:
                    return stored, run, act(stored, run)
            except DeskError:
                raise
            except Exception:  # noqa: BLE001 -- a snapshot that does not work is not used
                pass
        receipts = [_parse(self.path, row) for row in rows]
        run = replay(stored.instance, receipts, stored.head, stored.salt)
        return stored, run, act(stored, run)

    def load(self, family_instance=None, expected_head=None):
        """(meta, run): the run rebuilt from the receipts alone and verified."""
        conn = _connect(self.path)
        try:
            stored, run = self._replayed(conn, family_instance, expected_head)
        finally:
            conn.close()
        return stored.rows, run

    # -- commands ------------------------------------------------------------------
    def packet(self, family_instance=None, expected_head=None):
        conn = _connect(self.path)
        try:
            stored, run, packet = self._current(conn, lambda stored, run: run.packet(), family_instance, expected_head)
        finally:
            conn.close()
        return packet

    def _write(self, family_instance, move, expected_head=None, full=False):
        conn = _connect(self.path)
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise HistoryError(f"{self.path}: cannot lock the history for writing ({exc})")
            def act(stored, run):
                if stored.status != "open":
                    raise RunClosed("the run is finalised: no further batches are accepted")
                before = len(run.receipts)
                run.keep_closed_book = True
                return before, move(run)
            try:
                if full:
                    stored, run = self._replayed(conn, family_instance, expected_head)
                    before, outcome = act(stored, run)
                else:
                    stored, run, (before, outcome) = self._current(conn, act, family_instance, expected_head, tail=True)
                _insert(conn, run.receipts[before:])
                extra = {"snapshot": _snapshot(run)}
                if run.finalized:
                    extra = {"status": "finalized", "result": canonical_json(outcome).decode("utf-8")}
                    conn.execute("DELETE FROM meta WHERE key = 'snapshot'")
                elif extra["snapshot"] is None:
                    extra = {}
                _set(conn, head_size=run.head["size"], head_hash=run.head["hash"], **extra)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # never after a COMMIT: that batch is settled
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # SQLite already rolled back (a full disk, an I/O error): report the cause, not this
                raise
        except sqlite3.Error as exc:
            raise HistoryError(f"{self.path}: write failed, history unchanged ({exc})")
        finally:
            conn.close()
        return run, outcome

    def submit(self, batch, family_instance=None, expected_head=None):
        """Validate and settle one batch; returns (run, decisions, day record)."""
        run, (decisions, record) = self._write(family_instance, lambda r: r.submit(batch), expected_head)
        return run, decisions, record

    def advance(self, family_instance=None, expected_head=None):
        """Close the open checkpoint without a batch."""
        run, record = self._write(family_instance, lambda r: r.skip(), expected_head)
        return run, record

    def finalize(self, family_instance=None, expected_head=None):
        """Close the run (from a full replay: grading needs every day) and grade it."""
        run, result = self._write(family_instance, finalize_and_grade, expected_head, full=True)
        return run, result

    def result(self, family_instance=None, expected_head=None):
        """(status, result or None, run). A finalised run's result is the one
        re-derived from the receipts (see `_replayed`), never the stored copy."""
        conn = _connect(self.path)
        try:
            stored, run = self._replayed(conn, family_instance, expected_head)
        finally:
            conn.close()
        if stored.status != "finalized":
            return "open", None, run
        return "finalized", run.result, run


def _at(value, path):
    """The value at a first_difference path ('result.score.points', 'result.days[3].cash')."""
    for part in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path.split(" ")[0][len("result"):]):
        key, index = part
        try:
            value = value[key] if key else value[int(index)]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _brief(value):
    text = json.dumps(value, sort_keys=True, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."


def load_family_root(root) -> dict:
    """The instance in a family root written by the family generator."""
    path = os.path.join(str(root), "instance.json")
    try:
        data = read_limited(path, MAX_INSTANCE_BYTES)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})")
    instance = parse_json(data, path, "a family instance", MAX_INSTANCE_BYTES)
    return validate_instance(instance, where=path)


def write_family_root(root, instance):
    """Write instance.json (temp file, then rename)."""
    from ._canon import pretty_json
    path = os.path.join(str(root), "instance.json")
    tmp = path + ".tmp"
    try:
        os.makedirs(str(root), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(pretty_json(instance))
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror or exc})")
    return path
