"""The transcript's wording: a checkpoint's packet as the evaluator says it, and a worker value as the
journal keeps it (bounded, cut and marked when its text is too long).
"""

import engine

from ._journal import plain
from .worker import protocol

JOURNAL_VALUE_LIMIT = 64 * 1024  # characters of one worker value (arguments, error text) kept in the journal


def bounded(value, limit=JOURNAL_VALUE_LIMIT):
    """A worker value as kept: itself when its JSON text fits `limit` characters, else that text cut and marked."""
    value = plain(value)
    text = value if isinstance(value, str) else engine.canonical_json(value).decode("utf-8")
    if len(text) <= limit:
        return value
    return text[:limit] + protocol.truncation_mark(limit, len(text))


def count(n, word) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def packet_text(packet) -> str:
    new = [s["id"] for s in packet["sources"] if s["published_day"] == packet["day"]]
    return (
        f"Checkpoint {packet['day']} of {packet['horizon']}: packet {engine.content_sha256(packet)[:12]}; "
        f"cash {engine.format_cents(packet['cash'])}; {count(len(packet['assets']), 'asset')}, "
        f"{count(len(packet['quotes']), 'quote')} valid today, {count(len(packet['sources']), 'source')}"
        + (f" (new today: {', '.join(new)})" if new else "")
    )
