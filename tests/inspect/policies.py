"""Scripted mockllm policies for inspect_fundbook/desk: each turn reads the open checkpoint's packet from the
conversation (the first user message, or the last accepted submit_batch's `next`) and plays its plan for that
checkpoint one call at a time. Every ModelOutput carries `usage` (without it mockllm fetches a tokenizer)."""

import json

import pytest

from inspect_ai.model import ModelOutput, ModelUsage, get_model

from engine._baselines import policy_batch
from launchers.worker import protocol

MODEL = "scripted"

# Inspect 0.3.285's own: tenacity's deprecated `initial` (its retry policy) and anyio streams its eval loop
# leaves to the collector; neither is this project's code.
WARNINGS = [
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def _text(message):
    return message.text if hasattr(message, "text") else str(message.content)


def _submit_reply(message):
    """The submit_batch result object a message carries (tool message, or the text protocol's user message)."""
    text = _text(message)
    if (
        getattr(message, "role", "") == "tool"
        and getattr(message, "function", "") == "submit_batch"
        and not getattr(message, "error", None)
    ):
        return json.loads(text)
    if getattr(message, "role", "") == "user" and text.startswith("TOOL RESULT submit_batch: "):
        return json.loads(text.split(": ", 1)[1])
    return None


def open_checkpoint(messages):
    """(packet or None when closed, index of the message that opened it)."""
    packet, at = None, 0
    for i, m in enumerate(messages):
        text = _text(m)
        if getattr(m, "role", "") == "user" and text.startswith(protocol.CHECKPOINT_MARK):
            packet, at = protocol.packet_from_prompt(text), i
            continue
        reply = _submit_reply(m)
        if reply and reply.get("accepted"):
            packet, at = (protocol.packet_from_prompt(reply["next"]) if reply["next"] else None), i
    return packet, at


def usage(n=10):
    return ModelUsage(input_tokens=n, output_tokens=n, total_tokens=2 * n)


def output(call, protocol_name, turn):
    """One (tool, arguments) or a final text, as the protocol answers."""
    if isinstance(call, str):
        out = ModelOutput.from_content(MODEL, call)
    elif protocol_name == "text":
        name, args = call
        obj = {"batch": args} if name == "submit_batch" else {"tool": name, "arguments": args}
        out = ModelOutput.from_content(MODEL, json.dumps(obj, sort_keys=True))
    else:
        name, args = call
        out = ModelOutput.for_tool_call(MODEL, name, args, tool_call_id=f"call-{turn}")
    out.usage = usage()
    return out


def scripted(plan, protocol_name="tool"):
    """mockllm/scripted answering with plan(packet) -> [(tool, args) | text] for each open checkpoint."""

    def answer(messages, tools, tool_choice, config):
        packet, at = open_checkpoint(messages)
        if packet is None:
            return output("The run is closed.", protocol_name, len(messages))
        done = sum(1 for m in messages[at + 1 :] if getattr(m, "role", "") == "assistant")
        steps = plan(packet)
        step = steps[done] if done < len(steps) else "I stop here."
        return output(step, protocol_name, len(messages))

    return get_model(f"mockllm/{MODEL}", custom_outputs=answer)


def always_fund(packet):
    """project the shortest-cheapest batch, then submit it (every unfunded asset funded)."""
    batch = policy_batch("shortest-cheapest", packet)
    return [("project", {"actions": batch["actions"]}), ("submit_batch", batch)]


def do_nothing(packet):
    return [("submit_batch", policy_batch("do-nothing", packet))]


def over_fund(packet):
    """Every FUND at ten times its notional: the desk refuses them (reason codes), then submits."""
    batch = policy_batch("shortest-cheapest", packet)
    for a in batch["actions"]:
        a["notional"] *= 10
    return [("submit_batch", batch)]


def double_submit(packet):
    """Each checkpoint after the first opens by submitting yesterday's day again (a second batch for a
    settled day), then today's."""
    batch = policy_batch("do-nothing", packet)
    again = [("submit_batch", dict(batch, day=packet["day"] - 1))] if packet["day"] > 1 else []
    return again + [("submit_batch", batch)]
