"""`make bench` (engine part): figures, not assertions.

Prints the full 20-day reference run per episode (ms), grading throughput
(candidates/s) and fuzz throughput (batches/s through the SQLite runtime).
"""

import random
import statistics
import tempfile
import time

import engine
from engine._baselines import policy_batch


def _best(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
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
    t = time.perf_counter()
    while time.perf_counter() - t < 3.0:
        for instance, gold in zip(instances, golds):
            engine.grade_candidate(gold, instance)
            n += 1
    elapsed = time.perf_counter() - t
    print(f"grading throughput: {n / elapsed:7.1f} candidates/s ({n} gold candidates W1..W5, reference recomputed each time)")


def fuzz():
    from tests.engine.fuzzing import fuzz_batch  # the same generator the fuzz test uses
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
    fuzz()


if __name__ == "__main__":
    main()
