"""A practitioner attempt record, from a checked submission and its re-execution.

    runs/practitioners/<attempt_id>/record.json      schema fundbook.practitioner/1
                                    receipts.json    the receipts the bundle wrote
                                    submission.json  the submission, as canonical pretty JSON

Every content field is a function of the submission and the re-execution
(nothing of the host, nothing of the clock of the import): importing the
same file again gives the same bytes, and the browser's verify rebuilds the
content from the same two (site/assets/desk/practitioner.js `expectedContent`,
kept in step with `content` here). Times of the import live in `volatile`.
"""

import engine

from . import _protocol as P
from ._execute import EXECUTION_PATH

RECEIPTS_SCHEMA = "fundbook.receipts/1"


def attempt_id(submission) -> str:
    """<participant>-<FAMILY>-seed-<N>-<first 8 hex of the submission's content sha256>: one per session."""
    src = submission["source"]
    return f"{submission['participant']}-{src['family']}-seed-{src['seed']}-{engine.content_sha256(submission)[:8]}"


def folder(attempt) -> str:
    return f"runs/practitioners/{attempt}"


def receipts_doc(attempt, execution) -> dict:
    head = execution["result"]["receipts_head"] if execution["result"] else execution["state"]["head"]
    return {"schema": RECEIPTS_SCHEMA, "run_id": attempt, "receipts_head": head, "receipts": execution["receipts"]}


def file_bytes(doc) -> bytes:
    return engine.pretty_json(doc).encode("utf-8")


def content(submission, execution, engine_facts) -> dict:
    """The hashed part of the record."""
    attempt = attempt_id(submission)
    where = folder(attempt)
    src, clock, term = submission["source"], submission["clock"], submission["termination"]
    state, result = execution["state"], execution["result"]
    receipts = receipts_doc(attempt, execution)
    return {
        "schema_version": P.RECORD_SCHEMA_VERSION,
        "kind": P.KIND,
        "attempt_id": attempt,
        "participant": submission["participant"],
        "cohort": submission["cohort"],
        "task": {
            "instance_id": state["instance_id"],
            "family": src["family"],
            "seed": src["seed"],
            "split": P.SPLIT,
            "fixture_sha256": state["fixture_sha256"],
            "horizon": state["horizon"],
        },
        "engine": dict(engine_facts),
        "desk_build": submission["desk"]["build"],
        "consent": dict(submission["consent"]),
        "affordances": {
            "offered": list(submission["affordances"]["offered"]),
            "used": list(submission["affordances"]["used"]),
        },
        "clock": {
            "per_checkpoint_ms": list(clock["per_checkpoint_ms"]),
            "open_checkpoint_ms": clock["open_checkpoint_ms"],
            "pauses": [dict(p) for p in clock["pauses"]],
            "active_ms": sum(clock["per_checkpoint_ms"]) + clock["open_checkpoint_ms"],
            "paused_ms": sum(p["ms"] for p in clock["pauses"]),
        },
        "termination": dict(term),
        "days": state["days"],
        "result": result,
        "receipts_head": receipts["receipts_head"],
        "outputs": {
            "receipts": {"path": f"{where}/receipts.json", "sha256": engine.sha256_hex(file_bytes(receipts))},
            "submission": {"path": f"{where}/submission.json", "sha256": engine.sha256_hex(file_bytes(submission))},
        },
        "submission_sha256": engine.content_sha256(submission),
        "execution_path": EXECUTION_PATH,
    }


def record(content_part, volatile) -> dict:
    return {
        "schema": P.RECORD_SCHEMA,
        "content": content_part,
        "content_sha256": engine.content_sha256(content_part),
        "volatile": volatile,
    }


def files(submission, execution, engine_facts, volatile) -> tuple:
    """(attempt id, {name: bytes}) of the record's folder."""
    c = content(submission, execution, engine_facts)
    attempt = c["attempt_id"]
    return attempt, {
        "record.json": file_bytes(record(c, volatile)),
        "receipts.json": file_bytes(receipts_doc(attempt, execution)),
        "submission.json": file_bytes(submission),
    }
