"""Reading the experiment layer's inputs (regular files only, within stated limits), and writing its outputs
(every file of a set to a temporary name first, then renamed into place).

Every file a sweep or a decision reads goes through `read_file`. It opens
without blocking, so a FIFO in a file's place is refused at once instead of
hanging the command (the held-out secret alone may be a pipe, `--secret-file
<(...)`: read to its end, or empty when nothing writes to it), and it reads at
most the limit for that kind of file plus one byte, so a huge file is refused
in one line before it fills memory. The limits are documented on the method
page (site/comparisons/method.md, "Evidence limits").
"""

import os
import stat

from .errors import ExperimentError

MIB = 1024 * 1024
# Byte limits by kind of file.
MAX_DOC_BYTES = 16 * MIB  # a spec, freeze, deviations, sweep manifest, commitment, reveal, decision ...
MAX_ITEMS_BYTES = 512 * MIB  # items.jsonl (one line per world, at most MAX_ITEMS lines)
MAX_OBSERVATIONS_BYTES = 1024 * MIB  # observations.jsonl and .parquet, the journal and the partial file
MAX_CANDIDATE_BYTES = 4 * MIB  # a candidate file of a `files:` arm (the engine's own limit)
# Row limits.
MAX_OBSERVATION_ROWS = 4_000_000  # rows in one observations file (100,000 worlds x 40 rows)
MAX_ITEMS = 1_000_005  # worlds in one items manifest (a held-out split's 10^6 and the episodes)


def read_file(path, what, limit=MAX_DOC_BYTES, pipe=False, missing=None) -> bytes:
    """The bytes of a regular file (or, with `pipe`, of a pipe); ExperimentError naming it otherwise.

    `missing`: what to return when there is no such file (default: an error)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        if missing is not None:
            return missing
        raise ExperimentError(f"{path}: no such file ({what} expected)")
    except IsADirectoryError:
        raise ExperimentError(f"{path}: is a directory ({what} expected)")
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read ({exc.strerror or exc})")
    except ValueError:  # a NUL byte or a lone surrogate in the name
        raise ExperimentError(f"{path!r}: not a file name ({what} expected)")
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ExperimentError(f"{path}: is a directory ({what} expected)")
        if not (stat.S_ISREG(mode) or (pipe and stat.S_ISFIFO(mode))):
            raise ExperimentError(f"{path}: not a regular file ({what} expected)")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(8 * MIB, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read ({exc.strerror or exc})")
    finally:
        os.close(fd)
    if size > limit:
        raise ExperimentError(f"{path}: more than the {limit}-byte limit for {what}")
    return b"".join(chunks)


def count_lines(data: bytes, limit, where, what):
    """Refuse a JSONL file of more than `limit` lines before any line is parsed."""
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    if lines > limit:
        raise ExperimentError(f"{where}: {lines} lines is over the {limit}-line limit for {what}")
    return lines


def write_atomic(path, data: bytes):
    write_all({path: data})


def write_all(files):
    """Write {path: bytes} together: every file to a temporary name first, then each renamed
    into place, so a file that cannot be written (a folder in its place, a full disk) leaves
    none of them changed; only a rename failing after every write succeeded could."""
    tmps = {path: f"{path}.tmp-{os.getpid()}" for path in files}
    path = None
    try:
        for path, data in files.items():
            if os.path.isdir(path):
                raise IsADirectoryError(21, "Is a directory")
            with open(tmps[path], "wb") as fh:
                fh.write(data)
        for path in files:
            os.replace(tmps[path], path)
    except OSError as exc:
        _remove(tmps.values())
        raise ExperimentError(f"{path}: cannot write ({exc.strerror or exc})")
    except BaseException:  # Ctrl-C between the writes and the renames: no temporary file is left beside the files
        _remove(tmps.values())
        raise


def _remove(paths):
    for tmp in paths:
        try:
            if os.path.lexists(tmp):
                os.remove(tmp)
        except OSError:
            pass


def make_folder(path):
    """Create an output folder (and its parents); ExperimentError naming it when that cannot be done."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot create the folder ({exc.strerror or exc})")
