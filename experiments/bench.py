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

BASELINES = [{"name": f"baseline:{p}", "kind": "policy", "policy": p}
             for p in ("reference", "shortest-cheapest", "do-nothing")]


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
        print(f"  {w} worker{'s' if w > 1 else ' '}: {best[w][0]:8.0f} graded items/min wall clock"
              f"   ({best[w][1]:6.0f} per CPU-minute of the workers)")
    print(f"  ratio 2/1: {best[2][0] / best[1][0]:8.2f} wall clock")


def main(seconds=None):
    cpus = executors.cpu_count()
    print(f"sweep throughput ({cpus} CPUs visible; goal for the baselines: >= 8,000 graded items/min on 2 cores, "
          f"2/1 ratio >= 1.8)")
    best, graded = measure(160, BASELINES)
    _report("scripted baselines (reference, shortest-cheapest, do-nothing), 160 worlds", best, graded)
    cert = [{"name": "gold", "kind": "gold"}] + [{"name": m, "kind": "mutation", "mutation": m} for m in engine.MUTATIONS]
    best, graded = measure(40, cert, passes=2, chunk=5)
    _report(f"certification (gold and {len(engine.MUTATIONS)} mutations), 40 worlds", best, graded)
