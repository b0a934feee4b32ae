"""Shared CLI plumbing: one-line errors with their exit codes, JSON in and out."""

import json
import os
import sys

import click

from engine import EXIT_USAGE, DeskError, InputError, pretty_json


class FundbookGroup(click.Group):
    """A group whose errors are one line and whose exit codes are the desk's.

    click's own usage errors exit with 2, which the contract reserves for
    UNSCORABLE; they exit with 64 (EX_USAGE) here. Subclasses name the
    expected failures they report (`expected_errors`, `report`)."""

    expected_errors = (DeskError,)

    def report(self, exc):
        click.echo(f"error: {exc.message}", err=True)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                              standalone_mode=False, **extra)
        except click.exceptions.UsageError as exc:
            hint = exc.ctx.command_path if exc.ctx is not None else self.name
            click.echo(f"error: {exc.format_message()} (see `{hint} --help`)", err=True)
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


def read_json(path, what):
    """Parse a JSON file; InputError naming the file and what was expected."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file ({what} expected)")
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory ({what} expected)")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})")
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text ({what} expected)")
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON at line {getattr(exc, 'lineno', '?')} column {getattr(exc, 'colno', '?')} ({what} expected)")


def write_json(path, value):
    """Write pretty, stable JSON: a temp file beside the target, then rename."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(f"{path}: the folder {directory} does not exist")
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(pretty_json(value))
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise InputError(f"{path}: cannot write ({exc.strerror})")


def emit_json(value):
    click.echo(pretty_json(value), nl=False)


json_option = click.option("--json", "as_json", is_flag=True, help="Print a machine-readable JSON object instead of text.")
