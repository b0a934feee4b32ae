"""The desk environment behind inspect_fundbook/desk (no Inspect): whatever a model sends, a tool answers
canonical JSON text or raises ProtocolError (a ToolError in Inspect), never anything else, and answers the
same to the same calls."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from launchers.inspect._env import TOOLS, DeskEnv, ProtocolError, world_source

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=12,
)
ARGS = st.dictionaries(
    st.sampled_from(
        [
            "day",
            "report",
            "actions",
            "asset",
            "quote",
            "notional",
            "principal",
            "rate_bps",
            "start_day",
            "end_day",
            "id",
            "text",
            "x",
        ]
    ),
    JSON,
    max_size=5,
)


def run(calls):
    env = DeskEnv.new(world_source("FUND_01", 1, 5))
    out = []
    for name, args in calls:
        try:
            text = env.call(name, args)
        except ProtocolError as exc:
            out.append(("ToolError", str(exc)))
            continue
        assert engine.canonical_json(json.loads(text)).decode() == text
        out.append(("ok", text))
    return out, env.state


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(TOOLS + ("nope",)), ARGS | JSON), max_size=6))
def test_any_call_is_canonical_json_or_a_protocol_error_and_deterministic(calls):
    assert run(calls) == run(calls)


def test_a_refused_action_is_an_ordinary_result_with_its_reason_code():
    from engine._baselines import policy_batch

    env = DeskEnv.new(world_source("FUND_03", 1, 5))
    packet = env.desk()["packet"]
    while not policy_batch("shortest-cheapest", packet)["actions"]:
        env.call("submit_batch", policy_batch("do-nothing", packet))
        packet = env.desk()["packet"]
    batch = policy_batch("shortest-cheapest", packet)
    batch["actions"][0]["notional"] *= 1000
    reply = json.loads(env.call("submit_batch", batch))
    assert reply["accepted"] is True
    refused = [d for d in reply["decisions"] if d["decision"] == "REFUSED"]
    assert refused and refused[0]["action"] == batch["actions"][0]["id"] and refused[0]["reason"]
