"""`fundbook inspect import` and `fundbook inspect verify`: Inspect logs in, attempt records out.

Import reads each log within hard limits (_read.py: every member of any compression decompressed in bounded
steps, credentials removed from the kept bytes) through Inspect's public reader, and publishes nothing it cannot
re-derive: the log succeeded, nothing in it was invalidated, edited afterwards or answered by a fallback, it is
this task with task arguments of the task's own types, every sample's world is a published world whose fixture
sha256 matches; every model turn is replayed through the desk environment (_replay.py) and every engine call it
makes is answered again by the compiled bundle in Pyodide, byte for byte; the score, its explanation, the
header's metric, the reductions and the sample summaries are the engine's grade. The record says which of its
fields fundbook established that way and which are only as logged (builders/inspect_format.py CLAIMS), and it
must pass the build's own check (builders/inspect_records.py) before anything is written. One (eval id, sample
id, epoch) imports once. Only when every sample of every log passes is anything written: each sample becomes
runs/attempts/<id>/ (record.json, transcript.json, receipts.json as the bundle wrote them, and the log kept
under its sha256), each folder staged beside its place and renamed into it. Verify imports every published
Inspect attempt again from its kept log and compares bytes.
"""

import hashlib
import json
import os
import shutil
import tempfile

import engine
from engine import read_limited, shown

from .._errors import InputError  # the launcher's: also the engine's InputError

from builders import inspect_format as F
from builders import inspect_records as R

from . import _checks, _header, _record
from ._read import read_log
from ._replay import Refused, replay

HARNESS, KIND, SPLIT, EXECUTION_PATH, OUTSIDE = F.HARNESS, F.KIND, F.SPLIT, F.EXECUTION_PATH, F.OUTSIDE
RECORD_SCHEMA, TRANSCRIPT_SCHEMA = F.RECORD_SCHEMA, F.TRANSCRIPT_SCHEMA
MAX_LOG_BYTES, MAX_UNPACKED_BYTES, MAX_MEMBERS = F.MAX_LOG_BYTES, F.MAX_UNPACKED_BYTES, F.MAX_MEMBERS
RUNNER = "launchers/runner/inspect_calls.mjs"
transcript, pretty = _record.transcript, _record.pretty


def _bundle(bundle_dir, runs_dir):
    from builders.practitioners import bundle_facts
    from builders import BuildError

    try:
        return bundle_facts(bundle_dir, runs_dir)
    except BuildError as exc:
        raise InputError(exc.format_message())


def _pyodide_answers(bundle, lines, runtime):
    """[JSON line of calls] -> [[sha256 of each answer]] from the bundle in Pyodide (one request of them all)."""
    from builders import BuildError
    from builders import rel

    text = "".join(line + "\n" for line in lines)
    try:
        _, events = runtime.request(
            "inspect_calls",
            module=RUNNER,
            bundle=rel(bundle["zip_path"]),
            bundle_sha256=bundle["bundle_sha256"],
            manifest=rel(bundle["manifest_path"]),
            samples=text,
            samples_sha256=engine.sha256_hex(text.encode()),
        )
    except BuildError as exc:
        raise InputError(exc.format_message())
    done = [e for e in events if e.get("event") == "sample"]
    if len(done) != len(lines):
        raise InputError(f"{RUNNER}: answered {len(done)} lines of calls of {len(lines)}")
    return [e["answers"] for e in done]


class _Loaded:
    """One log as read (_read.py) and checked as a whole."""

    def __init__(self, label, path, version):
        from ._read import extension

        self.label = label
        self.log, self.data, self.entries = read_log(path)
        self.ext = extension(path)
        self.meta = _checks.log_checks(label, self.log, version)


LINE_CHARS = 1024 * 1024  # distinct argument text a line of calls sends to Pyodide
CHUNK_CHARS = 8 * 1024 * 1024  # ... and a request (the samples replayed since the last one)


def prepare(paths, runs_dir="runs", bundle_dir="build/engine", session=None):
    """Check and re-execute every log; -> [(label, sample id, attempt id, {name: bytes}, moves)], nothing written.
    InputError names the log, the sample and the check at the first failure. Samples are replayed on the host and
    their calls answered by the bundle a chunk at a time, so memory holds one chunk of calls, not a log's."""
    from builders import own_session
    from ._version import task_version

    bundle, facts = _bundle(bundle_dir, runs_dir)
    try:
        version, _ = task_version(bundle_dir)
    except ValueError as exc:
        raise InputError(str(exc))
    published = R.published_engine(runs_dir)
    planned, seen, pending = [], {}, []

    def flush(runtime):
        lines = [(n, line, digests) for n, item in enumerate(pending) for line, digests in item[3].lines(LINE_CHARS)]
        answers = _pyodide_answers(bundle, [line for _, line, _ in lines], runtime) if lines else []
        got = {}
        for (n, _, _), digests in zip(lines, answers):
            got.setdefault(n, []).extend(digests)
        for n, (loaded, sample, env, rec, turns, answered) in enumerate(pending):
            where = f"{loaded.label}: sample {_checks.sid(sample)}"
            for k, (call, answer) in enumerate(zip(rec.calls, got.get(n, []))):
                if answer != call[2]:
                    raise InputError(
                        f"{where}: bundle re-execution: engine call {k} ({call[0]}) answers differently "
                        f"in the compiled bundle under Pyodide than on this host"
                    )
            try:
                attempt, blobs = _record.files(loaded, facts, sample, loaded.meta["args"], env, rec, turns, answered)
            except Refused as exc:
                raise InputError(f"{where}: {exc}")
            try:  # the build's own check, on exactly the bytes about to be written
                R.check_files(attempt, blobs, published, facts["bundle_sha256"])
            except engine.InputError as exc:
                raise InputError(f"{where}: the record would fail the build's check ({exc.message})")
            key = (loaded.log.eval.eval_id, str(sample.id), sample.epoch)
            if key in seen:
                raise InputError(
                    f"{where}: eval {key[0]}, sample {key[1]}, epoch {key[2]} is also {seen[key]}: one "
                    f"(eval, sample, epoch) imports once"
                )
            seen[key] = f"{loaded.label} sample {_checks.sid(sample)}"
            planned.append((loaded.label, str(sample.id), attempt, blobs, env.state["moves"]))
        pending.clear()

    with own_session(session) as runtime:
        for path in paths:
            label = str(path)
            loaded = _Loaded(label, path, version)
            args, values, calls = loaded.meta["args"], {}, 0
            for sample in loaded.log.samples:
                try:
                    source = _checks.sample_source(sample, str(loaded.log.eval.task_version), args["days"])
                    answered = _checks.sample_checks(sample, loaded.log.eval.model, args)
                    env, rec, turns = replay(sample, args["protocol"], source)
                except Refused as exc:
                    raise InputError(f"{label}: sample {_checks.sid(sample)}: {exc}")
                key = (str(sample.id), sample.epoch)
                if key in values:
                    raise InputError(f"{label}: sample {_checks.sid(sample)}, epoch {sample.epoch}: twice in the log")
                calls += len(rec.calls)
                if calls > F.MAX_ENGINE_CALLS:
                    raise InputError(
                        f"{label}: sample {_checks.sid(sample)}: the log's model turns make over "
                        f"{F.MAX_ENGINE_CALLS} engine calls (split the eval into several logs)"
                    )
                values[key] = env.state["result"]["score"]["points"] if env.state["result"].get("score") else 0
                pending.append((loaded, sample, env, rec, turns, answered))
                if sum(p[3].size for p in pending) > CHUNK_CHARS:
                    flush(runtime)
            _header.header_checks(
                label, loaded.log, values, _header.summaries(label, loaded) if loaded.ext == ".eval" else []
            )
            flush(runtime)  # this log's samples answered and recorded before the next log is read
    return planned


def _bytes(path, limit):
    """At most limit + 1 bytes of a regular file (None when it is not one): never more than what is compared."""
    if not os.path.isfile(path):
        return None
    try:
        return read_limited(path, limit)
    except OSError:
        return None


def _same(folder, blobs):
    for name, data in blobs.items():
        have = _bytes(os.path.join(folder, name), len(data) + 1)
        if have is None:
            return False
        if name == "record.json":
            try:
                if json.loads(have).get("content") != json.loads(data)["content"]:
                    return False
            except (ValueError, AttributeError, RecursionError):
                return False
        elif have != data:
            return False
    return True


def published_keys(attempts_dir) -> dict:
    """{(eval id, sample id, epoch): attempt id} of the Inspect records already under attempts_dir."""
    from ._kind import read_record

    out = {}
    for name in inspect_folders(attempts_dir):
        try:
            out[R.unique_key(read_record(os.path.join(attempts_dir, name, "record.json"))["content"])] = name
        except (KeyError, TypeError):
            continue  # a record that cannot be read: the build's check names it
    return out


def import_logs(paths, attempts_dir="runs/attempts", runs_dir="runs", bundle_dir="build/engine", session=None):
    """Import every log or none; -> [{"log", "sample", "attempt_id", "status", "record", "result"}]."""
    planned = prepare(paths, runs_dir, bundle_dir, session)
    have = published_keys(attempts_dir)
    out, staged = [], []
    for label, sample, attempt, blobs, _ in planned:
        folder = os.path.join(attempts_dir, attempt)
        content = json.loads(blobs["record.json"])["content"]
        key = R.unique_key(content)
        if have.get(key, attempt) != attempt:
            raise InputError(
                f"{label}: sample {sample}: eval {key[0]}, sample {key[1]}, epoch {key[2]} is already "
                f"published as {os.path.join(attempts_dir, have[key])} with other content: one (eval, "
                f"sample, epoch) imports once"
            )
        if os.path.exists(folder):
            if not _same(folder, blobs):
                raise InputError(f"{label}: sample {sample}: {folder} holds another record under this attempt id")
            status = "unchanged"
        else:
            status = "new"
        out.append(
            {
                "log": label,
                "sample": sample,
                "attempt_id": attempt,
                "status": status,
                "record": os.path.join(folder, "record.json"),
                "result": content["result"],
            }
        )
        if status == "new":
            staged.append((folder, blobs))
    os.makedirs(attempts_dir, exist_ok=True)
    done = []
    try:
        for folder, blobs in staged:  # every folder written beside its place, then renamed in
            tmp = tempfile.mkdtemp(prefix=".inspect-import-", dir=attempts_dir)
            done.append((tmp, folder))
            for name, data in blobs.items():
                with open(os.path.join(tmp, name), "wb") as fh:
                    fh.write(data)
        for tmp, folder in done:
            os.rename(tmp, folder)
    except OSError as exc:
        for tmp, folder in done:
            shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(f"{attempts_dir}: cannot write the records ({exc.strerror or exc}); nothing imported")
    return out


def inspect_folders(attempts_dir):
    """Attempt folders whose record is an Inspect record (harness inspect)."""
    from ._kind import is_inspect_record

    if not os.path.isdir(attempts_dir):
        return []
    return [
        name
        for name in sorted(os.listdir(attempts_dir))
        if is_inspect_record(os.path.join(attempts_dir, name, "record.json"))
    ]


def verify(attempts_dir="runs/attempts", runs_dir="runs", bundle_dir="build/engine", session=None):
    """-> [(attempt, [problems])]: each Inspect attempt imported again from its kept log, compared byte for byte
    (each distinct kept log re-imported once); two records of one (eval, sample, epoch) named."""
    found, keys, imported = [], {}, {}
    for name in inspect_folders(attempts_dir):
        folder = os.path.join(attempts_dir, name)
        problems = []
        from ._kind import read_record

        try:
            rec = read_record(os.path.join(folder, "record.json"))
            content = rec["content"]
            log = content["inspect"]["log"]
            if not isinstance(log, dict) or not isinstance(log.get("path"), str):
                raise TypeError
        except (KeyError, TypeError):
            found.append(
                (
                    name,
                    [
                        f"{folder}/record.json: not an Inspect record the import writes (content.inspect.log "
                        f"names no kept log)"
                    ],
                )
            )
            continue
        log_path = os.path.join(folder, os.path.basename(log["path"]))
        if not os.path.isfile(log_path):
            found.append((name, [f"{folder}: the kept Inspect log {shown(log['path'])} is missing"]))
            continue
        if os.path.getsize(log_path) > F.MAX_LOG_BYTES:
            digest = log_path  # never hashed: its re-import names the limit
        else:
            with open(log_path, "rb") as fh:
                digest = hashlib.file_digest(fh, "sha256").hexdigest()
        if digest not in imported:  # the same kept bytes re-import to the same records: once
            try:
                imported[digest] = prepare([log_path], runs_dir, bundle_dir, session)
            except engine.InputError as exc:
                imported[digest] = exc
        planned = imported[digest]
        if isinstance(planned, engine.InputError):
            found.append((name, [f"{folder}: re-import refused: {planned.message}"]))
            continue
        mine = [p[3] for p in planned if p[2] == name]
        if not mine:
            problems.append(f"{folder}: no sample of its kept log re-imports as {name}")
        else:
            blobs = mine[0]
            rebuilt = json.loads(blobs["record.json"])
            where = engine.first_difference(rebuilt["content"], content, "content")
            if where:
                problems.append(f"{folder}/record.json: {where} differs from the re-import")
            if rec.get("content_sha256") != rebuilt["content_sha256"] or rec.get("schema") != rebuilt["schema"]:
                problems.append(f"{folder}/record.json: its schema or content_sha256 is not the re-import's")
            for fname in sorted(set(blobs) - {"record.json"}):
                if _bytes(os.path.join(folder, fname), len(blobs[fname]) + 1) != blobs[fname]:
                    problems.append(f"{folder}/{fname}: differs byte for byte from the re-import")
            extra = sorted(set(os.listdir(folder)) - set(blobs))
            if extra:
                problems.append(f"{folder}: {extra[0]} is not part of the record")
            key = R.unique_key(rebuilt["content"])
            if key in keys:
                problems.append(
                    f"{folder}: eval {key[0]}, sample {key[1]}, epoch {key[2]} is also "
                    f"{os.path.join(attempts_dir, keys[key])}: one (eval, sample, epoch) is published once"
                )
            keys[key] = name
        found.append((name, problems))
    return found
