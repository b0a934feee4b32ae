"""Reading JSON the desk did not write: bounded, strict, one-line errors.

Every file or string that enters the engine from outside (batches, candidates,
family instances, packets handed to the tools, values stored in a history)
goes through `parse_json`. It refuses, with an InputError naming the source
and what was expected: more bytes than the limit for that kind of input, text
that is not UTF-8, JSON that does not parse, NaN and Infinity, nesting deeper
than MAX_DEPTH, numbers that are not integers within +-(2^53-1), a name given
twice in one object, and lone surrogates. Anything it returns has a canonical form (see `_canon`).
"""

import json
import os
import re

from ._batch import MAX_BATCH_BYTES  # noqa: F401  (re-exported: every byte limit is listed here)
from ._canon import MAX_DEPTH, NotCanonical, canonical_json
from ._errors import InputError, shown

KIB = 1024
# Byte limits by kind of input (documented on the contract page).
MAX_CANDIDATE_BYTES = 4 * KIB * KIB  # a candidate: up to one batch per checkpoint
MAX_INSTANCE_BYTES = 4 * KIB * KIB   # a family instance or episode
MAX_PACKET_BYTES = 16 * KIB * KIB    # a packet given to the calculation tools
MAX_ACTIONS_BYTES = 64 * KIB       # a list of actions given to `project`
MAX_SESSION_BYTES = 16 * KIB * KIB   # a practice-desk session (source and moves)


def _constant(name):
    raise ValueError(f"{name} is not a JSON number this engine accepts")


class _DuplicateName(ValueError):
    pass


def unique_object(pairs):
    """An object whose names are unique: a name given twice means one thing to
    a reader that keeps the first and another to one that keeps the last
    (Python and JSON.parse keep the last), so it is refused (RFC 8785, I-JSON)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for name, _ in pairs:
            if name in seen:
                raise _DuplicateName(f"duplicate name {shown(name)} in an object")
            seen.add(name)
    return obj


def _no_float(text):
    raise ValueError(f"the number {text} is not an integer (money is integer cents, rates integer bps)")


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def depth_ok(text: str) -> bool:
    """Nesting depth of JSON text at most MAX_DEPTH (brackets inside strings ignored).

    Checked before parsing, so that no parser -- CPython's or Pyodide's, whose
    stack is smaller -- ever recurses into a hostile document."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if len(brackets) <= MAX_DEPTH:
        return True
    depth = 0
    for ch in brackets:
        if ch == "[" or ch == "{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        else:
            depth -= 1
    return True


def read_limited(path, max_bytes: int) -> bytes:
    """At most `max_bytes + 1` bytes of a file (OSError if it cannot be read).

    Opened without blocking, then read blocking: a FIFO that no program
    writes to reads as empty instead of hanging the command forever, while a
    pipe with a writer (`--input <(...)`) is still read to its end."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        if flags != os.O_RDONLY:
            os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_json(data, where: str, what: str, max_bytes: int):
    """Parse untrusted JSON (bytes or str) into a canonical-safe value; InputError on anything else."""
    if not isinstance(data, (str, bytes, bytearray, memoryview)):  # e.g. a browser's `undefined`
        raise InputError(f"{where}: expected JSON text, got {type(data).__name__} ({what} expected)")
    if isinstance(data, str):
        size = len(data.encode("utf-8", "surrogatepass"))
        text = data
    else:
        size = len(data)
        if size <= max_bytes:
            try:
                text = bytes(data).decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{where}: not UTF-8 text ({what} expected)") from None
    if size > max_bytes:
        raise InputError(f"{where}: {size} bytes is over the {max_bytes}-byte limit for {what}")
    if not depth_ok(text):
        raise InputError(f"{where}: JSON nested deeper than {MAX_DEPTH} levels ({what} expected)")
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_no_float, object_pairs_hook=unique_object)
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply ({what} expected)") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON at line {exc.lineno} column {exc.colno} "
                         f"({exc.msg}; {what} expected)") from None
    except ValueError as exc:
        detail = str(exc)
        if "digits" in detail:  # CPython's int_max_str_digits guard
            detail = "an integer far outside +-(2^53-1)"
        raise InputError(f"{where}: not valid JSON ({detail}; {what} expected)") from None
    try:
        canonical_json(value)
    except NotCanonical as exc:
        raise InputError(f"{where}: {exc} ({what} expected)") from None
    return value
