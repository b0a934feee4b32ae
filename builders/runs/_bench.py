"""`make bench-runs`: the Pyodide runtime load once, then the same fixtures
timed under the bundle in Pyodide and under host CPython, side by side.

Pyodide figures come from the runner (one runtime for every fixture); the
host figures from the engine imported from the sources in this process, after
one warm-up pass so neither side pays for first imports."""

import json
import statistics
import tempfile
import time

import engine

from ._host import execute_on_host
from ._stage import execute, select_specs

TARGET = 2.0


def _row(label, py, host, extra=""):
    ratio = (py / host) if host else float("nan")
    return f"{label:<26}{py / 1000:>12.1f}{host / 1000:>12.1f}{ratio:>8.2f}x{extra}"


def _host_step(spec) -> int:
    """The runner's whole per-fixture step, on the host (minus the re-import)."""
    bare = {k: v for k, v in spec.items() if k != "run_id"}
    t0 = time.perf_counter()
    execution = engine.execute_fixture(bare)
    fields = engine.engine_fields(execution)
    inputs = engine.fixture_input(bare)
    json.dumps({"fields": fields, "receipts": engine.pretty_json(execution["receipts"]),
                "input": engine.pretty_json(inputs), "sha": engine.content_sha256(inputs)})
    return round((time.perf_counter() - t0) * 1_000_000)


def bench_runs(bundle_dir) -> str:
    specs = select_specs()
    with tempfile.TemporaryDirectory(prefix="fundbook-bench-") as scratch:
        runtime, records, _files, _ = execute(bundle_dir, specs, scratch, check_inputs=False)  # timing only: nothing is published
    for spec in specs:  # warm-up
        execute_on_host(spec)
    host = {s["run_id"]: execute_on_host(s)["execute_us"] for s in specs}
    host_step = {s["run_id"]: _host_step(s) for s in specs}
    py = {rid: r["volatile"]["timings_us"] for rid, r in records.items()}
    lines = [f"Pyodide {runtime['pyodide_version']} (Python {runtime['runtime']['python_version']}) runtime load, "
             f"once: {runtime['load_ms']} ms; host CPython {__import__('platform').python_version()}",
             f"{'execute_fixture per fixture':<26}{'pyodide ms':>12}{'host ms':>12}{'ratio':>9}"]
    kinds = sorted({s["kind"] for s in specs})
    for kind in kinds + ["all"]:
        ids = [s["run_id"] for s in specs if kind in ("all", s["kind"])]
        p = statistics.mean(py[i]["execute_fixture"] for i in ids)
        h = statistics.mean(host[i] for i in ids)
        lines.append(_row(f"  {kind} (n={len(ids)}, mean)", p, h))
    ids = [s["run_id"] for s in specs]
    p_med = statistics.median(py[i]["execute_fixture"] for i in ids)
    h_med = statistics.median(host[i] for i in ids)
    lines.append(_row("  all (median)", p_med, h_med))
    full = statistics.mean(sum(py[i].values()) for i in ids)
    lines.append(_row("  whole step (mean)", full, statistics.mean(host_step[i] for i in ids),
                      "  execute + fixture_input + serialising; Pyodide also re-imports the engine "
                      f"({statistics.mean(py[i]['import'] for i in ids) / 1000:.1f} ms)"))
    total_py = runtime["load_ms"] * 1000 + sum(sum(v.values()) for v in py.values())
    lines.append(f"whole run of {len(ids)} fixtures: Pyodide {total_py / 1e6:.2f} s including the load, "
                 f"host {sum(host.values()) / 1e6:.2f} s; target <= {TARGET:.1f}x per fixture")
    return "\n".join(lines)
