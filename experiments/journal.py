"""The sweep journal: what a sweep did, in the order it did it, hash-chained.

journal.jsonl holds one canonical JSON object a line (sorted keys, compact),
each naming the sha256 of the line before it (`prev`; the first line names 64
zeros), so no line can be edited, dropped or moved without breaking every
line after it:

  start  {schema, evaluator_id, items_sha256, arms}   the sweep's first line
  serve  {comparison, spec_sha256, freeze_sha256, frozen_on}
                                                       a frozen comparison the sweep serves
  arms   {arms}                                        the arms after a later run added some
  rows   {item_id, arms, rows_sha256}                  one item's rows for those arms, written
                                                       when they were measured
  stop   {n, reason}                                   a sequential sweep stopped after n worlds

Why it exists. A comparison may use only rows journalled after its `serve`
line, so rows and freeze have an order anyone can check from the files: a spec
frozen after any of its rows existed is refused, by the sweep and by the
decision. `rows_sha256` is the sha256 of those rows exactly as
observations.jsonl holds them, so the finished observations, the partial file
of an interrupted sweep and the journal check each other, and a resumed sweep
refuses rows that were edited after they were written instead of signing them
into a new manifest. sweep.json records the journal's head (lines, sha256 of
the last line).
"""

import hashlib
import json
import os

from . import jsondoc
from .errors import ExperimentError
from .files import MAX_OBSERVATIONS_BYTES, read_file

JOURNAL = "journal.jsonl"
SCHEMA = "fundbook.sweep-journal/1"
GENESIS = "0" * 64
HEX64 = set("0123456789abcdef")
FIELDS = {
    "start": {"schema", "evaluator_id", "items_sha256", "arms"},
    "serve": {"comparison", "spec_sha256", "freeze_sha256", "frozen_on"},
    "arms": {"arms"},
    "rows": {"item_id", "arms", "rows_sha256"},
    "stop": {"n", "reason"},
}


def line_bytes(entry) -> bytes:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def rows_sha256(rows) -> str:
    """sha256 of observation rows as observations.jsonl writes them."""
    from .observations import jsonl_bytes

    return _sha(jsonl_bytes(rows))


def _hex(value) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= HEX64


def _names(value) -> bool:
    return (
        isinstance(value, list) and value and all(isinstance(a, str) for a in value) and len(set(value)) == len(value)
    )


def _check_entry(entry, number, where):
    kind = entry.get("entry") if isinstance(entry, dict) else None
    if kind not in FIELDS or set(entry) != FIELDS[kind] | {"entry", "prev"}:
        raise ExperimentError(f"{where} line {number}: not a journal entry")
    ok = {
        "start": lambda e: (
            e["schema"] == SCHEMA and _hex(e["evaluator_id"]) and _hex(e["items_sha256"]) and _names(e["arms"])
        ),
        "serve": lambda e: (
            isinstance(e["comparison"], str)
            and _hex(e["spec_sha256"])
            and _hex(e["freeze_sha256"])
            and isinstance(e["frozen_on"], str)
        ),
        "arms": lambda e: _names(e["arms"]),
        "rows": lambda e: isinstance(e["item_id"], str) and _names(e["arms"]) and _hex(e["rows_sha256"]),
        "stop": lambda e: (
            isinstance(e["n"], int) and not isinstance(e["n"], bool) and e["n"] >= 0 and isinstance(e["reason"], str)
        ),
    }[kind]
    if not ok(entry):
        raise ExperimentError(f"{where} line {number}: a malformed {kind} entry")


class Journal:
    """A verified journal: its entries in order, what it serves and which rows it covers."""

    def __init__(self, path, entries, head):
        self.path, self.entries, self.head = path, entries, head
        self.start = entries[0]
        self.arms = list(self.start["arms"])
        self.served = {}  # spec_sha256 -> (line index, entry)
        self.covered = {}  # (item_id, arm) -> (line index, entry)
        self.stop = None
        for index, e in enumerate(entries):
            self._index(index, e)

    def _index(self, index, e):
        kind = e["entry"]
        if kind == "serve":
            self.served.setdefault(e["spec_sha256"], (index, e))
        elif kind == "arms":
            self.arms = list(e["arms"])
        elif kind == "rows":
            for arm in e["arms"]:
                if arm not in self.arms:
                    raise ExperimentError(f"{self.path} line {index + 1}: rows of arm {arm}, not one of the sweep's")
                if (e["item_id"], arm) in self.covered:
                    raise ExperimentError(
                        f"{self.path} line {index + 1}: a second rows entry for item {e['item_id']}, arm {arm}"
                    )
                self.covered[(e["item_id"], arm)] = (index, e)
        elif kind == "stop":
            self.stop = e

    @classmethod
    def parse(cls, data: bytes, where, torn_ok=False):
        """(Journal, bytes of the verified lines). A torn last line (no newline: an interrupted write) is
        dropped when `torn_ok`; any other break in the chain is an error naming the line."""
        raw = data.split(b"\n")
        tail = raw.pop()  # b"" when the file ends with a newline
        if tail and not torn_ok:
            raise ExperimentError(f"{where}: the last line is incomplete (no newline)")
        entries, prev, size = [], GENESIS, 0
        for number, line in enumerate(raw, 1):
            entry = jsondoc.loads(line, f"{where} line {number}", "a journal entry")
            _check_entry(entry, number, where)
            if line != line_bytes(entry):
                raise ExperimentError(f"{where} line {number}: not in the journal's canonical form (edited?)")
            if entry["prev"] != prev:
                raise ExperimentError(
                    f"{where} line {number}: prev is {str(entry['prev'])[:16]}, the line before "
                    f"hashes to {prev[:16]}: the chain is broken (a line was edited, dropped or moved)"
                )
            if (entry["entry"] == "start") != (number == 1):
                raise ExperimentError(f"{where} line {number}: the start entry is the first line, and only it")
            entries.append(entry)
            prev = _sha(line)
            size += len(line) + 1
        if not entries:
            raise ExperimentError(f"{where}: an empty journal")
        return cls(where, entries, prev), size

    @classmethod
    def read(cls, path, torn_ok=False):
        data = read_file(path, "the sweep journal", MAX_OBSERVATIONS_BYTES)
        journal, _ = cls.parse(data, path, torn_ok)
        return journal

    @classmethod
    def open(cls, path, evaluator_id, items_sha256, arms):
        """The journal at `path` for appending: verified (a torn tail cut off), or begun with its start line
        naming `arms`."""
        if not os.path.lexists(path):
            start = {
                "entry": "start",
                "schema": SCHEMA,
                "evaluator_id": evaluator_id,
                "items_sha256": items_sha256,
                "arms": list(arms),
                "prev": GENESIS,
            }
            _write(path, line_bytes(start) + b"\n", "xb")
            return cls(path, [start], _sha(line_bytes(start)))
        data = read_file(path, "the sweep journal", MAX_OBSERVATIONS_BYTES)
        journal, size = cls.parse(data, path, torn_ok=True)
        if size != len(data):
            try:
                os.truncate(path, size)
            except OSError as exc:
                raise ExperimentError(f"{path}: cannot cut the incomplete last line ({exc.strerror or exc})")
        s = journal.start
        if s["evaluator_id"] != evaluator_id or s["items_sha256"] != items_sha256:
            raise ExperimentError(
                f"{path}: this folder holds a sweep of evaluator {s['evaluator_id'][:16]} over items "
                f"{s['items_sha256'][:16]}; this sweep is {evaluator_id[:16]} over "
                f"{items_sha256[:16]}: use a new folder"
            )
        return journal

    def add_arms(self, arms):
        """Record arms a later run adds (a sweep's arms only grow)."""
        new = [a for a in arms if a not in self.arms]
        if new:
            self.append({"entry": "arms", "arms": self.arms + new})

    def append(self, entry):
        entry = dict(entry, prev=self.head)
        data = line_bytes(entry)
        _write(self.path, data + b"\n", "ab")
        self.entries.append(entry)
        self.head = _sha(data)
        self._index(len(self.entries) - 1, entry)

    def summary(self) -> dict:
        return {"lines": len(self.entries), "head": self.head}

    def first_row_line(self, arms):
        """Index of the first rows entry that holds a row of any of `arms` (None: none yet)."""
        lines = [index for (_, arm), (index, _) in self.covered.items() if arm in arms]
        return min(lines) if lines else None


def _write(path, data, mode):
    try:
        with open(path, mode) as fh:
            fh.write(data)
            fh.flush()
    except FileExistsError:
        raise ExperimentError(f"{path}: appeared while the sweep started (another sweep in this folder?)")
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot write ({exc.strerror or exc})")
