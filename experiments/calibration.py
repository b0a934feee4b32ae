"""The decision rules measured, not asserted: `python -m experiments calibrate`.

Calibration. For each shape of paired difference below, exactly at the
margin (so "supported" is always false), SWEEPS simulated null sweeps of
MAX_N worlds; each rule is run on every sweep by the decision code itself
(experiments/rules.py) and its false-"supported" count published:

  paired_hoeffding, paired_empirical_bernstein   at n = 100 and n = 1,000, as pre-registered
  the same two read after every 10th world, stopping at the first "supported"
                                                 (how a fixed-n rule must not be used)
  paired_betting (aGRAPA, truncation 0.75)       read at every world up to 1,000

Each count is set beside the 95th percentile of Binomial(SWEEPS, alpha),
computed exactly: a rule whose true rate is alpha stays at or below it 95 %
of the time.

Power. For each effect shape, the worlds each rule needs to say "supported"
with 80 % power (experiments/power.py, POWER_SIMS sequences per rule).

Everything is seeded (SEED) and drawn by SplitMix64, so the command
reproduces runs/comparisons/calibration/rules-calibration.json byte for byte;
`--check` recomputes and compares. Timings go to stderr, never into the file.
"""

import hashlib
import json
import multiprocessing
import os
import time

from . import power, rules
from .errors import ExperimentError

SCHEMA = "fundbook.rules-calibration/1"
OUT = os.path.join("runs", "comparisons", "calibration", "rules-calibration.json")
SEED = 20261201
SWEEPS = 10_000
MAX_N = 1000
FIXED_NS = (100, 1000)
PEEK_EVERY = 10
POWER_SIMS = 2000
ALPHA = "0.05"
BET = {"name": rules.BETTING, "bet": "agrapa", "truncation": "0.75"}
SHIPPED = os.path.join("runs", "comparisons", "heldout-baselines")
SHIPPED_PAIRS = (
    ("baseline:reference", "baseline:shortest-cheapest"),
    ("baseline:shortest-cheapest", "baseline:do-nothing"),
)

# (name, [(difference in score points, weight)]) -- every null shape has mean exactly 0
NULL_SHAPES = (
    ("two-point: -100 or +100, half each (the widest variance)", ((-100, 1), (100, 1))),
    ("three-point: -100, 0, +100 with 10 %, 80 %, 10 %", ((-100, 1), (0, 8), (100, 1))),
    ("skewed: -90 with 10 %, +10 with 90 %", ((-90, 1), (10, 9))),
    ("uniform on -100..100", tuple((d, 1) for d in range(-100, 101))),
    ("narrow: uniform on -5..5", tuple((d, 1) for d in range(-5, 6))),
)
POWER_SHAPES = (
    ("mean 5, sd 10: -5 or +15, half each", ((-5, 1), (15, 1))),
    ("mean 10: -100, 0, +100 with 5 %, 80 %, 15 %", ((-100, 1), (0, 16), (100, 3))),
    ("mean 2, sd 5: -3 or +7, half each", ((-3, 1), (7, 1))),
)


def _spec(method, margin="0"):
    spec = {
        "version": 2,
        "arms": {"a": 1, "b": -1},
        "seeds": [0],
        "metric": "score",
        "bounds": [0, 100],
        "margin": margin,
        "alpha": ALPHA,
        "method": method,
    }
    if method["name"] == rules.BETTING:
        spec["stopping"] = {"max_n": MAX_N, "futility": None}
    return spec


def shipped_shapes(root="."):
    """The shipped held-out differences of each comparison: [(name, support, mean as a decimal text, sha256)]."""
    path = os.path.join(root, SHIPPED, "observations.jsonl")
    with open(path, "rb") as fh:
        data = fh.read()
    score = {}
    for line in data.splitlines():
        r = json.loads(line)
        if r["metric"] == "score":
            score[(r["item_id"], r["arm"])] = r["value"]
    ids = sorted({i for i, _ in score}, key=str)
    out = []
    for a, b in SHIPPED_PAIRS:
        ds = [score[(i, a)] - score[(i, b)] for i in ids]
        support = {}
        for d in ds:
            support[d] = support.get(d, 0) + 1
        mean = rules.text(sum(ds), len(ds), 3)
        out.append(
            (
                f"the 1,000 shipped held-out differences, {a.split(':')[1]} minus {b.split(':')[1]}",
                tuple(sorted(support.items())),
                mean,
            )
        )
    return out, hashlib.sha256(data).hexdigest()


# -- one shape's null sweeps (runs in a worker process) -----------------------------------------


def _null_chunk(args):
    support, margin, seed, count = args
    scale = rules.Rule(_spec({"name": rules.HOEFFDING}, margin)).Q
    hoeffding = rules.Rule(_spec({"name": rules.HOEFFDING}, margin))
    bernstein = rules.Rule(_spec({"name": rules.BERNSTEIN}, margin))
    betting = rules.Rule(_spec(BET, margin))
    sampler = power.Sampler([(d * scale, w) for d, w in support])
    rng = power.SplitMix64(seed)
    tally = {k: 0 for k in _row_keys()}
    stops = []
    for _ in range(count):
        test = betting.betting()
        s1 = s2 = 0
        peek = {rules.HOEFFDING: False, rules.BERNSTEIN: False}
        for n in range(1, MAX_N + 1):
            D = sampler.draw(rng)
            s1 += D
            s2 += D * D
            if test.outcome is None:
                test.push(D)
            if n % PEEK_EVERY == 0 or n in FIXED_NS:
                for name, rule in ((rules.HOEFFDING, hoeffding), (rules.BERNSTEIN, bernstein)):
                    supported = rule.fixed_verdict(s1, s2, n) == rules.SUPPORTED
                    if n in FIXED_NS and supported:
                        tally[(name, f"n = {n}")] += 1
                    if n % PEEK_EVERY == 0 and supported:
                        peek[name] = True
        for name in peek:
            tally[(name, f"read every {PEEK_EVERY} worlds to {MAX_N}")] += peek[name]
        if test.outcome == rules.SUPPORTED:
            tally[(rules.BETTING, f"read at every world to {MAX_N}")] += 1
            stops.append(test.n)
    return tally, stops


def _row_keys():
    keys = []
    for name in (rules.HOEFFDING, rules.BERNSTEIN):
        keys += [(name, f"n = {n}") for n in FIXED_NS] + [(name, f"read every {PEEK_EVERY} worlds to {MAX_N}")]
    return keys + [(rules.BETTING, f"read at every world to {MAX_N}")]


def binomial_q95(n, alpha_num, alpha_den):
    """The smallest k with P(Binomial(n, alpha) <= k) >= 0.95, in exact integers."""
    import math

    g = math.gcd(alpha_num, alpha_den)
    a, d = alpha_num // g, alpha_den // g
    total = d**n
    acc, comb, p, q = 0, 1, 1, (d - a) ** n  # term j = C(n, j) a^j (d - a)^(n - j), over d^n
    for j in range(n + 1):
        acc += comb * p * q
        if 20 * acc >= 19 * total:
            return j
        comb = comb * (n - j) // (j + 1)
        p *= a
        q //= d - a
    return n


def calibrate(workers=2, sweeps=SWEEPS, power_sims=POWER_SIMS, root=".", log=None) -> dict:
    t0 = time.perf_counter()
    shipped, shipped_sha = shipped_shapes(root)
    nulls = [(name, support, "0") for name, support in NULL_SHAPES]
    nulls += [(f"{name}, margin at their mean", support, mean) for name, support, mean in shipped[:1]]
    chunks, plan = [], []
    per = -(-sweeps // 8)
    for i, (name, support, margin) in enumerate(nulls):
        for c in range(8):
            count = min(per, sweeps - c * per)
            if count > 0:
                chunks.append((support, margin, SEED + 1000 * i + c, count))
                plan.append(i)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        results = pool.map(_null_chunk, chunks)
    an, ad = rules.dec(ALPHA)
    q95 = binomial_q95(sweeps, an, ad)
    calibration = []
    for i, (name, support, margin) in enumerate(nulls):
        tally = {k: 0 for k in _row_keys()}
        stops = []
        for j, (t, s) in zip(plan, results):
            if j == i:
                for k, v in t.items():
                    tally[k] += v
                stops += s
        mean_num = sum(d * w for d, w in support)
        weight = sum(w for _, w in support)
        calibration.append(
            {
                "shape": name,
                "margin": margin,
                "mean": rules.text(mean_num, weight, 3),
                "rows": [
                    {
                        "rule": rule,
                        "read": read,
                        "supported": tally[(rule, read)],
                        "sweeps": sweeps,
                        "rate": rules.text(tally[(rule, read)], sweeps, 4),
                        "within_alpha": tally[(rule, read)] <= q95,
                    }
                    for rule, read in _row_keys()
                ],
            }
        )
    if log:
        log(
            f"calibration: {len(nulls)} shapes x {sweeps} null sweeps of {MAX_N} worlds in "
            f"{time.perf_counter() - t0:.0f} s"
        )
    t1 = time.perf_counter()
    power_rows = []
    effects = [(name, support, "0") for name, support in POWER_SHAPES]
    effects += [(name, support, "0") for name, support, _ in shipped]
    with ctx.Pool(workers) as pool:
        needed = pool.map(
            _power_one, [(support, SEED + 7919 * (i + 1), power_sims) for i, (_, support, _) in enumerate(effects)]
        )
    for (name, support, _), worlds in zip(effects, needed):
        weight = sum(w for _, w in support)
        s1 = sum(d * w for d, w in support)
        s2 = sum(d * d * w for d, w in support)
        power_rows.append(
            {
                "shape": name,
                "mean": rules.text(s1, weight, 3),
                "sd": rules._sqrt_text(weight * s2 - s1 * s1, weight * weight)[:-6],
                "worlds": worlds,
                "sims": power_sims,
            }
        )
    if log:
        log(f"power: {len(effects)} shapes x 3 rules x {power_sims} sequences in {time.perf_counter() - t1:.0f} s")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules.py"), "rb") as fh:
        rules_sha = hashlib.sha256(fh.read()).hexdigest()
    return {
        "schema": SCHEMA,
        "command": "python -m experiments calibrate",
        "seed": SEED,
        "alpha": ALPHA,
        "sweeps": sweeps,
        "max_n": MAX_N,
        "betting": BET,
        "binomial_q95": q95,
        "rules_sha256": rules_sha,
        "shipped_observations_sha256": shipped_sha,
        "draws": "SplitMix64 (experiments/power.py)",
        "calibration": calibration,
        "power": {"level": "80 %", "cap": power.CAP, "rows": power_rows},
    }


def _power_one(args):
    support, seed, sims = args
    out = {}
    for i, method in enumerate(rules.METHODS):
        method_obj = BET if method == rules.BETTING else {"name": method}
        spec = power.variant(_spec(method_obj), method, power.CAP)
        rule = rules.Rule(spec)
        sampler = power.Sampler([(d * rule.Q, w) for d, w in support])
        rng = power.SplitMix64(seed + i)
        if method == rules.BETTING:
            out[method] = power.betting_needed(rule, sampler, rng, sims, power.CAP)
        else:
            out[method] = power.fixed_needed(rule, sampler, rng, sims, power.CAP)
    return out


def pretty(doc) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True) + "\n").encode()


def main(check=False, workers=2, root=None, log=print):
    from .files import write_atomic

    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    doc = calibrate(workers, root=root, log=log)
    path = os.path.join(root, OUT)
    data = pretty(doc)
    if check:
        with open(path, "rb") as fh:
            if fh.read() != data:
                raise ExperimentError(
                    f"{path}: differs from a fresh calibration (seed {SEED}): run "
                    f"`python -m experiments calibrate` and commit it"
                )
        log(f"calibration: {path} reproduced byte for byte")
        return doc
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomic(path, data)
    log(f"calibration: wrote {path}")
    return doc
