"""The pre-registered comparison spec: its fields, its freeze, and the rule it names.

Spec version 1 names the paired Hoeffding rule (`"method": "paired_hoeffding"`).
Version 2 names a rule and its parameters as an object, and a betting rule
its stopping rule:

    "method": {"name": "paired_hoeffding"}
    "method": {"name": "paired_empirical_bernstein"}
    "method": {"name": "paired_betting", "bet": "agrapa", "truncation": "0.75"}
    "method": {"name": "paired_betting", "bet": "fixed", "lambda": "0.5"}
    "stopping": {"max_n": 1000, "futility": null}        (betting only: stop when the
                 wealth for the claim reaches 1/alpha, the wealth against it reaches
                 1/alpha, the wealth for it falls below `futility`, or at max_n worlds)

The freeze records the spec's sha256 and, in plain view, its method and
stopping rule, so a spec edited after freezing is refused naming what changed.
The arithmetic of every rule is experiments/rules.py (integers only, the
module the browser runs too); this module checks specs and hands it the rows.
"""

import datetime
import hashlib
import re
from decimal import Decimal

from engine import FAMILIES, EPISODES, canonical_json

from . import jsondoc, rules, work
from .errors import ExperimentError
from .seeds import MAX_PRACTICE_SEED, parse_seeds

SPEC_VERSIONS = (1, 2)
FREEZE_SCHEMA = "fundbook.freeze/1"
METHOD = rules.HOEFFDING  # version 1's one method
METHODS = rules.METHODS
DECIMAL = re.compile(r"-?[0-9]{1,16}(\.[0-9]{1,16})?")  # fullmatch; 16 digits each side at most
MAX_RANGE = Decimal(10) ** 30  # (b - a) x sum|w|: the bounds stay exact in rules.E with PLACES decimals
SUPPORTED, NOT_SUPPORTED, INCONCLUSIVE = rules.SUPPORTED, rules.NOT_SUPPORTED, rules.INCONCLUSIVE
SPEC_KEYS = {
    "version",
    "name",
    "question",
    "estimand",
    "unit",
    "items",
    "arms",
    "seeds",
    "metric",
    "bounds",
    "margin",
    "alpha",
    "method",
    "stopping",
}
BET_KEYS = {"agrapa": "truncation", "fixed": "lambda"}
MAX_BET = Decimal(rules.MAX_BET[0]) / rules.MAX_BET[1]


def _decimal(value, where) -> Decimal:
    """An integer or a decimal string (never a float: it would not hash canonically)."""
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and DECIMAL.fullmatch(value))):
        raise ExperimentError(
            f'{where}: expected an integer or a decimal string like "0.05" (at most 16 digits '
            f"each side of the point), got {str(value)[:40]!r}"
        )
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
    if spec.get("version") not in SPEC_VERSIONS or isinstance(spec.get("version"), bool):
        raise ExperimentError(f"{where}.version: expected 1 or 2, got {spec.get('version')!r}")
    optional = {"question"} | ({"stopping"} if spec["version"] == 2 else set())
    allowed = SPEC_KEYS - ({"stopping"} if spec["version"] == 1 else set())
    missing = sorted(allowed - optional - set(spec))
    if missing:
        raise ExperimentError(f"{where}: missing field '{missing[0]}'")
    extra = sorted(set(spec) - allowed)
    if extra:
        raise ExperimentError(f"{where}.{extra[0]}: unknown field")
    if not isinstance(spec["name"], str) or not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", spec["name"]):
        raise ExperimentError(f"{where}.name: expected lowercase letters, digits, '.', '_' or '-'")
    if "question" in spec and not isinstance(spec["question"], str):
        raise ExperimentError(f"{where}.question: expected a text")
    for key in ("estimand", "unit"):
        if not isinstance(spec[key], str) or not spec[key].strip():
            raise ExperimentError(f"{where}.{key}: expected a non-empty text")
    if spec["unit"] != "items":
        raise ExperimentError(f'{where}.unit: expected "items" (one paired difference per world)')
    arms = spec["arms"]
    if (
        not isinstance(arms, dict)
        or len(arms) < 2
        or any(not isinstance(w, int) or isinstance(w, bool) for w in arms.values())
        or not any(arms.values())
    ):
        raise ExperimentError(
            f"{where}.arms: expected at least two arms with integer weights (treatment 1, baseline -1)"
        )
    if sum(arms.values()) != 0:
        raise ExperimentError(f"{where}.arms: the weights must sum to 0 (a contrast between arms)")
    seeds = spec["seeds"]
    if (
        not isinstance(seeds, list)
        or not seeds
        or any(not isinstance(s, int) or isinstance(s, bool) for s in seeds)
        or len(set(seeds)) != len(seeds)
        or len(seeds) > 1000
    ):
        raise ExperimentError(
            f"{where}.seeds: expected a list of distinct integers (the arms' replicate seeds, at most 1000)"
        )
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
    margin = _decimal(spec["margin"], f"{where}.margin")
    alpha = _decimal(spec["alpha"], f"{where}.alpha")
    if not Decimal(0) < alpha < Decimal(1):
        raise ExperimentError(f"{where}.alpha: expected 0 < alpha < 1")
    _check_items(spec["items"], f"{where}.items")
    _check_method(spec, a, b, margin, where)
    return spec


def _check_method(spec, a, b, margin, where):
    method = spec["method"]
    if spec["version"] == 1:
        if method != METHOD:
            raise ExperimentError(
                f"{where}.method: expected {METHOD!r} (spec version 1; version 2 names {', '.join(METHODS)})"
            )
        return
    if not isinstance(method, dict) or method.get("name") not in METHODS:
        raise ExperimentError(f'{where}.method: expected {{"name": one of {", ".join(METHODS)}, ...parameters}}')
    name = method["name"]
    if name != rules.BETTING:
        if set(method) != {"name"}:
            raise ExperimentError(f"{where}.method.{sorted(set(method) - {'name'})[0]}: {name} has no parameters")
        if "stopping" in spec:
            raise ExperimentError(
                f"{where}.stopping: {name} is a fixed-n rule: it decides at the last planned "
                f"world, so a stopping rule is for paired_betting only"
            )
        return
    bet = method.get("bet")
    if bet not in BET_KEYS:
        raise ExperimentError(f'{where}.method.bet: expected "agrapa" or "fixed"')
    key = BET_KEYS[bet]
    if set(method) != {"name", "bet", key}:
        extra = sorted(set(method) - {"name", "bet", key})
        raise ExperimentError(
            f"{where}.method.{extra[0] if extra else key}: a {bet} bet names exactly name, bet and {key}"
        )
    c = _decimal(method[key], f"{where}.method.{key}")
    if not Decimal(0) < c <= MAX_BET:
        raise ExperimentError(
            f"{where}.method.{key}: expected 0 < {key} <= {MAX_BET} (every factor of the wealth stays positive)"
        )
    weights = spec["arms"].values()
    lo = sum(w * (a if w > 0 else b) for w in weights)
    hi = sum(w * (b if w > 0 else a) for w in weights)
    if not lo < margin < hi:
        raise ExperimentError(
            f"{where}.margin: a betting rule needs the margin strictly inside the range of the "
            f"paired difference ({lo}, {hi})"
        )
    stop = spec.get("stopping")
    if not isinstance(stop, dict) or set(stop) != {"max_n", "futility"}:
        raise ExperimentError(
            f'{where}.stopping: a betting rule pre-registers {{"max_n": N, "futility": null or a wealth below 1}}'
        )
    if not isinstance(stop["max_n"], int) or isinstance(stop["max_n"], bool) or not 1 <= stop["max_n"]:
        raise ExperimentError(f"{where}.stopping.max_n: expected a positive number of worlds")
    planned = planned_count(spec["items"])
    if stop["max_n"] > planned:
        raise ExperimentError(f"{where}.stopping.max_n: {stop['max_n']} is more than the {planned} planned worlds")
    if stop["futility"] is not None:
        f = _decimal(stop["futility"], f"{where}.stopping.futility")
        if not Decimal(0) < f < 1:
            raise ExperimentError(f"{where}.stopping.futility: expected null or a wealth between 0 and 1")


def planned_count(items) -> int:
    if items["split"] == "heldout":
        return items["count"]
    return len(parse_seeds(items["seeds"])) * len(items["families"]) + len(items.get("episodes", []))


def _check_items(items, where):
    if not isinstance(items, dict):
        raise ExperimentError(f"{where}: expected an object with split and families")
    fams = items.get("families")
    if (
        not isinstance(fams, list)
        or not all(isinstance(f, str) and f in FAMILIES for f in fams)
        or len(set(fams)) != len(fams)
    ):
        raise ExperimentError(f"{where}.families: expected distinct names from {', '.join(FAMILIES)}")
    if items.get("split") == "heldout":
        if set(items) != {"split", "families", "count", "commitment_sha256"}:
            raise ExperimentError(
                f"{where}: a held-out split names exactly split, families, count and commitment_sha256"
            )
        if not isinstance(items["count"], int) or isinstance(items["count"], bool) or items["count"] < 1:
            raise ExperimentError(f"{where}.count: expected a positive integer")
        if not isinstance(items["commitment_sha256"], str) or not re.fullmatch(
            r"[0-9a-f]{64}", items["commitment_sha256"]
        ):
            raise ExperimentError(f"{where}.commitment_sha256: expected the sha256 of the published commitment")
    elif items.get("split") == "practice":
        if not set(items) <= {"split", "families", "seeds", "episodes"} or "seeds" not in items:
            raise ExperimentError(f"{where}: a practice split names split, families, seeds and optionally episodes")
        parse_seeds(items["seeds"], f"{where}.seeds", MAX_PRACTICE_SEED)
        episodes = items.get("episodes", [])
        if not isinstance(episodes, list) or not all(isinstance(e, str) and e in EPISODES for e in episodes):
            raise ExperimentError(f"{where}.episodes: expected names from {', '.join(EPISODES)}")
    else:
        raise ExperimentError(f'{where}.split: expected "practice" or "heldout"')


def spec_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_spec(spec_bytes, where="spec.json") -> dict:
    return check_spec(jsondoc.loads(spec_bytes, where, "a comparison spec"), where)


def freeze_doc(spec_bytes, date=None, where="spec.json") -> dict:
    spec = parse_spec(spec_bytes, where)
    return {
        "schema": FREEZE_SCHEMA,
        "name": spec["name"],
        "spec_sha256": spec_sha256(spec_bytes),
        "spec_content_sha256": hashlib.sha256(canonical_json(spec)).hexdigest(),
        "method": spec["method"],
        "stopping": spec.get("stopping"),
        "frozen_on": date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "rule": "frozen before any observation is read; a changed spec is a new spec",
    }


def _changed_rule(spec_bytes, freeze):
    """The method or stopping field an edited spec changed, named against the freeze's record (or None)."""
    if "method" not in freeze:
        return None
    try:
        spec = jsondoc.loads(spec_bytes, "spec.json", "a comparison spec")
    except ExperimentError:
        return None
    if not isinstance(spec, dict):
        return None
    for key in ("method", "stopping"):
        was, now = freeze.get(key), spec.get(key)
        if was == now:
            continue
        if isinstance(was, dict) and isinstance(now, dict):
            for field in sorted(set(was) | set(now)):
                if was.get(field) != now.get(field):
                    return f"{key}.{field}", was.get(field), now.get(field)
        return key, was, now
    return None


def check_frozen(spec_bytes, freeze, where) -> dict:
    """The spec, if its bytes are the frozen ones; ExperimentError otherwise (naming a changed rule)."""
    if not isinstance(freeze, dict) or freeze.get("schema") != FREEZE_SCHEMA:
        raise ExperimentError(f"{where}/freeze.json: schema: expected {FREEZE_SCHEMA!r}")
    got = spec_sha256(spec_bytes)
    if got != freeze.get("spec_sha256"):
        changed = _changed_rule(spec_bytes, freeze)
        what = (
            f"its {changed[0]} was {jsondoc_text(changed[1])} when frozen, now {jsondoc_text(changed[2])}; "
            if changed
            else ""
        )
        raise ExperimentError(
            f"{where}/spec.json: changed after freezing ({what}sha256 {got}, frozen "
            f"{freeze.get('spec_sha256')} on {freeze.get('frozen_on')}): a changed spec is a new spec "
            f"-- freeze it under a new name and record the change as a deviation"
        )
    spec = parse_spec(spec_bytes, f"{where}/spec.json")
    if "method" in freeze and (freeze["method"] != spec["method"] or freeze.get("stopping") != spec.get("stopping")):
        raise ExperimentError(f"{where}/freeze.json: method or stopping differ from the frozen spec's")
    return spec


def jsondoc_text(value) -> str:
    import json

    return json.dumps(value, sort_keys=True)[:60]


# -- the decision -----------------------------------------------------------------------


def decide(spec, item_ids, values, limits=()) -> dict:
    """The decision's figures (experiments/rules.py) from {(item_id, arm, seed): value}."""
    try:
        return rules.decide(spec, item_ids, values, limits)
    except rules.RuleError as exc:
        raise ExperimentError(str(exc)) from None
