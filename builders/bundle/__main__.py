"""`python -m builders.bundle build`: the build-engine stage."""

import os

import click

from .._cli import StageGroup
from .._files import ROOT
from ._build import build_engine


@click.group(cls=StageGroup)
def main():
    """Build the engine bundle under the pinned Pyodide."""


@main.command()
@click.option(
    "--out",
    default=os.path.join(ROOT, "build", "engine"),
    show_default="build/engine",
    help="Directory to write the bundle, manifest and provenance into (replaced when complete).",
)
@click.option(
    "--timings",
    default=os.path.join(ROOT, "build", "timings", "engine.json"),
    show_default="build/timings/engine.json",
    help="Where this build's measured times go.",
)
def build(out, timings):
    """Compile engine/ in Pyodide into a deterministic zip + manifest + provenance."""
    facts = build_engine(out, timings=timings)
    click.echo(
        f"engine bundle: {facts['files']} files, sha256 {facts['bundle_sha256']}, "
        f"manifest {facts['manifest_sha256'][:12]} (Pyodide load {facts['load_ms']} ms, "
        f"compile {facts['compile_ms']} ms)"
    )


if __name__ == "__main__":
    main()
