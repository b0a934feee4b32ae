"""Canonical JSON and hashing (an RFC 8785 profile for float-free data).

Hashed content never holds floats: money is in cents, rates in basis points,
times in integer milliseconds. For such data, sorted keys, compact separators
and UTF-8 give the same bytes as RFC 8785 (JCS), in CPython and in Pyodide.
"""

import hashlib
import json

MAX_SAFE_INTEGER = 2**53 - 1


def _check(value, path="$"):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(f"{path}: integer {value} outside +-(2^53-1)")
        return
    if isinstance(value, float):
        raise ValueError(f"{path}: floats are not allowed in hashed content")
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{path}: key {key!r} is not a string")
            _check(item, f"{path}.{key}")
        return
    raise ValueError(f"{path}: {type(value).__name__} is not JSON")


def canonical_json(value) -> bytes:
    """The canonical bytes of a float-free JSON value."""
    _check(value)
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_sha256(value) -> str:
    """sha256 of the canonical JSON of a value."""
    return sha256_hex(canonical_json(value))


def pretty_json(value) -> str:
    """Stable, readable JSON for files people open (sorted keys, 2-space indent)."""
    _check(value)
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
