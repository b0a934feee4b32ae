"""The engine's part of a run record, and checking a published record.

Builders assemble run records from `engine_fields(execution)` plus what only
the build knows (bundle hashes, command, outputs); the in-browser verifier
re-executes the fixture, recomputes these fields with the same function, and
compares. One function for both, so the two cannot drift.
"""

import json

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


MAX_SHOWN = 300          # characters of a value shown in a mismatch line (the full value is in the record)
MAX_DIFFERENCES = 20


def _shown(value) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + f"... ({len(text)} characters)"


class _Absent:
    pass


_ABSENT = _Absent()


def _at(value, path):
    """The value at a first_difference path ("content.days[3].cash"), or _ABSENT."""
    path = path.split(" (", 1)[0]  # "content.days (length 2 vs 3)" names the list itself
    for part in path.replace("[", ".[").split(".")[1:]:
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(value, list) or index >= len(value):
                return _ABSENT
            value = value[index]
        else:
            if not isinstance(value, dict) or part not in value:
                return _ABSENT
            value = value[part]
    return value


def _hash_or_none(value):
    try:
        return content_sha256(value)
    except (ValueError, UnicodeEncodeError):  # a float, a huge integer or a lone surrogate: not canonical JSON
        return None


def verify_record(record, execution) -> dict:
    """Compare a published run record with a fresh execution of its fixture.

    Every engine field is recomputed; each one that differs is reported with
    its first differing path and the published and computed values there. The
    computed content (the published content with every engine field replaced)
    must hash to the published content_sha256, and so must the published
    content. `computed` and `receipts` are what the engine produced, so a page
    can be checked against them rather than against the record it came from."""
    content = record.get("content") if isinstance(record.get("content"), dict) else {}
    fields = engine_fields(execution)
    computed = dict(content)
    computed.update(fields)
    computed_sha = _hash_or_none(computed)
    published_sha = record.get("content_sha256")
    differences = []
    for key in ENGINE_FIELDS:
        where = first_difference(fields[key], content.get(key, _ABSENT), f"content.{key}")
        if where is not None and len(differences) < MAX_DIFFERENCES:
            differences.append({"field": where.split(" (", 1)[0], "published": _shown(_at(content, where)),
                                "computed": _shown(_at(computed, where))})
    hashes_to_published = _hash_or_none(content) == published_sha
    difference = differences[0]["field"] if differences else None
    if difference is None and not hashes_to_published:
        difference = "content_sha256 (the published content does not hash to it)"
    return {"match": difference is None and computed_sha is not None and computed_sha == published_sha,
            "computed_content_sha256": computed_sha, "published_content_sha256": published_sha,
            "published_content_hashes": hashes_to_published,
            "first_difference": difference, "differences": differences,
            "computed": fields, "receipts": execution.get("receipts", [])}
