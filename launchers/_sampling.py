"""What every sampler adapter shares: a prepared request and a completion.

The controller prepares a request (so it knows the prompt tokens to reserve),
reserves it in the ledger, then asks the adapter to sample under a deadline.
Token counts are integers; a request is identified by the sha256 of its
canonical JSON (model, messages, max_tokens, sampling settings). The decision
cache keys an answer on `cache_key` -- model, messages and max_tokens, what a
replay knows before it has read any entry -- and keeps the sampling settings
in the entry, checked on every hit.
"""

from dataclasses import dataclass, field

from engine import content_sha256


@dataclass
class Prepared:
    request_sha256: str
    prompt_tokens: int
    max_tokens: int
    messages: list
    cached: bool = False  # a cache hit: costs nothing
    payload: object = field(default=None, repr=False)  # adapter-specific (e.g. token ids)
    cache_key: str = None  # the decision cache's key (no sampling settings)
    hit: object = field(default=None, repr=False)  # the cached answer, when `cached`


@dataclass
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    stop_reason: str = "stop"
    cached: bool = False
    cache_hit_tokens: int = 0  # prompt tokens the provider served from its prefix cache
    cpu_ms: int = None  # host CPU time of a call run in this process (the local sampler); else None
    reasoning_tokens: int = None  # of tokens_out, those the provider reports as reasoning (openai, anthropic)


def request_sha256(model: str, messages, max_tokens: int, sampling: dict) -> str:
    return content_sha256({"model": model, "messages": messages, "max_tokens": max_tokens, "sampling": sampling})


def cache_key(model: str, messages, max_tokens: int) -> str:
    return content_sha256({"model": model, "messages": messages, "max_tokens": max_tokens})


def approx_tokens(text: str) -> int:
    """A deterministic token count for samplers without a tokenizer: 4 UTF-8 bytes a token, rounded up."""
    return -(-len(text.encode("utf-8")) // 4)


def approx_prompt_tokens(messages) -> int:
    return sum(approx_tokens(m["content"]) + 4 for m in messages)
