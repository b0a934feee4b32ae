"""`python -m builders.runs ...`: build, verify, bench."""

import json
import os
import tempfile
import time

import click

from .._cli import StageGroup
from .._files import ROOT, rel, write_bytes
from .._session import PyodideSession
from ._stage import build_runs, default_bundle_dir

TIMINGS = os.path.join(ROOT, "build", "timings")


@click.group(cls=StageGroup)
def main():
    """Execute the published fixtures through the engine bundle."""


@main.command()
@click.option("--bundle", "bundle_dir", default=default_bundle_dir, show_default="build/engine",
              help="Directory holding fundbook-engine.zip, manifest.json and provenance.json.")
@click.option("--compile-engine", is_flag=True,
              help="Compile the bundle into --bundle first, in the same Pyodide runtime.")
@click.option("--stdlib", "stdlib_out", default=None,
              help="Also compile the desk's stdlib into this file, in the same runtime (skipped when current).")
@click.option("--out", default=os.path.join(ROOT, "runs"), show_default="runs", help="Where to publish the records.")
@click.option("--volatile", type=click.Choice(["keep", "fresh"]), default="keep", show_default=True,
              help="keep: a record whose content is unchanged keeps its published volatile part (times, host), "
                   "so an unchanged publication is rewritten byte for byte; fresh: every record gets this build's.")
@click.option("--parity/--no-parity", default=True, show_default=True,
              help="Re-execute every fixture with host CPython from the sources and require identical content.")
@click.option("--run-id", "run_ids", multiple=True, help="Only these fixtures (default: every published one).")
@click.option("--timings", "timings_dir", default=TIMINGS, show_default="build/timings",
              help="Directory for this build's measured times (engine.json, runs.json, build.json).")
def build(bundle_dir, compile_engine, stdlib_out, out, volatile, parity, run_ids, timings_dir):
    """Run every fixture in Pyodide from the bundle and write runs/."""
    if run_ids and os.path.abspath(out) == os.path.join(ROOT, "runs"):
        raise click.UsageError("--run-id builds a partial set and runs/ holds the whole publication: "
                               "pass --out DIR as well")
    t0 = time.perf_counter()
    stages = {}
    with PyodideSession() as session:
        if compile_engine:
            from ..bundle import build_engine
            facts = build_engine(bundle_dir, session=session, timings=os.path.join(timings_dir, "engine.json"))
            stages["build-engine"] = facts["total_ms"]
            click.echo(f"engine bundle: {facts['files']} files, sha256 {facts['bundle_sha256']} "
                       f"(compile {facts['compile_ms']} ms)")
        t1 = time.perf_counter()
        summary = build_runs(bundle_dir, out, run_ids=list(run_ids), parity=parity, progress=True, session=session,
                             volatile=volatile, timings=os.path.join(timings_dir, "runs.json"))
        stages["build-runs"] = round((time.perf_counter() - t1) * 1000)
        click.echo(f"runs: {summary['runs']} records, index head {summary['head']['hash']} "
                   f"(bundle {summary['bundle_sha256'][:12]}, parity {'checked' if parity else 'off'}, "
                   f"{summary['kept_volatile']} kept their published volatile part)")
        if stdlib_out:
            from builders.desk.stdlib_stage import build_stdlib
            t2 = time.perf_counter()
            facts = build_stdlib(stdlib_out, session=session)
            stages["build-desk"] = round((time.perf_counter() - t2) * 1000)
            click.echo("desk stdlib: " + ("current, not recompiled" if facts["skipped"] else
                                          f"{facts['compiled']} modules compiled in {facts['compile_ms']} ms"))
        load_ms = session.ready["load_ms"]
    total = round((time.perf_counter() - t0) * 1000)
    write_bytes(os.path.join(timings_dir, "build.json"),
                (json.dumps({"pyodide_loads": session.loads, "pyodide_load_ms": load_ms, "stages_ms": stages, "total_ms": total},
                            sort_keys=True, indent=2) + "\n").encode())
    click.echo(f"one Pyodide runtime (load {load_ms} ms) for {', '.join(stages)}; {total} ms in all; "
               f"timings in {rel(timings_dir)}/")


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
