"""`make bench` (engine part): figures, not assertions.

Prints the full 20-day reference run per episode (ms), grading throughput
(candidates/s), the cost of a `desk submit` by day (it must stay flat over the
run: the runtime continues from a checked snapshot instead of replaying) and
fuzz throughput (batches/s through the SQLite runtime). Times are process CPU
time, best of several passes, so a busy machine moves them less than wall
time; wall time is printed beside it.
"""

import random
import statistics
import tempfile
import time

import engine
from engine import policy_batch


def _best(fn, repeat=5):
    """(best CPU seconds, median CPU seconds) over `repeat` passes."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times), statistics.median(times)


def reference_runs():
    print("full 20-day reference run (policy + settlement + carry), per episode:")
    for episode in engine.EPISODES:
        instance = engine.load_episode(episode)

        def play():
            run = engine.Run(instance)
            while run.open_day is not None:
                run.submit(policy_batch("reference", run.packet()))
            run.finalize()

        best, median = _best(play)
        print(f"  {episode}: best {best * 1000:7.1f} ms   median {median * 1000:7.1f} ms")


def grading():
    instances = [engine.load_episode(e) for e in engine.EPISODES]
    golds = [engine.gold_candidate(i) for i in instances]
    n = 0
    t, c = time.perf_counter(), time.process_time()
    while time.process_time() - c < 3.0:
        for instance, gold in zip(instances, golds):
            engine.grade_candidate(gold, instance)
            n += 1
    cpu, wall = time.process_time() - c, time.perf_counter() - t
    print(
        f"grading throughput: {n / cpu:7.1f} candidates/s of CPU ({n / wall:.1f}/s wall; {n} gold candidates "
        f"W1..W5, reference recomputed each time)"
    )


def submit_by_day():
    """`History.submit` cost on days 1, 10 and 20 of a W3 history (CPU ms, best of 3 histories)."""
    with tempfile.TemporaryDirectory() as tmp:
        costs = {}
        for k in range(3):
            history = engine.History(f"{tmp}/s{k}.sqlite")
            history.init(engine.load_episode("W3"), salt="%064x" % k)
            for day in range(1, 21):
                batch = policy_batch("reference", history.packet())
                c = time.process_time()
                history.submit(batch)
                costs.setdefault(day, []).append(time.process_time() - c)
        line = ", ".join(f"day {d} {min(costs[d]) * 1000:.1f} ms" for d in (1, 2, 10, 20))
        print(f"desk submit (W3, CPU, best of 3): {line}; day 20 / day 2 = {min(costs[20]) / min(costs[2]):.2f}x")


def fuzz():
    from .fuzzing import fuzz_batch  # the same generator the fuzz test uses

    rng = random.Random(7)
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        k = 0
        while time.perf_counter() - t < 3.0:
            k += 1
            history = engine.History(f"{tmp}/b{k}.sqlite")
            history.init(engine.generate(engine.FAMILIES[k % 4], k))
            while time.perf_counter() - t < 3.0:
                try:
                    packet = history.packet()
                except engine.RunClosed:
                    break
                try:
                    history.submit(fuzz_batch(rng, packet))
                except engine.BatchRejected:
                    pass
                n += 1
                if packet["day"] == packet["horizon"]:
                    break
        elapsed = time.perf_counter() - t
    print(f"fuzz throughput: {n / elapsed:7.1f} batches/s through the SQLite desk runtime ({n} batches)")


def main():
    reference_runs()
    grading()
    submit_by_day()
    fuzz()


if __name__ == "__main__":
    main()
