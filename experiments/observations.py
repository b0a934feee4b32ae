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
(`{item_id, evaluator_id, values}` a line); a re-run reads it, and the
finished observations.jsonl, and skips every (item, arm) already measured under
the same evaluator id.
"""

import io
import json
import os

from . import jsondoc
from .errors import ExperimentError

ROW_KEYS = ("arm", "evaluator_id", "item_id", "metric", "seed", "value")
JSONL, PARQUET, PARTIAL = "observations.jsonl", "observations.parquet", "observations.partial.jsonl"


def line(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode() + b"\n"


def rows_for(item_id, values, evaluator_id) -> list:
    return [{"item_id": item_id, "arm": arm, "seed": seed, "metric": metric, "value": value,
             "evaluator_id": evaluator_id} for arm, seed, metric, value in values]


def jsonl_bytes(rows) -> bytes:
    return b"".join(line(r) for r in rows)


def parquet_bytes(rows) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq
    schema = pa.schema([("item_id", pa.string()), ("arm", pa.string()), ("seed", pa.int64()),
                        ("metric", pa.string()), ("value", pa.int64()), ("evaluator_id", pa.string())])
    table = pa.Table.from_pylist(rows, schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", write_statistics=False)
    return sink.getvalue()


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
    rows = []
    for number, raw in enumerate(data.splitlines(), 1):
        row = jsondoc.loads(raw, f"{label} line {number}", "an observation row")
        rows.append(_check_row(row, f"{label} line {number}"))
    return rows


def read_jsonl(path) -> list:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read the observations ({exc.strerror})")
    return parse_jsonl(data, path)


def _well_formed(entry) -> bool:
    """A partial entry `{item_id, evaluator_id, values: [[arm, seed, metric, value], ...]}` with row-typed values."""
    if not isinstance(entry, dict) or set(entry) != {"item_id", "evaluator_id", "values"} \
            or not isinstance(entry["values"], list):
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

    def done(self, evaluator_id) -> dict:
        """{item_id: {arm: [values]}} already measured under `evaluator_id`.

        A line that is not a well-formed entry (the torn tail of an interrupted
        write, or a damaged line) is skipped: its item is measured again."""
        out = {}
        if not os.path.exists(self.path):
            return out
        try:
            with open(self.path, "rb") as fh:
                lines = fh.read().splitlines()
        except OSError as exc:
            raise ExperimentError(f"{self.path}: cannot read the finished items ({exc.strerror})")
        for number, raw in enumerate(lines, 1):
            try:
                entry = jsondoc.loads(raw, f"{self.path} line {number}", "a finished item")
            except ExperimentError:
                continue
            if not _well_formed(entry) or entry["evaluator_id"] != evaluator_id:
                continue
            arms = out.setdefault(entry["item_id"], {})
            for value in entry["values"]:
                arms.setdefault(value[0], []).append(value)
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
            out.setdefault(r["item_id"], {}).setdefault(r["arm"], []).append([r["arm"], r["seed"], r["metric"], r["value"]])
    return out
