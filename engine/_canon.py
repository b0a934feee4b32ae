"""Canonical JSON and hashing: RFC 8785 (JCS) for float-free data.

Hashed content never holds floats: money is in cents, rates in basis points,
times in integer milliseconds, and integers stay within +-(2^53-1), the range
every JSON implementation reads exactly. For such data RFC 8785 is: object
members sorted by the UTF-16 code units of their names, no whitespace, strings
escaped as ECMAScript's JSON.stringify does, UTF-8 -- and that is what this
module writes, in CPython and in Pyodide alike.

The C encoder writes the value with sorted keys and the text is then checked
(no float, no integer out of range, no character above U+FFFF -- the only case
where code-point order and UTF-16 order can differ); a value that fails a check
goes through a slower path that names the offending place, or that writes
UTF-16 order with a small pure-Python encoder. Lone surrogates are refused:
they are not Unicode text. Object keys must be strings (JSON input always has
string keys; the engine builds no others). Inputs are limited to MAX_DEPTH
levels where they are read (`_jsonin`).
"""

import hashlib
import json
import re

MAX_SAFE_INTEGER = 2**53 - 1
MAX_DEPTH = 64  # deeper values are refused everywhere: no input needs more

_encode_string = json.encoder.encode_basestring  # escapes exactly as JSON.stringify does
_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


class NotCanonical(ValueError):
    """A value that has no canonical form (a float, a huge integer, a lone surrogate...)."""


def _scan(value):
    """Check a value in one iterative pass; True when every object key is ASCII."""
    ascii_keys = True
    stack = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        v, depth = pop()
        t = type(v)
        if t is str or t is bool or v is None:
            continue
        if t is int:
            if -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
                continue
            raise NotCanonical(f"{_path_to(value, v)}: integer outside +-(2^53-1)")
        if depth >= MAX_DEPTH:
            raise NotCanonical(f"nested deeper than {MAX_DEPTH} levels")
        if t is dict:
            for k, item in v.items():
                if type(k) is not str:
                    raise NotCanonical(f"{_path_to(value, v)}: key {k!r} is not a string")
                if ascii_keys and not k.isascii():
                    ascii_keys = False
                push((item, depth + 1))
        elif t is list or t is tuple:
            for item in v:
                push((item, depth + 1))
        elif t is float:
            raise NotCanonical(f"{_path_to(value, v)}: floats are not allowed in hashed content")
        else:
            raise NotCanonical(f"{_path_to(value, v)}: {t.__name__} is not JSON")
    return ascii_keys


def _path_to(root, target, path="$"):
    """The path of `target` (by identity) inside `root`, for error messages only."""
    if root is target:
        return path
    if isinstance(root, dict):
        for k, item in root.items():
            found = _path_to(item, target, f"{path}.{k}")
            if found:
                return found
    elif isinstance(root, (list, tuple)):
        for i, item in enumerate(root):
            found = _path_to(item, target, f"{path}[{i}]")
            if found:
                return found
    return None if path != "$" else "$"


def utf16_key(name: str) -> bytes:
    """RFC 8785 member order: compare names as UTF-16 code units."""
    return name.encode("utf-16-be", "surrogatepass")


def _write(value, out):
    t = type(value)
    if t is dict:
        out.append("{")
        first = True
        for k in sorted(value, key=utf16_key):
            if not first:
                out.append(",")
            first = False
            out.append(_encode_string(k))
            out.append(":")
            _write(value[k], out)
        out.append("}")
    elif t is list or t is tuple:
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif t is str:
        out.append(_encode_string(value))
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif value is None:
        out.append("null")
    else:
        out.append(str(value))


def _needs_utf16_order(value) -> bool:
    """Code-point order and UTF-16 order differ only between a name with a
    character above U+FFFF and one with a character in U+E000..U+FFFF."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            high = mid = False
            for k in v:
                if not k.isascii():
                    for ch in k:
                        o = ord(ch)
                        if o > 0xFFFF:
                            high = True
                        elif o >= 0xE000:
                            mid = True
            if high and mid:
                return True
            stack.extend(v.values())
        elif type(v) is list or type(v) is tuple:
            stack.extend(v)
    return False


# Checks on the C encoder's compact text. A number outside a string follows ":",
# "," or "["; the same characters inside a string only cause a false alarm,
# which sends the value to the exact (slow) check -- never a wrong answer.
_SUSPECT = re.compile(r"[:,\[]-?\d+[.eE]|[:,\[]-?\d{16}|[\U00010000-\U0010FFFF]")


def canonical_text(value) -> str:
    """The RFC 8785 text of a float-free JSON value (NotCanonical if it has none).

    Fast path: the C encoder writes the value with code-point key order, and
    one scan of the text looks for anything that needs a closer look: a float,
    an integer of 16 digits or more (possibly outside +-(2^53-1)), or a
    character above U+FFFF (whose keys sort differently in UTF-16). Only then
    is the value itself walked: to name the offending place, or to write it in
    UTF-16 order with a small pure-Python encoder."""
    try:
        text = _dumps(value)
    except (TypeError, ValueError, RecursionError):
        _scan(value)  # raises NotCanonical with the path
        raise NotCanonical("no canonical form (nested too deeply)") from None
    if _SUSPECT.search(text) or type(value) not in (dict, list, tuple):
        if not _scan(value) and _needs_utf16_order(value):
            out = []
            _write(value, out)
            text = "".join(out)
    return text


def canonical_json(value) -> bytes:
    """The canonical bytes (UTF-8) of a float-free JSON value."""
    text = canonical_text(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotCanonical(f"{_surrogate_path(value) or '$'}: a lone surrogate is not Unicode text") from None


def _surrogate_path(value, path="$"):
    if isinstance(value, str):
        return path if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else None
    if isinstance(value, dict):
        for k, item in value.items():
            found = _surrogate_path(k, f"{path} (key)") or _surrogate_path(item, f"{path}.{k}")
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _surrogate_path(item, f"{path}[{i}]")
            if found:
                return found
    return None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_sha256(value) -> str:
    """sha256 of the canonical JSON of a value."""
    return sha256_hex(canonical_json(value))


def engine_sha256(value) -> str:
    """sha256 of the canonical JSON of data the engine built itself.

    Such data is float-free and in range by construction (every input was
    checked where it entered: `_jsonin`, the batch and world validators), so
    only what the C encoder cannot know is checked: text that is pure ASCII
    (the usual case) needs no UTF-16 reordering and holds no lone surrogate;
    anything else goes through the full `canonical_json`. The bytes hashed are
    exactly `canonical_json(value)`'s -- a test holds the two together."""
    try:
        text = _dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = ""  # not JSON at all: canonical_json names the problem
    if text.isascii() and text:
        return hashlib.sha256(text.encode("ascii")).hexdigest()
    return sha256_hex(canonical_json(value))


def pretty_json(value) -> str:
    """Stable, readable JSON for files people open (sorted keys, 2-space indent).

    Not canonical (indentation), but checked like canonical content so that a
    file written here always reads back to a hashable value."""
    canonical_json(value)
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
