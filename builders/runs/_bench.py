"""`make bench-runs`: the Pyodide runtime load once, then the same fixtures
timed under the bundle in Pyodide and under host CPython, side by side.

Pyodide figures come from the runner (one runtime for every fixture); the
host figures from the engine imported from the sources in this process, after
one warm-up pass so neither side pays for first imports."""

import statistics
import tempfile

import engine

from ._host import execute_on_host
from ._stage import execute, select_specs

TARGET = 2.0


def _row(label, py, host, extra=""):
    ratio = (py / host) if host else float("nan")
    return f"{label:<26}{py / 1000:>12.1f}{host / 1000:>12.1f}{ratio:>8.2f}x{extra}"


def bench_runs(bundle_dir) -> str:
    specs = select_specs()
    with tempfile.TemporaryDirectory(prefix="fundbook-bench-") as scratch:
        runtime, records, _files, _ = execute(bundle_dir, specs, scratch)
    for spec in specs:  # warm-up
        execute_on_host(spec)
    host = {s["run_id"]: execute_on_host(s)["execute_us"] for s in specs}
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
    lines.append(_row("  all, with fresh import", full, statistics.mean(host[i] for i in ids),
                      "  (re-import from the bundle + fixture_input + serialising, per fixture)"))
    total_py = runtime["load_ms"] * 1000 + sum(sum(v.values()) for v in py.values())
    lines.append(f"whole run of {len(ids)} fixtures: Pyodide {total_py / 1e6:.2f} s including the load, "
                 f"host {sum(host.values()) / 1e6:.2f} s; target <= {TARGET:.1f}x per fixture")
    return "\n".join(lines)
