"""Re-deriving one Inspect sample: every model turn the log holds is fed to a fresh desk environment
(launchers/inspect/_env.py, the engine on the host), in order; everything the log says came back (the
system prompt, the packet of the first message, each tool result, each ToolError, the score) must be
exactly what the environment gives. The engine calls made on the way are kept (Recorder) for the bundle
to answer again in Pyodide (_import.py). Only Inspect's public log types are read."""

import json

import engine

from ._env import TEXT_SYSTEM, TOOL_SYSTEM, DeskEnv, ProtocolError, Recorder, canonical, grade

SCORER = "desk_grade"


class Refused(Exception):
    """A sample that fails a check: str() is "<check>: <detail>"."""

    def __init__(self, check, detail):
        super().__init__(f"{check}: {detail}")
        self.check = check


def _q(text) -> str:
    """A text from the log on one ASCII line (json-escaped: no newline, control or bidi character survives)."""
    return json.dumps(text, ensure_ascii=True)


def difference(logged, expected, width=30) -> str:
    """Where two texts first differ: the offset, and each text around it (`width` characters either side), so a
    refusal shows the bytes that differ rather than a prefix both share."""
    logged = logged if isinstance(logged, str) else json.dumps(logged, sort_keys=True, default=str)
    expected = expected if isinstance(expected, str) else json.dumps(expected, sort_keys=True, default=str)
    n = next((i for i, (a, b) in enumerate(zip(logged, expected)) if a != b), min(len(logged), len(expected)))
    start = max(0, n - width)

    def around(text):
        cut = text[start : n + width]
        return ("…" if start else "") + _q(cut) + ("…" if n + width < len(text) else "") if cut else "(nothing)"

    return (
        f"at character {n} (of {len(logged)} logged, {len(expected)} from the desk): the log has {around(logged)}, "
        f"the desk gives {around(expected)}"
    )


def _plain_args(arguments):
    """A tool call's arguments as the Inspect tool hands them on (inspect_fundbook/_tools.py: None dropped)."""
    return {k: v for k, v in (arguments or {}).items() if v is not None}


def _name(function) -> str:
    return function if isinstance(function, str) and function.isidentifier() and len(function) <= 40 else _q(function)


def replay(sample, protocol, source):
    """-> (env, recorder, model turns); Refused names the first thing the log holds that the desk does not.
    A message the desk cannot even take (a value nested too deeply for it, a number it cannot hold) is refused
    by its index, never a traceback."""
    at = [0]
    try:
        return _replay(sample, protocol, source, at)
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError, engine.DeskError) as exc:
        raise Refused("transcript", f"message {at[0]}: the desk cannot replay it ({type(exc).__name__})") from None


def _replay(sample, protocol, source, at):
    rec = Recorder()
    env = DeskEnv.new(source, rec)
    messages = list(sample.messages)
    system = TOOL_SYSTEM if protocol == "tool" else TEXT_SYSTEM
    if len(messages) < 2 or messages[0].role != "system" or messages[0].text != system:
        raise Refused("system prompt", f"message 0 is not the desk's {protocol}-protocol system message")
    if messages[1].role != "user" or messages[1].text != env.opening():
        raise Refused("packet", "message 1 is not the world's first checkpoint packet as the desk gives it")
    turns, i = [], 2
    while i < len(messages):
        at[0] = i
        m = messages[i]
        if m.role != "assistant":
            raise Refused("transcript", f"message {i}: a {m.role} message where the model's turn was expected")
        if protocol == "text":
            turns.append({"text": m.text})
            i += 1
            if i >= len(messages):
                break  # no reply: the eval stopped before this answer reached the desk (a limit)
            name, expected, _ = env.text_turn(m.text)
            got = messages[i]
            if got.role != "user" or got.text != expected:
                raise Refused(
                    "tool result",
                    f"message {i} ({name or 'invalid answer'}): "
                    f"{difference(got.text if got.role == 'user' else got.role, expected)}",
                )
            i += 1
            continue
        calls = list(m.tool_calls or [])
        turns.append(
            {
                "text": m.text,
                "tool_calls": [{"id": c.id, "function": c.function, "arguments": c.arguments} for c in calls],
            }
        )
        i += 1
        for k, call in enumerate(calls):
            if i >= len(messages):  # the eval stopped here (a limit raised while Inspect appended the results)
                _dangling(env, calls[k:], sample)
                break
            got = messages[i]
            at[0] = i
            if got.role != "tool" or got.tool_call_id != call.id:
                raise Refused("tool result", f"message {i}: no result for the tool call {call.id!r}")
            if got.error is not None and got.error.type == "parsing":
                i += 1  # Inspect refused the arguments before any tool ran: nothing reached the desk
                continue
            try:
                expected, error = env.call(call.function, _plain_args(call.arguments)), None
            except ProtocolError as exc:
                expected, error = None, str(exc)
            if error is not None:
                if got.error is None or got.error.message != error:
                    logged = f"ToolError {got.error.message}" if got.error else got.text
                    raise Refused(
                        "tool result",
                        f"message {i} ({_name(call.function)}): {difference(logged, f'ToolError {error}')}",
                    )
            elif got.error is not None or got.text != expected:
                logged = f"ToolError {got.error.message}" if got.error else got.text
                raise Refused("tool result", f"message {i} ({_name(call.function)}): {difference(logged, expected)}")
            i += 1
    at[0] = len(messages)
    result = env.finalize()
    _check_score(sample, grade(result))
    return env, rec, turns


def _dangling(env, calls, sample):
    """Tool calls whose results the log lacks: Inspect ran them, then its message limit refused the results.
    A submit_batch among them changed the desk; the log's store says how many batches the desk holds, and
    only that many are applied (the score check then holds the replay to the engine's grade)."""
    held = len((sample.store or {}).get("DeskStore:moves") or [])
    for call in calls:
        if call.function == "submit_batch" and len(env.state["moves"]) < held:
            try:
                env.call(call.function, _plain_args(call.arguments))
            except ProtocolError:
                return


def _check_score(sample, want):
    scores = sample.scores or {}
    if set(scores) != {SCORER}:
        raise Refused("score", f"expected one score, {SCORER}, got {sorted(scores) or 'none'}")
    score = scores[SCORER]
    if getattr(score, "history", None):
        raise Refused("score", f"{SCORER} was edited after the eval ({len(score.history)} edit(s) in its history)")
    # the whole Score as desk_grade writes it: a value, an answer, its metadata and no explanation
    want = dict(want, explanation=None)
    got = {"value": score.value, "answer": score.answer, "explanation": score.explanation, "metadata": score.metadata}
    try:
        logged = _ints(got)
        same = canonical(logged) == canonical(want)
    except (ValueError, TypeError, RecursionError):
        raise Refused(
            "score",
            f"the log's {SCORER} is not JSON the desk can compare (nested too deeply, or a value "
            f"with no canonical form)",
        ) from None
    if not same:
        where = engine.first_difference(want, logged, "score") or "score"
        raise Refused("score", f"{where}: the log's {SCORER} is not the engine's grade of these moves")


def _ints(value):
    """A logged score as JSON (Inspect may hand back 65.0 for 65): integral floats as integers, else a string."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else repr(value)
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    return value
