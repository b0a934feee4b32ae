"""`make bench-runs`: per-fixture time in Pyodide against host CPython.

Method: one Pyodide runtime (its load timed once); then PASSES passes over
every published fixture, in chunks of CHUNK fixtures, each chunk run on both
sides back to back and the order alternating (Pyodide first, then host first),
so that the load of a shared machine falls on both sides alike; each fixture's
time on each side is the minimum over its passes (its least disturbed run),
and the ratio is taken per fixture, then summarised (median, mean, worst, how
many above 1.5x and 2x).

Two ratios, side by side:
- execute_fixture: the engine alone (what the engine's own speed decides);
- the whole step: what the build pays per fixture. Pyodide: the runner's step
  timed from Node (re-import from the bundle's bytecode, execute_fixture,
  fixture_input, engine_fields, serialising, the crossing to JavaScript). Host:
  the same calls in this process (no re-import: the host parity check does
  none)."""

import json
import os
import platform
import statistics
import tempfile
import time

import engine

from .._session import PyodideSession
from ..bundle import build_engine
from ._pyodide import bundle_paths, run_plan
from ._stage import _check_bundle, select_specs

GOAL = 1.5
CHUNK = 8


def _host_step(spec) -> dict:
    """The runner's per-fixture step (builders/runner/run_fixtures.py execute), on the host, in µs."""
    bare = {k: v for k, v in spec.items() if k != "run_id"}
    t0 = time.perf_counter()
    execution = engine.execute_fixture(bare)
    t1 = time.perf_counter()
    inputs = engine.fixture_input(bare)
    t2 = time.perf_counter()
    fields = engine.engine_fields(execution)
    receipts = {"schema": "fundbook.receipts/1", "run_id": execution["run_id"],
                "receipts_head": execution["receipts_head"], "receipts": execution["receipts"]}
    json.dumps({"fields": fields, "fields_sha256": engine.content_sha256(fields),
                "receipts_text": engine.pretty_json(receipts), "input_text": engine.pretty_json(inputs)})
    t3 = time.perf_counter()
    us = lambda s: round(s * 1_000_000)  # noqa: E731
    return {"execute_fixture": us(t1 - t0), "fixture_input": us(t2 - t1), "serialise": us(t3 - t2), "whole": us(t3 - t0)}


def _pyodide_pass(bundle, specs, session) -> dict:
    _, events, _ = run_plan(bundle, specs, session=session)
    return {e["run_id"]: dict(e["timings_us"], whole=e["duration_us"]) for e in events}


def measure(passes=5) -> dict:
    """{"load_ms", "pyodide": {run_id: {metric: [µs per pass]}}, "host": {...}, "passes"}."""
    specs = select_specs()
    py = {s["run_id"]: {} for s in specs}
    host = {s["run_id"]: {} for s in specs}
    with tempfile.TemporaryDirectory(prefix="fundbook-bench-") as scratch, PyodideSession() as session:
        bundle_dir = os.path.join(scratch, "engine")
        build_engine(bundle_dir, session=session)
        bundle = bundle_paths(bundle_dir, _check_bundle(bundle_dir))
        chunks = [specs[i:i + CHUNK] for i in range(0, len(specs), CHUNK)]
        for p in range(passes):
            for c, chunk in enumerate(chunks):
                for side in (("pyodide", "host") if (p + c) % 2 == 0 else ("host", "pyodide")):
                    if side == "pyodide":
                        for rid, timings in _pyodide_pass(bundle, chunk, session).items():
                            for key, value in timings.items():
                                py[rid].setdefault(key, []).append(value)
                    else:
                        for spec in chunk:
                            for key, value in _host_step(spec).items():
                                host[spec["run_id"]].setdefault(key, []).append(value)
        ready = session.ready
    return {"load_ms": ready["load_ms"], "pyodide_version": ready["pyodide_version"], "passes": passes,
            "kinds": {s["run_id"]: s["kind"] for s in specs}, "pyodide": py, "host": host}


def _summary(ratios):
    values = sorted(ratios)
    return (f"{statistics.median(values):>6.2f}x {statistics.mean(values):>6.2f}x {values[-1]:>6.2f}x "
            f"{sum(r > GOAL for r in values):>5} {sum(r > 2.0 for r in values):>5}")


def report(m) -> str:
    mins = {side: {rid: {k: min(v) for k, v in metrics.items()} for rid, metrics in m[side].items()}
            for side in ("pyodide", "host")}
    ids = sorted(mins["pyodide"])
    lines = [f"Pyodide {m['pyodide_version']} in Node {os.popen('node --version').read().strip()} against host "
             f"CPython {platform.python_version()}; runtime load once: {m['load_ms']} ms; {len(ids)} fixtures, "
             f"{m['passes']} passes in chunks of {CHUNK} alternating sides, minimum per fixture and side",
             "",
             f"{'per-fixture ratio':<34}{'median':>7}{'mean':>8}{'worst':>8}{'>1.5x':>6}{'>2x':>6}"]
    for metric, label in (("execute_fixture", "execute_fixture (engine alone)"), ("whole", "whole step (what the build pays)")):
        lines.append(f"{label:<34}" + _summary([mins["pyodide"][i][metric] / mins["host"][i][metric] for i in ids]))
        for kind in sorted(set(m["kinds"].values())):
            sub = [i for i in ids if m["kinds"][i] == kind]
            lines.append(f"  {kind} (n={len(sub)})".ljust(34)
                         + _summary([mins["pyodide"][i][metric] / mins["host"][i][metric] for i in sub]))
    lines += ["", f"{'median per fixture, ms':<34}{'pyodide':>9}{'host':>9}{'ratio':>8}"]
    for metric in ("import", "execute_fixture", "fixture_input", "serialise", "whole"):
        p = statistics.median(mins["pyodide"][i][metric] for i in ids) / 1000
        h = statistics.median(mins["host"][i].get(metric, 0) for i in ids) / 1000
        note = "  (Pyodide only: fresh module state per fixture)" if metric == "import" else ""
        ratio = f"{p / h:>7.2f}x" if h else f"{'-':>8}"
        lines.append(f"  {metric:<32}{p:>9.1f}{h:>9.1f}{ratio}{note}")
    total_p = sum(mins["pyodide"][i]["whole"] for i in ids) / 1e6
    total_h = sum(mins["host"][i]["whole"] for i in ids) / 1e6
    lines.append(f"  all {len(ids)} fixtures, s{'':<19}{total_p:>9.2f}{total_h:>9.2f}{total_p / total_h:>7.2f}x"
                 f"  (Pyodide plus its load once: {total_p + m['load_ms'] / 1000:.2f} s)")
    lines.append(f"goal: per-fixture whole step <= {GOAL}x host")
    return "\n".join(lines)


def bench_runs(passes=5) -> str:
    return report(measure(passes))
