"""`fundbook practitioner import` and `verify`: submissions in, records out.

Import: every file is read and checked (_submission.py) before anything
runs; then all of them are re-executed in one Pyodide runtime through the
bundle (_execute.py); each re-execution must reproduce the receipts head the
desk recorded; only then is any record written, each folder staged beside
its place and renamed into it, so a refused file leaves runs/ as it was
(all files or none). Verify re-imports each published record's submission
the same way and compares every byte.
"""

import datetime
import json
import os
import shutil
import tempfile

import engine
from engine import InputError
from engine import parse_json, read_limited

from .._errors import BuildError
from .._files import rel
from ..bundle import MANIFEST, verify_bundle
from . import _protocol as P
from ._execute import execute_sessions
from ._record import files as record_files
from ._submission import read_submission

RECORD_FILES = ("receipts.json", "record.json", "submission.json")
MAX_RECORD_BYTES = 64 * 1024 * 1024


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def bundle_facts(bundle_dir, runs_dir=None) -> dict:
    """The verified bundle and the engine block records name; it must be the published runs' bundle."""
    verified = verify_bundle(bundle_dir)
    manifest = verified["manifest"]
    facts = {
        "bundle_sha256": verified["bundle_sha256"],
        "manifest_sha256": verified["manifest_sha256"],
        "engine_version": manifest["engine_version"],
        "pyodide_version": manifest["runtime"]["pyodide_version"],
        "python_version": manifest["runtime"]["python_version"],
    }
    index = os.path.join(runs_dir, "index.json") if runs_dir else None
    if index and os.path.isfile(index):
        with open(index, encoding="utf-8") as fh:
            published = json.load(fh).get("engine", {})
        if published.get("bundle_sha256") != facts["bundle_sha256"]:
            raise BuildError(
                f"{rel(bundle_dir)}: bundle {facts['bundle_sha256'][:16]}… is not the one of the published "
                f"runs ({rel(index)}: {str(published.get('bundle_sha256'))[:16]}…); run `make build-engine`"
            )
    bundle = {
        "zip_path": verified["zip_path"],
        "manifest_path": os.path.join(bundle_dir, MANIFEST),
        "bundle_sha256": verified["bundle_sha256"],
    }
    return bundle, facts


def _execute_checked(docs, bundle, facts, session):
    """[(label, submission)] -> [(label, submission, execution)] with every head reproduced."""
    requests = [
        {"source": doc["source"], "moves": doc["moves"], "finalize": doc["termination"]["status"] == "completed"}
        for _, doc in docs
    ]
    runtime, events = execute_sessions(bundle, requests, session) if docs else (None, [])
    out = []
    for (label, doc), event in zip(docs, events):
        if not event["ok"]:
            raise InputError(f"{label}: the desk refuses the session's moves: {event['error']}")
        if event["state"]["fixture_sha256"] != doc["task"]["fixture_sha256"]:
            raise BuildError(
                f"{label}: the bundle's world {event['state']['fixture_sha256'][:16]}… is not the host "
                f"engine's {doc['task']['fixture_sha256'][:16]}… (rebuild the bundle from these sources)"
            )
        head = event["result"]["receipts_head"] if event["result"] else event["state"]["head"]
        claimed = doc["receipts_head"]
        if head != claimed:
            raise InputError(
                f"{label}: receipts_head: the batches re-execute to {head['size']}:{head['hash'][:16]}…, "
                f"the desk recorded {claimed['size']}:{claimed['hash'][:16]}… (changed after the export?)"
            )
        out.append((label, doc, event))
    return runtime, out


def prepare(paths, runs_dir, bundle_dir, session=None, existing=True):
    """Check and re-execute; returns [(label, attempt id, {name: bytes}, status)] without writing anything.
    `existing`: look for records already under runs_dir (verify re-imports what is published: no)."""
    bundle, facts = bundle_facts(bundle_dir, runs_dir)
    docs = [(str(p), read_submission(p, facts)) for p in paths]
    started = _now()
    runtime, executed = _execute_checked(docs, bundle, facts, session)
    planned, seen = [], {}
    for label, doc, event in executed:
        volatile = {
            "imported": started,
            "duration_ms": event["duration_ms"],
            "host": f"{runtime['host']}, node {runtime['node_version']}",
            "pyodide_load_ms": runtime["load_ms"],
        }
        attempt, blobs = record_files(doc, event, facts, volatile)
        if attempt in seen:
            raise InputError(f"{label}: the same session as {seen[attempt]} (attempt {attempt})")
        seen[attempt] = label
        planned.append((label, attempt, blobs, _existing(runs_dir, attempt, blobs, label) if existing else "new"))
    return planned


def _existing(runs_dir, attempt, blobs, label):
    """ "new", or "unchanged" when the same record is published; another record under that id is refused."""
    where = os.path.join(runs_dir, "practitioners", attempt)
    if not os.path.lexists(where):
        return "new"
    try:
        with open(os.path.join(where, "record.json"), "rb") as fh:
            published = json.loads(fh.read(MAX_RECORD_BYTES))
        same = published.get("content_sha256") == json.loads(blobs["record.json"])["content_sha256"]
    except (OSError, ValueError, AttributeError):
        same = False
    if not same:
        raise InputError(f"{label}: runs/practitioners/{attempt} already holds another record; nothing was imported")
    return "unchanged"


def import_submissions(paths, runs_dir="runs", bundle_dir="build/engine", session=None) -> list:
    """Import every file or none. Returns [{"file", "attempt_id", "status", "termination", "result"}]."""
    planned = prepare(paths, runs_dir, bundle_dir, session)
    root = os.path.join(runs_dir, "practitioners")
    fresh = [p for p in planned if p[3] == "new"]
    placed = []
    if fresh:
        os.makedirs(root, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".import-", dir=root)
        try:
            for _, attempt, blobs, _ in fresh:
                os.mkdir(os.path.join(staging, attempt))
                for name, data in blobs.items():
                    with open(os.path.join(staging, attempt, name), "wb") as fh:
                        fh.write(data)
                os.chmod(os.path.join(staging, attempt), 0o755)
            for _, attempt, _, _ in fresh:
                os.rename(os.path.join(staging, attempt), os.path.join(root, attempt))
                placed.append(attempt)
        except OSError as exc:
            for attempt in placed:  # all or none
                shutil.rmtree(os.path.join(root, attempt), ignore_errors=True)
            raise InputError(f"{rel(root)}: cannot write the records ({exc.strerror or exc}); nothing was imported")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    out = []
    for label, attempt, blobs, status in planned:
        c = json.loads(blobs["record.json"])["content"]
        out.append(
            {
                "file": label,
                "attempt_id": attempt,
                "status": status,
                "termination": c["termination"],
                "result": c["result"],
                "receipts_head": c["receipts_head"],
                "record": f"{rel(root)}/{attempt}/record.json",
            }
        )
    return out


# -- verify -----------------------------------------------------------------------------


def _read_doc(path, label):
    try:
        data = read_limited(path, MAX_RECORD_BYTES)
    except OSError as exc:
        raise InputError(f"{label}: cannot read ({exc.strerror or exc})")
    return data, parse_json(data, label, "a practitioner record file", MAX_RECORD_BYTES)


def verify_records(runs_dir="runs", bundle_dir="build/engine", session=None) -> list:
    """Re-import every published record's submission and compare bytes. Returns
    [(attempt id, [problem lines])]; an empty problem list is a record that verifies."""
    root = os.path.join(runs_dir, "practitioners")
    if not os.path.isdir(root):
        return []
    folders = sorted(n for n in os.listdir(root) if not n.startswith("."))
    checks, found = [], []
    for name in folders:
        where = os.path.join(root, name)
        problems = []
        listed = sorted(os.listdir(where)) if os.path.isdir(where) and not os.path.islink(where) else None
        if listed != list(RECORD_FILES):
            problems.append(
                f"runs/practitioners/{name}: holds {listed}, a record folder holds exactly {list(RECORD_FILES)}"
            )
            found.append((name, problems))
            continue
        try:
            _, rec = _read_doc(os.path.join(where, "record.json"), f"runs/practitioners/{name}/record.json")
            if not isinstance(rec, dict) or rec.get("schema") != P.RECORD_SCHEMA:
                raise InputError(f"runs/practitioners/{name}/record.json: schema: expected {P.RECORD_SCHEMA}")
            if engine.content_sha256(rec.get("content")) != rec.get("content_sha256"):
                problems.append(f"runs/practitioners/{name}/record.json: content_sha256 is not the content's")
            checks.append((name, rec, os.path.join(where, "submission.json")))
        except InputError as exc:
            problems.append(exc.message)
        found.append((name, problems))
    by_name = dict(found)
    try:
        planned = (
            prepare([path for _, _, path in checks], runs_dir, bundle_dir, session, existing=False) if checks else []
        )
    except InputError as exc:
        return found + [("(re-import)", [exc.message])]
    for (name, rec, _), (_, attempt, blobs, _) in zip(checks, planned):
        problems = by_name[name]
        if attempt != name:
            problems.append(f"runs/practitioners/{name}: the submission's attempt id is {attempt}")
        rebuilt = json.loads(blobs["record.json"])
        where = engine.first_difference(rebuilt["content"], rec.get("content"), "content")
        if where:
            problems.append(f"runs/practitioners/{name}/record.json: {where} differs from the re-execution (content)")
        for file in ("receipts.json", "submission.json"):
            with open(os.path.join(root, name, file), "rb") as fh:
                if fh.read() != blobs[file]:
                    problems.append(f"runs/practitioners/{name}/{file}: differs byte for byte from the re-execution")
    return found
