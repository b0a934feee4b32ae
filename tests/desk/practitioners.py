"""Practitioner submissions for the tests, made as the desk's study mode makes
them (submission.js), on the host engine: the same session API the desk calls
in the browser (engine._session), so the receipts heads are the ones the
bundle reaches."""

import json
from pathlib import Path

import engine
from engine import _session

from builders.practitioners import OFFERED, SUBMISSION_SCHEMA, bundle_facts, consent_versions

PARTICIPANT = "p-00112233445566aa"


def engine_block(bundle_dir) -> dict:
    return bundle_facts(str(bundle_dir))[1]


def submission(
    bundle_dir,
    family="FUND_01",
    seed=7,
    days=3,
    finalize=False,
    skip=(),
    policy="shortest-cheapest",
    participant=PARTICIPANT,
):
    """A study session over `days` checkpoints (the days in `skip` closed without a batch)."""
    instance = engine.generate(family, seed)
    plan = engine.policy_candidate(instance, policy)["batches"]
    moves = [{"skip": b["day"]} if b["day"] in skip else {"batch": b} for b in plan[:days]]
    source = json.dumps({"family": family, "seed": seed})
    if finalize:
        head = json.loads(_session.desk_finalize(source, json.dumps(moves)))["result"]["receipts_head"]
    else:
        head = json.loads(_session.desk_state(source, json.dumps(moves)))["head"]
    facts = engine_block(bundle_dir)
    return {
        "schema": SUBMISSION_SCHEMA,
        "participant": participant,
        "cohort": "test-cohort",
        "source": {"family": family, "seed": seed},
        "task": {
            "instance_id": instance["instance_id"],
            "fixture_sha256": engine.fixture_sha256(instance),
            "horizon": instance["horizon"],
        },
        "moves": moves,
        "consent": {"version": "1", "sha256": consent_versions()["1"]},
        "clock": {
            "per_checkpoint_ms": [61_000 + i for i in range(days)],
            "open_checkpoint_ms": 1_500,
            "pauses": [{"checkpoint": 2, "ms": 30_000, "reason": "break"}] if days >= 1 else [],
        },
        "affordances": {"offered": list(OFFERED), "used": ["packet", "sources", "tool:project"]},
        "termination": {
            "status": "completed" if finalize else "abandoned",
            "reason": "finalised" if finalize else "out-of-time",
            "checkpoints_submitted": sum(1 for m in moves if "batch" in m),
            "checkpoints_closed": days,
        },
        "desk": {
            "build": "d" * 64,
            **{k: facts[k] for k in ("bundle_sha256", "manifest_sha256", "engine_version", "pyodide_version")},
        },
        "receipts_head": head,
    }


def runs_folder(tmp: Path, bundle_dir) -> Path:
    """A runs folder whose index names the tests' bundle (as runs/index.json names the published one)."""
    runs = tmp / "runs"
    runs.mkdir()
    facts = engine_block(bundle_dir)
    (runs / "index.json").write_text(
        json.dumps({"engine": {k: facts[k] for k in ("bundle_sha256", "manifest_sha256")}})
    )
    return runs


def write(path: Path, doc) -> str:
    """`doc` to `path` (bytes as they are, text as it is, anything else as JSON); the path as text."""
    if isinstance(doc, bytes):
        path.write_bytes(doc)
    elif isinstance(doc, str):
        path.write_text(doc)
    else:
        path.write_text(json.dumps(doc))
    return str(path)
