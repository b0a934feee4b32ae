"""What was wrong with a run that got no score (MALFORMED or UNSCORABLE).

The run record keeps the engine's status but not its message; the message is
in the engine's result, which the record binds by result_sha256. So the page
re-derives the result from the published input (runs/inputs/<id>.json,
itself bound by outputs.input.sha256) and shows the message only when that
result hashes to the record's result_sha256: then it is, byte for byte, the
message the compiled bundle produced. Grading an unscored candidate stops at
its shape or fixture check, so this costs about a millisecond per run.
"""

import hashlib

import engine

from . import records

UNSCORED = ("MALFORMED", "UNSCORABLE")


def reason(runs_dir, content) -> str | None:
    """The engine's message for an unscored run, or None when it cannot be re-derived to the record's hash."""
    if content.get("status") not in UNSCORED:
        return None
    outputs = content.get("outputs") if isinstance(content.get("outputs"), dict) else {}
    out = outputs.get("input") if isinstance(outputs.get("input"), dict) else {}
    try:
        path = records.resolve_published(runs_dir, out.get("path"), "outputs.input.path")
        data = path.read_bytes()
    except (records.SiteInputError, OSError):
        return None
    if hashlib.sha256(data).hexdigest() != out.get("sha256"):
        return None
    try:
        inputs = records.load_json(path, "outputs.input")
        result = engine.grade_candidate(inputs["candidate"], inputs["instance"])
        if engine.content_sha256(result) != content.get("result_sha256"):
            return None
    except Exception:  # noqa: BLE001 -- an input the engine cannot grade here: the page says so instead
        return None
    message = result.get("error")
    return message if isinstance(message, str) else None
