"""The one rule (builders/counting.py) applied to a publication's attempts: which attempt counts for each
agent's world and what it scores, computed once and read by every page that shows an attempt's number (the
leaderboard and leaderboard.json, Attempts, each transcript, the Studies page, the decision pages).
"""

from builders import counting
from builders.inspect_format import HARNESS

from .records import SiteInputError


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def is_real_model(content) -> bool:
    """A model attempt by anything but the mock sampler."""
    return _dict(content.get("model")).get("provider") not in (None, "mock")


def model_key(content) -> str:
    model = _dict(content.get("model"))
    provider, model_id = str(model.get("provider", "?")), str(model.get("id", "?"))
    harness = content.get("harness")
    kind = "model" if is_real_model(content) else "machinery"
    return f"{kind}:{provider}:{model_id}" + (f":{harness}" if isinstance(harness, str) and harness else "")


def is_inspect(content) -> bool:
    """An Inspect-imported attempt, asked of its content (harness inspect): no ledger, no termination, no volatile
    start of its own. The one answer for content; for a whole record, builders/inspect_format.py is_inspect_record."""
    return content.get("harness") == HARNESS


def started_of(attempt):
    """When an attempt started: the worker's volatile.started; an Inspect attempt's eval creation time as Inspect
    logged it (content.inspect.created; its volatile part holds only the import time). None if neither."""
    record = _dict(getattr(attempt, "record", None))
    value = _dict(record.get("volatile")).get("started")
    if value is None and is_inspect(_dict(record.get("content"))):
        value = _dict(_dict(record.get("content")).get("inspect")).get("created")
    return value if isinstance(value, str) else None


def end_of(content) -> tuple:
    """(status, reason) of how an attempt ended: the worker's termination; an Inspect attempt is always closed
    and graded by the desk's scorer ("completed"), its reason the limit Inspect stopped the sample at, if any."""
    if is_inspect(content):
        limit = _dict(_dict(content.get("inspect")).get("limit"))
        reason = (
            f"Inspect's {limit.get('type')} limit: {limit.get('reason')}"
            if limit
            else "the model stopped; the desk closed the remaining checkpoints"
        )
        return "completed", reason
    term = _dict(content.get("termination"))
    return term.get("status", "unknown"), term.get("reason") or term.get("limit") or "—"


def inspect_usage(content) -> dict:
    """{tokens_in, tokens_out} an Inspect attempt's log reports (fmt.inspect_usage: the page's cost figure reads it)."""
    from .fmt import inspect_usage as usage

    return usage(content)


def counted_attempts(attempts, group) -> dict:
    """{(group key, world): (the counted attempt, its tries in try order)}: the one rule (builders/counting.py)
    applied to the attempts `group` maps to a key (None leaves an attempt out)."""
    tries = {}
    for attempt in attempts:
        key = group(attempt)
        if key is None:
            continue
        world = counting.world_of(attempt.content, attempt.attempt_id)
        started = started_of(attempt)
        tries.setdefault((key, world), []).append((attempt.attempt_id, started, attempt))
    out = {}
    for k in sorted(tries):
        last, ordered = counting.counted(tries[k])
        out[k] = (last[2], [t[2] for t in ordered])
    return out


def attempt_score(attempt) -> dict:
    """An attempt's score by the one rule (counting.score), a world the engine cannot rebuild refused."""
    try:
        return counting.score(attempt.content, attempt.attempt_id)
    except counting.CountingError as exc:
        raise SiteInputError(f"runs/attempts/{attempt.attempt_id}/record.json: {exc}") from None


def counting_map(pub) -> dict:
    """{attempt id: how the one rule (builders/counting.py) counts it}: its world, its try number of how many,
    the attempt that counts for the world and, for that one, its score (computed once a publication)."""
    cached = getattr(pub, "_counting", None)
    if cached is not None:
        return cached
    out = {}
    groups = counted_attempts(getattr(pub, "attempts", None) or [], lambda a: model_key(a.content))
    for (agent, world), (counted, tries) in groups.items():
        got = attempt_score(counted)
        for number, attempt in enumerate(tries, 1):
            out[attempt.attempt_id] = {
                "world": world,
                "agent": agent,
                "try": number,
                "tries": len(tries),
                "counted": attempt is counted,
                "counted_id": counted.attempt_id,
                "score": got if attempt is counted else None,
                "tries_ids": [t.attempt_id for t in tries],
            }
    try:
        pub._counting = out
    except AttributeError:
        pass
    return out


_policy_points = {}


def policy_points(task, policy):
    """A scripted policy's points on an attempt's world, graded by the engine now (None: not a family world the
    engine can rebuild)."""
    import engine

    key = (str(task.get("family")), str(task.get("seed")), str(task.get("horizon")), policy)
    if key not in _policy_points:
        try:
            instance = engine.generate(task.get("family"), task.get("seed"))
            horizon = task.get("horizon")
            if isinstance(horizon, int) and not isinstance(horizon, bool) and horizon != instance["horizon"]:
                instance = engine.with_horizon(instance, horizon)
            if task.get("fixture_sha256") not in (None, engine.fixture_sha256(instance)):
                raise ValueError("another world")
            result = engine.grade_candidate(engine.policy_candidate(instance, policy), instance)
            score = _dict(result.get("score")).get("points")
            _policy_points[key] = score if result.get("status") == "SCORED" else 0
        except (ValueError, TypeError, KeyError, engine.DeskError):
            _policy_points[key] = None
    return _policy_points[key]
