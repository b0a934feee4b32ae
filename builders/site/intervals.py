"""95 % intervals for the leaderboard, in exact arithmetic.

Two intervals, both over worlds (one observation per world an agent played):

- the qualified rate: the Wilson score interval with z = 1.96 (Wilson 1927),
  which stays inside [0, 1] and is sensible at 0 of n and n of n;
- the mean score: the Student-t interval, mean +- t(0.975, n - 1) * s / sqrt(n),
  with s the sample standard deviation and t from the table below, cut to the
  score's range [0, 100].

Everything is computed with integers and fractions; the one square root is
taken exactly (`_floor_minus_sqrt` / `_ceil_plus_sqrt` compare squares), and
the bounds are rounded outward to one decimal, so the printed interval always
contains the exact one and the same digits come out on every machine.
"""

from fractions import Fraction
from math import isqrt

Z = Fraction(196, 100)
# t(0.975, df), rounded up at the third decimal (so never narrower than the
# exact quantile); a df between two rows takes the smaller df's (larger) value.
# tests/site/test_units.py recomputes each from the t distribution.
T_975 = {
    1: "12.707",
    2: "4.303",
    3: "3.183",
    4: "2.777",
    5: "2.571",
    6: "2.447",
    7: "2.365",
    8: "2.307",
    9: "2.263",
    10: "2.229",
    11: "2.201",
    12: "2.179",
    13: "2.161",
    14: "2.145",
    15: "2.132",
    16: "2.120",
    17: "2.110",
    18: "2.101",
    19: "2.094",
    20: "2.086",
    21: "2.080",
    22: "2.074",
    23: "2.069",
    24: "2.064",
    25: "2.060",
    26: "2.056",
    27: "2.052",
    28: "2.049",
    29: "2.046",
    30: "2.043",
    40: "2.022",
    50: "2.009",
    60: "2.001",
    80: "1.991",
    100: "1.984",
    120: "1.980",
    200: "1.972",
    500: "1.965",
    1000: "1.963",
}
RATE_METHOD = "Wilson score interval, 95 % (z = 1.96)"
MEAN_METHOD = "Student-t interval, 95 %, over worlds"


def t_975(df: int) -> Fraction:
    return Fraction(T_975[max(k for k in T_975 if k <= df)])


def _floor_minus_sqrt(a: Fraction, b2: Fraction) -> int:
    """floor(a - sqrt(b2)) exactly, for b2 >= 0."""
    m = a.numerator // a.denominator - isqrt(b2.numerator // b2.denominator) - 2
    while a - (m + 1) >= 0 and (a - (m + 1)) ** 2 >= b2:
        m += 1
    return m


def _ceil_plus_sqrt(a: Fraction, b2: Fraction) -> int:
    """ceil(a + sqrt(b2)) exactly, for b2 >= 0."""
    m = -((-a.numerator) // a.denominator) + isqrt(b2.numerator // b2.denominator) + 2
    while (m - 1) - a >= 0 and ((m - 1) - a) ** 2 >= b2:
        m -= 1
    return m


def _tenths(value: Fraction) -> str:
    """Tenths as a decimal: 757 -> "75.7"."""
    n = int(value)
    sign = "-" if n < 0 else ""
    return f"{sign}{abs(n) // 10}.{abs(n) % 10}"


def _round_tenths(x: Fraction) -> int:
    """x in tenths, rounded half to even."""
    return round(x * 10)


def wilson(k: int, n: int) -> dict | None:
    """The qualified rate k/n in percent with its Wilson interval, or None when n is 0."""
    if n <= 0:
        return None
    z2 = Z * Z
    denom = n + z2
    centre = Fraction(1000) * (k + z2 / 2) / denom  # in tenths of a percent
    half2 = (Fraction(1000) * Z / denom) ** 2 * (Fraction(k * (n - k), n) + z2 / 4)
    lo, hi = max(0, _floor_minus_sqrt(centre, half2)), min(1000, _ceil_plus_sqrt(centre, half2))
    return {
        "value": _tenths(_round_tenths(Fraction(100 * k, n))),
        "lower": _tenths(lo),
        "upper": _tenths(hi),
        "k": k,
        "n": n,
    }


def t_mean(values: list, lowest: int = 0, highest: int = 100) -> dict | None:
    """The mean of integer `values` with its Student-t interval (None for no values;
    no interval for one value)."""
    n = len(values)
    if n == 0:
        return None
    mean = Fraction(sum(values), n)
    out = {"value": _tenths(_round_tenths(mean)), "lower": None, "upper": None, "n": n}
    if n == 1:
        return out
    var = Fraction(n * sum(v * v for v in values) - sum(values) ** 2, n * (n - 1))
    half2 = Fraction(100) * t_975(n - 1) ** 2 * var / n  # (10 * half)^2: tenths
    out["lower"] = _tenths(max(10 * lowest, _floor_minus_sqrt(10 * mean, half2)))
    out["upper"] = _tenths(min(10 * highest, _ceil_plus_sqrt(10 * mean, half2)))
    return out
