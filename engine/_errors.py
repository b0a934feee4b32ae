"""Expected failures, each with its exit code and a one-line message.

Exit codes (the same for every command):
  0  success
  1  rejected batch, candidate error, input error or a run that is not scoreable
  2  UNSCORABLE only (the reference is missing or invalid)
 64  usage error (bad command line), set by the CLI, never by the engine
"""

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_UNSCORABLE = 2
EXIT_USAGE = 64


class DeskError(Exception):
    """Base class: a message for one line and the exit code it maps to."""

    exit_code = EXIT_REJECTED

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InputError(DeskError):
    """A file or value is missing, unreadable or of the wrong shape."""


class BatchRejected(DeskError):
    """A batch that is not well-formed: nothing changes."""


class RunClosed(BatchRejected):
    """The run is finalised: no further batches."""


class HistoryError(DeskError):
    """The SQLite history is unreadable, corrupted or does not verify."""


class ReplayMismatch(HistoryError):
    """Replay from receipts did not reproduce the stored receipts."""

    def __init__(self, message: str, seq=None, field=None):
        super().__init__(message)
        self.seq = seq
        self.field = field


class Unscorable(DeskError):
    """The reference for a candidate is missing or invalid."""

    exit_code = EXIT_UNSCORABLE


def shown(value, limit: int = 48) -> str:
    """A value from outside, quoted for a one-line message: escaped (no newline
    or control character survives), and cut to `limit` characters."""
    text = repr(value) if isinstance(value, str) else repr(value)[:limit * 4]
    return text if len(text) <= limit else text[:limit - 3] + "..."


def field(where: str, key) -> str:
    """`where.key` for a plain key, `where[<quoted key>]` for anything else."""
    if isinstance(key, str) and key and len(key) <= 64 and all(c.isascii() and (c.isalnum() or c in "_-") for c in key):
        return f"{where}.{key}"
    return f"{where}[{shown(key)}]"
