"""The attempt record (fundbook.attempt/1) and its transcript.

Written for every attempt, complete or not. `content` is hashed
(content_sha256 = sha256 of its canonical JSON) and holds no wall-clock time;
`volatile` holds the times, the host and the worker's stderr tail. Paths in
`content` are relative to the attempt directory. Files: record.json,
transcript.json, receipts.json (the desk's hash-chained receipts),
ledger.jsonl (the ledger as it was appended, line by line), when the
worker kept any, retained.json (its retained work after the last settled
checkpoint: what a continuation starts from) and, for an attempt whose calls
went through the decision cache, cache.jsonl (the answers it used, canonical
JSON a line: what `execute --sampler cache --replay-of` replays from).
"""

import os

from engine import content_sha256, pretty_json, sha256_hex

from . import ATTEMPT_SCHEMA, ATTEMPT_SCHEMA_VERSION, TRANSCRIPT_SCHEMA
from ._crash import boundary
from ._errors import InputError
from ._jsonfile import fsync_dir, read_bytes, read_json


def transcript_doc(attempt_id, steps, summary) -> dict:
    return {"schema": TRANSCRIPT_SCHEMA, "attempt_id": attempt_id, "steps": steps, "summary": summary}


def summary_text(termination, result, accepted_actions, settled_days, cost) -> str:
    if result is not None and result.get("score"):
        graded = (
            f"{result['status']}, {result['verdict']}, {result['score']['points']}/{result['score']['denominator']}"
        )
    elif result is not None:
        graded = f"{result['status']}, {result['verdict']}, no score"
    else:
        graded = "no financial result (the run was not finalised)"
    spent = (
        "projected (a mock priced as the model it stands for: a projection, nothing was spent)"
        if cost.get("projection")
        else "charged"
    )
    return (
        f"Ended {termination['status']}: {termination['reason']}. Accepted batches on {settled_days} "
        f"checkpoints, {accepted_actions} accepted actions; {graded}. {cost['calls']} model calls "
        f"({cost['cache_hits']} from the cache), {cost['tokens_in']} tokens in, {cost['tokens_out']} out, "
        f"{cost['micro_usd']} micro-USD {spent}, {cost['unresolved_micro_usd']} micro-USD unresolved; sandbox "
        f"{cost['sandbox_micro_usd']} micro-USD."
    )


def _write_synced(path, data: bytes):
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def write_attempt(tmp_dir, content, volatile, transcript, receipts, retained=None):
    """Write the attempt files into tmp_dir (already holding ledger.jsonl); fills the hashes in `content`.

    The files the record names are written and synced first, then record.json is put in place in one rename:
    a record.json in a folder always names files that are there (what `recover` relies on)."""
    files = {
        "transcript.json": pretty_json(transcript).encode("utf-8"),
        "receipts.json": pretty_json(receipts).encode("utf-8"),
    }
    if retained is not None:
        files["retained.json"] = pretty_json(retained).encode("utf-8")
    for name, data in files.items():
        _write_synced(os.path.join(tmp_dir, name), data)
    content["transcript"] = {"path": "transcript.json", "sha256": sha256_hex(files["transcript.json"])}
    content["outputs"] = {"receipts": {"path": "receipts.json", "sha256": sha256_hex(files["receipts.json"])}}
    if retained is not None:
        content["outputs"]["retained"] = {"path": "retained.json", "sha256": sha256_hex(files["retained.json"])}
    for key, name, what in (("ledger", "ledger.jsonl", "ledger"), ("cache", "cache.jsonl", "decision cache")):
        path = os.path.join(tmp_dir, name)  # cache: the decision cache's answers, exported beside the record
        if os.path.exists(path):
            content["outputs"][key] = {"path": name, "sha256": sha256_hex(read_bytes(path, what))}
    record = {
        "schema": ATTEMPT_SCHEMA,
        "content": content,
        "content_sha256": content_sha256(content),
        "volatile": volatile,
    }
    boundary("record:after-files")
    path = os.path.join(tmp_dir, "record.json")
    _write_synced(path + ".tmp", pretty_json(record).encode("utf-8"))
    os.replace(path + ".tmp", path)
    fsync_dir(tmp_dir)
    return record


FILE_KINDS = {
    "transcript": "transcript",
    "outputs.receipts": "receipts",
    "outputs.ledger": "ledger",
    "outputs.retained": "retained work",
}


def read_record(path) -> dict:
    """Read an attempt record, refusing a newer schema version and a content that does not hash."""
    record = read_json(path, "attempt record")
    if not isinstance(record, dict) or record.get("schema") != ATTEMPT_SCHEMA:
        raise InputError(f"{path}: schema: expected {ATTEMPT_SCHEMA!r}")
    content = record.get("content")
    version = content.get("schema_version") if isinstance(content, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or version > ATTEMPT_SCHEMA_VERSION:
        raise InputError(
            f"{path}: content.schema_version: expected an integer <= {ATTEMPT_SCHEMA_VERSION}, got {version!r}"
        )
    if content_sha256(content) != record.get("content_sha256"):
        raise InputError(f"{path}: content does not hash to content_sha256 (edited)")
    base = os.path.dirname(os.path.abspath(path))
    outputs = content.get("outputs")
    refs = [("transcript", content.get("transcript"))] + [
        (f"outputs.{k}", v) for k, v in sorted((outputs if isinstance(outputs, dict) else {}).items())
    ]
    for where, ref in refs:
        name = ref.get("path") if isinstance(ref, dict) else None
        if not isinstance(name, str) or name != os.path.basename(name) or name in ("", ".", ".."):
            raise InputError(f"{path}: content.{where}.path: expected a file name in the attempt's folder")
        try:
            data = read_bytes(os.path.join(base, name), FILE_KINDS.get(where, "attempt record"))
        except InputError as exc:
            raise InputError(f"{path}: content.{where}.path: {exc.format_message()}") from None
        if sha256_hex(data) != ref.get("sha256"):
            raise InputError(f"{path}: content.{where}.sha256: {name} does not match (edited)")
    return record


def round_trip(record) -> bytes:
    """The bytes a record is written as (a golden round trip re-reads and rewrites them identically)."""
    return pretty_json(record).encode("utf-8")
