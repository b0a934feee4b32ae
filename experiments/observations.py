"""Observation rows and their files.

One row per (item, arm, seed, metric): `{item_id, arm, seed, metric, value,
evaluator_id}`. Values are integers in the metric's own units, or null for an
unbounded metric that was not measured (a run that was not scored has no
funding cost); failures stay rows. observations.jsonl is one canonical JSON
object a line (sorted keys, compact), rows in items-manifest order, then arm
order, then the metric order of experiments/work.py, so the same rows always
give the same bytes whichever executor computed them. observations.parquet
holds the same rows for analysis.

While a sweep runs, each finished item is appended to observations.partial.jsonl
(`{item_id, evaluator_id, values}` a line) and its rows' sha256 to the sweep's
journal (experiments/journal.py); a re-run reads the partial file, and the
finished observations.jsonl, and reuses an (item, arm) only when its rows hash
to what the journal recorded when they were written.

Parquet is written and read through Arrow's own in-memory buffers, never a
Python file object. Handed a Python file (io.BytesIO, as before), Arrow reads
it from its own I/O threads -- even with use_threads=False; `make bench-exit`
counts the calls -- and every such call, and the release of Arrow's reference
to the file, takes the interpreter's lock from a C++ thread. One still doing
so while the interpreter shuts down is stopped by CPython (pthread_exit)
inside C++ frames that may not unwind: std::terminate, "terminate called
without an active exception", SIGABRT -- in a few runs out of 30 on a busy
machine. From an Arrow buffer no Arrow thread ever touches a Python object.

That left one thread: pq.read_table reads through Arrow's dataset scanner,
which starts a worker of Arrow's global thread pool even with
use_threads=False, alive when the interpreter exits, and Arrow's pools are
shut down by exit-time destructors while CPython finalizes (the same
"terminate called without an active exception", about once in 30 runs of
`fundbook compare --verify` under load). Rows are read with
ParquetFile.read(use_threads=False), which starts none, and the command
lines leave without the interpreter's teardown once their output is flushed
whenever Arrow is loaded (fundbook/cli/_common.py `leave`). `make bench-exit`
counts the threads each way and runs compare --verify N times.
"""

import json
import os

from . import jsondoc
from .errors import ExperimentError
from .files import MAX_OBSERVATION_ROWS, MAX_OBSERVATIONS_BYTES, count_lines, read_file

ROW_KEYS = ("arm", "evaluator_id", "item_id", "metric", "seed", "value")
JSONL, PARQUET, PARTIAL = "observations.jsonl", "observations.parquet", "observations.partial.jsonl"


def line(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode() + b"\n"


def rows_for(item_id, values, evaluator_id) -> list:
    return [
        {"item_id": item_id, "arm": arm, "seed": seed, "metric": metric, "value": value, "evaluator_id": evaluator_id}
        for arm, seed, metric, value in values
    ]


def jsonl_bytes(rows) -> bytes:
    return b"".join(line(r) for r in rows)


def parquet_bytes(rows) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("item_id", pa.string()),
            ("arm", pa.string()),
            ("seed", pa.int64()),
            ("metric", pa.string()),
            ("value", pa.int64()),
            ("evaluator_id", pa.string()),
        ]
    )
    table = pa.Table.from_pylist(rows, schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", write_statistics=False)
    return sink.getvalue().to_pybytes()


def parquet_rows(data: bytes) -> list:
    """The rows of Parquet bytes, read from an Arrow buffer on this thread (see the module's note)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    # ParquetFile.read, not pq.read_table: read_table goes through Arrow's dataset scanner, which starts a thread
    # of Arrow's global pool even with use_threads=False -- a thread alive when the interpreter exits
    return pq.ParquetFile(pa.BufferReader(data), pre_buffer=False).read(use_threads=False).to_pylist()


def _check_row(row, where):
    if not isinstance(row, dict) or tuple(sorted(row)) != ROW_KEYS:
        raise ExperimentError(f"{where}: expected an object with exactly {', '.join(ROW_KEYS)}")
    value = row["value"]
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise ExperimentError(f"{where}: value: expected an integer or null, got {value!r}")
    if not isinstance(row["seed"], int) or isinstance(row["seed"], bool):
        raise ExperimentError(f"{where}: seed: expected an integer")
    for key in ("item_id", "arm", "metric", "evaluator_id"):
        if not isinstance(row[key], str):
            raise ExperimentError(f"{where}: {key}: expected a string")
    return row


def parse_jsonl(data: bytes, label) -> list:
    count_lines(data, MAX_OBSERVATION_ROWS, label, "an observations file")
    rows = []
    for number, raw in enumerate(data.splitlines(), 1):
        row = jsondoc.loads(raw, f"{label} line {number}", "an observation row")
        rows.append(_check_row(row, f"{label} line {number}"))
    return rows


def read_jsonl(path) -> list:
    return parse_jsonl(read_file(path, "the observations", MAX_OBSERVATIONS_BYTES), path)


def _well_formed(entry) -> bool:
    """A partial entry `{item_id, evaluator_id, values: [[arm, seed, metric, value], ...]}` with row-typed values."""
    if (
        not isinstance(entry, dict)
        or set(entry) != {"item_id", "evaluator_id", "values"}
        or not isinstance(entry["values"], list)
    ):
        return False
    try:
        for value in entry["values"]:
            if not isinstance(value, list) or len(value) != 4:
                return False
            _check_row(rows_for(entry["item_id"], [value], entry["evaluator_id"])[0], "partial")
    except ExperimentError:
        return False
    return True


class Partial:
    """The append-only record of finished items while a sweep runs."""

    def __init__(self, path):
        self.path = path

    def entries(self, evaluator_id) -> list:
        """[(item_id, values)] of the well-formed lines written under `evaluator_id`.

        A line that is not a well-formed entry (the torn tail of an interrupted
        write, or a damaged line) is skipped: the sweep reuses only what the
        journal vouches for, so its item is measured again or the edit refused."""
        data = read_file(self.path, "the finished items", MAX_OBSERVATIONS_BYTES, missing=b"")
        out = []
        for number, raw in enumerate(data.splitlines(), 1):
            try:
                entry = jsondoc.loads(raw, f"{self.path} line {number}", "a finished item")
            except ExperimentError:
                continue
            if _well_formed(entry) and entry["evaluator_id"] == evaluator_id:
                out.append((entry["item_id"], entry["values"]))
        return out

    def append(self, item_id, values, evaluator_id):
        try:
            with open(self.path, "ab") as fh:
                fh.write(line({"item_id": item_id, "evaluator_id": evaluator_id, "values": values}))
                fh.flush()
        except OSError as exc:
            raise ExperimentError(f"{self.path}: cannot write ({exc.strerror or exc})")

    def remove(self):
        if os.path.exists(self.path):
            os.remove(self.path)


def done_from_rows(rows, evaluator_id) -> dict:
    """{item_id: {arm: [values]}} from a finished observations file, this evaluator only."""
    out = {}
    for r in rows:
        if r["evaluator_id"] == evaluator_id:
            out.setdefault(r["item_id"], {}).setdefault(r["arm"], []).append(
                [r["arm"], r["seed"], r["metric"], r["value"]]
            )
    return out
