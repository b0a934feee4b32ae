"""The local sampler's prefix store: the evaluated system turn of a conversation, kept per loaded model so an
attempt's first call does not evaluate it again.

Every checkpoint of every attempt with the compact prompt opens with the same system turn (about 340 tokens of
SmolLM2's template). Within an attempt llama-cpp-python already keeps it: `Llama.generate` reuses the longest
prefix of what it evaluated last. But an attempt starts from `reset()` (it must never depend on what the
process ran before), so the first call of each attempt evaluated the turn again; the store keeps its state
(`save_state`) and that call loads it instead (a sweep, a pilot or a study runs many attempts in one process).

Why an attempt's answers do not change: a stored state is always made the same way -- an empty context, then
exactly those tokens evaluated on their own -- so a call starts from the same bits whether this process made
the state now or an attempt ago. That it also equals evaluating the whole prompt in one go (the path without
the store) holds where llama.cpp's KV cache and logits do not depend on how a prompt is split into batches,
which the real-model test checks on the installed build (tests/launchers/test_llama_prefix.py) and
`make bench-local` prints beside the CPU figures.
"""

import collections
import hashlib

CAPACITY = 2  # states per loaded model: one prompt's system turn, and one more (a state is ~75 MB for SmolLM2)
MARK = "\ufffcfundbook-user-turn\ufffc"  # stands for the first user turn's text when the template is rendered


def key(tokens) -> str:
    """The store's key: the sha256 of the exact token ids (a different system turn is a different state)."""
    return hashlib.sha256(",".join(map(str, tokens)).encode("ascii")).hexdigest()


def system_turn(format_text, tokenize, messages, tokens) -> int:
    """How many of the request's `tokens` render its opening system turn, up to where the first user turn's text
    starts (what every checkpoint of every attempt with this prompt shares); 0 without a system turn.
    `format_text(messages)` renders by the chat template and `tokenize(text)` tokenizes as the request was. At
    most len(tokens) - 1: a call evaluates at least one token of its own."""
    if len(messages) < 2 or messages[0].get("role") != "system" or messages[1].get("role") != "user":
        return 0
    head = format_text([messages[0], {"role": "user", "content": MARK}])
    cut = head.find(MARK)
    if cut < 0:
        return 0
    same = 0
    for a, b in zip(tokenize(head[:cut]), tokens):  # the common prefix: a token may span the cut
        if a != b:
            break
        same += 1
    return max(0, min(same, len(tokens) - 1))


class PrefixStore:
    """States of evaluated prefixes for one loaded model, least recently used dropped first. Called under the
    model's lock (one evaluation at a time)."""

    def __init__(self, capacity=CAPACITY):
        self.capacity = capacity
        self.states = collections.OrderedDict()  # key -> the library's state after exactly those tokens
        self.made = self.loaded = 0  # counts, for the bench and the tests

    def start(self, llm, tokens, n) -> str:
        """Leave `llm` holding `tokens[:n]` evaluated, so the call evaluates only the rest. "kept" when it holds
        them already (this attempt's previous call evaluated them), "loaded" from the store, or "made" (evaluated
        on their own from an empty context, then stored)."""
        if n <= 0 or llm.longest_token_prefix(llm._input_ids.tolist(), tokens) >= n:
            return "kept"
        k = key(tokens[:n])
        state = self.states.get(k)
        if state is not None:
            self.states.move_to_end(k)
            llm.load_state(state)
            self.loaded += 1
            return "loaded"
        llm.reset()
        llm.eval(tokens[:n])
        self.states[k] = llm.save_state()
        while len(self.states) > self.capacity:
            self.states.popitem(last=False)
        self.made += 1
        return "made"
