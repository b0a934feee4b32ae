"""`python -m builders.runs ...`: build, verify, bench."""

import os
import tempfile

import click

from .._cli import StageGroup
from .._files import ROOT
from ._pipeline import build_options, run_build


@click.group(cls=StageGroup)
def main():
    """Execute the published fixtures through the engine bundle."""


@main.command()
@build_options
def build(**options):
    """Run every fixture in Pyodide from the bundle and write runs/."""
    run_build(**options)


@main.command()
@click.option("--committed", default=os.path.join(ROOT, "runs"), show_default="runs",
              help="The committed runs/ to compare with.")
@click.option("--expect-head", default=None,
              help="The published index head to hold runs/ to (default: the one in git's HEAD:runs/index.json, "
                   "when runs/ is this checkout's).")
def verify(committed, expect_head):
    """Rebuild bundle and runs in a scratch directory and check every published byte of runs/."""
    from ._verify import verify_runs
    with tempfile.TemporaryDirectory(prefix="fundbook-verify-") as scratch:
        click.echo(verify_runs(committed, scratch, expect_head=expect_head))


@main.command()
@click.option("--passes", default=5, show_default=True, help="Alternating passes per side (minimum per fixture).")
def bench(passes):
    """Pyodide load once, then per-fixture time in Pyodide vs host CPython, alternating passes."""
    from ._bench import bench_runs
    click.echo(bench_runs(passes))


if __name__ == "__main__":
    main()
