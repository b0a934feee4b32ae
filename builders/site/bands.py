"""The board's ranking with simultaneous bands: the order of the model rows, each ranked row's band for its mean
score and the band of ranks it could hold, computed in integers by experiments/rules.py's betting arithmetic.

This module is published beside leaderboard.json (leaderboard/bands.py) and runs twice: in the build
(builders/site/ranking.py) and in the reader's browser (site/assets/fundbook/board.js, in the engine worker's
Pyodide), each time with rules.py's own source passed in as `rules` -- the same bytes on both sides, pinned by
sha256 in leaderboard.json. It imports nothing but `json` and `functools`, so the two give the same digits.

Rows: a model row (one path to one set of weights) over fewer than `preliminary_below` worlds is preliminary:
listed after the ranked rows, with no rank and no band. The K others are ranked by mean score, highest first
(exact rationals; a tie by key).

Bands: each ranked row's scores x_1..x_n (integers in [0, 100], one a world, in the order the counted attempts
were started) give an anytime-valid confidence sequence for the row's mean: rules.py's betting test
(BettingTest, aGRAPA bets truncated at TRUNCATION, the spec shape of a paired_betting rule with one arm of
weight +1) and its confidence sequence (cs_bound). The lower end is where the wealth betting on "the mean is
above m" stops reaching 1/a' -- its bets sized from LOWER_CENTRE, just above the scale's floor, so they lean
upward for any row that scores at all; the upper end likewise from UPPER_CENTRE, just below the ceiling.
Each end is one-sided at a' = alpha / (2K), rounded down to 9 decimals: by Ville's inequality each wealth
process, a nonnegative supermartingale under its null, ever reaches 1/a' with probability at most a', so each
end holds at every n at once with probability at least 1 - a'; by the union bound the 2K ends of the K bands
hold together, at every n, with probability at least 1 - alpha. Bounds are rounded outward to one decimal.

Rank bands: row i's rank is at least 1 + #{j : L_j > U_i} and at most K - #{j : U_j < L_i}. Whenever every band
holds, every row's true rank (by true mean) lies in its rank band, so the rank bands hold simultaneously at
1 - alpha too.
"""

import json
from functools import cmp_to_key

METHOD = (
    "betting confidence sequences (experiments/rules.py: BettingTest with aGRAPA bets, cs_bound), one per "
    "ranked row, each end at alpha / (2K) (Bonferroni over the K ranked rows)"
)
TRUNCATION = "0.75"  # the bet's cap, as the project's pre-registered betting rules use
LOWER_CENTRE, UPPER_CENTRE = "0.5", "99.5"
BOUNDS = (0, 100)
PLACES = 1
ALPHA_PLACES = 9


class BandError(ValueError):
    """Rows the ranking cannot be computed from (a score out of range, no alpha)."""


def per_end_alpha(rules, alpha, k) -> str:
    """alpha / (2k) as decimal text, rounded down to ALPHA_PLACES (a smaller alpha only widens a band)."""
    num, den = rules.dec(alpha)
    out = rules.text(num, den * 2 * k, ALPHA_PLACES, "floor")
    if not int(out.replace(".", "")):
        raise BandError(f"alpha {alpha} over {2 * k} ends rounds to 0 at {ALPHA_PLACES} decimals")
    return out


def _rule(rules, centre, alpha):
    return rules.Rule(
        {
            "method": {"name": "paired_betting", "bet": "agrapa", "truncation": TRUNCATION},
            "arms": {"mean": 1},
            "seeds": [0],
            "bounds": list(BOUNDS),
            "margin": centre,
            "alpha": alpha,
            "metric": "score",
        }
    )


def band(rules, scores, alpha) -> dict:
    """{lower, upper}: the two one-sided confidence sequences for the mean of `scores`, each at `alpha`, at
    n = len(scores); decimal text at PLACES, the lower rounded down, the upper up."""
    out = {}
    for end, centre, side, mode in (("lower", LOWER_CENTRE, +1, "floor"), ("upper", UPPER_CENTRE, -1, "ceil")):
        rule = _rule(rules, centre, alpha)
        values = [x * rule.tenk for x in scores]
        test = rules.BettingTest(rule, keep=True, stops=False)
        for v in values:
            test.push(v)
        num, den = rules.cs_bound(rule, values, test.bets, side)
        out[end] = rule.d_text(num, den, PLACES, mode)
    return out


def _tenths(text) -> int:
    whole, _, frac = text.partition(".")
    return int(whole + frac.ljust(PLACES, "0"))


def rank_bands(bands) -> dict:
    """{key: {lower, upper}} from {key: {lower, upper}} of K bands."""
    k = len(bands)
    low = {key: _tenths(b["lower"]) for key, b in bands.items()}
    high = {key: _tenths(b["upper"]) for key, b in bands.items()}
    return {
        key: {
            "lower": 1 + sum(1 for j in bands if low[j] > high[key]),
            "upper": k - sum(1 for j in bands if high[j] < low[key]),
        }
        for key in bands
    }


def _check(row):
    scores = row.get("scores")
    if not isinstance(row.get("key"), str) or not isinstance(scores, list):
        raise BandError("rows: expected {key, scores}")
    for x in scores:
        if isinstance(x, bool) or not isinstance(x, int) or not BOUNDS[0] <= x <= BOUNDS[1]:
            raise BandError(f"row {row['key']}: score {x!r} is not an integer in [{BOUNDS[0]}, {BOUNDS[1]}]")
    return row["key"], scores


def _by_mean(a, b):
    """Highest mean first (sum/n compared exactly), then by key."""
    (ka, sa), (kb, sb) = a, b
    x, y = sum(sa) * len(sb), sum(sb) * len(sa)
    if x != y:
        return -1 if x > y else 1
    return -1 if ka < kb else 1 if ka > kb else 0


def ranking(rules, rows, alpha, preliminary_below) -> dict:
    """{method, alpha, per_end_alpha, ranked, order, rows: {key: {preliminary, rank, band, rank_band}}}."""
    rows = [_check(r) for r in rows]
    if len({k for k, _ in rows}) != len(rows):
        raise BandError("rows: a key is listed twice")
    ranked = sorted(((k, s) for k, s in rows if s and len(s) >= preliminary_below), key=cmp_to_key(_by_mean))
    rest = sorted(
        ((k, s) for k, s in rows if not (s and len(s) >= preliminary_below)),
        key=cmp_to_key(lambda a, b: _by_mean((a[0], a[1] or [0]), (b[0], b[1] or [0]))),
    )
    out = {
        "method": METHOD,
        "alpha": str(alpha),
        "ranked": len(ranked),
        "per_end_alpha": None,
        "order": [k for k, _ in ranked + rest],
        "rows": {},
    }
    bands = {}
    if ranked:
        out["per_end_alpha"] = a = per_end_alpha(rules, alpha, len(ranked))
        bands = {k: band(rules, s, a) for k, s in ranked}
    ranks = rank_bands(bands)
    for i, (k, _) in enumerate(ranked):
        out["rows"][k] = {"preliminary": False, "rank": i + 1, "band": bands[k], "rank_band": ranks[k]}
    for k, _ in rest:
        out["rows"][k] = {"preliminary": True, "rank": None, "band": None, "rank_band": None}
    return out


def recompute_json(rules, text) -> str:
    """ranking() from JSON text {rows, alpha, preliminary_below} to JSON text: the call the browser makes."""
    try:
        data = json.loads(text)
        got = ranking(rules, data["rows"], data["alpha"], data["preliminary_below"])
        return json.dumps({"ok": True, "ranking": got}, sort_keys=True)
    except (BandError, rules.RuleError, KeyError, TypeError) as exc:
        return json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}, sort_keys=True)
