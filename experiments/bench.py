"""`make bench-experiments`: sweep throughput, figures not assertions.

Graded items per minute (one item = one world x one arm, produced and graded
through the engine; the reference plan is played once per world, for the gold
candidate and the reference economics every arm is graded against) for the three scripted baselines, through the local pool
at 1 and 2 worker processes, measured alternately (1, 2, 1, 2, ...) and
reported as the best pass of each, side by side with the 2/1 ratio. Pool
start-up is excluded. Beside the wall-clock rate, the workers' own CPU time
gives the rate per busy core: on a shared machine the wall-clock ratio falls
when other processes take the second core, the CPU rate does not.
"""

import multiprocessing
import time

import engine

from . import executors, items as items_mod

BASELINES = [
    {"name": f"baseline:{p}", "kind": "policy", "policy": p} for p in ("reference", "shortest-cheapest", "do-nothing")
]


def _tasks(worlds, arms):
    fams = engine.FAMILIES
    seeds = range(1, 1 + -(-worlds // len(fams)))
    rows = items_mod.manifest_rows(items_mod.practice_items(fams, seeds), items_mod.PRACTICE)[:worlds]
    return [{"row": r, "item": items_mod.item_of(r), "fixture_sha256": r["fixture_sha256"], "arms": arms} for r in rows]


def _chunk(tasks):
    t0 = time.process_time()
    results = executors._host_chunk(tasks)
    return sum(len({v[0] for v in r["values"]}) for r in results), time.process_time() - t0


def _pass(pool, tasks, chunk):
    t0 = time.perf_counter()
    graded, cpu = 0, 0.0
    for n, seconds in pool.imap_unordered(_chunk, executors.chunks_of(tasks, chunk)):
        graded += n
        cpu += seconds
    return graded, time.perf_counter() - t0, cpu


def measure(worlds, arms, passes=3, chunk=10):
    """{workers: (best wall items/min, items per CPU-minute of that pass)}."""
    ctx = multiprocessing.get_context("spawn")
    tasks = _tasks(worlds, arms)
    pools = {w: ctx.Pool(w) for w in (1, 2)}
    try:
        for w, pool in pools.items():  # start the processes and import the engine before timing
            pool.map(_chunk, [tasks[:1]] * w)
        best = {}
        for _ in range(passes):
            for w in (1, 2):
                graded, wall, cpu = _pass(pools[w], tasks, chunk)
                rate = graded / wall * 60
                if rate > best.get(w, (0, 0))[0]:
                    best[w] = (rate, graded / cpu * 60)
        return best, len(tasks) * len(arms)
    finally:
        for pool in pools.values():
            pool.terminate()


def _report(title, best, graded):
    print(f"{title}: {graded} graded items per pass, best of alternating passes")
    for w in (1, 2):
        print(
            f"  {w} worker{'s' if w > 1 else ' '}: {best[w][0]:8.0f} graded items/min wall clock"
            f"   ({best[w][1]:6.0f} per CPU-minute of the workers)"
        )
    print(f"  ratio 2/1: {best[2][0] / best[1][0]:8.2f} wall clock")


def main(seconds=None):
    cpus = executors.cpu_count()
    print(
        f"sweep throughput ({cpus} CPUs visible; goal for the baselines: >= 8,000 graded items/min on 2 cores, "
        f"2/1 ratio >= 1.8)"
    )
    best, graded = measure(160, BASELINES)
    _report("scripted baselines (reference, shortest-cheapest, do-nothing), 160 worlds", best, graded)
    cert = [{"name": "gold", "kind": "gold"}] + [
        {"name": m, "kind": "mutation", "mutation": m} for m in engine.MUTATIONS
    ]
    best, graded = measure(40, cert, passes=2, chunk=5)
    _report(f"certification (gold and {len(engine.MUTATIONS)} mutations), 40 worlds", best, graded)


# -- the decision rules: how fast the integer arithmetic runs ----------------------------------------


def rules_speed():
    """Betting steps and fixed-n bound evaluations per second through experiments/rules.py (CPython),
    and the shipped decisions recomputed in CPython and in Pyodide."""
    import os
    from . import calibration, compare as cmp, power, pyodide, rules, shipped

    spec = calibration._spec(calibration.BET)
    rule = rules.Rule(spec)
    rng = power.SplitMix64(1)
    sampler = power.Sampler([(-100 * rule.Q, 1), (100 * rule.Q, 1)])
    draws = [sampler.draw(rng) for _ in range(200_000)]
    best = 0
    for _ in range(3):
        test = rules.BettingTest(rule, stops=False)  # at the margin a sweep would stop at 1/alpha: read on
        t0 = time.perf_counter()
        for D in draws:
            test.push(D)
        best = max(best, len(draws) / (time.perf_counter() - t0))
    print("decision rules (experiments/rules.py, integers only), host CPython:")
    print(f"  paired_betting (aGRAPA): {best:10.0f} worlds/s   ({1e6 / best:.2f} us a world, both wealths)")
    for name in (rules.HOEFFDING, rules.BERNSTEIN):
        r = rules.Rule(calibration._spec({"name": name}))
        s1 = s2 = 0
        t0 = time.perf_counter()
        for n, D in enumerate(draws[:50_000], 1):
            s1 += D
            s2 += D * D
            r.fixed_verdict(s1, s2, n)
        rate = 50_000 / (time.perf_counter() - t0)
        print(f"  {name}: {rate:10.0f} bounds/s")
    sweeps = calibration.SWEEPS * (len(calibration.NULL_SHAPES) + 1)
    print(
        f"  => the calibration's {sweeps:,} null sweeps of {calibration.MAX_N} worlds: about "
        f"{sweeps * calibration.MAX_N / best / 60:.0f} CPU-minutes of betting alone"
    )
    payloads, host = [], []
    for c, _ in shipped.all_comparisons():
        keep = {}
        cmp.verify(os.path.join(shipped.ROOT, "runs", c), keep)
        payloads.append(keep["payload"])
        t0 = time.perf_counter()
        rules.recompute(keep["payload"])
        host.append((time.perf_counter() - t0) * 1000)
    out = pyodide.decide_in_pyodide(cmp.RULES_SOURCE, payloads)
    print(
        f"  the shipped decisions recomputed by the same module (ms, host CPython vs Pyodide "
        f"{out['runtime']['pyodide_version']} in Node, runtime start excluded):"
    )
    for (c, _), h, p in zip(shipped.all_comparisons(), host, out["ms"]):
        print(f"    {c.split('/')[-1]:<45} {h:8.0f} {p:8.0f}   ratio {p / max(h, 1e-9):5.1f}")


# -- a clean exit, every time ---------------------------------------------------------------------

EXIT_RUNS = 200
_BARE = "import {imp}, pyarrow.parquet as pq\ndata = open({path!r}, 'rb').read()\npq.read_table({source}).to_pylist()\n"


_FILE = (
    "import pyarrow as pa, pyarrow.parquet as pq\n"
    "data = open({path!r}, 'rb').read()\n"
    "pq.ParquetFile(pa.BufferReader(data), pre_buffer=False).read(use_threads=False).to_pylist()\n"
)
_THREADS = (
    "import os, pyarrow as pa, pyarrow.parquet as pq\n"
    "n = lambda: len(os.listdir('/proc/self/task'))\n"
    "data = open({path!r}, 'rb').read()\n"
    "base = n()\n"
    "pq.ParquetFile(pa.BufferReader(data), pre_buffer=False).read(use_threads=False).to_pylist()\n"
    "after_file = n()\n"
    "pq.read_table(pa.BufferReader(data), use_threads=False, pre_buffer=False).to_pylist()\n"
    "print(base, n(), after_file)\n"
)


_SPY = (
    "import io, threading, pyarrow.parquet as pq\n"
    "main, calls = threading.get_ident(), []\n"
    "class Spy(io.BytesIO):\n"
    "    def read(self, *a):\n"
    "        calls.append(threading.get_ident() != main)\n"
    "        return super().read(*a)\n"
    "    def readinto(self, b):\n"
    "        calls.append(threading.get_ident() != main)\n"
    "        return super().readinto(b)\n"
    "data = open({path!r}, 'rb').read()\n"
    "pq.read_table(Spy(data), use_threads=False, pre_buffer=False).to_pylist()\n"
    "print(len(calls), sum(calls))\n"
)


def exit_loop(runs=EXIT_RUNS, bare_every=1):
    """`fundbook compare --verify` run `runs` times, beside a bare Parquet read through a Python file
    object (how it read before: pyarrow's read-ahead threads, still at work when the interpreter exits,
    die inside C++ with SIGABRT) and through an Arrow buffer (how it reads now)."""
    import os
    import subprocess
    import sys
    from . import shipped

    root = shipped.ROOT
    comparison = os.path.join(root, "runs", shipped.BETTING_COMPARISONS[0])
    parquet = os.path.join(root, "runs", shipped.HELDOUT_SWEEP, "observations.parquet")
    fundbook = os.path.join(os.path.dirname(sys.executable), "fundbook")
    cases = [
        ("fundbook compare --verify (as shipped)", [fundbook, "compare", comparison, "--verify"]),
        (
            "bare read, io.BytesIO (the old way)",
            [sys.executable, "-c", _BARE.format(imp="io", path=parquet, source="io.BytesIO(data)")],
        ),
        (
            "bare read, pa.BufferReader (the first fix)",
            [
                sys.executable,
                "-c",
                _BARE.format(
                    imp="pyarrow as pa",
                    path=parquet,
                    source="pa.BufferReader(data), use_threads=False, pre_buffer=False",
                ),
            ],
        ),
        ("bare read, ParquetFile.read (now)", [sys.executable, "-c", _FILE.format(path=parquet)]),
    ]
    threads = subprocess.run(
        [sys.executable, "-c", _THREADS.format(path=parquet)], capture_output=True, text=True, cwd=root
    ).stdout.split()
    print(
        f"threads alive after the read (import pyarrow: {threads[0] if threads else '?'}): pq.read_table "
        f"{threads[1] if len(threads) > 1 else '?'}, ParquetFile.read {threads[2] if len(threads) > 2 else '?'} "
        f"(read_table's dataset scanner starts a worker of Arrow's pool even with use_threads=False)"
    )
    spy = subprocess.run([sys.executable, "-c", _SPY.format(path=parquet)], capture_output=True, text=True, cwd=root)
    calls, off = (spy.stdout.split() + ["?", "?"])[:2]
    print(
        f"why: reading a Python file object, Arrow made {calls} calls into it, {off} of them from its own threads "
        f"(with use_threads=False); from an Arrow buffer it makes none"
    )
    print(f"clean exits over {runs} runs each (alternating; any non-zero exit counts):")
    failed = {name: {} for name, _ in cases}
    done = {name: 0 for name, _ in cases}
    for i in range(runs):
        for k, (name, argv) in enumerate(cases):
            if k and i % bare_every:  # the bare reads every `bare_every`-th round: the command is what is stressed
                continue
            code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root).returncode
            done[name] += 1
            if code:
                failed[name][code] = failed[name].get(code, 0) + 1
    for name, _ in cases:
        bad = sum(failed[name].values())
        detail = ", ".join(f"exit {c} x{k}" for c, k in sorted(failed[name].items())) or "none"
        print(f"  {name:<44} {done[name] - bad:5d} of {done[name]} clean ({detail})")
