"""The evaluator-side command line (host only: it needs click, and it exposes
gold reports and mutations, so it never goes into a worker or the bundle).

Each verb group is a module of its own, registered here explicitly: importing a
verb module registers nothing."""

import click

import engine

from ._common import FundbookGroup, leave
from .desk import desk
from .experiments import compare, heldout, sweep
from .grading import families, gold, grade, mutate
from .inspect import inspect_group
from .practitioner import practitioner
from .tools import tools

__all__ = ["cli", "main"]


# The subcommands, in the order `fundbook --help` lists them: each verb module defines its commands and registers
# nothing; this list is the one place they join the group (no import for its side effects).
COMMANDS = (gold, grade, mutate, families, desk, tools, sweep, compare, heldout, practitioner, inspect_group)


@click.group(cls=FundbookGroup, commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(engine.ENGINE_VERSION, prog_name="fundbook")
def cli():
    """fundbook: the evaluator side of the back-to-back funding desk.

    Exit codes: 0 success; 1 rejected batch, candidate error, input error or a
    run that is not scoreable; 2 UNSCORABLE only; 64 usage error.
    """


def main():
    try:
        cli(prog_name="fundbook")
    except SystemExit as exc:  # the entry point only: in-process callers (tests) keep the ordinary exit
        leave(exc.code)
