"""The command reference, generated from the CLI itself (site/contract/cli.md).

`python -m fundbook.cli.reference` prints it; a test fails when the checked-in
page differs, so the docs cannot drift from the commands.
"""

import click

from fundbook.cli import cli

HEADER = """# Command reference

Generated from the `fundbook` command line by `python -m fundbook.cli.reference`;
a test keeps this page identical to the CLI's own help.

Exit codes, for every command: `0` success; `1` rejected batch, candidate error,
input error or a run that is not scoreable; `2` UNSCORABLE only; `64` usage error.
"""


def _walk(command, path, out):
    ctx = click.Context(
        command, info_name=path[-1], terminal_width=88, max_content_width=88, help_option_names=["-h", "--help"]
    )
    out.append(f"\n## `{' '.join(path)}`\n")
    help_text = command.get_help(ctx).replace("Usage: " + path[-1], "Usage: " + " ".join(path), 1)
    out.append("```text\n" + help_text.rstrip() + "\n```\n")
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            _walk(command.commands[name], path + [name], out)


def render() -> str:
    out = [HEADER]
    _walk(cli, ["fundbook"], out)
    return "".join(out)


if __name__ == "__main__":
    click.echo(render(), nl=False)
