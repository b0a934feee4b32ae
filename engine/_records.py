"""The engine's part of a run record, and checking a published record.

Builders assemble run records from `engine_fields(execution)` plus what only
the build knows (bundle hashes, command, outputs); the in-browser verifier
re-executes the fixture, recomputes these fields with the same function, and
compares. One function for both, so the two cannot drift.
"""

from ._canon import content_sha256
from ._diff import first_difference

RUN_SCHEMA = "fundbook.run/1"
RUN_SCHEMA_VERSION = 1  # bump when a content field changes meaning

ENGINE_FIELDS = ("run_id", "kind", "fixture", "instance_id", "fixture_sha256", "input_sha256", "status",
                 "verdict", "gates", "score", "days", "economics", "result_sha256", "receipts_head",
                 "expected", "observed", "passed")


def engine_fields(execution) -> dict:
    """Record content fields computed by the engine from `execute_fixture(spec)`."""
    result = execution["result"]
    return {
        "run_id": execution["run_id"],
        "kind": execution["fixture"]["kind"],
        "fixture": execution["fixture"],
        "instance_id": execution["instance_id"],
        "fixture_sha256": execution["fixture_sha256"],
        "input_sha256": execution["input_sha256"],
        "status": result["status"],
        "verdict": result["verdict"],
        "gates": result["gates"],
        "score": result["score"],
        "days": result.get("days", []),
        "economics": result.get("economics"),
        "result_sha256": execution["result_sha256"],
        "receipts_head": execution["receipts_head"],
        "expected": execution["expected"],
        "observed": execution["observed"],
        "passed": execution["passed"],
    }


def verify_record(record, execution) -> dict:
    """Compare a published run record with a fresh execution of its fixture.

    The computed content is the published content with every engine field
    replaced by the recomputed one; it must hash to the published
    content_sha256, and the published content must hash to it too."""
    content = record.get("content", {})
    computed = dict(content)
    computed.update(engine_fields(execution))
    computed_sha = content_sha256(computed)
    published_sha = record.get("content_sha256")
    difference = first_difference(computed, content, "content")
    if difference is None and content_sha256(content) != published_sha:
        difference = "content_sha256 (the published content does not hash to it)"
    return {"match": difference is None and computed_sha == published_sha,
            "computed_content_sha256": computed_sha, "published_content_sha256": published_sha,
            "first_difference": difference}
