"""fundbook-launch: the paid model-worker path.

Exit codes: 0 ok (an attempt that completed); 1 refused (claim, budget, input,
freeze, output directory) or an attempt that ended incomplete (its record is
still written); 64 usage error (including a paid sampler in the local sandbox).

Each verb group is a module of its own, registered here explicitly.
"""

import click

from ._common import FundbookGroup, leave
from .attempt import execute, pilot, recover
from .claims import authorise, budget, self_check
from .freeze import deviate, freeze
from .records import export, ledger, rederive, verify
from .sandbox import sandbox

__all__ = ["cli", "main"]


# The subcommands, in the order `fundbook-launch --help` lists them (registered here and nowhere else).
COMMANDS = (
    budget,
    authorise,
    self_check,
    freeze,
    deviate,
    execute,
    pilot,
    recover,
    verify,
    ledger,
    export,
    rederive,
    sandbox,
)


@click.group(cls=FundbookGroup, commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """fundbook-launch: budget, authorise, freeze and execute a model attempt on the desk.

    Paid calls need a single-use claim from `authorise`, a budget and a freeze;
    every attempt, complete or not, leaves a fundbook.attempt/1 record.
    """


def main():
    try:
        cli(prog_name="fundbook-launch")
    except SystemExit as exc:  # the entry point only: in-process callers (tests) keep the ordinary exit
        leave(exc.code)
