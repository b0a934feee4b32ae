"""inspect_fundbook/desk under scripted mockllm policies, offline: status, gates, score and reason codes."""

import json

import pytest
from inspect_ai import eval as inspect_eval

from inspect_fundbook._task import desk

from . import policies as P

pytestmark = P.WARNINGS


def run(plan, protocol="tool", worlds="FUND_01:1", days=5, tmp_path=None, **kw):
    task = desk(worlds=worlds, days=days, protocol=protocol, **kw)
    (log,) = inspect_eval(task, model=P.scripted(plan, protocol), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error and log.error.traceback
    return log


def gates(meta):
    return {g["gate"]: g["passed"] for g in meta["gates"]}


def tool_results(sample):
    """The tool results the model read, in order, as text (tool messages or the text protocol's replies)."""
    out = []
    for m in sample.messages:
        if m.role == "tool":
            out.append((m.function, m.error.message if m.error else m.text))
        elif m.role == "user" and m.text.startswith("TOOL "):
            head, body = m.text.split(": ", 1)
            out.append((head.split(" ")[2], body))
    return out


def test_always_fund_settles_every_checkpoint(tmp_path):
    log = run(P.always_fund, tmp_path=tmp_path)
    assert log.status == "success"
    (sample,) = log.samples
    score = sample.scores["desk_grade"]
    meta = score.metadata
    assert meta["status"] == "SCORED"
    assert [r[0] for r in tool_results(sample)] == ["project", "submit_batch"] * 5
    replies = [json.loads(body) for name, body in tool_results(sample) if name == "submit_batch"]
    assert [r["accepted"] for r in replies] == [True] * 5
    assert replies[-1]["next"] is None and replies[-1]["result"]["receipts_head"] == meta["receipts_head"]
    assert all(d["decision"] == "ACCEPTED" for r in replies for d in r["decisions"])
    assert score.value == meta["score"]["points"]
    assert gates(meta)["checkpoint_coverage"] is True
    assert sample.metadata["fixture_sha256"] == meta["fixture_sha256"]


def test_refused_actions_carry_reason_codes(tmp_path):
    log = run(P.over_fund, tmp_path=tmp_path)
    (sample,) = log.samples
    replies = [json.loads(body) for name, body in tool_results(sample) if name == "submit_batch"]
    refused = [d for r in replies for d in r["decisions"] if d["decision"] == "REFUSED"]
    assert refused and all(isinstance(d["reason"], str) and d["reason"].isupper() for d in refused)
    assert sample.scores["desk_grade"].metadata["status"] == "SCORED"


def test_double_submission_is_an_ordinary_refusal(tmp_path):
    log = run(P.double_submit, tmp_path=tmp_path, days=5)
    (sample,) = log.samples
    replies = [json.loads(body) for name, body in tool_results(sample) if name == "submit_batch"]
    assert [r["accepted"] for r in replies] == [True] + [False, True] * 4
    assert replies[1] == {
        "accepted": False,
        "day": 2,
        "error": "batch.day: day 1 is already settled (duplicate batch); the open day is 2",
    }
    assert sample.scores["desk_grade"].metadata["status"] == "SCORED"


def test_malformed_json_in_text_protocol(tmp_path):
    def plan(packet):
        return ["{not json", ("submit_batch", P.policy_batch("do-nothing", packet))]

    log = run(plan, protocol="text", tmp_path=tmp_path, days=5)
    (sample,) = log.samples
    texts = [m.text for m in sample.messages if m.role == "user"]
    assert texts[1] == (
        "Invalid answer: not one JSON object (Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)). Answer with one JSON object."
    )
    assert sum(t.startswith("Invalid answer") for t in texts) == 5
    meta = sample.scores["desk_grade"].metadata
    assert meta["status"] == "SCORED" and gates(meta)["checkpoint_coverage"] is True


def test_protocol_errors_are_tool_errors(tmp_path):
    """A batch that is not an object, a tool that does not exist: ToolError (Inspect's error on the tool
    message), never an engine answer."""

    def plan(packet):
        if packet["day"] == 1:
            return [("note", {"text": 7}), ("submit_batch", P.policy_batch("do-nothing", packet))]
        return [("submit_batch", P.policy_batch("do-nothing", packet))]

    log = run(plan, protocol="text", tmp_path=tmp_path, days=5)
    (sample,) = log.samples
    texts = [m.text for m in sample.messages if m.role == "user"]
    assert texts[1] == "TOOL ERROR note: note: text: expected a string"


def test_closed_run_refuses_further_calls():
    from launchers.inspect._env import DeskEnv, ProtocolError, world_source
    from engine._baselines import policy_batch

    env = DeskEnv.new(world_source("FUND_01", 1, 5))
    for _ in range(5):
        reply = json.loads(env.call("submit_batch", policy_batch("do-nothing", env.desk()["packet"])))
    assert reply["next"] is None and reply["result"]["status"] == "SCORED"
    with pytest.raises(ProtocolError, match="the run is closed"):
        env.call("headroom", {})


def test_message_limit_ends_the_sample_and_it_is_still_graded(tmp_path):
    log = run(P.always_fund, tmp_path=tmp_path, days=5, message_limit=6)
    (sample,) = log.samples
    assert sample.limit is not None and sample.limit.type == "message"
    assert sample.scores["desk_grade"].metadata  # graded although the limit ended it
    replies = [json.loads(body) for name, body in tool_results(sample) if name == "submit_batch"]
    assert sum(r["accepted"] for r in replies) < 5
    days = {d["day"]: d for d in meta_days(sample)}
    assert days[5]["batch"] == "missing"


def meta_days(sample):
    return sample.store["DeskStore:result"]["days"]


def test_tool_text_and_react_give_identical_engine_traces(tmp_path):
    logs = {
        name: run(P.always_fund, protocol=proto, tmp_path=tmp_path / name, days=5, agent=agent)
        for name, proto, agent in (
            ("tool", "tool", "generate"),
            ("text", "text", "generate"),
            ("react", "tool", "react"),
        )
    }
    traces = {}
    for name, log in logs.items():
        (sample,) = log.samples
        traces[name] = (tool_results(sample), sample.store["DeskStore:moves"], sample.scores["desk_grade"].metadata)
    assert traces["tool"] == traces["text"] == traces["react"]


def test_bad_task_arguments_are_named():
    with pytest.raises(ValueError, match="protocol: expected one of tool, text"):
        desk(protocol="xml")
    with pytest.raises(ValueError, match="worlds: 'FUND_09:1'"):
        desk(worlds="FUND_09:1")
    with pytest.raises(ValueError, match="a world is listed twice"):
        desk(worlds="FUND_01:1,practice:FUND_01:1..2")
    for bad in ("abc", 0, -5, 1.5, True, 10**9):  # -T message_limit=... arrives as Inspect parsed it
        with pytest.raises(ValueError, match="^message_limit: expected an integer in 2..40000, got "):
            desk(message_limit=bad)
    for bad in ("20", 0, 61):
        with pytest.raises(ValueError, match="^days: expected an integer in 1..60"):
            desk(days=bad)
