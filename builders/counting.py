"""Which attempt counts for a world, and what it scores: the one rule, written
once, used by the study's model arm (experiments/arm_model.py), the
leaderboard, the Attempts register, each transcript and the decision pages.

An agent's tries of one world are its attempts on that world (the same
`task.instance_id`), in try order: the try number the attempt id carries
(`NAME.2` is the second try of NAME; none is the first), then its start,
then its id. An attempt stopped by the operator or by a host failure is kept
and the world tried once more, at most MAX_TRIES times; **the last try
counts, whatever its end**. A counted attempt that ended without a result
(interrupted, recovered, stopped for good) scores what the engine grades for
the batches the desk accepted from it, none if it accepted none: the same
grading every arm of a sweep gets, so an empty run scores what doing nothing
with its book scores here (world 20 of the SmolLM2 study: 9).
"""

import re

import engine

RETRY_ENDS = ("operator", "infrastructure_interruption")  # not the agent's doing: the world is tried once more
MAX_TRIES = 2
RULE = (
    "One attempt counts for each world: the last try, whatever its end (an attempt stopped by the operator "
    "or by a host failure is kept and the world tried once more). A counted attempt that ended without a "
    "result scores what the engine grades for the batches the desk accepted from it (none, if it accepted "
    "none)."
)
RULE_SOURCE = "builders/counting.py"
_TRY = re.compile(r"\.([2-9][0-9]*)$")


class CountingError(ValueError):
    """An attempt whose world the engine cannot rebuild (the message names the attempt and the field)."""


def retry_due(end_status) -> bool:
    """Whether an attempt that ended so leaves its world one more try."""
    return end_status in RETRY_ENDS


def try_number(attempt_id) -> int:
    m = _TRY.search(str(attempt_id))
    return int(m.group(1)) if m else 1


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def world_of(content, fallback="") -> str:
    task = _dict(content.get("task"))
    if isinstance(task.get("instance_id"), str) and task["instance_id"]:
        return task["instance_id"]
    if isinstance(task.get("family"), str) and isinstance(task.get("seed"), int):
        return f"{task['family']}/seed-{task['seed']}"  # the engine's instance id of a family world
    if isinstance(task.get("fixture_sha256"), str) and task["fixture_sha256"]:
        return task["fixture_sha256"]
    return str(fallback)


def try_order(attempt_id, started) -> tuple:
    return (try_number(attempt_id), started if isinstance(started, str) else "", str(attempt_id))


def counted(tries):
    """The counted one of one world's tries [(attempt_id, started, item)], and the tries in try order."""
    ordered = sorted(tries, key=lambda t: try_order(t[0], t[1]))
    return ordered[-1], ordered


_graded = {}


def engine_grade(content, attempt_id="") -> dict:
    """The engine's result for the batches the desk accepted from an attempt (its task's world rebuilt)."""
    task = _dict(content.get("task"))
    family, seed, horizon = task.get("family"), task.get("seed"), task.get("horizon")
    batches = [
        p.get("batch") for p in content.get("proposals") or [] if isinstance(p, dict) and p.get("outcome") == "accepted"
    ]
    key = (str(family), str(seed), str(horizon), engine.content_sha256(batches) if _canonical(batches) else None)
    if key[3] is None:
        raise CountingError(f"attempt {attempt_id}: proposals: an accepted batch is not canonical JSON")
    if key not in _graded:
        try:
            instance = engine.generate(family, seed)
            if isinstance(horizon, int) and not isinstance(horizon, bool) and horizon != instance["horizon"]:
                instance = engine.with_horizon(instance, horizon)
            fixture = engine.fixture_sha256(instance)
        except (ValueError, TypeError, KeyError, engine.DeskError) as exc:
            raise CountingError(
                f"attempt {attempt_id}: task: the engine cannot rebuild its world ({type(exc).__name__}: {exc})"
            )
        if task.get("fixture_sha256") not in (None, fixture):
            raise CountingError(
                f"attempt {attempt_id}: task.fixture_sha256: expected {fixture} (the world "
                f"{family} seed {seed}), got {task.get('fixture_sha256')!r}"
            )
        candidate = {
            "format": 1,
            "fixture_sha256": fixture,
            "instance_id": str(task.get("instance_id") or ""),
            "label": str(attempt_id),
            "batches": batches,
        }
        _graded[key] = engine.grade_candidate(candidate, instance)
    return _graded[key]


def _canonical(value) -> bool:
    try:
        engine.content_sha256(value)
        return True
    except (ValueError, TypeError, RecursionError):
        return False


def score(content, attempt_id="") -> dict:
    """What an attempt scores when it counts: {status, verdict, points, qualified, source}; `source` is
    "record" (the result the attempt recorded) or "engine" (no result: its accepted batches graded)."""
    result = content.get("result")
    source = "record"
    if not isinstance(result, dict) or not isinstance(result.get("status"), str):
        result, source = engine_grade(content, attempt_id), "engine"
    points = _dict(result.get("score")).get("points")
    scored = result.get("status") == "SCORED"
    return {
        "status": result.get("status"),
        "verdict": result.get("verdict"),
        "points": points if scored and isinstance(points, int) and not isinstance(points, bool) else 0,
        "qualified": scored and result.get("verdict") == "QUALIFIED",
        "source": source,
        "gates": [g.get("gate") for g in result.get("gates") or [] if isinstance(g, dict) and g.get("passed") is False],
    }
