"""The worker <-> host controller protocol: one JSON object per line.

worker -> host (stdout):
  {"type": "sample", "messages": [{role, content}]}   ask the host for a model call (it sets max_tokens)
  {"type": "tool", "name", "arguments", "output", "exit_code"}          a calculation tool the worker ran
  {"type": "invalid", "error"}                                          the model's artefact failed the schema
  {"type": "submit", "batch": {day, report, actions}}                   propose today's artefact
  {"type": "pass", "day": d, "reason"}                                  no artefact for today
  {"type": "retained", "day": d, "files": {path: text}}                 the retained work, after each checkpoint
host -> worker (stdin):
  {"type": "completion", "text"} | {"type": "call_failed", "reason"} | {"type": "halt", "reason"}
  {"type": "accepted", "decisions", "packet"} | {"type": "rejected", "message"}
  {"type": "advanced", "packet"}          (packet is null once the last checkpoint is closed)
Standard library only: this file is staged into the worker.
"""

import json

# The worker's limits. The host controller enforces MAX_CALLS_PER_CHECKPOINT too, and
# `fundbook-launch budget` derives its worst case from these numbers.
MAX_CALLS_PER_CHECKPOINT = 8       # model calls the worker may ask for on one checkpoint
TOOL_OUTPUT_LIMIT = 12000          # characters of a tool result that go back into the prompt
NOTES_LIMIT = 16000                # bytes of retained notes
RETAINED_LIMIT = 65536             # bytes of retained work sent to the host after a checkpoint
RETAINED_FILES = ("retained/history.json", "retained/notes.txt")

CHECKPOINT_MARK = "CHECKPOINT"
PACKET_OPEN = "```json packet"
FENCE_CLOSE = "```"


def encode(obj) -> bytes:
    return (json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def decode(line):
    obj = json.loads(line)
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ValueError("expected a JSON object with a string 'type'")
    return obj


def truncation_mark(shown, total) -> str:
    """The marker a cut leaves, in what the model sees and on the transcript."""
    return f"...[output truncated: {shown} of {total} characters]..."


def tool_result_text(output) -> str:
    """A tool result as the model sees it: its JSON text, cut at TOOL_OUTPUT_LIMIT characters with the cut marked."""
    text = json.dumps(output, sort_keys=True)
    if len(text) <= TOOL_OUTPUT_LIMIT:
        return text
    return text[:TOOL_OUTPUT_LIMIT] + truncation_mark(TOOL_OUTPUT_LIMIT, len(text))


def prompt_packet(packet) -> dict:
    """The packet as the model sees it: everything but the raw receipts (counted instead)."""
    shown = {k: v for k, v in packet.items() if k != "receipts"}
    shown["receipts_count"] = len(packet.get("receipts", []))
    return shown


def packet_from_prompt(text):
    """The packet embedded in a checkpoint message (used by the scripted mock model)."""
    start = text.find(PACKET_OPEN)
    if start < 0:
        return None
    body = text[start + len(PACKET_OPEN):]
    end = body.find("\n" + FENCE_CLOSE)
    return json.loads(body[:end] if end >= 0 else body)
