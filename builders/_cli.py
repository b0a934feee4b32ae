"""The stages' command-line group: one-line errors and the project's exit
codes (0 ok, 1 failed stage, 64 usage error; click's own 2 is reserved for
UNSCORABLE), never a traceback for an expected failure."""

import sys

import click

from ._errors import EXIT_BUILD

EXIT_USAGE = 64


class _StageMain:
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            super().main(args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=False, **extra)
        except click.exceptions.UsageError as exc:
            click.echo(f"error: {exc.format_message()}", err=True)
            sys.exit(EXIT_USAGE)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except (click.exceptions.Abort, KeyboardInterrupt):
            click.echo("error: interrupted", err=True)
            sys.exit(EXIT_BUILD)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        sys.exit(0)


class StageGroup(_StageMain, click.Group):
    pass


class StageCommand(_StageMain, click.Command):
    pass
