"""The published fixtures and how one is executed.

A fixture is a small JSON spec; executing it builds its input (the gold
candidate, a mutation of it, or a scripted baseline's candidate), grades it on
a fresh desk and returns everything a run record needs. Nothing is cached
between fixtures: two executions in one interpreter give the bytes of two in
separate ones.
"""

from ._canon import content_sha256
from ._commitment import public_salt, world_commitment
from ._candidate import gold_candidate, grade_with_run, policy_candidate
from ._episodes import EPISODES, load_episode
from ._errors import InputError
from ._families import FAMILIES, generate
from ._mutations import MUTATIONS, NotApplicable, mutate, observe

BASELINE_POLICIES = ("do-nothing", "shortest-cheapest", "reference")
BASELINE_SEEDS = (1, 2, 3)
KINDS = ("reference", "adversarial", "baseline")


def _instance(spec):
    if "episode" in spec:
        return load_episode(spec["episode"])
    return generate(spec["family"], spec["seed"])


def run_id(spec) -> str:
    if spec["kind"] == "reference":
        return f"reference-{spec['episode']}"
    if spec["kind"] == "adversarial":
        return f"adversarial-{spec['episode']}-{spec['mutation']}"
    return f"baseline-{spec['family']}-seed-{spec['seed']}-{spec['policy']}"


def fixture_specs():
    """Every published fixture, in run-id order."""
    specs = [{"kind": "reference", "episode": e} for e in EPISODES]
    for episode in EPISODES:
        instance = load_episode(episode)
        gold = gold_candidate(instance)
        for name in MUTATIONS:
            try:
                mutate(name, instance, gold)
            except NotApplicable:
                continue
            specs.append({"kind": "adversarial", "episode": episode, "mutation": name})
    for family in FAMILIES:
        for seed in BASELINE_SEEDS:
            for policy in BASELINE_POLICIES:
                specs.append({"kind": "baseline", "family": family, "seed": seed, "policy": policy})
    for spec in specs:
        spec["run_id"] = run_id(spec)
    return sorted(specs, key=lambda s: s["run_id"])


def _check_spec(spec):
    if not isinstance(spec, dict) or spec.get("kind") not in KINDS:
        raise InputError(f"fixture.kind: expected one of {KINDS}")
    if spec["kind"] in ("reference", "adversarial") and spec.get("episode") not in EPISODES:
        raise InputError(f"fixture.episode: expected one of {EPISODES}")
    if spec["kind"] == "adversarial" and spec.get("mutation") not in MUTATIONS:
        raise InputError(f"fixture.mutation: expected one of {MUTATIONS}")
    if spec["kind"] == "baseline":
        if spec.get("family") not in FAMILIES:
            raise InputError(f"fixture.family: expected one of {FAMILIES}")
        if not isinstance(spec.get("seed"), int) or isinstance(spec.get("seed"), bool) or spec["seed"] < 1:
            raise InputError("fixture.seed: expected a positive integer")
        if spec.get("policy") not in BASELINE_POLICIES:
            raise InputError(f"fixture.policy: expected one of {BASELINE_POLICIES}")


def _build(spec):
    """(instance, candidate, expected): the one place a fixture's input is made."""
    _check_spec(spec)
    instance = _instance(spec)
    expected = None
    if spec["kind"] == "reference":
        candidate = gold_candidate(instance)
    elif spec["kind"] == "adversarial":
        candidate, expected = mutate(spec["mutation"], instance)
    else:
        candidate = policy_candidate(instance, spec["policy"], f"scripted baseline: {spec['policy']}")
    return instance, candidate, expected


def _inputs(instance, candidate, expected):
    inputs = {"instance": instance, "candidate": candidate}
    if expected is not None:
        inputs["expected"] = expected
    return inputs


def _empty_head(instance) -> dict:
    """The head of a candidate that never ran (MALFORMED, UNSCORABLE): an empty
    chain, whose head is its genesis, the world commitment with the public salt."""
    fixture = content_sha256(instance)
    return {"size": 0, "hash": world_commitment(fixture, public_salt(fixture))}


def execute_fixture(spec) -> dict:
    """Build a fixture's input, grade it, and return the record's engine part."""
    instance, candidate, expected = _build(spec)
    result, run = grade_with_run(candidate, instance)
    out = {
        "fixture": {k: spec[k] for k in sorted(spec) if k != "run_id"},
        "run_id": run_id(spec),
        "instance_id": instance["instance_id"],
        "fixture_sha256": content_sha256(instance),
        "candidate_sha256": content_sha256(candidate),
        "input_sha256": content_sha256(_inputs(instance, candidate, expected)),
        "result": result,
        "result_sha256": content_sha256(result),
        "receipts": run.receipts if run is not None else [],
        "receipts_head": result.get("receipts_head") or _empty_head(instance),
    }
    if spec["kind"] == "reference":
        expected = {"status": "SCORED", "verdict": "QUALIFIED", "points": 100}
        observed = {"status": result["status"], "verdict": result["verdict"],
                    "points": result["score"]["points"] if result["score"] else None}
    elif expected is not None:
        observed = observe(result, expected)
    else:
        observed = None
    out["expected"] = expected
    out["observed"] = observed
    out["passed"] = None if expected is None else expected == observed
    return out


def fixture_input(spec) -> dict:
    """The instance and candidate a fixture grades (for download and inspection);
    its content_sha256 is the record's input_sha256."""
    return _inputs(*_build(spec))
