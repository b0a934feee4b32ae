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


def _short(value, n=60):
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return json.dumps(text[:n] + ("…" if len(text) > n else ""))


def _plain_args(arguments):
    """A tool call's arguments as the Inspect tool hands them on (inspect_fundbook/_tools.py: None dropped)."""
    return {k: v for k, v in (arguments or {}).items() if v is not None}


def replay(sample, protocol, source):
    """-> (env, recorder, model turns); Refused names the first thing the log holds that the desk does not."""
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
                raise Refused("tool result", f"message {i} ({name or 'invalid answer'}): the log has "
                                             f"{_short(got.text)}, the desk gives {_short(expected)}")
            i += 1
            continue
        calls = list(m.tool_calls or [])
        turns.append({"text": m.text, "tool_calls": [{"id": c.id, "function": c.function,
                                                      "arguments": c.arguments} for c in calls]})
        i += 1
        for k, call in enumerate(calls):
            if i >= len(messages):  # the eval stopped here (a limit raised while Inspect appended the results)
                _dangling(env, calls[k:], sample)
                break
            got = messages[i]
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
                    raise Refused("tool result", f"message {i} ({call.function}): the log has "
                                                 f"{_short(got.error.message if got.error else got.text)}, "
                                                 f"the desk raises ToolError {_short(error)}")
            elif got.error is not None or got.text != expected:
                raise Refused("tool result", f"message {i} ({call.function}): the log has "
                                             f"{_short(got.error.message if got.error else got.text)}, "
                                             f"the desk gives {_short(expected)}")
            i += 1
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
    got = {"value": score.value, "answer": score.answer, "metadata": score.metadata}
    if canonical(_ints(got)) != canonical(want):
        where = engine.first_difference(want, _ints(got), "score") or "score"
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
