"""`fundbook inspect import LOG...` and `fundbook inspect verify`: Inspect logs in, attempt records out.

Import reads each log through Inspect's public API (read_eval_log: .eval and .json alike) and publishes
nothing it cannot re-derive: the log succeeded, nothing in it was invalidated or edited afterwards, it is
this task at this bundle's version, every sample's world is a published world whose fixture sha256 matches,
one model answered throughout; every model turn is replayed through the desk environment (_replay.py) and
every engine call it makes is answered again by the compiled bundle in Pyodide, byte for byte. Only when
every sample of every log passes is anything written: each sample becomes runs/attempts/<id>/ (record.json,
transcript.json, receipts.json as the bundle wrote them, and the original log kept under its sha256), each folder staged beside its place and
renamed into it. Verify imports every published Inspect attempt again from its kept log and compares bytes.
"""

import datetime
import hashlib
import io
import json
import os
import re
import shutil
import stat
import tempfile
import zipfile

import engine
from engine import InputError

from ._env import TASK_NAME, PROTOCOLS, canonical, world_source
from ._replay import Refused, replay

HARNESS = "inspect"
from ._kind import RECORD_SCHEMA
TRANSCRIPT_SCHEMA = "fundbook.inspect-transcript/1"
KIND = "inspect-attempt"
SPLIT = "public-practice"
EXECUTION_PATH = "Inspect log, every engine call re-executed through the compiled bundle in Pyodide"
OUTSIDE = ("usage and cost as Inspect logged them: provenance only, outside fundbook's ledger and claims "
           "(fundbook neither made nor paid these calls)")
RUNNER = "launchers/runner/inspect_calls.mjs"
_WORLD = re.compile(r"(FUND_\d\d)-seed-(\d{1,16})")
# The task version a log names: the engine version and the first 16 hex digits of the bundle the eval ran with.
# That bundle is as logged: every engine answer in the log is re-derived through *this* bundle, byte for byte, so
# a log run before an engine release that changed no answer still imports, and one whose answers differ is refused.
_TASK_VERSION = re.compile(re.escape(engine.ENGINE_VERSION) + r"\+([0-9a-f]{16})")
MAX_LOG_BYTES = 256 * 1024 * 1024
MAX_UNPACKED_BYTES = 2 * 1024 * 1024 * 1024  # what a .eval log's members may unpack to
MAX_MEMBERS = 100_000


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _slug(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "model"


def _json(value):
    """A logged value as exact JSON: integers stay, other numbers become their text (no float is kept)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if hasattr(value, "model_dump"):
        return _json(value.model_dump(exclude_none=True))
    return str(value)


def read_log(path):
    """(EvalLog, bytes) through Inspect's public reader; InputError names the file."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError("inspect-ai is not installed: `make inspect` (or pip install 'fundbook[inspect]')")
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})")
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device would block the read or never end
        raise InputError(f"{path}: not a regular file (an Inspect log file expected)")
    size = info.st_size
    if size > MAX_LOG_BYTES:
        raise InputError(f"{path}: larger than the {MAX_LOG_BYTES}-byte limit for an Inspect log")
    with open(path, "rb") as fh:
        data = fh.read(MAX_LOG_BYTES + 1)
    if len(data) > MAX_LOG_BYTES:  # it grew since the stat
        raise InputError(f"{path}: larger than the {MAX_LOG_BYTES}-byte limit for an Inspect log")
    _unpacked_size(path, data)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # Inspect's reader raises many kinds on a damaged file
        raise InputError(f"{path}: not an Inspect log Inspect can read ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]})")
    return log, data


def _unpacked_size(path, data):
    """A .eval log is a zip: refuse one whose members unpack to more than MAX_UNPACKED_BYTES (a zip bomb would
    exhaust memory in Inspect's reader). Python's zipfile never yields more than a member's declared size, so the
    declared sizes bound what the reader can unpack. A damaged zip is left to Inspect's reader to name."""
    if not data.startswith(b"PK"):
        return
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return
    unpacked = sum(m.file_size for m in members)
    if len(members) > MAX_MEMBERS or unpacked > MAX_UNPACKED_BYTES:
        raise InputError(f"{path}: its {len(members)} zip members unpack to {unpacked} bytes, over the limit for an "
                         f"Inspect log ({MAX_MEMBERS} members, {MAX_UNPACKED_BYTES} bytes)")


def _log_checks(label, log, version):
    def no(check, detail):
        raise InputError(f"{label}: {check}: {detail}")
    if log.status != "success":
        no("status", f"expected success, the log says {log.status}")
    if getattr(log, "invalidated", False):
        no("invalidated", "the log marks samples invalidated")
    if getattr(log, "log_updates", None) or getattr(log, "config_updates", None):
        no("edits", f"the log was edited after the eval ({len(log.log_updates or [])} edit_eval_log update(s), "
                    f"{len(log.config_updates or [])} config update(s)); import the original log")
    if log.eval.task != TASK_NAME:
        no("task", f"expected {TASK_NAME}, got {str(log.eval.task)[:60]!r}")
    if not _TASK_VERSION.fullmatch(str(log.eval.task_version)):
        no("task_version", f"expected {engine.ENGINE_VERSION}+<16 hex digits of a bundle sha256> (this bundle's is "
                           f"{version}), got {str(log.eval.task_version)[:60]!r}")
    protocol = (log.eval.task_args or {}).get("protocol", "tool")
    if protocol not in PROTOCOLS:
        no("task_args.protocol", f"expected one of {', '.join(PROTOCOLS)}, got {str(protocol)[:40]!r}")
    if not log.samples:
        no("samples", "the log holds no samples")
    return protocol


def _sample_source(sample, logged_version, days):
    meta = sample.metadata or {}
    m = _WORLD.fullmatch(str(meta.get("world", "")))
    if not m or m.group(1) not in engine.FAMILIES or str(sample.id) != meta.get("world"):
        raise Refused("world", f"expected a published world FUND_0N-seed-S as the sample id and metadata.world, "
                               f"got id {str(sample.id)[:40]!r}, world {str(meta.get('world'))[:40]!r}")
    family, seed = m.group(1), int(m.group(2))
    source = world_source(family, seed, days)
    if meta.get("source") != source:
        raise Refused("world", f"metadata.source is not the world {meta.get('world')} over {days} days")
    instance = engine.with_horizon(engine.generate(family, seed), days)
    fixture = engine.fixture_sha256(instance)
    if meta.get("fixture_sha256") != fixture:
        raise Refused("fixture_sha256", f"expected {fixture} (the world {meta['world']}), got "
                                        f"{str(meta.get('fixture_sha256'))[:64]}")
    logged = _TASK_VERSION.fullmatch(logged_version).group(1)
    if not (isinstance(meta.get("bundle_sha256"), str) and re.fullmatch(r"[0-9a-f]{64}", meta["bundle_sha256"])
            and meta["bundle_sha256"].startswith(logged)):
        raise Refused("bundle_sha256", f"expected the sha256 of the bundle the task version names ({logged}...), got "
                                       f"{str(meta.get('bundle_sha256'))[:64]}")
    return source, instance


def _model_checks(sample, model):
    if sample.error is not None:
        raise Refused("error", f"the sample ended in an error ({str(sample.error.message)[:80]})")
    used = sorted((sample.model_usage or {}).keys())
    if used and used != [model]:
        raise Refused("model", f"the log's model is {model}, the sample's usage names {', '.join(used)} "
                               f"(a fallback or a second model)")
    answered = sorted({m.model for m in sample.messages if m.role == "assistant" and m.model})
    if len(answered) > 1:
        raise Refused("model", f"the sample's answers come from {len(answered)} models ({', '.join(answered)[:80]})")
    return answered[0] if answered else None


def transcript(attempt, sample):
    steps = []
    for i, m in enumerate(sample.messages):
        step = {"index": i, "role": m.role, "text": m.text}
        if m.role == "assistant":
            step["tool_calls"] = [{"id": c.id, "function": c.function, "arguments": _json(c.arguments)}
                                  for c in (m.tool_calls or [])]
            step["model"] = m.model
        if m.role == "tool":
            step["function"] = m.function
            step["tool_call_id"] = m.tool_call_id
            step["error"] = None if m.error is None else {"type": m.error.type, "message": m.error.message}
        steps.append(step)
    return {"schema": TRANSCRIPT_SCHEMA, "attempt_id": attempt, "steps": steps}


def pretty(doc) -> bytes:
    return engine.pretty_json(doc).encode("utf-8")


def _receipts(rec):
    """The receipts of the run's finalisation: the answer of the desk_finalize call the replay made."""
    final = [json.loads(c["out"]) for c in rec.calls if c["fn"] == "desk_finalize"]
    return final[-1]["receipts"]


def _record_files(label, log, data, sample, protocol, env, rec, turns, answered, facts):
    result = env.state["result"]
    source = env.state["source"]
    model = log.eval.model
    provider, _, name = model.partition("/")
    attempt = f"inspect-{_slug(name or model)}-{sample.id}-{engine.content_sha256(_json(turns))[:8]}"
    log_sha = hashlib.sha256(data).hexdigest()
    ext = ".eval" if data[:2] == b"PK" else ".json"
    log_name = f"inspect-log-{log_sha}{ext}"
    trans = transcript(attempt, sample)
    trans_bytes = pretty(trans)
    receipts = pretty({"schema": "fundbook.receipts/1", "run_id": attempt, "receipts_head": result["receipts_head"],
                       "receipts": _receipts(rec)})
    usage = {k: _json(v) for k, v in sorted((sample.model_usage or {}).items())}
    content = {
        "schema_version": 1,
        "kind": KIND,
        "harness": HARNESS,
        "label": "model",
        "attempt_id": attempt,
        "task": {"instance_id": result.get("instance_id") or f"{source['family']}/seed-{source['seed']}",
                 "family": source["family"], "seed": source["seed"], "split": SPLIT,
                 "fixture_sha256": sample.metadata["fixture_sha256"], "horizon": source["horizon"]},
        "model": {"id": name or model, "provider": provider if name else None, "as_logged": model,
                  "answered_as": answered},
        "engine": dict(facts),
        "result": result,
        "receipts_head": result["receipts_head"],
        "moves": len(env.state["moves"]),
        "turns": len(turns),
        "transcript": {"path": "transcript.json", "sha256": hashlib.sha256(trans_bytes).hexdigest()},
        "outputs": {"receipts": {"path": "receipts.json", "sha256": hashlib.sha256(receipts).hexdigest()}},
        "inspect": {
            "version": log.eval.packages.get("inspect_ai"),
            "task": log.eval.task, "task_version": str(log.eval.task_version),
            "task_args": _json(log.eval.task_args), "protocol": protocol,
            "eval_id": log.eval.eval_id, "run_id": log.eval.run_id, "sample_id": str(sample.id),
            "epoch": sample.epoch, "created": str(log.eval.created),
            "model_base_url": log.eval.model_base_url, "generate_config": _json(log.eval.model_generate_config),
            "limit": _json(sample.limit) if sample.limit else None,
            "usage": usage, "usage_note": OUTSIDE,
            "log": {"path": log_name, "sha256": log_sha, "bytes": len(data)},
        },
        "execution_path": EXECUTION_PATH,
    }
    record = {"schema": RECORD_SCHEMA, "content": content, "content_sha256": engine.content_sha256(content),
              "volatile": {"imported": _now()}}
    return attempt, {"record.json": pretty(record), "transcript.json": trans_bytes, "receipts.json": receipts,
                     log_name: data}


def _bundle(bundle_dir, runs_dir):
    from builders.practitioners import bundle_facts
    from builders._errors import BuildError
    try:
        return bundle_facts(bundle_dir, runs_dir)
    except BuildError as exc:
        raise InputError(exc.format_message())


def _pyodide_answers(bundle, per_sample, session=None):
    """[[{"fn", "args"}]] -> [[answer text]] from the bundle in Pyodide."""
    from builders._errors import BuildError
    from builders._files import rel
    from builders._session import own_session
    text = "".join(json.dumps([{"fn": c["fn"], "args": c["args"]} for c in calls], separators=(",", ":")) + "\n"
                   for calls in per_sample)
    try:
        with own_session(session) as runtime:
            _, events = runtime.request("inspect_calls", module=RUNNER, bundle=rel(bundle["zip_path"]),
                                        bundle_sha256=bundle["bundle_sha256"], manifest=rel(bundle["manifest_path"]),
                                        samples=text, samples_sha256=engine.sha256_hex(text.encode()))
    except BuildError as exc:
        raise InputError(exc.format_message())
    done = [e for e in events if e.get("event") == "sample"]
    if len(done) != len(per_sample):
        raise InputError(f"{RUNNER}: answered {len(done)} samples of {len(per_sample)}")
    return [e["answers"] for e in done]


def prepare(paths, runs_dir="runs", bundle_dir="build/engine", session=None):
    """Check and re-execute every log; -> [(label, sample id, attempt id, {name: bytes}, moves)], nothing written.
    InputError names the log, the sample and the check at the first failure."""
    from ._version import task_version
    bundle, facts = _bundle(bundle_dir, runs_dir)
    try:
        version, _ = task_version(bundle_dir)
    except ValueError as exc:
        raise InputError(str(exc))
    checked = []
    for path in paths:
        label = str(path)
        log, data = read_log(path)
        protocol = _log_checks(label, log, version)
        days = (log.eval.task_args or {}).get("days", 20)
        for sample in log.samples:
            try:
                source, _ = _sample_source(sample, str(log.eval.task_version), days)
                answered = _model_checks(sample, log.eval.model)
                env, rec, turns = replay(sample, protocol, source)
            except Refused as exc:
                raise InputError(f"{label}: sample {str(sample.id)[:40]}: {exc}")
            checked.append((label, log, data, sample, protocol, env, rec, turns, answered))
    answers = _pyodide_answers(bundle, [c[6].calls for c in checked], session) if checked else []
    planned, seen = [], {}
    for (label, log, data, sample, protocol, env, rec, turns, answered), got in zip(checked, answers):
        for k, (call, answer) in enumerate(zip(rec.calls, got)):
            if answer != call["out"]:
                raise InputError(f"{label}: sample {sample.id}: bundle re-execution: engine call {k} ({call['fn']}) "
                                 f"answers differently in the compiled bundle under Pyodide than on this host")
        attempt, blobs = _record_files(label, log, data, sample, protocol, env, rec, turns, answered, facts)
        if attempt in seen:
            raise InputError(f"{label}: sample {sample.id}: the same attempt as {seen[attempt]} ({attempt})")
        seen[attempt] = f"{label} sample {sample.id}"
        planned.append((label, str(sample.id), attempt, blobs, env.state["moves"]))
    return planned


def _same(folder, blobs):
    for name, data in blobs.items():
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            return False
        with open(path, "rb") as fh:
            have = fh.read()
        if name == "record.json":
            if json.loads(have).get("content") != json.loads(data)["content"]:
                return False
        elif have != data:
            return False
    return True


def import_logs(paths, attempts_dir="runs/attempts", runs_dir="runs", bundle_dir="build/engine", session=None):
    """Import every log or none; -> [{"log", "sample", "attempt_id", "status", "record", "result"}]."""
    planned = prepare(paths, runs_dir, bundle_dir, session)
    os.makedirs(attempts_dir, exist_ok=True)
    out, staged = [], []
    for label, sample, attempt, blobs, _ in planned:
        folder = os.path.join(attempts_dir, attempt)
        if os.path.exists(folder):
            if not _same(folder, blobs):
                raise InputError(f"{label}: sample {sample}: {folder} holds another record under this attempt id")
            status = "unchanged"
        else:
            status = "new"
        out.append({"log": label, "sample": sample, "attempt_id": attempt, "status": status,
                    "record": os.path.join(folder, "record.json"),
                    "result": json.loads(blobs["record.json"])["content"]["result"]})
        if status == "new":
            staged.append((folder, blobs))
    done = []
    try:
        for folder, blobs in staged:  # every folder written beside its place, then renamed in
            tmp = tempfile.mkdtemp(prefix=".inspect-import-", dir=attempts_dir)
            for name, data in blobs.items():
                with open(os.path.join(tmp, name), "wb") as fh:
                    fh.write(data)
            done.append((tmp, folder))
        for tmp, folder in done:
            os.rename(tmp, folder)
    except OSError as exc:
        for tmp, folder in done:
            shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(f"{attempts_dir}: cannot write the records ({exc.strerror or exc}); nothing imported")
    return out


def inspect_folders(attempts_dir):
    """Attempt folders whose record is an Inspect record (harness inspect)."""
    out = []
    if not os.path.isdir(attempts_dir):
        return out
    for name in sorted(os.listdir(attempts_dir)):
        path = os.path.join(attempts_dir, name, "record.json")
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as fh:
                rec = json.load(fh)
        except (OSError, ValueError):
            continue
        if isinstance(rec, dict) and rec.get("schema") == RECORD_SCHEMA:
            out.append(name)
    return out


def verify(attempts_dir="runs/attempts", runs_dir="runs", bundle_dir="build/engine", session=None):
    """-> [(attempt, [problems])]: each Inspect attempt imported again from its kept log, compared byte for byte."""
    found = []
    for name in inspect_folders(attempts_dir):
        folder = os.path.join(attempts_dir, name)
        problems = []
        with open(os.path.join(folder, "record.json"), encoding="utf-8") as fh:
            rec = json.load(fh)
        content = rec.get("content") or {}
        log = (content.get("inspect") or {}).get("log") or {}
        log_path = os.path.join(folder, str(log.get("path")))
        if not os.path.isfile(log_path):
            found.append((name, [f"{folder}: the kept Inspect log {log.get('path')} is missing"]))
            continue
        with open(log_path, "rb") as fh:
            if hashlib.sha256(fh.read()).hexdigest() != log.get("sha256"):
                problems.append(f"{log_path}: sha256 differs from record content.inspect.log.sha256")
        if rec.get("content_sha256") != engine.content_sha256(content):
            problems.append(f"{folder}/record.json: content_sha256 is not the content's")
        try:
            planned = prepare([log_path], runs_dir, bundle_dir, session)
        except InputError as exc:
            found.append((name, problems + [f"{folder}: re-import refused: {exc.message}"]))
            continue
        mine = [p[3] for p in planned if p[2] == name]
        if not mine:
            problems.append(f"{folder}: no sample of its kept log re-imports as {name}")
        else:
            blobs = mine[0]
            rebuilt = json.loads(blobs["record.json"])["content"]
            where = engine.first_difference(rebuilt, content, "content")
            if where:
                problems.append(f"{folder}/record.json: {where} differs from the re-import")
            for fname in sorted(set(blobs) - {"record.json"}):
                path = os.path.join(folder, fname)
                if not os.path.isfile(path) or open(path, "rb").read() != blobs[fname]:
                    problems.append(f"{folder}/{fname}: differs byte for byte from the re-import")
            extra = sorted(set(os.listdir(folder)) - set(blobs))
            if extra:
                problems.append(f"{folder}: {extra[0]} is not part of the record")
        found.append((name, problems))
    return found
