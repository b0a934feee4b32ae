"""The leaderboard's intervals (builders/site/intervals.py): exact digits,
rounded outward, against a floating-point reference that tests may use."""

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from builders.site import intervals


def _wilson_float(k, n, z=1.96):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return 100 * (centre - half), 100 * (centre + half)


def _betacf(a, b, x):
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        for aa in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + aa * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def _t_cdf(t, df):
    """P(T <= t) for Student's t with df degrees of freedom, t > 0 (the regularized incomplete beta)."""
    x = df / (df + t * t)
    a, b = df / 2, 0.5
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x))
    ibeta = front * _betacf(a, b, x) / a if x < (a + 1) / (a + b + 2) else 1 - front * _betacf(b, a, 1 - x) / b
    return 1 - ibeta / 2


def _t_quantile(df, p=0.975):
    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_cdf(mid, df) < p else (lo, mid)
    return hi


def test_the_t_table_is_each_quantile_rounded_up_at_the_third_decimal():
    for df, text in intervals.T_975.items():
        exact = _t_quantile(df)
        assert exact <= float(text) < exact + 0.001, (df, text, exact)
    assert intervals.t_975(35) == Fraction("2.043")  # between rows: the smaller df's, larger value
    assert intervals.t_975(10**6) == Fraction("1.963")


def test_known_values():
    assert intervals.wilson(12, 12) == {"value": "100.0", "lower": "75.7", "upper": "100.0", "k": 12, "n": 12}
    assert intervals.wilson(0, 12) == {"value": "0.0", "lower": "0.0", "upper": "24.3", "k": 0, "n": 12}
    assert intervals.wilson(5, 12) == {"value": "41.7", "lower": "19.3", "upper": "68.1", "k": 5, "n": 12}
    assert intervals.wilson(0, 0) is None and intervals.t_mean([]) is None
    assert intervals.t_mean([100] * 12) == {"value": "100.0", "lower": "100.0", "upper": "100.0", "n": 12}
    assert intervals.t_mean([0, 100]) == {"value": "50.0", "lower": "0.0", "upper": "100.0", "n": 2}
    assert intervals.t_mean([37]) == {"value": "37.0", "lower": None, "upper": None, "n": 1}
    # 47, 49 (n 2): mean 48, s = sqrt(2), half = 12.707 * sqrt(2) / sqrt(2) = 12.707
    assert intervals.t_mean([47, 49]) == {"value": "48.0", "lower": "35.2", "upper": "60.8", "n": 2}


def test_square_roots_are_exact_on_perfect_squares():
    # floor(10 - sqrt(4)) = 8 and ceil(10 + sqrt(4)) = 12, not 7 or 13 as an approximate root could give
    assert intervals._floor_minus_sqrt(Fraction(10), Fraction(4)) == 8
    assert intervals._ceil_plus_sqrt(Fraction(10), Fraction(4)) == 12
    assert intervals._floor_minus_sqrt(Fraction(1), Fraction(9)) == -2
    assert intervals._ceil_plus_sqrt(Fraction(-5, 2), Fraction(0)) == -2


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_bounds_contain_the_exact_interval_and_are_a_tenth_wide_at_most_more(kn):
    k, n = kn
    got = intervals.wilson(k, n)
    lo, hi = _wilson_float(k, n)
    assert float(got["lower"]) <= lo + 1e-9 and float(got["lower"]) >= min(lo, 100) - 0.1 - 1e-9
    assert float(got["upper"]) >= min(hi, 100) - 1e-9 and float(got["upper"]) <= hi + 0.1 + 1e-9
    assert abs(float(got["value"]) - 100 * k / n) <= 0.05 + 1e-9


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 100), min_size=2, max_size=60))
def test_t_bounds_contain_the_exact_interval_cut_to_the_scale(values):
    got = intervals.t_mean(values)
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(intervals.t_975(n - 1)) * sd / math.sqrt(n)
    lo, hi = max(0.0, mean - half), min(100.0, mean + half)
    assert lo - 0.1 - 1e-9 <= float(got["lower"]) <= lo + 1e-9
    assert hi - 1e-9 <= float(got["upper"]) <= hi + 0.1 + 1e-9
