"""The pre-registered decision rule: comparison spec version 1, its freeze,
and the paired Hoeffding bound.

For each item i the paired difference is d_i = sum over arms of w_arm x
(the arm's value on i, averaged over the spec's seeds). With every value in
[a, b], d_i lies in a range of width R = (b - a) * sum |w|, and

    lower = mean(d) - R * sqrt(ln(1/alpha) / (2 n))
    upper = mean(d) + R * sqrt(ln(1/alpha) / (2 n))

are one-sided (1 - alpha) confidence bounds. Verdict: "supported" when the
lower bound clears the margin, "not supported" when the upper bound falls
below it, "inconclusive" otherwise. Confidence is "strong" only when the
interval settles the margin and nothing limits the result.

No floats: values are integers, the mean is an exact fraction, and the bound
is computed in 50-digit decimal arithmetic (Python's decimal ln and sqrt are
correctly rounded, so every machine gets the same digits); published numbers
are decimal strings. Floats appear only in the chart data of the site and in
the tests' independent float64 check.
"""

import datetime
import hashlib
import re
from decimal import Decimal, localcontext
from fractions import Fraction

from engine import FAMILIES, EPISODES, canonical_json

from . import jsondoc, work
from .errors import ExperimentError
from .seeds import parse_seeds

SPEC_VERSION = 1
FREEZE_SCHEMA = "fundbook.freeze/1"
METHOD = "paired_hoeffding"
PREC = 50
PLACES = 9            # decimal places published for estimates and bounds (metric units)
SERIES_POINTS = 100
DECIMAL = re.compile(r"-?[0-9]{1,16}(\.[0-9]{1,16})?")  # fullmatch; 16 digits each side at most
MAX_RANGE = Decimal(10) ** 30  # (b - a) x sum|w|: the bounds stay exact in PREC digits with PLACES decimals
SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE = "supported", "not supported", "inconclusive"
SPEC_KEYS = {"version", "name", "question", "estimand", "unit", "items", "arms", "seeds", "metric", "bounds",
             "margin", "alpha", "method"}


def _decimal(value, where) -> Decimal:
    """An integer or a decimal string (never a float: it would not hash canonically)."""
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and DECIMAL.fullmatch(value))):
        raise ExperimentError(f"{where}: expected an integer or a decimal string like \"0.05\" (at most 16 digits "
                              f"each side of the point), got {str(value)[:40]!r}")
    return Decimal(value)


def metric_known(name) -> bool:
    if name.startswith("gate:"):
        return name[5:] in work.METRICS["gate"]["names"]
    return name in work.METRICS and name != "gate"


def check_spec(spec, where="spec.json") -> dict:
    if not isinstance(spec, dict):
        raise ExperimentError(f"{where}: expected a JSON object")
    try:
        canonical_json(spec)
    except ValueError as exc:
        raise ExperimentError(f"{where}: {exc} (write numbers as integers or decimal strings)")
    missing = sorted(SPEC_KEYS - {"question"} - set(spec))
    if missing:
        raise ExperimentError(f"{where}: missing field '{missing[0]}'")
    extra = sorted(set(spec) - SPEC_KEYS)
    if extra:
        raise ExperimentError(f"{where}.{extra[0]}: unknown field")
    if spec["version"] != SPEC_VERSION or isinstance(spec["version"], bool):
        raise ExperimentError(f"{where}.version: expected {SPEC_VERSION}, got {spec['version']!r}")
    if not isinstance(spec["name"], str) or not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", spec["name"]):
        raise ExperimentError(f"{where}.name: expected lowercase letters, digits, '.', '_' or '-'")
    if "question" in spec and not isinstance(spec["question"], str):
        raise ExperimentError(f"{where}.question: expected a text")
    for key in ("estimand", "unit"):
        if not isinstance(spec[key], str) or not spec[key].strip():
            raise ExperimentError(f"{where}.{key}: expected a non-empty text")
    if spec["unit"] != "items":
        raise ExperimentError(f"{where}.unit: expected \"items\" (one paired difference per world)")
    if spec["method"] != METHOD:
        raise ExperimentError(f"{where}.method: expected {METHOD!r}")
    arms = spec["arms"]
    if not isinstance(arms, dict) or len(arms) < 2 or any(
            not isinstance(w, int) or isinstance(w, bool) for w in arms.values()) or not any(arms.values()):
        raise ExperimentError(f"{where}.arms: expected at least two arms with integer weights (treatment 1, baseline -1)")
    if sum(arms.values()) != 0:
        raise ExperimentError(f"{where}.arms: the weights must sum to 0 (a contrast between arms)")
    seeds = spec["seeds"]
    if not isinstance(seeds, list) or not seeds or any(not isinstance(s, int) or isinstance(s, bool) for s in seeds) \
            or len(set(seeds)) != len(seeds):
        raise ExperimentError(f"{where}.seeds: expected a list of distinct integers (the arms' replicate seeds)")
    if not isinstance(spec["metric"], str) or not metric_known(spec["metric"]):
        raise ExperimentError(f"{where}.metric: {spec['metric']!r} is not a metric of this evaluator")
    bounds = spec["bounds"]
    if not isinstance(bounds, list) or len(bounds) != 2:
        raise ExperimentError(f"{where}.bounds: expected [a, b], the range every value lies in")
    a, b = _decimal(bounds[0], f"{where}.bounds[0]"), _decimal(bounds[1], f"{where}.bounds[1]")
    if not a < b:
        raise ExperimentError(f"{where}.bounds: expected a < b")
    if (b - a) * sum(abs(w) for w in arms.values()) >= MAX_RANGE:
        raise ExperimentError(f"{where}.bounds: expected (b - a) x the sum of |weights| below 10^30")
    _decimal(spec["margin"], f"{where}.margin")
    alpha = _decimal(spec["alpha"], f"{where}.alpha")
    if not Decimal(0) < alpha < Decimal(1):
        raise ExperimentError(f"{where}.alpha: expected 0 < alpha < 1")
    _check_items(spec["items"], f"{where}.items")
    return spec


def _check_items(items, where):
    if not isinstance(items, dict):
        raise ExperimentError(f"{where}: expected an object with split and families")
    fams = items.get("families")
    if not isinstance(fams, list) or not all(isinstance(f, str) and f in FAMILIES for f in fams) \
            or len(set(fams)) != len(fams):
        raise ExperimentError(f"{where}.families: expected distinct names from {', '.join(FAMILIES)}")
    if items.get("split") == "heldout":
        if set(items) != {"split", "families", "count", "commitment_sha256"}:
            raise ExperimentError(f"{where}: a held-out split names exactly split, families, count and commitment_sha256")
        if not isinstance(items["count"], int) or isinstance(items["count"], bool) or items["count"] < 1:
            raise ExperimentError(f"{where}.count: expected a positive integer")
        if not isinstance(items["commitment_sha256"], str) or not re.fullmatch(r"[0-9a-f]{64}", items["commitment_sha256"]):
            raise ExperimentError(f"{where}.commitment_sha256: expected the sha256 of the published commitment")
    elif items.get("split") == "practice":
        if not set(items) <= {"split", "families", "seeds", "episodes"} or "seeds" not in items:
            raise ExperimentError(f"{where}: a practice split names split, families, seeds and optionally episodes")
        parse_seeds(items["seeds"], f"{where}.seeds")
        episodes = items.get("episodes", [])
        if not isinstance(episodes, list) or not all(isinstance(e, str) and e in EPISODES for e in episodes):
            raise ExperimentError(f"{where}.episodes: expected names from {', '.join(EPISODES)}")
    else:
        raise ExperimentError(f"{where}.split: expected \"practice\" or \"heldout\"")


def spec_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_spec(spec_bytes, where="spec.json") -> dict:
    return check_spec(jsondoc.loads(spec_bytes, where, "a comparison spec"), where)


def freeze_doc(spec_bytes, date=None, where="spec.json") -> dict:
    spec = parse_spec(spec_bytes, where)
    return {"schema": FREEZE_SCHEMA, "name": spec["name"], "spec_sha256": spec_sha256(spec_bytes),
            "spec_content_sha256": hashlib.sha256(canonical_json(spec)).hexdigest(),
            "frozen_on": date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "rule": "frozen before any observation is read; a changed spec is a new spec"}


def check_frozen(spec_bytes, freeze, where) -> dict:
    """The spec, if its bytes are the frozen ones; ExperimentError otherwise."""
    if not isinstance(freeze, dict) or freeze.get("schema") != FREEZE_SCHEMA:
        raise ExperimentError(f"{where}/freeze.json: schema: expected {FREEZE_SCHEMA!r}")
    got = spec_sha256(spec_bytes)
    if got != freeze.get("spec_sha256"):
        raise ExperimentError(f"{where}/spec.json: changed after freezing (sha256 {got}, frozen "
                              f"{freeze.get('spec_sha256')} on {freeze.get('frozen_on')}): a changed spec is a new spec "
                              f"-- freeze it under a new name and record the change as a deviation")
    return parse_spec(spec_bytes, f"{where}/spec.json")


# -- the statistic -------------------------------------------------------------------

def _dec(fraction: Fraction) -> Decimal:
    return Decimal(fraction.numerator) / Decimal(fraction.denominator)


def _text(value: Decimal, places=PLACES) -> str:
    """Fixed-point text, rounded half-even to `places` decimals; never "-0.000"."""
    with localcontext() as ctx:
        ctx.prec = PREC
        q = value.quantize(Decimal(1).scaleb(-places))
    text = format(q, "f")
    return text[1:] if text.startswith("-") and not q else text


def half_width(R: Fraction, alpha: Decimal, n: int) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = PREC
        return _dec(R) * ((Decimal(1) / alpha).ln() / (2 * n)).sqrt()


def bounds_of(diffs, R, alpha):
    """(exact mean, lower, upper) of paired differences."""
    n = len(diffs)
    mean = sum(diffs, Fraction(0)) / n
    with localcontext() as ctx:
        ctx.prec = PREC
        h = half_width(R, alpha, n)
        m = _dec(mean)
        return mean, m - h, m + h


def verdict_of(lower, upper, margin):
    if lower > margin:
        return SUPPORTED
    if upper < margin:
        return NOT_SUPPORTED
    return INCONCLUSIVE


def contrast_range(spec) -> Fraction:
    a, b = (Fraction(Decimal(str(x))) for x in spec["bounds"])
    return (b - a) * sum(abs(w) for w in spec["arms"].values())


def paired_differences(spec, item_ids, values, where="observations"):
    """values: {(item_id, arm, seed): value}. One exact difference per item, in item order."""
    a, b = (Fraction(Decimal(str(x))) for x in spec["bounds"])
    diffs = []
    for iid in item_ids:
        d = Fraction(0)
        for arm, weight in spec["arms"].items():
            total = Fraction(0)
            for seed in spec["seeds"]:
                key = (iid, arm, seed)
                if key not in values:
                    raise ExperimentError(f"{where}: no {spec['metric']} row for item {iid}, arm {arm}, seed {seed} "
                                          f"(failures are rows: a missing row is a broken sweep)")
                v = values[key]
                if v is None:
                    raise ExperimentError(f"{where}: {spec['metric']} of item {iid}, arm {arm} was not measured (null); "
                                          f"a paired bound needs a value for every item")
                if not a <= v <= b:
                    raise ExperimentError(f"{where}: {spec['metric']} of item {iid}, arm {arm} is {v}, outside the "
                                          f"spec's bounds [{spec['bounds'][0]}, {spec['bounds'][1]}]")
                total += v
            d += weight * total / len(spec["seeds"])
        diffs.append(d)
    return diffs


def decide(spec, item_ids, values, limits=()) -> dict:
    """The decision: estimate, bounds, n, verdict, confidence; plus the bound as n grows and per family."""
    if not item_ids:
        raise ExperimentError("observations: no items to compare")
    diffs = paired_differences(spec, item_ids, values)
    alpha = Decimal(str(spec["alpha"]))
    margin = Decimal(str(spec["margin"]))
    R = contrast_range(spec)
    mean, lower, upper = bounds_of(diffs, R, alpha)
    verdict = verdict_of(lower, upper, margin)
    confidence = "strong" if verdict != INCONCLUSIVE and not limits else "weak"
    n = len(diffs)
    step = max(1, n // SERIES_POINTS)
    series = []
    for k in list(range(step, n, step)) + [n]:
        m, lo, hi = bounds_of(diffs[:k], R, alpha)
        series.append({"n": k, "estimate": _text(_dec(m), 6), "lower": _text(lo, 6), "upper": _text(hi, 6)})
    fams = {}
    for iid, d in zip(item_ids, diffs):
        fams.setdefault(iid.split("/", 1)[0] if "/" in iid else "episodes", []).append(d)
    per_family = []
    for fam, ds in fams.items():
        m, lo, hi = bounds_of(ds, R, alpha)
        per_family.append({"family": fam, "n": len(ds), "estimate": _text(_dec(m)), "lower": _text(lo),
                           "upper": _text(hi), "verdict": verdict_of(lo, hi, margin)})
    return {
        "n": n, "metric": spec["metric"], "arms": spec["arms"], "bounds": spec["bounds"], "margin": str(spec["margin"]),
        "alpha": str(spec["alpha"]), "method": METHOD, "range": f"{R.numerator}/{R.denominator}" if R.denominator != 1
        else str(R.numerator),
        "estimate": {"exact": f"{mean.numerator}/{mean.denominator}", "decimal": _text(_dec(mean))},
        "lower_bound": _text(lower), "upper_bound": _text(upper), "half_width": _text(half_width(R, alpha, n)),
        "verdict": verdict, "confidence": confidence, "limits": list(limits),
        "series": series, "per_family": per_family,
        "per_family_note": "descriptive only: the pre-registered decision is the pooled bound above",
    }
