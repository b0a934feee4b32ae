"""experiments/rules.py: each rule against an independent float64 implementation on random
inputs, exact values for known cases, the integer primitives, and the module's own rule that it
imports nothing but the interpreter's built-in math (the browser runs its source)."""

import ast
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from experiments import rules

SPEC = {
    "version": 2,
    "arms": {"a": 1, "b": -1},
    "seeds": [0],
    "metric": "score",
    "bounds": [0, 100],
    "margin": "0",
    "alpha": "0.05",
    "method": {"name": rules.HOEFFDING},
}
BET = {"name": rules.BETTING, "bet": "agrapa", "truncation": "0.75"}


def spec(method=None, **over):
    s = dict(SPEC, **over)
    if method is not None:
        s["method"] = method
    if s["method"]["name"] == rules.BETTING:
        s.setdefault("stopping", {"max_n": 10_000, "futility": None})
    return s


def values_for(diffs):
    """Pairs (a, b) in [0, 100] with a - b = d."""
    ids = [f"FUND_0{1 + i % 4}/seed-{i + 1}" for i in range(len(diffs))]
    vals = {}
    for iid, d in zip(ids, diffs):
        a, b = (100, 100 - d) if d >= 0 else (100 + d, 100)
        vals[(iid, "a", 0)], vals[(iid, "b", 0)] = a, b
    return ids, vals


# -- independent float64 implementations ----------------------------------------------------------


def f64_fixed(d, method, alpha, R=200.0):
    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    if method == rules.HOEFFDING:
        h = R * np.sqrt(np.log(1 / alpha) / (2 * n))
    else:
        v = d.var(ddof=1)
        h = np.sqrt(2 * v * np.log(2 / alpha) / n) + 7 * R * np.log(2 / alpha) / (3 * (n - 1))
    return float(d.mean() - h), float(d.mean() + h)


def f64_betting(d, c=0.75, lo=-100.0, hi=100.0, margin=0.0):
    """log K+ and log K- after each world, aGRAPA as the method page states it, in float64."""
    u, um, R2 = margin - lo, hi - margin, (hi - lo) ** 2
    s1 = s2 = 0.0
    kp = km = 0.0
    out = []
    for x in d:
        X = x - margin
        lp = min(c, max(0.0, 4 * u * s1 / (R2 + 4 * s2)))
        lm = min(c, max(0.0, -4 * um * s1 / (R2 + 4 * s2)))
        kp += math.log1p(lp * X / u)
        km += math.log1p(-lm * X / um)
        s1 += X
        s2 += X * X
        out.append((kp, km))
    return out


def f64_cs_lower(d, c=0.75, lo=-100.0, margin=0.0, alpha=0.05):
    """The lower end of the betting confidence sequence at n = len(d), by float bisection."""
    u, R2 = margin - lo, 200.0**2
    bets, s1, s2 = [], 0.0, 0.0
    for x in d:
        X = x - margin
        bets.append(min(c, max(0.0, 4 * u * s1 / (R2 + 4 * s2))) / u)
        s1 += X
        s2 += X * X

    def logk(m):
        return sum(math.log1p(min(b, c / (m - lo)) * (x - m)) for b, x in zip(bets, d) if b)

    if logk(lo + 1e-9) < math.log(1 / alpha):
        return lo
    a, b = lo + 1e-9, 100.0
    for _ in range(60):
        mid = (a + b) / 2
        a, b = (mid, b) if logk(mid) >= math.log(1 / alpha) else (a, mid)
    return a


diffs = st.lists(st.integers(-100, 100), min_size=2, max_size=300)
skewed = st.lists(st.sampled_from([-40, -5, 0, 5, 10, 20, 35, 60]), min_size=2, max_size=200)


@settings(max_examples=60, deadline=None)
@given(
    diffs,
    st.sampled_from([rules.HOEFFDING, rules.BERNSTEIN]),
    st.sampled_from(["0.05", "0.01", "0.2"]),
    st.integers(-10, 10),
)
def test_fixed_n_rules_agree_with_float64(d, method, alpha, margin):
    ids, vals = values_for(d)
    out = rules.decide(spec({"name": method}, alpha=alpha, margin=str(margin)), ids, vals)
    lower, upper = f64_fixed(d, method, float(alpha))
    lower, upper = max(lower, -100.0), min(upper, 100.0)
    assert abs(float(out["lower_bound"]) - lower) < 1e-8 and float(out["lower_bound"]) <= lower + 1e-12
    assert abs(float(out["upper_bound"]) - upper) < 1e-8 and float(out["upper_bound"]) >= upper - 1e-12
    assert out["n"] == len(d) and out["range"] == "200"
    if lower > margin + 1e-6:
        assert out["verdict"] == rules.SUPPORTED
    elif upper < margin - 1e-6:
        assert out["verdict"] == rules.NOT_SUPPORTED
    elif lower < margin - 1e-6 and upper > margin + 1e-6:
        assert out["verdict"] == rules.INCONCLUSIVE and out["inconclusive_because"] == rules.WHY_STRADDLES


@settings(max_examples=60, deadline=None)
@given(st.one_of(diffs, skewed))
def test_the_betting_wealth_agrees_with_float64(d):
    rule = rules.Rule(spec(BET))
    test = rule.betting(keep=True)
    stopped = None
    for x in d:
        if test.push(x * rule.Q) is not None and stopped is None:
            stopped = test.n
    want = f64_betting(d[: test.n])
    for (n, mp, ep, mm, em), (kp, km) in zip(test.path, want):
        assert abs(math.log(mp) + ep * math.log(2) - kp) < 1e-9 and abs(math.log(mm) + em * math.log(2) - km) < 1e-9
    # it stops exactly where the float wealth first reaches 1/alpha (unless within 1e-9 of it)
    first = next((i + 1 for i, (kp, km) in enumerate(f64_betting(d)) if max(kp, km) >= math.log(20)), None)
    near = any(abs(max(kp, km) - math.log(20)) < 1e-9 for kp, km in f64_betting(d))
    if not near:
        assert stopped == first


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([-20, 0, 10, 15, 25, 40, 60]), min_size=3, max_size=60))
def test_the_betting_confidence_sequence_agrees_with_float64(d):
    ids, vals = values_for(d)
    out = rules.decide(spec(BET), ids, vals)
    want = f64_cs_lower(d[: out["n"]])
    got = float(out["lower_bound"])
    assert got <= want + 1e-7 and abs(got - want) < 1e-6  # conservative, and within the bisection's grid


@settings(max_examples=80, deadline=None)
@given(
    st.integers(-(10**6), 10**6),
    st.integers(0, 10**9),
    st.integers(1, 5000),
    st.sampled_from([rules.HOEFFDING, rules.BERNSTEIN]),
)
def test_the_integer_verdict_is_the_published_one(s1, spread, n, method):
    rule = rules.Rule(spec({"name": method}))
    s2 = -(-s1 * s1 // n) + spread  # any s2 >= s1^2 / n is a possible sum of squares
    lower, upper, _ = rule.fixed_texts(s1, s2, n)
    assert rule.fixed_verdict(s1, s2, n) == rule.verdict_of(lower, upper)


def test_exact_values_for_a_known_case():
    ids, vals = values_for([30] * 1000)
    out = rules.decide(spec(), ids, vals)
    # half-width = 200 sqrt(ln 20 / 2000) = 7.74045512029...: published rounded up, the bounds outward
    assert out["estimate"] == {"exact": "30/1", "decimal": "30.000000000"}
    assert out["half_width"] == "7.740455121"
    assert out["lower_bound"] == "22.259544879" and out["upper_bound"] == "37.740455121"
    assert out["verdict"] == rules.SUPPORTED and out["confidence"] == "strong"
    assert out["series"][-1]["n"] == 1000 and len(out["series"]) == 100
    assert out["first_settled_n"] == 67 and out["report"]["se"] == "0.000000000"


def test_a_betting_decision_stops_and_says_why():
    ids, vals = values_for([20] * 200)
    out = rules.decide(spec(BET), ids, vals)
    assert out["verdict"] == rules.SUPPORTED and out["n"] < 30 and out["n_observed"] == 200
    seq = out["sequential"]
    assert seq["stopped_at"] == out["n"] and seq["threshold"] == "20" and float(seq["wealth_for"]) >= 20
    assert seq["reason"] == "the wealth for the claim reached 1/alpha" and seq["path"][-1]["n"] == out["n"]
    ids, vals = values_for([-20] * 200)
    assert rules.decide(spec(BET), ids, vals)["verdict"] == rules.NOT_SUPPORTED
    ids, vals = values_for([5, -5] * 30)
    out = rules.decide(spec(BET, stopping={"max_n": 40, "futility": None}), ids, vals)
    assert (out["verdict"], out["inconclusive_because"], out["n"]) == (rules.INCONCLUSIVE, rules.WHY_N, 40)
    # the wealth for the claim bets 0.275 of itself on the second world (after +30) and loses it on -100
    ids, vals = values_for([30] + [-100] * 40)
    out = rules.decide(spec(BET, stopping={"max_n": 40, "futility": "0.8"}), ids, vals)
    assert (out["verdict"], out["inconclusive_because"], out["n"]) == (rules.INCONCLUSIVE, rules.WHY_FUTILITY, 2)
    assert out["sequential"]["wealth_for"] == "0.724770"


def test_the_report():
    ids = ["FUND_01/seed-1", "FUND_02/seed-2", "FUND_01/seed-3", "FUND_02/seed-4"]
    a, b = [90, 80, 70, 100], [60, 70, 40, 90]
    vals = {**{(i, "a", 0): v for i, v in zip(ids, a)}, **{(i, "b", 0): v for i, v in zip(ids, b)}}
    r = rules.decide(spec(), ids, vals)["report"]
    d = np.array(a) - np.array(b)
    assert r["per_arm_mean"] == {"a": "85.000000000", "b": "65.000000000"} and r["mean_difference"] == "20.000000000"
    assert abs(float(r["se"]) - d.std(ddof=1) / 2) < 1e-9
    resid = {"FUND_01": (d[0] - 20) + (d[2] - 20), "FUND_02": (d[1] - 20) + (d[3] - 20)}
    assert abs(float(r["se_clustered"]) - math.sqrt(2 * sum(v * v for v in resid.values()) / 16)) < 1e-9
    assert abs(float(r["correlation"]) - np.corrcoef(a, b)[0, 1]) < 1e-9 and r["clusters"] == 2 and r["n"] == 4


def test_ln_and_square_roots_bracket_the_truth():
    from decimal import Decimal, localcontext

    for p, q in ((20, 1), (40, 1), (1000, 1), (10**16, 3), (3, 2), (7, 7), (2**80 + 1, 2**20)):
        lo, hi = rules.ln_interval(p, q)
        with localcontext() as ctx:
            ctx.prec = 80
            true = (Decimal(p) / Decimal(q)).ln() * rules.E
        assert lo <= true <= hi and hi - lo <= 2
    for num, den in ((2, 1), (1, 3), (10**30 + 7, 11), (0, 5)):
        f, c = rules.sqrt_floor(num, den), rules.sqrt_ceil(num, den)
        assert f * f <= num * rules.E**2 // den and (f + 1) ** 2 > num * rules.E**2 // den and c - f in (0, 1)


def test_wealth_text():
    P = rules.P
    assert rules.wealth_text(1 << (P - 1), -(P - 1)) == "1.00000"
    assert rules.wealth_text(20 << (P - 5), -(P - 5)) == "20.0000"
    assert rules.wealth_text(1 << (P - 1), -(P - 1) - 30) == "9.31322e-10"
    assert rules.wealth_text(3 << P, 40) == "6.08472e31"


def test_the_module_imports_only_builtins():
    path = os.path.join(os.path.dirname(rules.__file__), "rules.py")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    tree = ast.parse(source)
    imported = {
        a.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for a in node.names
    }
    assert imported == {"math", "json"}  # json only inside recompute_json (the browser's stdlib has it)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, float)]


def test_recompute_refuses_rows_it_cannot_decide_from():
    ids, vals = values_for([3, 4, 5])
    rows = [[i, a, s, v] for (i, a, s), v in vals.items()]
    data = {"spec": spec(), "item_ids": ids, "rows": [r for r in rows if r[0] != ids[-1]]}
    with pytest.raises(rules.RuleError, match="2 of the 3 planned worlds"):
        rules.recompute(data)
    assert '"ok": false' in rules.recompute_json(__import__("json").dumps(data))
    with pytest.raises(rules.RuleError, match="two score rows"):
        rules.recompute(dict(data, rows=rows + rows[:1]))
