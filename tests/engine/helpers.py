"""Helpers for engine tests: play policies, tamper with histories."""

import engine
from engine._baselines import policy_batch


def play(instance, policy="reference", days=None):
    """A Run after `days` checkpoints of a scripted policy (all of them by default)."""
    run = engine.Run(instance)
    while run.open_day is not None and (days is None or run.open_day <= days):
        run.submit(policy_batch(policy, run.packet()))
    return run
