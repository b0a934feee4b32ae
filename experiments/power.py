"""Worlds needed: how many worlds each rule needs to say "supported" with 80 % power.

Measured by simulation through the decision code itself (experiments/rules.py,
integers only), never by a formula: sequences of paired differences are drawn
from a distribution -- a pilot's own differences resampled, or a stated shape
-- and each rule is run on them exactly as a decision runs it.

  fixed-n rules (Hoeffding, empirical Bernstein): the smallest n on a grid
      (every n to 50, then steps of 2 %) at which at least 80 % of the simulated
      sequences end "supported" at that n;
  betting: the 80th percentile of the n at which the simulated sweeps stop
      "supported" (a sweep that never does counts as never).

The draws come from SplitMix64 (Steele, Lea and Flood 2014), written out here
so the numbers are the same on every machine: no `random`, no numpy.
"""

import bisect

from . import rules

MASK = (1 << 64) - 1
POWER = (4, 5)  # 80 %
SIMS = 400  # simulated sequences per rule, for a pilot
CAP = 100_000  # worlds: beyond this a rule is reported as needing more


class SplitMix64:
    __slots__ = ("s",)

    def __init__(self, seed):
        self.s = seed & MASK

    def next(self) -> int:
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


class Sampler:
    """Integer differences drawn from (value, weight) pairs: weight / total each."""

    def __init__(self, support):
        self.values = [v for v, _ in support]
        self.cum, total = [], 0
        for _, w in support:
            total += w
            self.cum.append(total)
        self.total = total

    def draw(self, rng) -> int:
        u = (rng.next() * self.total) >> 64  # in [0, total)
        return self.values[bisect.bisect_right(self.cum, u)]


def grid(cap=CAP):
    n, out = 2, []
    while n <= cap:
        out.append(n)
        n = n + 1 if n < 50 else max(n + 1, n * 51 // 50)
    return out


def variant(spec, method, cap=CAP):
    """The spec with another rule (a betting rule keeps the spec's own bet, else aGRAPA 0.75)."""
    base = {k: v for k, v in spec.items() if k not in ("method", "stopping", "version")}
    base["version"] = 2
    if method == rules.BETTING:
        own = (
            spec["method"]
            if isinstance(spec["method"], dict) and spec["method"].get("name") == rules.BETTING
            else {"name": rules.BETTING, "bet": "agrapa", "truncation": "0.75"}
        )
        return dict(base, method=own, stopping={"max_n": cap, "futility": None})
    return dict(base, method={"name": method})


def fixed_needed(rule, sampler, rng, sims=SIMS, cap=CAP):
    """Smallest grid n at which >= 80 % of `sims` sequences are supported at n (None: not by `cap`)."""
    s1, s2 = [0] * sims, [0] * sims
    at = 0
    want = -(-sims * POWER[0] // POWER[1])
    for n in grid(cap):
        for j in range(sims):
            a, b = s1[j], s2[j]
            for _ in range(n - at):
                D = sampler.draw(rng)
                a += D
                b += D * D
            s1[j], s2[j] = a, b
        at = n
        if sum(1 for j in range(sims) if rule.fixed_verdict(s1[j], s2[j], n) == rules.SUPPORTED) >= want:
            return n
    return None


def betting_needed(rule, sampler, rng, sims=SIMS, cap=CAP):
    """80th percentile of the n at which `sims` betting sweeps stop supported (None: not by `cap`)."""
    stops = []
    for _ in range(sims):
        test = rule.betting()
        outcome = None
        while outcome is None and test.n < cap:
            outcome = test.push(sampler.draw(rng))
        stops.append(test.n if outcome == rules.SUPPORTED else None)
    need = -(-sims * POWER[0] // POWER[1])
    done = sorted(n for n in stops if n is not None)
    return done[need - 1] if len(done) >= need else None


def _approx_needed(rule, mean, var):
    """A rough float estimate of a fixed-n rule's worlds (gates the simulation only; never published)."""
    import math

    gap = mean - rule.M / rule.Q
    if gap <= 0:
        return math.inf
    R = rule.R / rule.Q
    an, ad = rule.alpha
    sd = math.sqrt(max(var, 0.0))
    if rule.method == rules.HOEFFDING:
        return ((0.85 * sd + R * math.sqrt(math.log(ad / an) / 2)) / gap) ** 2
    ln2 = math.log(2 * ad / an)
    return ((0.85 * sd + sd * math.sqrt(2 * ln2)) / gap) ** 2 + 7 * R * ln2 / (3 * gap)


def worlds_needed(spec, Ds, seed, sims=SIMS, cap=CAP) -> dict:
    """{method: {"worlds", "cap", "sims"}} for the differences Ds (in the spec's D units) resampled."""
    support = {}
    for D in Ds:
        support[D] = support.get(D, 0) + 1
    sampler = Sampler(sorted(support.items()))
    out = {}
    for i, method in enumerate(rules.METHODS):
        rule = rules.Rule(variant(spec, method, cap))
        rng = SplitMix64(seed + i)
        n = len(Ds)
        mean = sum(Ds) / n / rule.Q
        var = (sum(D * D for D in Ds) / n - (sum(Ds) / n) ** 2) / rule.Q**2
        if method == rules.BETTING:
            hopeless = _approx_needed(rules.Rule(variant(spec, rules.BERNSTEIN)), mean, var) > 4 * cap
            worlds = None if hopeless else betting_needed(rule, sampler, rng, sims, cap)
        else:
            hopeless = _approx_needed(rule, mean, var) > 2 * cap
            worlds = None if hopeless else fixed_needed(rule, sampler, rng, sims, cap)
        out[method] = {"worlds": worlds, "cap": cap, "sims": sims}
    return out
