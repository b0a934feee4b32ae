"""The worker's agent loop, driven through the real local sandbox by a scripted model."""

import json

from launchers._sandbox_local import LocalSandbox

from .conftest import PricedMock


class ToolUser(PricedMock):
    """Keeps a note, asks for a source that does not exist, answers in a fenced block, then submits."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def answer(self, messages, request_hash):
        self.seen.append(messages)
        turns = sum(1 for m in messages if m["role"] == "assistant")
        day_line = next(m["content"] for m in messages if m["role"] == "user").split("\n")[0]
        if turns == 0:
            return '```json\n{"tool": "note", "arguments": {"text": "seen %s"}}\n```' % day_line
        if turns == 1:
            return json.dumps({"tool": "read_source", "arguments": {"id": "S99"}})
        return super().answer(messages, request_hash)


def test_tools_notes_and_fenced_answers(run_attempt):
    sampler = ToolUser()
    record, out = run_attempt(sampler=sampler, horizon=6)
    c = record["content"]
    assert c["termination"]["status"] == "completed" and c["settled_days"] == 6
    with open(f"{out}/transcript.json") as fh:
        steps = json.load(fh)["steps"]
    tools = [call for s in steps if s["role"] == "tool" for call in s["tool_calls"]]
    assert [(t["name"], t["exit_code"]) for t in tools[:2]] == [("note", 0), ("read_source", 1)]
    assert "no published source 'S99'" in tools[1]["output"]["error"]
    # retained work: the day-1 note is in the worker's day-2 prompt
    day2 = next(m for msgs in sampler.seen for m in msgs if m["content"].startswith("CHECKPOINT day 2"))
    assert "day 1: seen CHECKPOINT day 1 of 6." in day2["content"]
    assert 'Your last outcomes: [{"accepted"' in day2["content"]


class Rejected(PricedMock):
    """Proposes a batch for the wrong day once a day, a batch the desk rejects whole, then the right one."""

    def answer(self, messages, request_hash):
        if not any(m["role"] == "assistant" for m in messages):
            return json.dumps({"batch": {"day": 1, "report": {}, "actions": []}})  # schema-invalid: report fields
        text = super().answer(messages, request_hash)
        if '"batch"' in text and not any("rejected the batch" in m["content"] for m in messages):
            batch = json.loads(text)["batch"]
            batch["actions"] = [{"id": "x", "type": "REPAY", "trade": "NO-SUCH-TRADE"}]
            return json.dumps({"batch": batch})
        return text


def test_invalid_and_rejected_artefacts_are_recorded_and_retried(run_attempt):
    record, out = run_attempt(sampler=Rejected(), horizon=6)
    c = record["content"]
    assert c["termination"]["status"] == "completed" and c["invalid_artefacts"] == 6
    outcomes = [p["outcome"] for p in c["proposals"]]
    assert outcomes == ["rejected", "accepted"] * 6
    assert "NO-SUCH-TRADE" in c["proposals"][0]["message"]


class Prose(PricedMock):
    def answer(self, messages, request_hash):
        return "Let me think about the funding of this book."


def test_a_day_without_a_valid_artefact_is_closed_without_a_batch(run_attempt):
    record, out = run_attempt(sampler=Prose(), horizon=8)
    c = record["content"]
    assert c["termination"]["status"] == "completed" and c["settled_days"] == 0 and c["proposals"] == []
    assert c["invalid_artefacts"] == 8 * 4 and c["cost"]["calls"] == 32  # 1 + 3 retries a day, within budget
    assert c["result"]["status"] == "SCORED" and c["result"]["verdict"] == "NOT_QUALIFIED"
    assert [d["batch"] for d in c["result"]["days"]] == ["missing"] * 8


def test_the_artefact_is_found_in_the_ways_models_write_it():
    from launchers.worker.agent import extract_json

    obj = '{"tool": "headroom", "arguments": {}}'
    for text in (
        obj,
        f"```json\n{obj}\n```",
        f"<think>which tool? {{no}}</think>\n{obj}",
        f"Here is my answer:\n```\n{obj}\n```\nDone.",
        f"I will call {obj} now.",
    ):
        assert json.loads(extract_json(text)) == json.loads(obj), text
    assert extract_json("no object here") == "no object here"


class Floaty(PricedMock):
    """Writes floats where integers belong, in a tool call and in a batch."""

    def answer(self, messages, request_hash):
        turns = sum(1 for m in messages if m["role"] == "assistant")
        if turns == 0:
            return json.dumps(
                {"tool": "interest", "arguments": {"principal": 1.5e9, "rate_bps": 500.0, "start_day": 1, "end_day": 2}}
            )
        if turns == 1:
            return json.dumps({"batch": {"day": 0.5, "report": {}, "actions": []}})
        return super().answer(messages, request_hash)


def test_floats_from_the_model_never_break_the_record(run_attempt):
    record, out = run_attempt(sampler=Floaty(), horizon=6)
    c = record["content"]
    assert c["termination"]["status"] == "completed"
    with open(f"{out}/transcript.json") as fh:
        tools = [t for s in json.load(fh)["steps"] for t in s["tool_calls"]]
    assert tools[0]["name"] == "interest" and tools[0]["arguments"]["principal"] == "1500000000.0"


ROGUE = b"""import json, sys
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
def sample():
    send({"type": "sample", "messages": [{"role": "user", "content": "hello"}]})
    return json.loads(sys.stdin.readline())
sample()
send({"type": "submit", "batch": {"day": 1.5, "report": {"cash": 1e300}, "actions": [], "x": 2**60}})
reply = json.loads(sys.stdin.readline())
sample()
send({"type": "tool", "name": "x", "arguments": {"f": 0.1}, "output": None, "exit_code": True})
send({"type": "bogus", "echo": reply["type"]})
sys.stdin.readline()
"""

CHATTY = b"""import json, sys
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
send({"type": "sample", "messages": [{"role": "user", "content": "hello"}]})
sys.stdin.readline()
for i in range(3):  # one report per model answer: the second is a protocol error, never a journal without end
    send({"type": "tool", "name": "note", "arguments": {}, "output": "x" * 100, "exit_code": 0})
sys.stdin.readline()
"""


class RogueSandbox(LocalSandbox):
    """The local sandbox running a worker that breaks the protocol."""

    def start(self, files, time_limit_s):
        return super().start(dict(files, **{"worker.py": ROGUE}), time_limit_s)


class ChattySandbox(LocalSandbox):
    def start(self, files, time_limit_s):
        return super().start(dict(files, **{"worker.py": CHATTY}), time_limit_s)


def test_a_worker_reports_once_per_model_answer(run_attempt):
    """The journal's worst case is bounded: a worker that reports more than one tool result (or invalid answer, or
    batch) per model answer is stopped as a protocol error, its one legitimate report kept."""
    record, out = run_attempt(sandbox=ChattySandbox(), horizon=6)
    c = record["content"]
    assert c["termination"]["status"] == "infrastructure_interruption"
    assert "the worker sent a tool result that follows no model answer" in c["termination"]["reason"]
    with open(f"{out}/transcript.json") as fh:
        tools = [t for st in json.load(fh)["steps"] for t in st["tool_calls"]]
    assert [t["name"] for t in tools] == ["note"]


def test_a_worker_that_breaks_the_protocol_is_recorded_not_trusted(run_attempt):
    record, out = run_attempt(sandbox=RogueSandbox())
    c = record["content"]
    assert c["termination"]["status"] == "infrastructure_interruption"
    assert "unknown message type 'bogus'" in c["termination"]["reason"]
    (proposal,) = c["proposals"]
    assert proposal["outcome"] == "rejected" and proposal["batch_sha256"] is None and proposal["day"] is None
    assert proposal["batch"]["x"] == repr(2**60) and c["settled_days"] == 0
