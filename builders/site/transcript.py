"""A model attempt's transcript as a trajectory: one section per checkpoint.

Each checkpoint is a heading (so the table of contents is a day index) with
its one-line outcome from the attempt's result -- batch accepted or not,
actions accepted and refused, closing cash -- then its steps, folded. A step
is marked when it is an error (a tool that exited non-zero or with no exit
code, an invalid answer, a rejected batch, a model call without an answer)
or a refusal (an accepted batch with refused actions); transcript.js offers
an "errors only" filter over those marks, kept in the query string.

The launcher writes the steps (launchers/_controller.py); the evaluator's
messages are fixed phrases, which is what `flags` reads. Model and tool JSON
is shown with money as amounts (readable.pretty), the text as written one
click away. The headings hold only numbers and fixed words, never record text:
record text is escaped inside raw HTML, where Markdown does not act on it.
"""

import json
import re

from . import fmt, readable

FOLD_LINES = 30  # a model answer longer than this is folded (never cut)
FOLD_CHARS = 3000
BATCH_WORDS = {"accepted": "batch accepted", "rejected": "batch rejected", "missing": "no batch"}
_REFUSED = re.compile(r"\b(\d+) refused\b", re.ASCII)


def text_of(value) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except RecursionError:  # indenting walks in Python; the compact encoder reads as deep as the parser did
        return json.dumps(value, ensure_ascii=False)


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _json(text):
    """The JSON value a model or tool wrote, or None when it is not JSON."""
    if not isinstance(text, str) or text.strip()[:1] not in ("{", "["):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def flags(step) -> list:
    """[(kind, words)] marks of a step: kind "error" or "refusal"."""
    out = []
    role, text = step.get("role"), step.get("text")
    text = text if isinstance(text, str) else ""
    for call in step.get("tool_calls") if isinstance(step.get("tool_calls"), list) else []:
        code = _int(call.get("exit_code")) if isinstance(call, dict) else None
        if code != 0:
            out.append(("error", f"exit {code}" if code is not None else "no exit code"))
    if isinstance(step.get("call"), dict) and step["call"].get("outcome"):
        out.append(("error", "model call without an answer"))
    if role == "evaluator":
        if text.startswith("Batch rejected whole"):
            out.append(("error", "batch rejected"))
        elif text.startswith("Model call ") and "ended without an answer" in text and not out:
            out.append(("error", "model call without an answer"))
        elif re.match(r"Checkpoint \d+ closed without a batch", text):
            out.append(("refusal", "no batch"))
        m = _REFUSED.search(text)
        if m and int(m.group(1)) > 0:
            out.append(("refusal", f"{m.group(1)} refused"))
    return out


def _fold(output):
    text = text_of(output)
    lines = text.count("\n") + 1
    first = text.strip().splitlines()[0] if text.strip() else ""
    value = output if isinstance(output, (dict, list)) else _json(output)
    shown = readable.pretty(value) if value is not None else None
    if shown is not None:  # one line of the JSON, money as amounts: "{ "cash": 15,000,000.00, "day": 1, ..."
        first = " ".join(shown.split())
    return {
        "output": text,
        "lines": lines,
        "chars": len(text),
        "folded": lines > FOLD_LINES or len(text) > FOLD_CHARS,
        "readable": shown,
        "preview": first[:120] + ("…" if len(first) > 120 else ""),
    }


def _step(i, step) -> dict:
    step = step if isinstance(step, dict) else {"text": text_of(step)}
    role = text_of(step.get("role", "?"))
    calls = []
    for call in step.get("tool_calls") if isinstance(step.get("tool_calls"), list) else []:
        call = call if isinstance(call, dict) else {"output": call}
        code = _int(call.get("exit_code"))
        calls.append(
            {
                "name": text_of(call.get("name", "?")),
                "exit_code": code,
                "ok": code == 0,
                "arguments": text_of(call.get("arguments")),
                **_fold(call.get("output") if call.get("output") is not None else ""),
            }
        )
    text = text_of(step.get("text") or "")
    value = _json(text) if role == "model" else None
    call = step.get("call") if isinstance(step.get("call"), dict) else {}
    facts = []
    for key, words in (("tokens_in", "tokens in"), ("tokens_out", "tokens out")):
        if _int(call.get(key)) is not None:
            facts.append(f"{fmt.count(call[key])} {words}")
    if _int(call.get("micro_usd")) is not None:
        facts.append(fmt.usd(call["micro_usd"]))
    if _int(call.get("cpu_ms")) is not None:
        facts.append(f"CPU {fmt.duration(call['cpu_ms'])}")
    marks = flags(step)
    return {
        "index": _int(step.get("index")) if _int(step.get("index")) is not None else i,
        "role": role,
        "role_class": role if role in ("model", "tool", "evaluator") else "other",
        "text": text,
        "readable": readable.pretty(value) if value is not None else None,
        "long": text.count("\n") + 1 > FOLD_LINES or len(text) > FOLD_CHARS,
        "tool_calls": calls,
        "facts": facts,
        "marks": marks,
        "error": any(k == "error" for k, _ in marks),
        "refusal": any(k == "refusal" for k, _ in marks),
    }


def _outcome(day, result_day) -> str:
    """The checkpoint's one-line outcome, from the attempt's result (numbers and fixed words only)."""
    if not isinstance(result_day, dict):
        return "not settled in the attempt's result"
    parts = [
        BATCH_WORDS.get(result_day.get("batch"), "batch ?") if isinstance(result_day.get("batch"), str) else "batch ?"
    ]
    accepted, refused = _int(result_day.get("accepted")), _int(result_day.get("refused"))
    if accepted is not None and refused is not None:
        parts.append(f"{fmt.count(accepted)} accepted, {fmt.count(refused)} refused")
    if _int(result_day.get("cash")) is not None:
        parts.append(f"cash {fmt.money(result_day['cash'])}")
    return " · ".join(parts)


def checkpoints(transcript, result) -> list:
    """The steps grouped by checkpoint, in order: [{key, day, title, outcome, steps, errors, refusals}]."""
    raw = transcript.get("steps") if isinstance(transcript.get("steps"), list) else []
    days = result.get("days") if isinstance(result, dict) and isinstance(result.get("days"), list) else []
    by_day = {d.get("day"): d for d in days if isinstance(d, dict) and _int(d.get("day")) is not None}
    groups, seen_day = [], False
    for i, step in enumerate(raw):
        day = _int(step.get("day")) if isinstance(step, dict) else None
        key = f"day-{day}" if day is not None else ("after" if seen_day else "before")
        seen_day = seen_day or day is not None
        if not groups or groups[-1]["key"] != key:
            groups.append({"key": key, "day": day, "steps": []})
        groups[-1]["steps"].append(_step(i, step))
    for g in groups:
        if g["day"] is not None:
            g["title"], g["outcome"] = f"Day {g['day']}", _outcome(g["day"], by_day.get(g["day"]))
        else:
            g["title"] = "Before the first checkpoint" if g["key"] == "before" else "After the last checkpoint"
            g["outcome"] = "before the desk opens" if g["key"] == "before" else "the run is closed"
        g["errors"] = sum(1 for s in g["steps"] if s["error"])
        g["refusals"] = sum(1 for s in g["steps"] if s["refusal"])
        roles = {}
        for s in g["steps"]:
            roles[s["role_class"]] = roles.get(s["role_class"], 0) + 1
        g["summary"] = ", ".join(f"{n} {role}" for role, n in sorted(roles.items()))
    # the same key twice (steps of a day around another day's) keeps every heading id unique
    used = {}
    for g in groups:
        used[g["key"]] = used.get(g["key"], 0) + 1
        if used[g["key"]] > 1:
            g["key"] = f"{g['key']}-{used[g['key']]}"
    return groups


# ---- an Inspect-imported attempt's messages (builders/inspect_records.py keeps them as logged) ----

# The desk's own phrases in the messages it sends (launchers/inspect/_env.py): a checkpoint's packet, an answer
# that is not the protocol's, a tool the desk refused to run, a tool's result.
_CHECKPOINT = re.compile(r"CHECKPOINT day (\d+) of \d+", re.ASCII)
_RESULT = re.compile(r"^TOOL RESULT ([A-Za-z_]+): ", re.ASCII)
INSPECT_ROLES = {"assistant": "model", "tool": "tool", "user": "evaluator"}


def _inspect_flags(step) -> list:
    """[(kind, words)] of an Inspect message: an invalid answer, a refused tool, a rejected batch or a tool
    error is an error; refused actions are refusals (what the worker transcript marks, in Inspect's shape)."""
    out = []
    text = step.get("text") if isinstance(step.get("text"), str) else ""
    error = step.get("error") if isinstance(step.get("error"), dict) else None
    if error:
        out.append(("error", f"{text_of(error.get('type'))}: {text_of(error.get('message'))}"))
    if step.get("role") in ("user", "tool"):
        if text.startswith("Invalid answer"):
            out.append(("error", "invalid answer"))
        elif text.startswith("TOOL ERROR"):
            out.append(("error", "tool error"))
        body = _json(_RESULT.sub("", text, count=1))
        if isinstance(body, dict) and body.get("accepted") is False:
            out.append(("error", "batch rejected"))
        if isinstance(body, dict) and isinstance(body.get("decisions"), list):
            refused = sum(1 for d in body["decisions"] if isinstance(d, dict) and d.get("decision") == "REFUSED")
            if refused:
                out.append(("refusal", f"{refused} refused"))
    return out


def _per_call(step):
    """(tokens words, time words) of a model message, when the imported log carries them per call."""
    usage = step.get("usage") if isinstance(step.get("usage"), dict) else {}
    t_in, t_out = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
    tokens = f"{fmt.count(t_in)} tokens in · {fmt.count(t_out)} out" if t_in is not None and t_out is not None else None
    ms = _int(step.get("time_ms"))
    return tokens, (fmt.duration(ms) if ms is not None else None)


def inspect_checkpoints(transcript, result) -> list:
    """An Inspect attempt's messages grouped by checkpoint like `checkpoints` (a group opens at the desk's
    message that carries the checkpoint's packet), each model message numbered as a turn, with its marks and,
    when the log carries them, its tokens and time."""
    raw = transcript.get("steps") if isinstance(transcript.get("steps"), list) else []
    days = result.get("days") if isinstance(result, dict) and isinstance(result.get("days"), list) else []
    by_day = {d.get("day"): d for d in days if isinstance(d, dict) and _int(d.get("day")) is not None}
    groups, day, turn, pending = [], None, 0, None
    turns = sum(1 for s in raw if isinstance(s, dict) and s.get("role") == "assistant")
    for i, step in enumerate(raw):
        step = step if isinstance(step, dict) else {"text": text_of(step)}
        text = step.get("text") if isinstance(step.get("text"), str) else ""
        role = text_of(step.get("role", "?"))
        opened = _CHECKPOINT.match(text) if role in ("user", "tool") else None
        if opened:
            day = int(opened.group(1))
        elif pending is not None:
            day, pending = pending, None
        found = _CHECKPOINT.search(text) if role in ("user", "tool") and not opened else None
        if found:  # a batch's result announces the next checkpoint: the messages after it are that day's
            pending = int(found.group(1))
        key = f"day-{day}" if day is not None else "before"
        if not groups or groups[-1]["key"] != key:
            groups.append({"key": key, "day": day, "steps": []})
        marks = _inspect_flags(step)
        tokens, time = _per_call(step) if role == "assistant" else (None, None)
        turn += role == "assistant"
        calls = []
        for call in step.get("tool_calls") if isinstance(step.get("tool_calls"), list) else []:
            call = call if isinstance(call, dict) else {}
            calls.append(
                {
                    "id": text_of(call.get("id")),
                    "function": text_of(call.get("function")),
                    "arguments": json.dumps(call.get("arguments"), indent=2, sort_keys=True, ensure_ascii=False),
                }
            )
        groups[-1]["steps"].append(
            {
                "index": _int(step.get("index")) if _int(step.get("index")) is not None else i,
                "role": role,
                "role_class": INSPECT_ROLES.get(role, "other"),
                "text": text,
                "long": text.count("\n") + 1 > FOLD_LINES or len(text) > FOLD_CHARS,
                "model": text_of(step.get("model")) if role == "assistant" and step.get("model") else None,
                "function": text_of(step.get("function")) if role == "tool" and step.get("function") else None,
                "tool_calls": calls,
                "marks": marks,
                "usage": tokens,
                "time": time,
                "turn": turn if role == "assistant" else None,
                "turns": turns,
                "answered_error": False,
                "invalid": any(w == "invalid answer" for _, w in marks),
                "error": any(k == "error" for k, _ in marks),
                "refusal": any(k == "refusal" for k, _ in marks),
            }
        )
    steps = [s for g in groups for s in g["steps"]]
    for turn, answer in zip(steps, steps[1:]):  # a turn the desk answered with an error is marked in the turn list
        turn["answered_error"] = turn["turn"] is not None and answer["error"]
    for g in groups:
        if g["day"] is not None:
            g["title"], g["outcome"] = f"Day {g['day']}", _outcome(g["day"], by_day.get(g["day"]))
        else:
            g["title"], g["outcome"] = "Before the first checkpoint", "before the desk opens"
        g["errors"] = sum(1 for s in g["steps"] if s["error"])
        g["refusals"] = sum(1 for s in g["steps"] if s["refusal"])
        roles = {}
        for s in g["steps"]:
            roles[s["role_class"]] = roles.get(s["role_class"], 0) + 1
        g["summary"] = ", ".join(f"{n} {role}" for role, n in sorted(roles.items()))
    used = {}
    for g in groups:
        used[g["key"]] = used.get(g["key"], 0) + 1
        if used[g["key"]] > 1:
            g["key"] = f"{g['key']}-{used[g['key']]}"
    return groups
