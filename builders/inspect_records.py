"""A published Inspect attempt (runs/attempts/<id>/, harness inspect), checked without Inspect: what the site
build runs on every Inspect record before it renders a page, and what `fundbook inspect import` runs on every
record it is about to write (so nothing imports that the build refuses). `fundbook inspect verify` re-imports the
kept log through Inspect and the bundle in Pyodide; this is its cheap half, on the pattern of
builders/practitioners/_published.py. The rules themselves are builders/inspect_format.py's.

A record may arrive by hand, as a contributed pull request would bring it, so every field is held to what the
importer writes: the folder holds exactly the four files it writes; the record's content has exactly its keys,
its constants and its claims, a world the engine rebuilds to the fixture sha256 it names, this bundle's engine
facts; receipts.json is exactly the receipts the record's batches re-execute to on the host engine (finalised,
as every Inspect run is), and the result and receipts head are those of that re-execution; transcript.json and
the kept log are the files whose sha256 the record names, the transcript in the importer's shape (its turns
counted from it); no URL holds a credential. The first failure is one InputError naming the file and the field.
The values the log carries as it logged them (the model's name, messages, task arguments, generate config,
usage) are data: pages escape them. Across records, one (eval id, sample id, epoch) is published once
(check_unique).
"""

import hashlib
import json
import os
import re

import engine
from engine import InputError
from engine import read_limited, shown

from . import inspect_format as F
from .inspect_format import (
    EXECUTION_PATH,
    HARNESS,
    KIND,
    LABEL,
    MAX_LOG_BYTES,
    OUTSIDE,
    PROTOCOLS,  # noqa: F401
    RECEIPTS_SCHEMA,
    RECORD_SCHEMA,
    SPLIT,
    TASK_NAME,
    TRANSCRIPT_SCHEMA,
)
from .practitioners import check_engine_facts

CONTENT_KEYS = (
    "schema_version",
    "kind",
    "harness",
    "label",
    "attempt_id",
    "claims",
    "task",
    "model",
    "engine",
    "result",
    "receipts_head",
    "moves",
    "turns",
    "transcript",
    "outputs",
    "inspect",
    "execution_path",
)
TASK_KEYS = ("instance_id", "family", "seed", "split", "fixture_sha256", "horizon")
MODEL_KEYS = ("id", "provider", "as_logged", "answered_as")
INSPECT_KEYS = (
    "version",
    "task",
    "task_version",
    "bundle_sha256",
    "task_args",
    "protocol",
    "eval_id",
    "run_id",
    "sample_id",
    "epoch",
    "created",
    "model_base_url",
    "generate_config",
    "limit",
    "usage",
    "usage_note",
    "log",
)
FILES = ("receipts.json", "record.json", "transcript.json")  # and the kept log
ROLES = ("system", "user", "assistant", "tool")
HEX64 = F.HEX64
_IMPORTED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z")
_LOG = re.compile(r"inspect-log-([0-9a-f]{64})\.(eval|json)")


def pretty(doc) -> bytes:  # launchers/inspect/_import.py pretty: how every file of the record is written
    return engine.pretty_json(doc).encode("utf-8")


def _keys(value, keys, label, field):
    if not isinstance(value, dict) or sorted(value) != sorted(keys):
        raise InputError(f"{label}: {field}: expected exactly {', '.join(keys)}")
    return value


def _int(value, label, field, low=0, high=2**53 - 1):
    if type(value) is not int or not low <= value <= high:
        raise InputError(f"{label}: {field}: expected a whole number from {low} to {high}, got {shown(value)}")
    return value


def _match(value, pattern, label, field, what, optional=False):
    if optional and value is None:
        return value
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise InputError(f"{label}: {field}: expected {what}, got {shown(value)}")
    return value


def _equal(value, want, label, field):
    if value != want:
        raise InputError(f"{label}: {field}: expected {shown(want)}, got {shown(value)}")


def _plain_json(value, label, field, depth=0):
    """A value the log carried as logged (task arguments, generate config, usage): JSON of strings, integers,
    booleans and nulls only (the importer turns every other number into its text)."""
    if depth > 32:
        raise InputError(f"{label}: {field}: expected JSON nested at most 32 deep")
    if isinstance(value, dict):
        for k, v in value.items():
            _plain_json(v, label, f"{field}.{k}"[:200], depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _plain_json(v, label, f"{field}[{i}]", depth + 1)
    elif not (value is None or isinstance(value, (bool, int, str))):
        raise InputError(f"{label}: {field}: expected strings, whole numbers, booleans or null, got {shown(value)}")


def _task(task, label):
    _keys(task, TASK_KEYS, label, "content.task")
    family, seed, horizon = task["family"], task["seed"], task["horizon"]
    if family not in engine.FAMILIES:
        raise InputError(
            f"{label}: content.task.family: expected one of {', '.join(engine.FAMILIES)}, got {shown(family)}"
        )
    _int(seed, label, "content.task.seed", 1, 10**16 - 1)
    _int(horizon, label, "content.task.horizon", *F.DAYS)
    _equal(task["split"], SPLIT, label, "content.task.split")
    try:
        instance = engine.with_horizon(engine.generate(family, seed), horizon)
    except (ValueError, TypeError, KeyError, engine.DeskError) as exc:
        raise InputError(
            f"{label}: content.task: the engine cannot rebuild the world {family} seed {seed} over "
            f"{horizon} days ({type(exc).__name__})"
        ) from None
    _equal(task["fixture_sha256"], engine.fixture_sha256(instance), label, "content.task.fixture_sha256")
    return {"family": family, "seed": seed, "horizon": horizon}


def _host_finalize(source, receipts, label):
    """The run's batches (its BATCH receipts, in order) re-executed and finalised by the host engine, as the
    Inspect environment finalises every run: -> (moves, result, receipts)."""
    from engine import session as _session

    if not isinstance(receipts, list) or not all(isinstance(r, dict) for r in receipts):
        raise InputError(f"{label}: receipts: expected a list of receipts")
    moves = [
        {"batch": (r.get("payload") or {}).get("batch") if isinstance(r.get("payload"), dict) else None}
        for r in receipts
        if r.get("kind") == "BATCH"
    ]
    try:
        run = _session.rebuild(source, moves)
        result = _session.finalize_and_grade(run)
    except (engine.DeskError, ValueError, TypeError, KeyError, AttributeError) as exc:
        reason = getattr(exc, "message", None) or type(exc).__name__
        raise InputError(f"{label}: receipts: the desk refuses the run's batches ({str(reason)[:160]})") from None
    return moves, result, run.receipts


def _transcript(data, doc, attempt, label):
    _keys(doc, ("schema", "attempt_id", "steps"), label, "$")
    _equal(doc["schema"], TRANSCRIPT_SCHEMA, label, "schema")
    _equal(doc["attempt_id"], attempt, label, "attempt_id")
    steps = doc["steps"]
    if not isinstance(steps, list) or len(steps) < 2:
        raise InputError(f"{label}: steps: expected the log's messages (the system message and the packet first)")
    for i, step in enumerate(steps):
        where = f"steps[{i}]"
        role = step.get("role") if isinstance(step, dict) else None
        keys = {
            "assistant": ("index", "role", "text", "tool_calls", "model"),
            "tool": ("index", "role", "text", "function", "tool_call_id", "error"),
        }.get(role, ("index", "role", "text"))
        if role not in ROLES:
            raise InputError(f"{label}: {where}.role: expected one of {', '.join(ROLES)}, got {shown(role)}")
        _keys(step, keys, label, where)
        _equal(step["index"], i, label, f"{where}.index")
        if not isinstance(step["text"], str):
            raise InputError(f"{label}: {where}.text: expected text")
        if role == "assistant":
            calls = step["tool_calls"]
            if not isinstance(calls, list):
                raise InputError(f"{label}: {where}.tool_calls: expected a list")
            for k, call in enumerate(calls):
                _keys(call, ("id", "function", "arguments"), label, f"{where}.tool_calls[{k}]")
                for key in ("id", "function"):
                    if not isinstance(call[key], str):
                        raise InputError(f"{label}: {where}.tool_calls[{k}].{key}: expected text")
                _plain_json(call["arguments"], label, f"{where}.tool_calls[{k}].arguments")
            if step["model"] is not None and not isinstance(step["model"], str):
                raise InputError(f"{label}: {where}.model: expected text or null")
        if role == "tool":
            for key in ("function", "tool_call_id"):
                if step[key] is not None and not isinstance(step[key], str):
                    raise InputError(f"{label}: {where}.{key}: expected text or null")
            error = step["error"]
            if error is not None:
                _keys(error, ("type", "message"), label, f"{where}.error")
                if not all(isinstance(error[k], str) for k in ("type", "message")):
                    raise InputError(f"{label}: {where}.error: expected its type and message as text")
    try:
        written = pretty(doc)
    except (ValueError, UnicodeEncodeError):  # a lone surrogate: the import writes UTF-8, which cannot hold one
        raise InputError(f"{label}: expected UTF-8 text (a lone surrogate is not Unicode text)") from None
    if data != written:
        raise InputError(f"{label}: expected the transcript as the import writes it (canonical pretty JSON)")
    return sum(1 for s in steps if s["role"] == "assistant")


def read_folder(runs_dir, name) -> dict:
    """{file name: bytes} of runs_dir/attempts/<name>: exactly the record's three files and the kept log it names,
    each a regular file within its limit; InputError names the file."""
    rel = f"runs/attempts/{name}"
    where = os.path.join(runs_dir, "attempts", name)
    if not F.ATTEMPT_ID.fullmatch(name):
        raise InputError(
            f"{rel[:120]}: expected an Inspect attempt's folder inspect-<model>-<FUND_0N>-seed-<S>-e<epoch>-<8 hex>"
        )
    files = {}
    for fname in ("record.json",) + tuple(sorted(set(os.listdir(where)) - {"record.json"})):
        path = os.path.join(where, fname)
        if fname != "record.json" and fname not in FILES and not _LOG.fullmatch(fname):
            continue  # named below, with the folder's listing
        if not os.path.isfile(path):  # a folder, a FIFO or a device under the file's name
            raise InputError(
                f"{rel}/{fname}: not a regular file"
                f"{' (the kept Inspect log expected)' if _LOG.fullmatch(fname) else ''}"
            )
        limit = MAX_LOG_BYTES if _LOG.fullmatch(fname) else F.MAX_FILE_BYTES
        try:
            files[fname] = read_limited(path, limit)
        except OSError as exc:
            raise InputError(f"{rel}/{fname}: cannot read ({exc.strerror or exc})") from None
        if len(files[fname]) > limit:
            raise InputError(f"{rel}/{fname}: larger than its {limit}-byte limit")
    try:
        log = json.loads(files["record.json"])["content"]["inspect"]["log"]["path"]
    except (ValueError, KeyError, TypeError, RecursionError):
        log = None  # check_files names what is wrong with the record
    listed = sorted(os.listdir(where))
    if not (isinstance(log, str) and _LOG.fullmatch(log)):
        return files  # check_files names content.inspect.log.path
    if listed != sorted(FILES + (log,)):
        raise InputError(
            f"{rel}: holds {shown(listed)}, an Inspect record folder holds exactly {', '.join(FILES)} and its kept log"
        )
    return files


def check_published(runs_dir, name, published_engine=None, bundle_sha256=None) -> dict:
    """The record of runs_dir/attempts/<name> (an Inspect attempt), checked; InputError (one line) otherwise."""
    return check_files(name, read_folder(runs_dir, name), published_engine, bundle_sha256)


def check_files(name, files, published_engine=None, bundle_sha256=None) -> dict:
    """An Inspect attempt's files {name: bytes} (as read_folder reads them, or as the importer is about to write
    them) held to the format; -> the record; InputError (one line) names the file and the field."""
    rel = f"runs/attempts/{name}"
    m = F.ATTEMPT_ID.fullmatch(name)
    if not m:
        raise InputError(
            f"{rel[:120]}: expected an Inspect attempt's folder inspect-<model>-<FUND_0N>-seed-<S>-e<epoch>-<8 hex>"
        )
    label = f"{rel}/record.json"
    rec = engine.parse_json(files.get("record.json", b""), label, "an Inspect record file", MAX_LOG_BYTES)
    if not isinstance(rec, dict) or sorted(rec) != ["content", "content_sha256", "schema", "volatile"]:
        raise InputError(f"{label}: expected exactly schema, content, content_sha256, volatile")
    if rec["schema"] != RECORD_SCHEMA:
        raise InputError(
            f"{label}: schema: expected {RECORD_SCHEMA}, got {shown(rec['schema'])} (an older record: "
            f"import it again from its kept log with `fundbook inspect import`)"
        )
    c = rec["content"]
    try:
        sealed = isinstance(c, dict) and engine.content_sha256(c) == rec["content_sha256"]
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        raise InputError(f"{label}: content: expected canonical JSON (no float, no lone surrogate)") from None
    if not sealed:
        raise InputError(f"{label}: content_sha256: expected the sha256 of the canonical content")
    _keys(c, CONTENT_KEYS, label, "content")
    for key, want in (
        ("schema_version", F.SCHEMA_VERSION),
        ("kind", KIND),
        ("harness", HARNESS),
        ("label", LABEL),
        ("execution_path", EXECUTION_PATH),
        ("attempt_id", name),
        ("claims", F.claims()),
    ):
        _equal(c[key], want, label, f"content.{key}")
    world = _task(c["task"], label)
    if (m.group(2), m.group(3)) != (world["family"], str(world["seed"])):
        raise InputError(
            f"{label}: content.attempt_id: expected the world {world['family']}-seed-{world['seed']} of content.task"
        )
    # the model as logged: Inspect's model string of any printable shape, its parts, the name the answers carry
    model = _keys(c["model"], MODEL_KEYS, label, "content.model")
    F.printable(model["as_logged"], label, "content.model.as_logged", "Inspect's <provider>/<model>")
    parts = F.model_parts(model["as_logged"])
    _equal(model["id"], parts["id"], label, "content.model.id")
    _equal(model["provider"], parts["provider"], label, "content.model.provider")
    F.printable(model["answered_as"], label, "content.model.answered_as", "a model name", optional=True)
    _equal(m.group(1), F.slug(model["id"]), label, "content.attempt_id")
    check_engine_facts(c["engine"], label, published_engine or {})
    if bundle_sha256 is not None:
        _equal(c["engine"]["bundle_sha256"], bundle_sha256, label, "content.engine.bundle_sha256")
    ins = _keys(c["inspect"], INSPECT_KEYS, label, "content.inspect")
    _match(ins["version"], F.VERSION, label, "content.inspect.version", "inspect-ai's version")
    _equal(ins["task"], TASK_NAME, label, "content.inspect.task")
    # the bundle the eval ran with is as logged (the import re-derived every answer through content.engine's)
    tv = re.compile(re.escape(c["engine"]["engine_version"]) + r"\+([0-9a-f]{16})")
    _match(ins["task_version"], tv, label, "content.inspect.task_version", "<engine version>+<16 hex digits>")
    _match(ins["bundle_sha256"], HEX64, label, "content.inspect.bundle_sha256", "64 hexadecimal digits")
    if not ins["bundle_sha256"].startswith(ins["task_version"].rsplit("+", 1)[1]):
        raise InputError(
            f"{label}: content.inspect.bundle_sha256: expected the bundle content.inspect.task_version names"
        )
    if ins["protocol"] not in PROTOCOLS:
        raise InputError(
            f"{label}: content.inspect.protocol: expected one of {', '.join(PROTOCOLS)}, got {shown(ins['protocol'])}"
        )
    for key in ("task_args", "generate_config", "usage"):
        if not isinstance(ins[key], dict):
            raise InputError(f"{label}: content.inspect.{key}: expected an object")
        _plain_json(ins[key], label, f"content.inspect.{key}")
    args = F.task_args(ins["task_args"], label, "content.inspect.task_args")
    _equal(args["protocol"], ins["protocol"], label, "content.inspect.task_args.protocol")
    _equal(args["days"], world["horizon"], label, "content.inspect.task_args.days")
    if ins["limit"] is not None:
        if not isinstance(ins["limit"], dict):
            raise InputError(f"{label}: content.inspect.limit: expected null or the sample's limit")
        _plain_json(ins["limit"], label, "content.inspect.limit")
    for key in ("eval_id", "run_id"):
        _match(ins[key], F.TOKEN, label, f"content.inspect.{key}", "Inspect's id (letters, digits, '_' or '-')")
    _equal(ins["sample_id"], F.world_id(world["family"], world["seed"]), label, "content.inspect.sample_id")
    _int(ins["epoch"], label, "content.inspect.epoch", 1, F.MAX_EPOCH)
    _equal(m.group(4), f"{ins['epoch']:03d}", label, "content.attempt_id")
    _match(ins["created"], F.CREATED, label, "content.inspect.created", "the eval's creation time in UTC")
    F.url(ins["model_base_url"], label, "content.inspect.model_base_url")
    _equal(ins["usage_note"], OUTSIDE, label, "content.inspect.usage_note")
    found = F.credentials(c, "content")
    if found:
        raise InputError(
            f"{label}: {found[0][0]}: expected no credential (a URL's user:password@ or secret "
            f"parameter, a field named like one); the import replaces them by {F.REDACTED}"
        )
    # the files: exactly the four the import writes, each the one the record names
    log = _keys(ins["log"], ("path", "sha256", "bytes"), label, "content.inspect.log")
    lm = _LOG.fullmatch(str(log["path"]))
    if not lm or lm.group(1) != log["sha256"]:
        raise InputError(
            f"{label}: content.inspect.log.path: expected inspect-log-<its sha256>.eval or .json, "
            f"got {shown(log['path'])}"
        )
    files_expected = sorted(FILES + (log["path"],))
    if sorted(files) != files_expected:
        raise InputError(
            f"{rel}: holds {shown(sorted(files))}, an Inspect record folder holds exactly {files_expected}"
        )
    _int(log["bytes"], label, "content.inspect.log.bytes", 1, MAX_LOG_BYTES)
    kept = files[log["path"]]
    if len(kept) != log["bytes"]:
        raise InputError(f"{rel}/{log['path']}: expected {log['bytes']} bytes (content.inspect.log.bytes)")
    if hashlib.sha256(kept).hexdigest() != log["sha256"]:
        raise InputError(f"{rel}/{log['path']}: sha256 differs from content.inspect.log.sha256")
    if kept.startswith(b"PK\x03\x04") != (lm.group(2) == "eval"):
        raise InputError(f"{rel}/{log['path']}: expected {'a zip (.eval)' if lm.group(2) == 'eval' else 'JSON'} log")
    _keys(c["transcript"], ("path", "sha256"), label, "content.transcript")
    _equal(c["transcript"]["path"], "transcript.json", label, "content.transcript.path")
    tr_label = f"{rel}/transcript.json"
    tr_bytes = files["transcript.json"]
    tr = engine.parse_json(tr_bytes, tr_label, "an Inspect record file", MAX_LOG_BYTES)
    if hashlib.sha256(tr_bytes).hexdigest() != c["transcript"]["sha256"]:
        raise InputError(f"{tr_label}: sha256 differs from content.transcript.sha256")
    assistant = _transcript(tr_bytes, tr, name, tr_label)
    _equal(c["turns"], assistant, label, "content.turns")
    # the run: receipts.json re-executed and finalised on the host; the result and heads are that run's
    outputs = _keys(c["outputs"], ("receipts",), label, "content.outputs")
    _keys(outputs["receipts"], ("path", "sha256"), label, "content.outputs.receipts")
    _equal(outputs["receipts"]["path"], "receipts.json", label, "content.outputs.receipts.path")
    rc_label = f"{rel}/receipts.json"
    rc_bytes = files["receipts.json"]
    rc = engine.parse_json(rc_bytes, rc_label, "an Inspect record file", MAX_LOG_BYTES)
    if hashlib.sha256(rc_bytes).hexdigest() != outputs["receipts"]["sha256"]:
        raise InputError(f"{rc_label}: sha256 differs from content.outputs.receipts.sha256")
    _keys(rc, ("schema", "run_id", "receipts_head", "receipts"), rc_label, "$")
    moves, result, receipts = _host_finalize(world, rc["receipts"], rc_label)
    want = {"schema": RECEIPTS_SCHEMA, "run_id": name, "receipts_head": result["receipts_head"], "receipts": receipts}
    if rc_bytes != pretty(want):  # (want is the engine's own output: UTF-8 text)
        where_ = engine.first_difference(want, rc, "receipts.json") or "its bytes"
        raise InputError(f"{rc_label}: {where_} is not what the run's batches re-execute to")
    difference = engine.first_difference(result, c["result"], "content.result")
    if difference:
        raise InputError(f"{label}: {difference} is not the engine's grade of the receipts' batches")
    _equal(c["receipts_head"], result["receipts_head"], label, "content.receipts_head")
    _equal(c["moves"], len(moves), label, "content.moves")
    _equal(
        c["task"]["instance_id"],
        result.get("instance_id") or f"{world['family']}/seed-{world['seed']}",
        label,
        "content.task.instance_id",
    )
    volatile = rec["volatile"]
    if (
        not isinstance(volatile, dict)
        or sorted(volatile) != ["imported"]
        or not isinstance(volatile["imported"], str)
        or not _IMPORTED.fullmatch(volatile["imported"])
    ):
        raise InputError(f"{label}: volatile: expected exactly imported, a UTC time 2026-01-31T12:00:00.000Z")
    return rec


def unique_key(content) -> tuple:
    """(eval id, sample id, epoch): what one imported attempt stands for; a second one is refused."""
    ins = content["inspect"]
    return ins["eval_id"], ins["sample_id"], ins["epoch"]


def check_unique(records) -> None:
    """records: {attempt id: content}, each already checked. InputError when two stand for one (eval, sample,
    epoch): an eval's sample and epoch are one run, so two different records of it cannot both be true."""
    seen = {}
    for name in sorted(records):
        key = unique_key(records[name])
        if key in seen:
            raise InputError(
                f"runs/attempts/{name}/record.json: content.inspect: eval {key[0]}, sample {key[1]}, "
                f"epoch {key[2]} is also runs/attempts/{seen[key]}: one (eval, sample, epoch) is "
                f"published once"
            )
        seen[key] = name


def published_engine(runs_dir) -> dict:
    """The bundle and manifest sha256 the published index names (runs/index.json `engine`), which an Inspect
    record must name too. A value that is no sha256 names no bundle to compare with (the index's own integrity is
    the runs' verifier's: `make verify`), so it is left out rather than turned into a second error here."""
    try:
        with open(os.path.join(runs_dir, "index.json"), encoding="utf-8") as fh:
            found = json.load(fh).get("engine") or {}
    except (OSError, ValueError, AttributeError):
        found = {}
    found = found if isinstance(found, dict) else {}
    return {
        k: v
        for k, v in found.items()
        if k in ("bundle_sha256", "manifest_sha256") and isinstance(v, str) and HEX64.fullmatch(v)
    }
