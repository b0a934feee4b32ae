"""Shared CLI plumbing: one-line errors with their exit codes, JSON in and out."""

import os
import re
import sys

import click

from engine import EXIT_USAGE, DeskError, InputError, pretty_json
from launchers import FundbookError

from ._render import plain


class FundbookGroup(click.Group):
    """A group whose errors are one line and whose exit codes are the desk's.

    One line whatever the message quotes: a path or value from the command
    line is printed with its unprintable characters (a newline) escaped.

    click's own usage errors exit with 2, which the contract reserves for
    UNSCORABLE; they exit with 64 (EX_USAGE) here. An expected failure -- the
    engine's (`DeskError`) or the host's (`FundbookError`, launchers/_errors.py)
    -- is one line, and the process exits with the code its class carries."""

    expected_errors = (DeskError, FundbookError)

    def report(self, exc):
        click.echo(f"error: {plain(exc.message)}", err=True)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        _utf8_output()
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False, **extra)
        except click.exceptions.UsageError as exc:
            hint = exc.ctx.command_path if exc.ctx is not None else (prog_name or self.name)
            message = exc.format_message()
            if isinstance(exc, getattr(click.exceptions, "NoArgsIsHelpError", ())):
                message = "missing a command"  # (click's message is the whole help)
            click.echo(f"error: {plain(message)} (see `{hint} --help`)", err=True)
            sys.exit(EXIT_USAGE)
        except click.exceptions.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(1)
        except self.expected_errors as exc:
            self.report(exc)
            sys.exit(exc.exit_code)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        sys.exit(rv if isinstance(rv, int) else 0)


def leave(code):
    """Exit with `code` (SystemExit's: None, an int or a message). Once Arrow is loaded (Parquet read or
    written), leave without the interpreter's teardown, output flushed first: Arrow's thread pools and allocator
    threads are shut down by exit handlers and static destructors that, racing CPython's finalization, at times
    aborted a finished command (SIGABRT, "terminate called without an active exception"; experiments/
    observations.py). Nothing is lost: every file is written (temp then rename) before a command returns."""
    if "pyarrow" not in sys.modules:
        sys.exit(code)
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more to say
            pass
    os._exit(code or 0)


def _utf8_output():
    """Print UTF-8 whatever the locale: output bytes never depend on it, and a
    character the locale cannot encode (a desk's note in a later packet) is
    never an encoding error."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(encoding="utf-8")
            except (ValueError, OSError):  # a stream that cannot change (already written to): leave it
                pass


def read_json(path, what, limit=None):
    """Parse a JSON file from outside: bounded, strict (see engine._jsonin); an
    InputError naming the file and what was expected on anything else."""
    from engine import MAX_CANDIDATE_BYTES, parse_json, read_limited

    limit = MAX_CANDIDATE_BYTES if limit is None else limit
    try:
        data = read_limited(path, limit)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file ({what} expected)")
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory ({what} expected)")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})")
    if len(data) > limit:
        raise InputError(f"{path}: larger than the {limit}-byte limit for {what}")
    return parse_json(data, str(path), what, limit)


def write_json(path, value):
    """Write pretty, stable JSON: a temp file beside the target, then rename.

    A target that exists and is not a regular file (/dev/null, /dev/stdout, a
    FIFO) is written in place: renaming over it would replace the device or
    link itself, for every program on the machine."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(f"{path}: the folder {directory} does not exist")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory (a file path expected)")
    if _is_sqlite(path):  # `--output` naming the history by mistake would lose the run
        raise InputError(f"{path}: is an SQLite database (a desk history?); refusing to overwrite it with JSON")
    text = pretty_json(value)
    if os.path.exists(path) and not os.path.isfile(path):
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise InputError(f"{path}: cannot write ({exc.strerror or exc})")
        return
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise InputError(f"{path}: cannot write ({exc.strerror or exc})")


def _is_sqlite(path):
    if not os.path.isfile(path):  # (never open a FIFO or device just to look)
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def emit_json(value):
    click.echo(pretty_json(value), nl=False)


def emit_verified(found, what, as_json) -> int:
    """The end of a re-import check (`practitioner verify`, `inspect verify`): `found` is (name, problems) a
    record; each problem a MISMATCH line, then the count; exit 1 if any record has a problem."""
    bad = [(name, problems) for name, problems in found if problems]
    if as_json:
        emit_json(
            {
                "records": len(found),
                "verified": len(found) - len(bad),
                "problems": {name: problems for name, problems in bad},
            }
        )
    else:
        for name, problems in bad:
            for line in problems:
                click.echo(f"MISMATCH {plain(line)}")
        click.echo(
            f"{what}: {len(found) - len(bad)} of {len(found)} verify" + ("" if found else " (none published yet)")
        )
    return 1 if bad else 0


_DIGITS = re.compile(r"-?[0-9]{1,30}")


class Integer(click.ParamType):
    """An integer in ASCII digits, optionally within [low, high].

    Python's int() also reads '٣' (any Unicode digit), '1_000', ' 7 ' and
    '+3', none of which any fundbook document means; they are usage errors."""

    name = "integer"

    def __init__(self, low=None, high=None):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        if type(value) is not int:
            if not _DIGITS.fullmatch(str(value)):
                self.fail(f"expected an integer in ASCII digits, got {str(value)[:40]!r}", param, ctx)
            value = int(value)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            self.fail(f"expected an integer in {self.low}..{self.high}, got {value}", param, ctx)
        return value


class HeadType(click.ParamType):
    """A receipts head SIZE:SHA256 held by the caller."""

    name = "SIZE:SHA256"

    def convert(self, value, param, ctx):
        from engine import parse_head

        try:
            return parse_head(value, f"--{param.name.replace('_', '-')}" if param else "head")
        except InputError as exc:
            self.fail(exc.message.split(": ", 1)[-1], param, ctx)


expect_head_option = click.option(
    "--expect-head",
    type=HeadType(),
    help="Refuse unless the history's head is exactly this SIZE:SHA256 (the head you hold).",
)

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print a machine-readable JSON object instead of text."
)
