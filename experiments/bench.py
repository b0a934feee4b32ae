"""`make bench-experiments`: sweep throughput, figures not assertions.

Graded items per minute (one item = one world x one arm, graded through the
engine with the reference plan played once per world and shared by its arms)
for the three scripted baselines, through the local pool at 1 and 2 worker
processes, measured alternately (1, 2, 1, 2, ...) and reported as the best
pass of each, side by side with the ratio. Pool start-up is excluded; each
pass is a fixed list of practice worlds.
"""

import multiprocessing
import time

from . import executors, items as items_mod

ARMS = [{"name": f"baseline:{p}", "kind": "policy", "policy": p} for p in ("reference", "shortest-cheapest", "do-nothing")]
CERT_ARMS = None


def _tasks(worlds, arms, first_seed=1):
    fams = ("FUND_01", "FUND_02", "FUND_03", "FUND_04")
    seeds = range(first_seed, first_seed + -(-worlds // len(fams)))
    rows = items_mod.manifest_rows(items_mod.practice_items(fams, seeds), items_mod.PRACTICE)[:worlds]
    return [{"row": r, "item": items_mod.item_of(r), "fixture_sha256": r["fixture_sha256"], "arms": arms} for r in rows]


def _pass(pool, tasks, chunk):
    t0 = time.perf_counter()
    n = 0
    for results in pool.imap_unordered(executors._host_chunk, executors.chunks_of(tasks, chunk)):
        n += sum(len({v[0] for v in r["values"]}) for r in results)
    return n, time.perf_counter() - t0


def measure(worlds=240, passes=3, arms=ARMS, chunk=10):
    ctx = multiprocessing.get_context("spawn")
    tasks = _tasks(worlds, arms)
    pools = {w: ctx.Pool(w) for w in (1, 2)}
    try:
        for w, pool in pools.items():  # warm: start the processes and import the engine
            pool.map(executors._host_chunk, [tasks[:2]] * w)
        best = {1: None, 2: None}
        for _ in range(passes):
            for w in (1, 2):
                n, seconds = _pass(pools[w], tasks, chunk)
                rate = n / seconds * 60
                best[w] = max(best[w] or 0, rate)
        return best, len(tasks) * len(arms)
    finally:
        for pool in pools.values():
            pool.terminate()


def main(seconds=20.0):
    cpus = executors.cpu_count()
    worlds = 240
    best, graded = measure(worlds)
    print(f"sweep throughput, scripted baselines (reference, shortest-cheapest, do-nothing), reference plan once per world;")
    print(f"{graded} graded items (= {worlds} worlds x 3 arms) per pass, best of 3 alternating passes, {cpus} CPUs visible:")
    print(f"  1 worker : {best[1]:8.0f} graded items/min")
    print(f"  2 workers: {best[2]:8.0f} graded items/min")
    print(f"  ratio 2/1: {best[2] / best[1]:8.2f}   (goal: >= 8,000 items/min on 2 cores, ratio >= 1.8)")
    cert = [{"name": "gold", "kind": "gold"}] + [{"name": m, "kind": "mutation", "mutation": m}
                                                 for m in __import__("engine").MUTATIONS]
    cbest, cgraded = measure(80, passes=2, arms=cert, chunk=5)
    print(f"certification (gold + every mutation), {cgraded} graded items per pass:")
    print(f"  1 worker : {cbest[1]:8.0f} graded items/min   2 workers: {cbest[2]:8.0f}   ratio {cbest[2] / cbest[1]:.2f}")
