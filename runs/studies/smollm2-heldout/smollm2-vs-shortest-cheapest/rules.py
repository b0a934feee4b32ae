"""The decision rules' arithmetic: paired Hoeffding, empirical Bernstein and
betting, and the report every decision carries -- in integers only.

This module is everything a decision computes from its observation rows. It
imports nothing but the interpreter's built-in `math` (for `isqrt`): no
`decimal`, no `fractions`, nothing of fundbook. So the browser's Pyodide
worker loads its published source (hash-pinned in each decision's evidence),
recomputes every published figure from the rows with the same integer
operations, and gets the same digits as CPython on any machine.

Numbers. Values are integers; bounds, margin, alpha and bet parameters are
integers or decimal strings. A paired difference d_i = sum_arm w x (the arm's
values on item i averaged over the spec's seeds) is held as the integer
D_i = d_i x Q, with Q = (number of seeds) x 10^k and k the most decimal
places among bounds and margin, so every difference, the margin M and the
range [LO, HI] of d are exact integers in the same unit.

Rounding keeps every rule conservative. A bound is computed at 40 decimal
digits (scale E) from interval arithmetic -- ln by an atanh series with a
stated error bound, square roots by math.isqrt rounded the safe way -- and
is then published to PLACES decimals, a lower bound rounded down and an upper
bound up; the verdict compares those published numbers with the margin. The
betting wealth is a binary float of P bits, rounded down at every step, so
the computed wealth never exceeds the true one; its threshold 1/alpha is
compared exactly.

  paired_hoeffding           lower = mean - R sqrt(ln(1/a) / 2n)                 fixed n
  paired_empirical_bernstein lower = mean - sqrt(2 V ln(2/a) / n) - 7 R ln(2/a) / (3 (n - 1))
                             (Maurer and Pontil 2009, Theorem 4; V the unbiased
                             sample variance)                                      fixed n
  paired_betting             K+_n = prod (1 + l_i (d_i - margin) / (margin - LO)) crosses 1/a:
                             supported, valid at every n (Ville's inequality);
                             K-_n, the same bet on the other side, crossing 1/a:
                             not supported; l_i predictable (aGRAPA or fixed)      any n

Descriptive figures (means, standard errors, the correlation) are exact
rationals, or square roots to 19 digits, rounded half-even to PLACES.
"""

import math

PLACES = 9                  # decimals published for estimates and bounds (metric units)
SERIES_PLACES = 6
SERIES_POINTS = 100
E = 10 ** 40                # bounds are computed at this scale
_G = 10 ** 60               # and ln at this one, with _LN_ERR units of slack
_LN_ERR = 10 ** 6
P = 64                      # bits of the betting wealth's mantissa
LS = 10 ** 12               # scale of a bet (fraction of wealth per unit of worst-case loss)
BISECT_PLACES = 10          # the confidence sequence is bisected to 10^-10 metric units
MAX_BET = (99, 100)         # truncation and fixed bets are at most 0.99: every factor stays >= 0.01
SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE = "supported", "not supported", "inconclusive"
HOEFFDING, BERNSTEIN, BETTING = "paired_hoeffding", "paired_empirical_bernstein", "paired_betting"
METHODS = (HOEFFDING, BERNSTEIN, BETTING)
BETS = ("agrapa", "fixed")
WHY_STRADDLES, WHY_N, WHY_FUTILITY = "bound straddles the margin", "n reached", "futility"


class RuleError(ValueError):
    """Observations a rule cannot decide from (a missing row, a value out of bounds)."""


# -- exact decimals ---------------------------------------------------------------------

def dec(value):
    """(numerator, 10^k) of an integer or a decimal string "-12.345" (already checked by the spec)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, 1
    text = str(value)
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("-").partition(".")
    if not whole.isdigit() or (frac and not frac.isdigit()) or not whole.isascii() or not frac.isascii():
        raise RuleError(f"expected an integer or a decimal string, got {text[:40]!r}")
    return sign * int(whole + frac), 10 ** len(frac)


def _ceil_div(a, b):
    return -(-a // b)


def text(num, den, places=PLACES, mode="even"):
    """num/den as fixed-point text with `places` decimals: rounded down ("floor"), up ("ceil") or
    half-even ("even"); never "-0.000"."""
    if den < 0:
        num, den = -num, -den
    scaled = num * 10 ** places
    q, r = divmod(scaled, den)
    if mode == "ceil" and r:
        q += 1
    elif mode == "even" and (2 * r > den or (2 * r == den and q % 2)):
        q += 1
    sign = "-" if q < 0 else ""
    digits = str(abs(q)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}" if places else f"{sign}{digits}"


def ratio_text(num, den):
    """An exact rational as "n/d" in lowest terms."""
    g = math.gcd(num, den) or 1
    num, den = num // g, den // g
    if den < 0:
        num, den = -num, -den
    return f"{num}/{den}"


# -- ln and square roots with stated error --------------------------------------------------

def _atanh_series(zn, zd):
    """2 atanh(zn/zd) x _G, for 0 <= zn/zd <= 1/3, each term rounded down (error under 4 units a term)."""
    term = zn * _G // zd
    z2 = zn * zn * _G // (zd * zd)
    total, j = 0, 0
    while term:
        total += term // (2 * j + 1)
        term = term * z2 // _G
        j += 1
    return 2 * total


_LN2 = _atanh_series(1, 3)  # ln 2 = 2 atanh(1/3)


def ln_interval(p, q):
    """(lo, hi) with lo <= ln(p/q) x E <= hi, for integers p >= q > 0.

    p/q = 2^k y with y in [1, 2), ln y = 2 atanh((y - 1)/(y + 1)), the series at
    60 digits has an error below 4 x 64 units of 10^-60 a call; k ln 2 adds k
    times that; _LN_ERR (10^6 units) covers it for any k below 2,000, and the
    result is widened to 40 digits outward."""
    if not (isinstance(p, int) and isinstance(q, int)) or q <= 0 or p < q:
        raise RuleError("ln: expected p >= q > 0")
    k = p.bit_length() - q.bit_length()   # >= 0 since p >= q
    if p < q << k:
        k -= 1                              # now 2^k <= p/q < 2^(k+1)
    den = q << k
    approx = _atanh_series(p - den, p + den) + k * _LN2
    shift = _G // E
    return (approx - _LN_ERR) // shift, _ceil_div(approx + _LN_ERR, shift)


def sqrt_floor(num, den, scale=E):
    """floor(sqrt(num/den) x scale) for num/den >= 0."""
    return math.isqrt(num * scale * scale // den)


def sqrt_ceil(num, den, scale=E):
    """ceil(sqrt(num/den) x scale) for num/den >= 0."""
    inner = _ceil_div(num * scale * scale, den)
    root = math.isqrt(inner)
    return root if root * root == inner else root + 1


def _sqrt_text(num, den):
    """sqrt(num/den) as text: 19 digits rounded down, then half-even to PLACES (descriptive only)."""
    extra = 10 ** (PLACES + 10)
    return text(sqrt_floor(num, den, extra), extra)


# -- the rule -------------------------------------------------------------------------------

class Rule:
    """A spec's decision rule with every constant as an exact integer."""

    def __init__(self, spec):
        self.spec = spec
        method = spec["method"]
        self.method = method if isinstance(method, str) else method["name"]
        self.params = {} if isinstance(method, str) else {k: v for k, v in method.items() if k != "name"}
        if self.method not in METHODS:
            raise RuleError(f"method: {self.method!r} is not a rule")
        self.stopping = spec.get("stopping")
        self.arms = spec["arms"]
        self.seeds = spec["seeds"]
        a, b, margin = dec(spec["bounds"][0]), dec(spec["bounds"][1]), dec(spec["margin"])
        self.alpha = dec(spec["alpha"])
        tenk = max(x[1] for x in (a, b, margin))   # 10^k, k the most decimal places of bounds and margin
        S = len(self.seeds)
        self.tenk = tenk             # values are integers, so D_i = sum w sum v x 10^k is one too
        self.Q = S * tenk
        A, B = a[0] * (tenk // a[1]), b[0] * (tenk // b[1])
        self.A, self.B = A, B        # the bounds in units of 10^-k
        pos = sum(w for w in self.arms.values() if w > 0)
        neg = sum(-w for w in self.arms.values() if w < 0)
        self.LO = S * (pos * A - neg * B)
        self.HI = S * (pos * B - neg * A)
        self.R = self.HI - self.LO
        self.M = S * margin[0] * (tenk // margin[1])
        self._lns, self._hoeffding = {}, {}
        self.futility = self.max_n = None
        if self.method == BETTING:
            if not self.LO < self.M < self.HI:
                raise RuleError("margin: a betting rule needs the margin strictly inside the range of the difference")
            bet = self.params.get("bet")
            if bet not in BETS:
                raise RuleError(f"method.bet: expected one of {', '.join(BETS)}")
            key = "truncation" if bet == "agrapa" else "lambda"
            self.c = dec(self.params[key])
            self.c_max = self.c[0] * LS // self.c[1]
            self.agrapa = bet == "agrapa"
            stop = self.stopping or {}
            self.max_n = stop.get("max_n")
            fut = stop.get("futility")
            self.futility = dec(fut) if fut is not None else None

    # -- the data ---------------------------------------------------------------------

    def differences(self, item_ids, values, metric="value", where="observations"):
        """[(D_i, T_i, B_i)] in item order: the difference and the two sides (positive weights, and
        the others with their sign flipped), each x len(seeds); T, B in the metric's integer units."""
        out = []
        a_lim, b_lim = self.A, self.B
        for iid in item_ids:
            t = b = 0
            for arm, weight in self.arms.items():
                total = 0
                for seed in self.seeds:
                    key = (iid, arm, seed)
                    if key not in values:
                        raise RuleError(f"{where}: no {metric} row for item {iid}, arm {arm}, seed {seed} "
                                        f"(failures are rows: a missing row is a broken sweep)")
                    v = values[key]
                    if v is None:
                        raise RuleError(f"{where}: {metric} of item {iid}, arm {arm} was not measured (null); "
                                        f"a paired bound needs a value for every item")
                    if isinstance(v, bool) or not isinstance(v, int) or not a_lim <= v * self.tenk <= b_lim:
                        raise RuleError(f"{where}: {metric} of item {iid}, arm {arm} is {v}, outside the spec's "
                                        f"bounds [{self.spec['bounds'][0]}, {self.spec['bounds'][1]}]")
                    total += v
                if weight > 0:
                    t += weight * total
                else:
                    b -= weight * total
            out.append(((t - b) * self.tenk, t, b))
        return out

    def d_text(self, num, den=1, places=PLACES, mode="even"):
        """A quantity in D units (num/den) as metric-unit text."""
        return text(num, den * self.Q, places, mode)

    # -- fixed-n bounds -----------------------------------------------------------------

    def half_width(self, s1, s2, n):
        """An upper bound on the half-width at n, at scale E in metric units (None: no bound at n)."""
        an, ad = self.alpha
        if self.method == HOEFFDING:
            h = self._hoeffding.get(n)
            if h is None:
                h = self._hoeffding[n] = _ceil_div(self.R * sqrt_ceil(self._ln(ad, an) * E, 2 * n, 1), self.Q)
            return h
        if n < 2:
            return None
        ln2 = self._ln(2 * ad, an)
        vnum, vden = n * s2 - s1 * s1, n * (n - 1)            # unbiased variance, in D units^2
        t1 = sqrt_ceil(2 * vnum * ln2 * E, vden * self.Q * self.Q * n, 1)
        t2 = _ceil_div(7 * self.R * ln2, 3 * self.Q * (n - 1))
        return t1 + t2

    def _ln(self, p, q):
        if (p, q) not in self._lns:
            self._lns[(p, q)] = ln_interval(p, q)[1]
        return self._lns[(p, q)]

    def fixed_bounds(self, s1, s2, n):
        """(lower, upper, half-width) at scale E in metric units from n, sum D and sum D^2: the lower
        rounded down, the upper up, both clipped to the range of d (which they are when the rule gives
        no bound at n, half-width None)."""
        lo_e, hi_e = self.LO * E // self.Q, _ceil_div(self.HI * E, self.Q)
        h = self.half_width(s1, s2, n)
        if h is None:
            return lo_e, hi_e, None
        return max(s1 * E // (n * self.Q) - h, lo_e), min(_ceil_div(s1 * E, n * self.Q) + h, hi_e), h

    def verdict_of(self, lower, upper):
        """The verdict from published bounds (texts with PLACES decimals) against the exact margin."""
        scale = 10 ** PLACES
        if int(lower.replace(".", "")) * self.Q > self.M * scale:
            return SUPPORTED
        if int(upper.replace(".", "")) * self.Q < self.M * scale:
            return NOT_SUPPORTED
        return INCONCLUSIVE

    def fixed_texts(self, s1, s2, n, places=PLACES):
        low, high, h = self.fixed_bounds(s1, s2, n)
        return text(low, E, places, "floor"), text(high, E, places, "ceil"), h

    def fixed_verdict(self, s1, s2, n):
        """verdict_of(fixed_texts(...)) in integers alone (the simulations call it millions of times)."""
        low, high, _ = self.fixed_bounds(s1, s2, n)
        cut = E // 10 ** PLACES
        scale = 10 ** PLACES
        if (low // cut) * self.Q > self.M * scale:
            return SUPPORTED
        if -(-high // cut) * self.Q < self.M * scale:
            return NOT_SUPPORTED
        return INCONCLUSIVE

    def betting(self, keep=False):
        return BettingTest(self, keep)

    def stopping_threshold(self):
        """1/alpha as text (exact when it is a whole number or a short decimal)."""
        num, den = self.alpha[1], self.alpha[0]
        return str(num // den) if num % den == 0 else text(num, den, 6, "floor")


class BettingTest:
    """Both wealth processes of a betting rule, one observation at a time.

    K+ bets on d > margin, K- on d < margin. Before observation t + 1 the bet is
    a fraction l of the wealth per unit of worst-case loss (margin - LO for K+,
    HI - margin for K-), chosen from the first t observations only:

      aGRAPA  l+ = min(c, max(0, 4 u+ s1 / (R^2 + 4 s2)))   with s1, s2 the sums of (D - M) and
              l- = min(c, max(0, -4 u- s1 / (R^2 + 4 s2)))  (D - M)^2: the running mean excess over the
                                                           running second moment, a prior second moment
                                                           R^2/4 (the widest a variable in the range has)
      fixed   l+ = l- = lambda

    Every factor is at least 1 - c > 0, so each process is a nonnegative
    supermartingale under its null and crosses 1/alpha with probability at
    most alpha, at whatever n the sweep stops."""

    __slots__ = ("r", "n", "s1", "s2", "mp", "ep", "mm", "em", "outcome", "why", "keep", "bets", "path",
                 "stops", "_u", "_um", "_R2", "_tn", "_td", "_fn", "_fd")

    def __init__(self, rule, keep=False, stops=True):
        self.r = rule
        self.n = self.s1 = self.s2 = 0
        self.mp = self.mm = 1 << (P - 1)
        self.ep = self.em = -(P - 1)
        self.outcome = self.why = None
        self.keep, self.stops = keep, stops
        self.bets = []      # (l+, l-) before each observation, when kept
        self.path = []      # (n, K+ mantissa, exponent, K- mantissa, exponent), when kept
        self._u, self._um, self._R2 = rule.M - rule.LO, rule.HI - rule.M, rule.R * rule.R
        self._tn, self._td = rule.alpha[1], rule.alpha[0]        # 1/alpha = tn/td
        self._fn, self._fd = rule.futility if rule.futility is not None else (None, None)

    def push(self, D):
        """Take the next difference; returns the outcome once the rule has stopped (else None)."""
        if self.outcome is not None:
            return self.outcome
        r = self.r
        if r.agrapa:  # next_bets(), inline: the calibration pushes millions of worlds
            s1 = self.s1
            if s1 > 0:
                lp, lm = min(r.c_max, LS * 4 * self._u * s1 // (self._R2 + 4 * self.s2)), 0
            elif s1 < 0:
                lp, lm = 0, min(r.c_max, LS * 4 * self._um * -s1 // (self._R2 + 4 * self.s2))
            else:
                lp = lm = 0
        else:
            lp = lm = r.c_max
        X = D - r.M
        if lp:
            den = LS * self._u
            m = self.mp * (den + lp * X) // den
            b = m.bit_length()
            if b > P:
                m >>= b - P
                self.ep += b - P
            elif b < P:
                m <<= P - b
                self.ep -= P - b
            self.mp = m
        if lm:
            den = LS * self._um
            m = self.mm * (den - lm * X) // den
            b = m.bit_length()
            if b > P:
                m >>= b - P
                self.em += b - P
            elif b < P:
                m <<= P - b
                self.em -= P - b
            self.mm = m
        self.n += 1
        self.s1 += X
        self.s2 += X * X
        if self.keep:
            self.bets.append((lp, lm))
            self.path.append((self.n, self.mp, self.ep, self.mm, self.em))
        if not self.stops:
            return None
        if lp and _at_least(self.mp, self.ep, self._tn, self._td):
            self.outcome, self.why = SUPPORTED, "the wealth for the claim reached 1/alpha"
        elif lm and _at_least(self.mm, self.em, self._tn, self._td):
            self.outcome, self.why = NOT_SUPPORTED, "the wealth against the claim reached 1/alpha"
        elif self._fn is not None and not _at_least(self.mp, self.ep, self._fn, self._fd):
            self.outcome, self.why = INCONCLUSIVE, WHY_FUTILITY
        elif self.r.max_n is not None and self.n >= self.r.max_n:
            self.outcome, self.why = INCONCLUSIVE, WHY_N
        return self.outcome


def _at_least(m, e, num, den):
    """m x 2^e >= num/den, exactly."""
    if e >= 0:
        return (m * den) << e >= num
    return m * den >= num << -e


def wealth_text(m, e, digits=6):
    """m x 2^e to `digits` significant digits, rounded down: "20.4812", "0.00321550", "3.21550e-7"."""
    num, den = (m << e, 1) if e >= 0 else (m, 1 << -e)
    if num >= den:
        x = len(str(num // den)) - 1                 # 10^x <= num/den < 10^(x+1)
    else:
        L = len(str(den // num))
        x = -(L - 1) if den <= num * 10 ** (L - 1) else -L
    shift = digits - 1 - x
    q = num * 10 ** shift // den if shift >= 0 else num // (den * 10 ** -shift)
    if -4 <= x < digits:
        return text(q, 10 ** shift, shift, "floor")
    s = str(q)
    return f"{s[0]}.{s[1:]}e{x}"


# -- the confidence sequence of a betting rule ------------------------------------------------

def _wealth_at(rule, Ds, bets, m_num, m_den, side):
    """K_n at the mean m = m_num/m_den (strictly inside the range), rounded down: (mantissa,
    exponent). Each recorded bet is truncated so that every factor stays positive at m: at most c per
    unit of (m - LO) for K+, of (HI - m) for K-. K+ falls as m grows, K- as m falls."""
    cn, cd = rule.c
    if side > 0:
        lo, u, sign, which = rule.LO, rule.M - rule.LO, 1, 0
    else:  # K- is K+ of the reflected differences
        lo, u, sign, which, m_num = -rule.HI, rule.HI - rule.M, -1, 1, -m_num
    delta = m_num - lo * m_den                      # (m - LO) x m_den > 0
    cap = cn * LS * u * m_den
    lo_m = lo * m_den
    mant, exp = 1 << (P - 1), -(P - 1)
    for D, lams in zip(Ds, bets):
        lam = lams[which]
        if not lam:
            continue
        Dm = sign * D * m_den
        if lam * delta * cd <= cap:                 # the recorded bet keeps the factor positive at m
            den = LS * u * m_den
            num = den + lam * (Dm - m_num)
        else:                                       # truncated to c / (m - LO)
            den = cd * delta
            num = (cd - cn) * delta + cn * (Dm - lo_m)
        mant = mant * num // den
        b = mant.bit_length()
        if b > P:
            mant >>= b - P
            exp += b - P
        elif b < P:
            mant <<= P - b
            exp -= P - b
    return mant, exp


def cs_bound(rule, Ds, bets, side):
    """The betting confidence sequence at n = len(Ds): its lower end (side +1) or its upper end
    (side -1), bisected on the dyadic grid m_k = LO + R k / 2^B (HI - R k / 2^B), 2^-B R below
    10^-BISECT_PLACES. The value returned is one the wealth rejects (or the range's end when it
    rejects none), so it is a conservative bound. Returns (numerator, denominator) in D units."""
    tn, td = rule.alpha[1], rule.alpha[0]
    R = rule.R
    B = (R * 10 ** BISECT_PLACES // rule.Q).bit_length() + 1
    grid = 1 << B

    def at(k):
        return (rule.LO * grid + R * k) if side > 0 else (rule.HI * grid - R * k)

    def rejected(k):
        return _at_least(*_wealth_at(rule, Ds, bets, at(k), grid, side), tn, td)

    if not rejected(1):
        return ((rule.LO, 1) if side > 0 else (rule.HI, 1))
    a, b = 1, grid  # a rejected; b, the far end of the range, never is (every factor there is <= 1)
    while b - a > 1:
        mid = (a + b) // 2
        if rejected(mid):
            a = mid
        else:
            b = mid
    return at(a), grid


# -- the report every decision carries -----------------------------------------------------

def _family(iid):
    return iid.split("/", 1)[0] if "/" in iid else "episodes"


def report(rule, rows, item_ids, arm_totals):
    """Per-arm means, the mean paired difference, its standard error, the standard error clustered
    by family (CR1), the correlation between the two sides of the contrast, n: over the items used."""
    n = len(rows)
    S = len(rule.seeds)
    per_arm = {arm: text(sum(arm_totals[iid][arm] for iid in item_ids), n * S) for arm in rule.arms}
    s1 = sum(r[0] for r in rows)
    s2 = sum(r[0] * r[0] for r in rows)
    out = {"n": n, "per_arm_mean": per_arm, "mean_difference": rule.d_text(s1, n), "se": None,
           "se_clustered": None, "clusters": len({_family(i) for i in item_ids}), "correlation": None}
    if n < 2:
        return out
    Q2 = rule.Q * rule.Q
    out["se"] = _sqrt_text(n * s2 - s1 * s1, n * (n - 1) * Q2 * n)       # sqrt(s^2 / n)
    groups = {}
    for iid, r in zip(item_ids, rows):
        acc = groups.setdefault(_family(iid), [0, 0])
        acc[0] += r[0]
        acc[1] += 1
    G = len(groups)
    if G >= 2:  # G/(G-1) x sum_g (residuals summed within g)^2 / n^2
        ss = sum((n * tot - cnt * s1) ** 2 for tot, cnt in groups.values())
        out["se_clustered"] = _sqrt_text(G * ss, (G - 1) * n ** 4 * Q2)
    st, sb = sum(r[1] for r in rows), sum(r[2] for r in rows)
    vt = n * sum(r[1] * r[1] for r in rows) - st * st
    vb = n * sum(r[2] * r[2] for r in rows) - sb * sb
    if vt > 0 and vb > 0:
        cov = n * sum(r[1] * r[2] for r in rows) - st * sb
        mag = _sqrt_text(cov * cov, vt * vb)                                 # |cov| / sqrt(vt vb)
        out["correlation"] = "-" + mag if cov < 0 and int(mag.replace(".", "")) else mag
    return out


# -- the decision -----------------------------------------------------------------------------

def _floor_to(t, keep):
    """A PLACES-decimal text cut to `keep` decimals, rounded down ("ceil": up)."""
    x = int(t.replace(".", ""))
    return text(x // 10 ** (PLACES - keep), 10 ** keep, keep)


def _ceil_to(t, keep):
    x = int(t.replace(".", ""))
    return text(_ceil_div(x, 10 ** (PLACES - keep)), 10 ** keep, keep)


def fixed_scan(rule, Ds, series=True):
    """The fixed-n bound at every n in order: the series (<= SERIES_POINTS points) and the first n at
    which the bound settles each way -- descriptive: a fixed-n rule may not stop where it looks."""
    n = len(Ds)
    step = max(1, n // SERIES_POINTS)
    out, first, s1, s2 = [], {SUPPORTED: None, NOT_SUPPORTED: None}, 0, 0
    for k, D in enumerate(Ds, 1):
        s1 += D
        s2 += D * D
        lower, upper, _ = rule.fixed_texts(s1, s2, k)
        v = rule.verdict_of(lower, upper)
        if v != INCONCLUSIVE and first[v] is None:
            first[v] = k
        if series and ((k % step == 0 and k < n) or k == n):
            out.append({"n": k, "estimate": rule.d_text(s1, k, SERIES_PLACES),
                        "lower": _floor_to(lower, SERIES_PLACES), "upper": _ceil_to(upper, SERIES_PLACES)})
    return out, first


def _fixed(rule, Ds):
    n = len(Ds)
    s1, s2 = sum(Ds), sum(D * D for D in Ds)
    lower, upper, h = rule.fixed_texts(s1, s2, n)
    return {"n": n, "lower": lower, "upper": upper, "verdict": rule.verdict_of(lower, upper), "s1": s1,
            "half_width": text(h, E, PLACES, "ceil") if h is not None else None}


def _betting(rule, Ds):
    test = rule.betting(keep=True)
    for D in Ds:
        if test.push(D) is not None:
            break
    used = Ds[:test.n]
    lo, hi = cs_bound(rule, used, test.bets, +1), cs_bound(rule, used, test.bets, -1)
    lower, upper = rule.d_text(lo[0], lo[1], mode="floor"), rule.d_text(hi[0], hi[1], mode="ceil")
    verdict, why = test.outcome, test.why
    if verdict is None:  # the rows ran out before the rule stopped: every planned world was used
        verdict, why = INCONCLUSIVE, WHY_N
    return {"n": test.n, "lower": lower, "upper": upper, "verdict": verdict, "why": why, "test": test,
            "s1": sum(used)}


def _sequential(rule, test):
    path = test.path
    step = max(1, -(-len(path) // (2 * SERIES_POINTS)))
    keep = [p for p in path if p[0] % step == 0 or p[0] == len(path)]
    one = (1 << (P - 1), -(P - 1))
    last = path[-1][1:] if path else one + one
    return {
        "threshold": str(rule.stopping_threshold()), "futility": None if rule.futility is None else
        str(rule.stopping["futility"]), "max_n": rule.max_n,
        "stopped_at": test.n if test.outcome is not None else None,
        "reason": test.why if test.outcome is not None else "the observations ended before the rule stopped",
        "wealth_for": wealth_text(last[0], last[1]), "wealth_against": wealth_text(last[2], last[3]),
        "path": [{"n": p[0], "for": wealth_text(p[1], p[2]), "against": wealth_text(p[3], p[4])} for p in keep],
    }


def decide(spec, item_ids, values, limits=()):
    """Every figure of a decision, from {(item_id, arm, seed): value} over `item_ids` in sweep order
    (a betting rule uses them up to where it stops)."""
    rule = Rule(spec)
    metric = spec.get("metric", "value")
    if not item_ids:
        raise RuleError("observations: no items to compare")
    rows = rule.differences(item_ids, values, metric)
    Ds = [r[0] for r in rows]
    main = _betting(rule, Ds) if rule.method == BETTING else _fixed(rule, Ds)
    n = main["n"]
    used = list(item_ids[:n])
    verdict = main["verdict"]
    why = None
    if verdict == INCONCLUSIVE:
        why = main.get("why") or (WHY_STRADDLES if main["half_width"] is not None else "fewer than 2 worlds")
    totals = {iid: {arm: sum(values[(iid, arm, s)] for s in rule.seeds) for arm in rule.arms} for iid in used}
    out = {
        "method": rule.method, "parameters": dict(sorted(rule.params.items())), "stopping": rule.stopping,
        "n": n, "n_observed": len(item_ids), "metric": metric, "arms": spec["arms"], "bounds": spec["bounds"],
        "margin": str(spec["margin"]), "alpha": str(spec["alpha"]),
        "range": str(rule.R // rule.Q) if rule.R % rule.Q == 0 else ratio_text(rule.R, rule.Q),
        "estimate": {"exact": ratio_text(main["s1"], n * rule.Q), "decimal": rule.d_text(main["s1"], n)},
        "lower_bound": main["lower"], "upper_bound": main["upper"],
        "verdict": verdict, "inconclusive_because": why,
        "confidence": "strong" if verdict != INCONCLUSIVE and not limits else "weak", "limits": list(limits),
        "report": report(rule, rows[:n], used, totals),
    }
    fams = {}
    for iid, D in zip(used, Ds):
        fams.setdefault(_family(iid), []).append(D)
    per_family = []
    if rule.method == BETTING:
        out["sequential"] = _sequential(rule, main["test"])
        out["valid_at"] = "every n: the wealth may be read, and the sweep stopped, at any n"
        for fam, ds in fams.items():
            t = BettingTest(rule, keep=True, stops=False)
            for D in ds:
                t.push(D)
            lo, hi = cs_bound(rule, ds, t.bets, +1), cs_bound(rule, ds, t.bets, -1)
            lower, upper = rule.d_text(lo[0], lo[1], mode="floor"), rule.d_text(hi[0], hi[1], mode="ceil")
            per_family.append({"family": fam, "n": len(ds), "estimate": rule.d_text(sum(ds), len(ds)),
                               "lower": lower, "upper": upper, "verdict": rule.verdict_of(lower, upper)})
    else:
        out["half_width"] = main["half_width"]
        out["series"], first = fixed_scan(rule, Ds)
        out["first_settled_n"] = first.get(verdict)
        out["valid_at"] = f"n = {n} only: the bound holds at the pre-registered n, not at an n chosen by looking"
        for fam, ds in fams.items():
            f = _fixed(rule, ds)
            per_family.append({"family": fam, "n": len(ds), "estimate": rule.d_text(sum(ds), len(ds)),
                               "lower": f["lower"], "upper": f["upper"], "verdict": f["verdict"]})
    out["per_family"] = per_family
    out["per_family_note"] = "descriptive only: the pre-registered decision is the pooled bound above"
    return out


# -- the entry point every recomputation uses ----------------------------------------------------

def payload(spec, item_ids, rows, limits=()):
    """What a decision is computed from: the spec, the planned item ids in sweep order, the rows of the
    spec's metric and arms as [item_id, arm, seed, value], and the limits on the result."""
    arms, metric = spec["arms"], spec["metric"]
    return {"spec": spec, "item_ids": list(item_ids), "limits": list(limits),
            "rows": [[r["item_id"], r["arm"], r["seed"], r["value"]] for r in rows
                     if r["metric"] == metric and r["arm"] in arms]}


def recompute(data):
    """The decision's figures from a payload: over the measured prefix of the planned items (all of them for
    a fixed-n rule; a betting rule stops inside it)."""
    spec, ids = data["spec"], data["item_ids"]
    values, seen = {}, set()
    for iid, arm, seed, value in data["rows"]:
        key = (iid, arm, seed)
        if key in values:
            raise RuleError(f"observations: two {spec['metric']} rows for item {iid}, arm {arm}, seed {seed}")
        values[key] = value
        seen.add(iid)
    n = 0
    while n < len(ids) and ids[n] in seen:
        n += 1
    if Rule(spec).method != BETTING and n < len(ids):
        raise RuleError(f"observations: {n} of the {len(ids)} planned worlds were measured: a fixed-n rule decides "
                        f"at the last planned world")
    return decide(spec, ids[:n], values, data.get("limits", ()))


def recompute_json(text):
    """recompute() from JSON text to JSON text: the call Pyodide makes (in the build and in the browser)."""
    import json
    try:
        return json.dumps({"ok": True, "decision": recompute(json.loads(text))}, sort_keys=True)
    except RuleError as exc:
        return json.dumps({"ok": False, "error": str(exc)}, sort_keys=True)
