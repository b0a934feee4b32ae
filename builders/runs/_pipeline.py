"""The build's stages in one Pyodide runtime: compile the bundle, execute the
fixtures into runs/, compile the desk's stdlib, then any stages a layer above
hands in (the experiments' re-check, from `python -m fundbook.build`).

builders never imports a layer above it: a later stage arrives as a
`Stage(name, run)`, where `run(session, out, bundle_dir, echo)` does its work in
the shared session and returns nothing (it reports through `echo`)."""

import json
import os
import time
from dataclasses import dataclass
from typing import Callable, NamedTuple

import click

from .._files import ROOT, rel, write_bytes
from .._session import PyodideSession
from ._stage import build_runs, default_bundle_dir

TIMINGS = os.path.join(ROOT, "build", "timings")


class Stage(NamedTuple):
    name: str
    run: Callable


@dataclass(frozen=True)
class BuildPlan:
    """What `build` was asked for (its command-line options, `build_options`)."""
    bundle_dir: str
    out: str
    compile_engine: bool
    stdlib_out: str | None
    volatile: str
    parity: bool
    run_ids: tuple
    timings_dir: str


def build_all(plan: BuildPlan, echo, stages=()) -> dict:
    """Every stage in one runtime; timings (never published) into `plan.timings_dir`/build.json."""
    bundle_dir, out, timings_dir = plan.bundle_dir, plan.out, plan.timings_dir
    t0 = time.perf_counter()
    times = {}
    with PyodideSession() as session:
        if plan.compile_engine:
            from ..bundle import build_engine
            facts = build_engine(bundle_dir, session=session, timings=os.path.join(timings_dir, "engine.json"))
            times["build-engine"] = facts["total_ms"]
            echo(f"engine bundle: {facts['files']} files, sha256 {facts['bundle_sha256']} "
                 f"(compile {facts['compile_ms']} ms)")
        t1 = time.perf_counter()
        summary = build_runs(bundle_dir, out, run_ids=list(plan.run_ids), parity=plan.parity, progress=True,
                             session=session, volatile=plan.volatile, timings=os.path.join(timings_dir, "runs.json"))
        times["build-runs"] = round((time.perf_counter() - t1) * 1000)
        echo(f"runs: {summary['runs']} records, index head {summary['head']['hash']} "
             f"(bundle {summary['bundle_sha256'][:12]}, parity {'checked' if plan.parity else 'off'}, "
             f"{summary['kept_volatile']} kept their published volatile part)")
        if plan.stdlib_out:
            from ..desk.stdlib_stage import build_stdlib
            t2 = time.perf_counter()
            facts = build_stdlib(plan.stdlib_out, session=session)
            times["build-desk"] = round((time.perf_counter() - t2) * 1000)
            echo("desk stdlib: " + ("current, not recompiled" if facts["skipped"] else
                                    f"{facts['compiled']} modules compiled in {facts['compile_ms']} ms"))
        for stage in stages:
            t3 = time.perf_counter()
            stage.run(session, out, bundle_dir, echo)
            times[stage.name] = round((time.perf_counter() - t3) * 1000)
        load_ms = session.ready["load_ms"]
    total = round((time.perf_counter() - t0) * 1000)
    write_bytes(os.path.join(timings_dir, "build.json"),
                (json.dumps({"pyodide_loads": session.loads, "pyodide_load_ms": load_ms, "stages_ms": times,
                             "total_ms": total}, sort_keys=True, indent=2) + "\n").encode())
    echo(f"one Pyodide runtime (load {load_ms} ms) for {', '.join(times)}; {total} ms in all; "
         f"timings in {rel(timings_dir)}/")
    return {"stages_ms": times, "total_ms": total, "pyodide_loads": session.loads}


def build_options(fn):
    """The options of `build`, shared with the composed build above this layer (`python -m fundbook.build`)."""
    for option in reversed([
        click.option("--bundle", "bundle_dir", default=default_bundle_dir, show_default="build/engine",
                     help="Directory holding fundbook-engine.zip, manifest.json and provenance.json."),
        click.option("--compile-engine", is_flag=True,
                     help="Compile the bundle into --bundle first, in the same Pyodide runtime."),
        click.option("--stdlib", "stdlib_out", default=None,
                     help="Also compile the desk's stdlib into this file, in the same runtime (skipped when current)."),
        click.option("--out", default=os.path.join(ROOT, "runs"), show_default="runs", help="Where to publish the records."),
        click.option("--volatile", type=click.Choice(["keep", "fresh"]), default="keep", show_default=True,
                     help="keep: a record whose content is unchanged keeps its published volatile part (times, host), "
                          "so an unchanged publication is rewritten byte for byte; fresh: every record gets this build's."),
        click.option("--parity/--no-parity", default=True, show_default=True,
                     help="Re-execute every fixture with host CPython from the sources and require identical content."),
        click.option("--run-id", "run_ids", multiple=True, help="Only these fixtures (default: every published one)."),
        click.option("--timings", "timings_dir", default=TIMINGS, show_default="build/timings",
                     help="Directory for this build's measured times (engine.json, runs.json, build.json)."),
    ]):
        fn = option(fn)
    return fn


def run_build(stages=(), *, out, run_ids, **options) -> dict:
    """`build` with any later stages of a layer above (builders/runs/_pipeline.py)."""
    if run_ids and os.path.abspath(out) == os.path.join(ROOT, "runs"):
        raise click.UsageError("--run-id builds a partial set and runs/ holds the whole publication: "
                               "pass --out DIR as well")
    return build_all(BuildPlan(out=out, run_ids=tuple(run_ids), **options), click.echo, stages)
