"""The mock sampler: a deterministic scripted "model" that costs nothing.

It reads the packet from the checkpoint message, plays the engine's reference
policy (host side, labelled mock, never presented as a model result), asks the
`project` tool for the truthful report first, then submits. 5 % of answers are
invalid on purpose, chosen by the request's hash (not `random`), so the
worker's schema check and retry path are exercised on every run.
"""

import hashlib
import json

from engine import policy_batch
from engine import reference_actions

from ._sampling import Completion, Prepared, approx_prompt_tokens, approx_tokens, request_sha256
from ._provider import Provider
from .worker import protocol

INVALID_PER_MILLE = 50
INVALID_ANSWERS = (
    "I would fund the new positions from the cheapest quotes today.",
    '{"batch": {"day": %d, "actions": []}}',
    '{"tool": "project", "batch": {}}',
)


class MockSampler:
    provider = "mock"

    def __init__(self, model_id="mock", invalid_per_mille=INVALID_PER_MILLE, sampling=None):
        self.model_id = model_id
        self.invalid_per_mille = invalid_per_mille
        self.sampling = dict(sampling or {})

    def prepare(self, messages, max_tokens) -> Prepared:
        return Prepared(
            request_sha256(self.model_id, messages, max_tokens, self.sampling),
            approx_prompt_tokens(messages),
            max_tokens,
            messages,
        )

    def sample(self, prepared: Prepared, deadline_s) -> Completion:
        text = self.answer(prepared.messages, prepared.request_sha256)
        out = approx_tokens(text)
        stop = "stop"
        if out > prepared.max_tokens:
            text, out, stop = text[: prepared.max_tokens * 4], prepared.max_tokens, "length"
        return Completion(text, prepared.prompt_tokens, out, stop)

    def answer(self, messages, request_hash) -> str:
        packet = None
        for m in messages:
            if m["role"] == "user" and m["content"].startswith(protocol.CHECKPOINT_MARK):
                packet = protocol.packet_from_prompt(m["content"])
        if packet is None:
            return "I cannot see a checkpoint packet."
        draw = int(hashlib.sha256(("invalid/" + request_hash).encode()).hexdigest()[:8], 16)
        if draw % 1000 < self.invalid_per_mille:
            variant = INVALID_ANSWERS[(draw // 1000) % len(INVALID_ANSWERS)]
            return variant % packet["day"] if "%d" in variant else variant
        last = messages[-1]["content"]
        if not any(m["role"] == "assistant" for m in messages):
            return json.dumps({"tool": "project", "arguments": {"actions": reference_actions(packet)}}, sort_keys=True)
        if last.startswith("TOOL RESULT project (exit 0): "):
            output = json.loads(last.split(": ", 1)[1])
            call = json.loads(
                next(
                    m["content"]
                    for m in reversed(messages)
                    if m["role"] == "assistant" and '"tool": "project"' in m["content"]
                )
            )
            batch = {"day": packet["day"], "report": output["report"], "actions": call["arguments"]["actions"]}
            return json.dumps({"batch": batch}, sort_keys=True)
        return json.dumps({"batch": policy_batch("reference", packet)}, sort_keys=True)


class Mock(Provider):
    """`--sampler mock`: a scripted worker, free, priced as the model id it runs under (a projection); with a
    cache, its answers are recorded there."""

    name = "mock"
    LABEL = "mock"
    FREE = True
    PROJECTED = True

    def _setup(self):
        from ._sampler_cache import open_store

        if self.options.cache_path:
            open_store(self.options.cache_path)
        return {}

    def build(self, model):
        from ._sampler_cache import CacheSampler

        inner = MockSampler(model)
        return CacheSampler(self.options.cache_path, model, inner=inner) if self.options.cache_path else inner
