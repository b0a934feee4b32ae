"""`python -m builders.runs ...`: build, verify, bench."""

import os
import tempfile

import click

from .._cli import StageGroup
from .._files import ROOT
from ._stage import build_runs, default_bundle_dir


@click.group(cls=StageGroup)
def main():
    """Execute the published fixtures through the engine bundle."""


@main.command()
@click.option("--bundle", "bundle_dir", default=default_bundle_dir, show_default="build/engine",
              help="Directory holding fundbook-engine.zip, manifest.json and provenance.json.")
@click.option("--out", default=os.path.join(ROOT, "runs"), show_default="runs", help="Where to publish the records.")
@click.option("--parity/--no-parity", default=True, show_default=True,
              help="Re-execute every fixture with host CPython from the sources and require identical content.")
@click.option("--run-id", "run_ids", multiple=True, help="Only these fixtures (default: every published one).")
def build(bundle_dir, out, parity, run_ids):
    """Run every fixture in Pyodide from the bundle and write runs/."""
    if run_ids and os.path.abspath(out) == os.path.join(ROOT, "runs"):
        raise click.UsageError("--run-id builds a partial set and runs/ holds the whole publication: "
                               "pass --out DIR as well")
    summary = build_runs(bundle_dir, out, run_ids=list(run_ids), parity=parity, progress=True)
    click.echo(f"runs: {summary['runs']} records, index head {summary['head']['hash']} "
               f"(bundle {summary['bundle_sha256'][:12]}, parity {'checked' if parity else 'off'})")


@main.command()
@click.option("--bundle", "bundle_dir", default=default_bundle_dir, show_default="build/engine")
@click.option("--committed", default=os.path.join(ROOT, "runs"), show_default="runs",
              help="The committed runs/ to compare with.")
def verify(bundle_dir, committed):
    """Rebuild the runs into a scratch directory and compare with the committed index head."""
    from ._verify import verify_runs
    with tempfile.TemporaryDirectory(prefix="fundbook-verify-") as scratch:
        click.echo(verify_runs(bundle_dir, committed, os.path.join(scratch, "runs")))


@main.command()
@click.option("--bundle", "bundle_dir", default=default_bundle_dir, show_default="build/engine")
def bench(bundle_dir):
    """Pyodide load once, then per-fixture time in Pyodide vs host CPython."""
    from ._bench import bench_runs
    click.echo(bench_runs(bundle_dir))


if __name__ == "__main__":
    main()
