"""A published practitioner record, checked without re-executing it: what the
site build runs on every folder under runs/practitioners/ before it renders a
page (`fundbook practitioner verify` re-executes; this is its cheap half).

A record may arrive by hand, as a contributed pull request would bring it, so
every field is held to the importer's own checks: the submission beside it
passes check_submission (the same bounds, names and patterns as an import),
and the record's content, its receipts file and its submission file are
exactly what the import writes from that submission and the record's own
re-execution facts (days, result, receipts). The first failure is one
InputError naming the file and the field.
"""

import json
import os
import re

import engine
from engine import InputError
from engine import shown
from engine import parse_json, read_limited

from . import _protocol as P
from ._record import attempt_id, content, file_bytes, receipts_doc
from ._submission import check_submission

RECORD_FILES = ("receipts.json", "record.json", "submission.json")
MAX_RECORD_BYTES = 64 * 1024 * 1024
ENGINE_KEYS = ("bundle_sha256", "manifest_sha256", "engine_version", "pyodide_version", "python_version")
VOLATILE = {"imported": str, "duration_ms": int, "host": str, "pyodide_load_ms": int}
_IMPORTED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z")
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._,:;/()+-]{0,199}")  # "<platform>, node v22.1.0" as the import writes it
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+-]{0,39}")


def _read(path, label, what="a practitioner record file"):
    """(bytes, parsed JSON) of a published record's file (`what` it is, for the message); one-line InputError."""
    try:
        data = read_limited(path, MAX_RECORD_BYTES)
    except OSError as exc:
        raise InputError(f"{label}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_RECORD_BYTES:
        raise InputError(f"{label}: larger than {MAX_RECORD_BYTES} bytes")
    return data, parse_json(data, label, what, MAX_RECORD_BYTES)


def check_engine_facts(facts, label, published):
    """A published record's content.engine: exactly ENGINE_KEYS, each well formed, and the bundle and manifest
    sha256 those of `published` where it names them (shared with builders/inspect_records.py)."""
    if not isinstance(facts, dict) or sorted(facts) != sorted(ENGINE_KEYS):
        raise InputError(f"{label}: content.engine: expected exactly {', '.join(ENGINE_KEYS)}")
    for key in ENGINE_KEYS:
        value = facts[key]
        ok = isinstance(value, str) and (
            re.fullmatch(P.HEX64, value) if key.endswith("sha256") else _VERSION.fullmatch(value)
        )
        if not ok:
            raise InputError(
                f"{label}: content.engine.{key}: expected "
                f"{'64 hexadecimal digits' if key.endswith('sha256') else 'a version'}, got {shown(value)}"
            )
    for key in ("bundle_sha256", "manifest_sha256"):
        if key in published and facts[key] != published[key]:
            raise InputError(f"{label}: content.engine.{key}: expected {published[key]} (the published runs' bundle)")


_EXECUTED = {}  # {submission content sha256: execution}: a submission re-executes to the same state every time


def _host_execution(submission, label) -> dict:
    key = engine.content_sha256(submission)
    if key not in _EXECUTED:
        if len(_EXECUTED) >= 64:
            _EXECUTED.clear()
        _EXECUTED[key] = _execute_on_host(submission, label)
    return _EXECUTED[key]


def _execute_on_host(submission, label) -> dict:
    """The session re-executed by the host engine (the same session code the bundle runs): its state, result and
    receipts, and the receipts head the desk recorded, reproduced; the site build's cheap stand-in for the
    import's Pyodide re-execution (`fundbook practitioner verify` runs that one)."""
    from engine import session as _session

    try:
        run = _session.rebuild(submission["source"], submission["moves"])
        state = _session.state_of(run)
        result = _session.finalize_and_grade(run) if submission["termination"]["status"] == "completed" else None
    except engine.DeskError as exc:
        raise InputError(f"{label}: moves: the desk refuses the session's moves ({exc.message})") from None
    head = result["receipts_head"] if result else state["head"]
    if head != submission["receipts_head"]:
        raise InputError(
            f"{label}: receipts_head: the batches re-execute to {head['size']}:{head['hash'][:16]}…, "
            f"the submission records another"
        )
    return {"state": state, "result": result, "receipts": run.receipts}


def check_published(runs_dir, name, published_engine=None) -> dict:
    """The record of runs_dir/practitioners/<name>, checked; InputError (one line) otherwise."""
    rel = f"runs/practitioners/{name}"
    where = os.path.join(runs_dir, "practitioners", name)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", name):
        raise InputError(f"{rel[:80]}: expected a folder name of letters, digits, '.', '_' or '-'")
    listed = sorted(os.listdir(where)) if os.path.isdir(where) and not os.path.islink(where) else None
    if listed != list(RECORD_FILES):
        raise InputError(f"{rel}: holds {listed}, a record folder holds exactly {list(RECORD_FILES)}")
    label = f"{rel}/record.json"
    _, rec = _read(os.path.join(where, "record.json"), label)
    if not isinstance(rec, dict) or sorted(rec) != ["content", "content_sha256", "schema", "volatile"]:
        raise InputError(f"{label}: expected exactly schema, content, content_sha256, volatile")
    if rec["schema"] != P.RECORD_SCHEMA:
        raise InputError(f"{label}: schema: expected {P.RECORD_SCHEMA}")
    c = rec["content"]
    if not isinstance(c, dict) or engine.content_sha256(c) != rec["content_sha256"]:
        raise InputError(f"{label}: content_sha256: expected the sha256 of the canonical content")
    sub_label = f"{rel}/submission.json"
    sub_bytes, submission = _read(os.path.join(where, "submission.json"), sub_label)
    check_engine_facts(c.get("engine"), label, published_engine or {})
    check_submission(submission, sub_label, c["engine"])
    attempt = attempt_id(submission)
    if attempt != name:
        raise InputError(f"{rel}: expected the folder of attempt {attempt} (the submission's attempt id)")
    if sub_bytes != file_bytes(submission):
        raise InputError(f"{sub_label}: expected the submission as the import writes it (canonical pretty JSON)")
    execution = _host_execution(submission, sub_label)
    rec_label = f"{rel}/receipts.json"
    rec_bytes, _ = _read(os.path.join(where, "receipts.json"), rec_label)
    if rec_bytes != file_bytes(receipts_doc(attempt, execution)):
        raise InputError(f"{rec_label}: expected the receipts the submission's batches re-execute to")
    difference = engine.first_difference(content(submission, execution, c["engine"]), c, "content")
    if difference:
        raise InputError(f"{label}: {difference} is not what the import writes from the submission")
    volatile = rec["volatile"]
    if not isinstance(volatile, dict) or sorted(volatile) != sorted(VOLATILE):
        raise InputError(f"{label}: volatile: expected exactly {', '.join(VOLATILE)}")
    for key, kind in VOLATILE.items():
        value = volatile[key]
        if (
            type(value) is not kind
            or (kind is int and not 0 <= value <= 2**53 - 1)
            or (key == "imported" and not _IMPORTED.fullmatch(value))
            or (key == "host" and not _HOST.fullmatch(value))
        ):
            raise InputError(
                f"{label}: volatile.{key}: expected "
                + {
                    "imported": "a UTC time 2026-01-31T12:00:00.000Z",
                    "duration_ms": "milliseconds",
                    "host": "a host description of letters, digits, spaces and ._,:;/()+- (at most 200)",
                    "pyodide_load_ms": "milliseconds",
                }[key]
            )
    return rec


def published_records(runs_dir) -> list:
    """[(attempt id, record)] of every folder under runs_dir/practitioners/, each checked; InputError on the first
    that fails (the site build refuses it)."""
    root = os.path.join(runs_dir, "practitioners")
    if not os.path.isdir(root):
        return []
    try:
        with open(os.path.join(runs_dir, "index.json"), encoding="utf-8") as fh:
            published = json.load(fh).get("engine") or {}
    except (OSError, ValueError, AttributeError):
        published = {}
    published = published if isinstance(published, dict) else {}
    return [
        (name, check_published(runs_dir, name, published))
        for name in sorted(n for n in os.listdir(root) if not n.startswith("."))
    ]
