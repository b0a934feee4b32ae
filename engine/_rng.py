"""The one source of randomness: SHA-256 over family/seed/label/counter.

No `random`, no clock, no hash-seed: the same (family, seed) draws the same
numbers on every interpreter.
"""

import hashlib


class HashRng:
    """Deterministic draws keyed by a label, so adding a draw elsewhere does not
    shift the others."""

    def __init__(self, family: str, seed: int):
        self.family = family
        self.seed = seed
        self._counters = {}

    def _digest(self, label: str) -> int:
        counter = self._counters.get(label, 0)
        self._counters[label] = counter + 1
        key = f"{self.family}/{self.seed}/{label}/{counter}".encode("utf-8")
        return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")

    def randint(self, label: str, low: int, high: int) -> int:
        """An integer in [low, high], both included (modulo bias < 2^-50)."""
        if high < low:
            raise ValueError("empty range")
        return low + self._digest(label) % (high - low + 1)

    def choice(self, label: str, options):
        options = list(options)
        return options[self.randint(label, 0, len(options) - 1)]

    def step(self, label: str, low: int, high: int, step: int) -> int:
        """A multiple of `step` in [low, high]."""
        return step * self.randint(label, low // step, high // step)
