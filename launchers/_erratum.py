"""The grammar-1 erratum: which days of a published attempt the answer grammar could not let the model tell the truth.

Grammar 1 (launchers/_grammar_v1.py, frozen) typed its breach codes by hand and
missed the engine's SETTLEMENT_FAIL, and could not name an approval opened the
same day. Every attempt decoded under it is re-examined, never rerun: its world
is rebuilt, its accepted batches are replayed day by day through the engine,
and on each day the view the model was shown (rebuilt from the packet, as the
worker built it: compact/1) gives the grammar-1 schema the answer was decoded
under. A day is *inexpressible* when that schema refuses the day's truthful
report (the engine's gold report once the day has settled): no answer the
model could decode could have stated it.

The points withheld are bounded from the grading rubric, not guessed: the
attempt is graded again with the truthful report in place of the model's on
every inexpressible day (its actions unchanged: a report never changes the
book). That is an upper bound: the grammar touched only those days' reports,
and at most the whole of each (a forced wrong breach list may have steered
the rest of that answer). The bound's verdict is given too, since two gates
read reports. Pure: the same records give the same erratum, byte for byte.
"""

import json
import os

import jsonschema

import engine

from . import _desk, _grammar_v1
from ._errors import InputError
from .worker import prompt

GRAMMAR_1 = "fundbook.desk-grammar/1"
SCHEMA = "fundbook.grammar-erratum/1"
DATE = "2026-12-07"  # the day the defect was published as an erratum (a fixed input, never the wall clock)
FINDING = (
    "Grammar 1 listed only BUFFER_BREACH among the breach codes a report could state, while the engine also "
    "books SETTLEMENT_FAIL, and could not name an approval opened the same day: on those days no answer the "
    "model could decode stated the truthful report."
)


def decoded_under_grammar_1(content) -> bool:
    return (content.get("sampling") or {}).get("grammar") == GRAMMAR_1


def _read(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the attempt record ({exc})") from None


def _accepted_by_day(content) -> dict:
    """{day: the batch the desk accepted that day} from the record's proposals (at most one a day)."""
    out = {}
    for p in content.get("proposals") or []:
        if isinstance(p, dict) and p.get("outcome") == "accepted":
            out[p["day"]] = p["batch"]
    return out


def _refusals(schema, report, day) -> list:
    """Every error the schema gives for the day's truthful report (as `path: message`), in path order."""
    errors = jsonschema.Draft202012Validator(schema).iter_errors({"day": day, "actions": [], "report": report})
    found = sorted(f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"[:300] for e in errors)
    return list(dict.fromkeys(found))


def _replay(content, reports=None):
    """(the graded result, or None for an attempt that ended without one, [(day, view, gold report, batch or
    None)] of the days it settled); `reports` {day: report} replaces the accepted batch's report on those days."""
    task = content["task"]
    instance = _desk.world(task["family"], task["seed"], task["horizon"])
    run = engine.Run(instance, content.get("salt"))
    accepted = _accepted_by_day(content)
    graded = content.get("result") is not None
    settled = content.get("settled_days")
    days = []
    while run.open_day is not None and (graded or run.open_day <= (settled or 0)):
        packet = run.packet()
        day = packet["day"]
        view = prompt.view(packet, engine.project(packet, [])["report"], version="compact/1")
        batch = accepted.get(day)
        if batch is None:
            run.skip()
        else:
            run.submit(dict(batch, report=(reports or {}).get(day, batch["report"])))
        days.append((day, view, run.days[-1]["gold_report"], batch))
    return (engine.session.finalize_and_grade(run) if graded else None), days


def attempt_erratum(record_path) -> dict:
    """The erratum entry of one attempt decoded under grammar 1."""
    rec = _read(record_path)
    content = rec["content"]
    result, days = _replay(content)
    recorded = content.get("result") or {}
    if result is not None and (result["status"], result["verdict"], (result["score"] or {}).get("points")) != (
        recorded.get("status"),
        recorded.get("verdict"),
        (recorded.get("score") or {}).get("points"),
    ):
        raise InputError(
            f"{record_path}: content.result: the replayed batches grade to {engine.score_text(result)}, "
            f"the record says {engine.score_text(recorded)}"
        )
    inexpressible = []
    for day, view, gold, batch in days:
        why = _refusals(_grammar_v1.batch_schema(view), gold, day)
        if why:
            inexpressible.append({"day": day, "reasons": why, "batch": "accepted" if batch else "missing"})
    truthful = {
        d["day"]: next(g for day, _, g, _ in days if day == d["day"]) for d in inexpressible if d["batch"] == "accepted"
    }
    entry = {
        "attempt_id": content["attempt_id"],
        "model": content["model"]["id"],
        "world": f"{content['task']['family']}-seed-{content['task']['seed']}",
        "termination": content["termination"]["status"],
        "status": None,
        "verdict": None,
        "points": None,
        "inexpressible_days": inexpressible,
        "bound": None,
    }
    if result is None:  # ended without a result: nothing graded, so no points to bound
        return entry
    bound, _ = _replay(content, truthful) if truthful else (result, None)
    points = result["score"]["points"] if result["score"] else None
    bound_points = bound["score"]["points"] if bound["score"] else None
    return dict(
        entry,
        status=result["status"],
        verdict=result["verdict"],
        points=points,
        bound={
            "points": bound_points,
            "verdict": bound["verdict"],
            "withheld_at_most": None if points is None else bound_points - points,
        },
    )


def erratum(attempts_dir) -> dict:
    """The erratum of every attempt under attempts_dir decoded under grammar 1, in attempt-id order."""
    entries = []
    for name in sorted(os.listdir(attempts_dir)):
        path = os.path.join(attempts_dir, name, "record.json")
        if not os.path.isfile(path):
            continue
        content = _read(path).get("content") or {}
        if decoded_under_grammar_1(content):
            entries.append(attempt_erratum(path))
    affected = [e for e in entries if e["inexpressible_days"]]
    return {
        "schema": SCHEMA,
        "date": DATE,
        "grammar": GRAMMAR_1,
        "finding": FINDING,
        "attempts": entries,
        "summary": {
            "attempts": len(entries),
            "with_inexpressible_days": len(affected),
            "inexpressible_days": sum(len(e["inexpressible_days"]) for e in entries),
            "withheld_at_most": sum((e["bound"] or {}).get("withheld_at_most") or 0 for e in entries),
        },
    }
