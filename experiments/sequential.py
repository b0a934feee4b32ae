"""Sequential sweeps: run the worlds in the committed order and stop where the
pre-registered rules say.

A sweep that serves only betting comparisons is sequential: its items run in
items-manifest order, each finished item is fed to every comparison's
monitor (the same experiments/rules.py a decision uses), and the sweep stops
as soon as every monitor has stopped -- the wealth for or against the claim
reached 1/alpha, fell below the futility threshold, or max_n worlds were
measured. Nothing after that item is measured, so for an arm whose worlds are
expensive (a model attempt per world) stopping saves the work itself: with
one worker not a single extra world runs, with W workers at most W - 1
worlds that were already under way. A sweep that also serves a fixed-n rule
runs every planned world.

Generic over arms: a monitor sees only the finished item's values, whichever
arm produced them; a resumed sweep replays the journalled items into fresh
monitors first and continues mid-sequence.
"""

import multiprocessing

from . import rules
from .errors import ExperimentError


class Monitor:
    """One betting comparison's stopping rule, fed one finished world at a time."""

    def __init__(self, name, spec):
        self.name, self.spec = name, spec
        self.rule = rules.Rule(spec)
        self.test = self.rule.betting()
        self.metric = spec["metric"]

    @property
    def stopped(self) -> bool:
        return self.test.outcome is not None

    def feed(self, item_id, values):
        """values: [[arm, seed, metric, value], ...] of one item (all its arms)."""
        if self.stopped:
            return
        table = {(item_id, arm, seed): value for arm, seed, metric, value in values if metric == self.metric}
        try:
            D = self.rule.differences([item_id], table, self.metric, "sweep")[0][0]
        except rules.RuleError as exc:
            raise ExperimentError(f"{self.name}: {exc}")
        self.test.push(D)

    def record(self) -> dict:
        return {"n": self.test.n, "verdict": self.test.outcome, "reason": self.test.why}


def monitors_for(served) -> list:
    """Monitors for the served comparisons -- or [] when any of them is a fixed-n rule (then every
    planned world runs)."""
    out = []
    for c in served:
        spec = c["spec"]
        if rules.Rule(spec).method != rules.BETTING:
            return []
        out.append(Monitor(c["name"], spec))
    return out


def run_in_order(steps, workers, compute, on_item):
    """Walk `steps` ([(item_id, task or None)], manifest order): a task is computed (`compute(task)`,
    at most `workers` under way, results taken in order), None means already measured. `on_item(item_id,
    result or None)` returns False to stop: nothing after that item is started any more."""
    if workers < 1:
        raise ExperimentError("--workers: expected at least 1")
    if workers == 1:
        for iid, task in steps:
            if not on_item(iid, compute(task) if task is not None else None):
                return
        return
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(workers)
    try:
        pending, ahead = {}, 0
        for i, (iid, task) in enumerate(steps):
            # keep up to `workers` tasks under way, from this step on
            j = max(i, ahead)
            while j < len(steps) and sum(1 for k in pending if k >= i) < workers:
                if steps[j][1] is not None:
                    pending[j] = pool.apply_async(compute, (steps[j][1],))
                j += 1
            ahead = j
            result = pending.pop(i).get() if task is not None else None
            if not on_item(iid, result):
                return
    finally:
        pool.close()  # the worlds already under way finish (never killed half-way), nothing new starts
        pool.join()
