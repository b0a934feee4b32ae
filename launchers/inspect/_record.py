"""One re-derived sample as the files of its attempt record (builders/inspect_format.py is the format): the
transcript from the log's messages, the receipts of the desk's finalisation, and the record whose content holds
what fundbook established (the world, moves, receipts, grade, engine) beside what is as logged (the model, the
eval's facts, its usage), with its claims saying which is which."""

import datetime
import hashlib
import json

import engine

from builders import inspect_format as F

from ._replay import Refused

_SAFE = 2**53 - 1
HARNESS, KIND, SPLIT, EXECUTION_PATH, OUTSIDE = F.HARNESS, F.KIND, F.SPLIT, F.EXECUTION_PATH, F.OUTSIDE
RECORD_SCHEMA, TRANSCRIPT_SCHEMA = F.RECORD_SCHEMA, F.TRANSCRIPT_SCHEMA


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json(value, depth=0):
    """A logged value as exact JSON: integers stay (text beyond +-(2^53-1)), other numbers become their text (no
    float is kept); ValueError past engine.MAX_DEPTH levels."""
    if depth > engine.MAX_DEPTH:
        raise ValueError("nested too deeply")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -_SAFE <= value <= _SAFE else str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): _json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v, depth + 1) for v in value]
    if hasattr(value, "model_dump"):
        return _json(value.model_dump(exclude_none=True), depth)
    return str(value)


def transcript(attempt, sample):
    steps, size = [], 0
    for i, m in enumerate(sample.messages):
        step = {"index": i, "role": m.role, "text": m.text}
        if m.role == "assistant":
            step["tool_calls"] = [
                {"id": c.id, "function": c.function, "arguments": _json(c.arguments)} for c in (m.tool_calls or [])
            ]
            step["model"] = m.model
        if m.role == "tool":
            step["function"] = m.function
            step["tool_call_id"] = m.tool_call_id
            step["error"] = None if m.error is None else {"type": m.error.type, "message": m.error.message}
        try:
            size += len(engine.canonical_json(step))
        except (ValueError, TypeError, RecursionError):
            raise Refused(
                "transcript",
                f"message {i}: cannot be kept as JSON text (nested deeper than "
                f"{engine.MAX_DEPTH} levels, or not Unicode text)",
            ) from None
        if size > F.MAX_FILE_BYTES:  # escaping can grow a text sixfold: measured before anything is built
            raise Refused("transcript", f"message {i}: the messages come to over {F.MAX_FILE_BYTES} bytes of JSON")
        steps.append(step)
    return {"schema": TRANSCRIPT_SCHEMA, "attempt_id": attempt, "steps": steps}


def pretty(doc) -> bytes:
    return engine.pretty_json(doc).encode("utf-8")


def _receipts(rec):
    """The receipts of the run's finalisation: the answer of the desk_finalize call the replay made."""
    return json.loads(rec.final)["receipts"]


def files(loaded, facts, sample, fields, env, rec, turns, answered):
    """-> (attempt id, {file name: bytes}) of one re-derived sample; Refused names a value that cannot be kept."""
    log, meta = loaded.log, loaded.meta
    result, source = env.state["result"], env.state["source"]
    model = F.model_parts(log.eval.model)
    try:
        digest = engine.content_sha256(_json(turns))
    except (ValueError, TypeError, RecursionError):
        raise Refused("transcript", "the model turns cannot be kept as JSON text") from None
    attempt = F.attempt_id(model["id"], source["family"], source["seed"], sample.epoch, digest)
    log_sha = hashlib.sha256(loaded.data).hexdigest()
    log_name = f"inspect-log-{log_sha}{loaded.ext}"
    trans_bytes = pretty(transcript(attempt, sample))
    receipts = pretty(
        {
            "schema": F.RECEIPTS_SCHEMA,
            "run_id": attempt,
            "receipts_head": result["receipts_head"],
            "receipts": _receipts(rec),
        }
    )
    ev = log.eval
    logged = {}
    for key, value in (
        ("task_args", ev.task_args),
        ("generate_config", ev.model_generate_config),
        ("limit", sample.limit),
        ("usage", dict(sorted((sample.model_usage or {}).items()))),
    ):
        try:
            logged[key] = _json(value) if value else ({} if key != "limit" else None)
        except (ValueError, RecursionError):
            raise Refused(key, f"the logged {key} is nested deeper than {engine.MAX_DEPTH} levels") from None
    content = {
        "schema_version": F.SCHEMA_VERSION,
        "kind": KIND,
        "harness": HARNESS,
        "label": F.LABEL,
        "attempt_id": attempt,
        "claims": F.claims(),
        "task": {
            "instance_id": result.get("instance_id") or f"{source['family']}/seed-{source['seed']}",
            "family": source["family"],
            "seed": source["seed"],
            "split": SPLIT,
            "fixture_sha256": sample.metadata["fixture_sha256"],
            "horizon": source["horizon"],
        },
        "model": dict(model, answered_as=answered),
        "engine": dict(facts),
        "result": result,
        "receipts_head": result["receipts_head"],
        "moves": len(env.state["moves"]),
        "turns": len(turns),
        "transcript": {"path": "transcript.json", "sha256": hashlib.sha256(trans_bytes).hexdigest()},
        "outputs": {"receipts": {"path": "receipts.json", "sha256": hashlib.sha256(receipts).hexdigest()}},
        "inspect": {
            "version": meta["inspect_version"],
            "task": ev.task,
            "task_version": str(ev.task_version),
            "bundle_sha256": sample.metadata["bundle_sha256"],
            "task_args": logged["task_args"],
            "protocol": fields["protocol"],
            "eval_id": ev.eval_id,
            "run_id": ev.run_id,
            "sample_id": str(sample.id),
            "epoch": sample.epoch,
            "created": meta["created"],
            "model_base_url": ev.model_base_url,
            "generate_config": logged["generate_config"],
            "limit": logged["limit"],
            "usage": logged["usage"],
            "usage_note": OUTSIDE,
            "log": {"path": log_name, "sha256": log_sha, "bytes": len(loaded.data)},
        },
        "execution_path": EXECUTION_PATH,
    }
    for key, value in content.items():  # name the field a value without a canonical form came from
        try:
            engine.canonical_json(value)
        except (ValueError, TypeError, RecursionError):
            raise Refused(f"content.{key}", "a logged value has no canonical JSON form (a lone surrogate?)") from None
    record = {
        "schema": RECORD_SCHEMA,
        "content": content,
        "content_sha256": engine.content_sha256(content),
        "volatile": {"imported": _now()},
    }
    return attempt, {
        "record.json": pretty(record),
        "transcript.json": trans_bytes,
        "receipts.json": receipts,
        log_name: loaded.data,
    }
