"""What every sampler adapter shares: a prepared request and a completion.

The controller prepares a request (so it knows the prompt tokens to reserve),
reserves it in the ledger, then asks the adapter to sample under a deadline.
Token counts are integers; a request is identified by the sha256 of its
canonical JSON (model, messages, max_tokens, sampling settings).
"""

from dataclasses import dataclass, field

from engine import content_sha256


@dataclass
class Prepared:
    request_sha256: str
    prompt_tokens: int
    max_tokens: int
    messages: list
    cached: bool = False          # a cache hit: costs nothing
    payload: object = field(default=None, repr=False)  # adapter-specific (e.g. token ids)


@dataclass
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    stop_reason: str = "stop"
    cached: bool = False


def request_sha256(model: str, messages, max_tokens: int, sampling: dict) -> str:
    return content_sha256({"model": model, "messages": messages, "max_tokens": max_tokens, "sampling": sampling})


def approx_tokens(text: str) -> int:
    """A deterministic token count for samplers without a tokenizer: 4 UTF-8 bytes a token, rounded up."""
    return -(-len(text.encode("utf-8")) // 4)


def approx_prompt_tokens(messages) -> int:
    return sum(approx_tokens(m["content"]) + 4 for m in messages)
