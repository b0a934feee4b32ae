"""Build errors: one line for the user, an exit code, never a traceback."""

import click

EXIT_BUILD = 1  # a failed stage: integrity, parity, expectation or input error


class BuildError(click.ClickException):
    """A stage stopped. The message names the file or record, what was expected
    and what was found."""

    exit_code = EXIT_BUILD

    def show(self, file=None):
        click.echo(f"error: {self.format_message()}", err=True)
