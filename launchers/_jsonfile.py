"""Every file the launcher reads goes through here: bounded, strict, one line on anything hostile.

A file is opened without blocking and must be a regular file (a FIFO, a
device, a socket or a directory is refused, never waited on), at most a
stated number of bytes for its kind, and its JSON is read by the engine's
strict reader (`engine._jsonin.parse_json`): UTF-8, nesting at most
MAX_DEPTH levels (checked before parsing), no NaN or Infinity, no float, no
name given twice in one object, integers within +-(2^53-1), no lone
surrogates. JSON-lines files (ledgers, the journal) are read line by line
the same way; a torn last line (a host that died mid-append) is reported,
never guessed at. Every refusal is an InputError naming the file and what
was expected.
"""

import os
import stat

from engine import InputError as EngineInputError
from engine import parse_json as _parse_json

from ._errors import InputError

KIB = 1024
MIB = KIB * KIB
# Byte limits by kind of file. Generous for what the launcher writes itself, tight for what a person hands it.
LIMITS = {
    "claim": 256 * KIB,
    "consumption marker": 4 * KIB,
    "price table": 1 * MIB,
    "freeze": 4 * MIB,
    "deviations": 4 * MIB,
    "pilot": 16 * MIB,
    "transport record": 4 * MIB,
    "attempt record": 64 * MIB,
    "transcript": 256 * MIB,
    "receipts": 64 * MIB,
    "retained work": 1 * MIB,
    "ledger": 64 * MIB,
    "project ledger": 64 * MIB,
    "journal": 1024 * MIB,
    "engine index": 16 * MIB,
    "schema": 1 * MIB,
    "status": 64 * KIB,
    "option": 1 * MIB,
    "decision cache": 64 * MIB,
}
MAX_LINE = 16 * MIB  # one line of a JSON-lines file


def parse_json(data, where, what, limit):
    """The engine's strict reader, its refusal re-raised as the launcher's one-line InputError."""
    try:
        return _parse_json(data, where, what, limit)
    except EngineInputError as exc:
        raise InputError(exc.message if hasattr(exc, "message") else str(exc)) from None


def read_bytes(path, what, limit=None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (LIMITS[what] by default)."""
    limit = LIMITS[what] if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file ({what} expected)") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc}; {what} expected)") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise InputError(f"{path}: {kind} ({what} expected)")
        if info.st_size > limit:
            raise InputError(f"{path}: {info.st_size} bytes is over the {limit}-byte limit for a {what}")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc}; {what} expected)") from None
    finally:
        os.close(fd)
    if size > limit:  # grew while it was read
        raise InputError(f"{path}: over the {limit}-byte limit for a {what}")
    return b"".join(chunks)


def read_head(path, n=64):
    """The first `n` bytes of a regular file, or None when the path is not a regular file (never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        return os.read(fd, n)
    except OSError:
        return None
    finally:
        os.close(fd)


def loads(data, where, what, limit=None):
    """Strict JSON from bytes or text already in hand (an option's value, one line of a file)."""
    return parse_json(data, str(where), what, LIMITS.get(what, MAX_LINE) if limit is None else limit)


def read_json(path, what, limit=None):
    """The JSON value of a file: regular, bounded, strict."""
    limit = LIMITS[what] if limit is None else limit
    return parse_json(read_bytes(path, what, limit), str(path), what, limit)


def read_lines(path, what, limit=None, torn_tail=False):
    """([(line number, value)], torn): every line of a JSON-lines file, strictly.

    `torn_tail`: a last line with no newline that does not parse (the writer died mid-append) is left out and
    reported as torn instead of refused; any other bad line is refused."""
    data = read_bytes(path, what, limit)
    lines = data.split(b"\n")
    last = len(lines) - 1  # the piece after the final newline ("" for a file that ends with one)
    out, torn = [], False
    for i, line in enumerate(lines):
        if not line.strip():
            if i != last and line:
                raise InputError(f"{path}: line {i + 1}: blank ({what} lines expected)")
            continue
        if len(line) > MAX_LINE:
            raise InputError(f"{path}: line {i + 1}: over the {MAX_LINE}-byte limit for a line of a {what}")
        try:
            out.append((i + 1, parse_json(line, f"{path}: line {i + 1}", what, MAX_LINE)))
        except InputError:
            if torn_tail and i == last:
                torn = True
                break
            raise
    return out, torn


def fsync_dir(folder):
    """Make a rename in `folder` durable (best effort: a filesystem that cannot fsync a folder is left as is)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
