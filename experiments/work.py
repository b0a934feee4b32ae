"""One item's work: build its world, produce each arm's candidate, grade it,
and measure the metrics. Standard library and `engine` only, no import from
the `experiments` package: the same file runs in host CPython (local pool),
in a Modal container, and in the pinned Pyodide against the engine bundle
(the sampled re-execution), so all three give the same observations.

A task is plain JSON: `{"item": {...}, "fixture_sha256": ..., "arms": [...]}`;
its result is `{"item_id", "fixture_sha256", "values": [[arm, seed, metric,
value], ...], "micros": {arm: µs}}`. `micros` are timings: volatile, used
only by the feasibility pilot, never written next to the observations.

Values are integers (points, cents, 0/1) or None (an unbounded metric that
was not measured because the run was not scored). Nothing here is a float.
"""

import time

import engine
from engine import played_candidate, reference_economics


GATES = tuple(engine.GATES)  # the grader's gates, as the engine names them

WORK_FORMAT = 1  # bump when a metric below changes meaning
REPLICATE_SEED = 0  # scripted arms and graded files are deterministic: one replicate
MISSING = "MISSING"  # an arm produced no candidate for this item (a row, not a gap)

# The metric definitions; their JSON is part of the evaluator's provenance.
METRICS = {
    "scored": {"unit": "0/1", "bounds": [0, 1], "definition": "1 when the status is SCORED, else 0"},
    "qualified": {"unit": "0/1", "bounds": [0, 1],
                  "definition": "1 when SCORED and QUALIFIED, else 0 (MALFORMED, UNSCORABLE and missing included)"},
    "score": {"unit": "points", "denominator": 100, "bounds": [0, 100],
              "definition": "score.points when SCORED, else 0; the score fraction is value / 100, exactly"},
    "funding_cost": {"unit": "cents", "bounds": None,
                     "definition": "economics.all_in_cost when SCORED, else null (not measured; unbounded)"},
    "gate": {"unit": "0/1", "bounds": [0, 1], "names": list(GATES),
             "definition": "metric gate:<name>: 1 when the gate passed, 0 when it failed or the run was not scored"},
    "expected_met": {"unit": "0/1", "bounds": [0, 1],
                     "definition": "the certification arms' one metric. gold: 1 when SCORED, QUALIFIED and 100/100, "
                                   "else 0; a mutation: 1 when the observed outcome equals its expected outcome field "
                                   "for field, else 0; null when the mutation cannot be built for this world "
                                   "(not applicable, so not measured)"},
}
GOLD_EXPECTED = {"status": "SCORED", "verdict": "QUALIFIED", "points": 100}


class WorkError(Exception):
    """The task itself is wrong (never a candidate's failure: those are rows)."""


def item_id(item) -> str:
    if item.get("kind") == "episode":
        return item["episode"]
    suffix = f"@h{item['horizon']}" if item.get("horizon") is not None else ""
    return f"{item['family']}/seed-{item['seed']}{suffix}"


def instance_for(item):
    if item.get("kind") == "episode":
        return engine.load_episode(item["episode"])
    instance = engine.generate(item["family"], item["seed"])
    if item.get("horizon") is not None:
        instance = engine.with_horizon(instance, item["horizon"])
    return instance


def result_metrics(result) -> list:
    """[(metric, value)] of one graded result, in a fixed order."""
    scored = result.get("status") == "SCORED"
    out = [("scored", int(scored)),
           ("qualified", int(scored and result.get("verdict") == "QUALIFIED")),
           ("score", result["score"]["points"] if scored else 0),
           ("funding_cost", result["economics"]["all_in_cost"] if scored else None)]
    passed = {g["gate"]: g["passed"] for g in (result.get("gates") or [])}
    names = list(GATES) + sorted(set(passed) - set(GATES))
    for name in names:
        out.append((f"gate:{name}", int(bool(passed.get(name)))))
    return out


def _missing_result():
    return {"status": MISSING, "verdict": None, "gates": [], "score": None}


class _Reference:
    """The reference plan of one world, played once: the gold candidate and,
    from the same finished run, the reference economics every arm is graded against."""

    def __init__(self, instance):
        self.instance = instance
        self._gold = self._economics = None
        self.error = None

    def _play(self):
        if self._gold is None:
            self._gold, run = played_candidate(self.instance, "reference", "gold")
            run.finalize()
            try:
                self._economics = reference_economics(self.instance, run)
            except engine.DeskError as exc:
                self.error = exc

    def economics(self):
        self._play()
        return self._economics

    def gold(self):
        self._play()
        return self._gold


def _grade(candidate, instance, ref):
    if candidate is None:
        return _missing_result()
    economics = ref.economics()
    # An invalid reference: let the engine grade it from scratch, so the
    # UNSCORABLE result carries the engine's own message.
    return engine.grade_candidate(candidate, instance, economics)


def _arm_values(arm, instance, ref):
    """[(metric, value)] for one arm on one world."""
    kind = arm["kind"]
    if kind == "policy":
        # The reference policy's candidate is the gold candidate (labels are not graded).
        candidate = ref.gold() if arm["policy"] == "reference" else engine.policy_candidate(instance, arm["policy"])
        return result_metrics(_grade(candidate, instance, ref))
    if kind == "gold":
        result = _grade(ref.gold(), instance, ref)
        observed = {"status": result["status"], "verdict": result.get("verdict"),
                    "points": result["score"]["points"] if result.get("score") else None}
        return [("expected_met", int(observed == GOLD_EXPECTED))]
    if kind == "mutation":
        try:
            candidate, expected = engine.mutate(arm["mutation"], instance, ref.gold())
        except engine.NotApplicable:
            return [("expected_met", None)]
        result = _grade(candidate, instance, ref)
        return [("expected_met", int(engine.observe(result, expected) == expected))]
    if kind == "candidate":
        return result_metrics(_grade(arm.get("candidate"), instance, ref))
    raise WorkError(f"arm {arm.get('name')!r}: unknown kind {kind!r}")


def run_task(task) -> dict:
    item = task["item"]
    iid = item_id(item)
    instance = instance_for(item)
    fixture = engine.fixture_sha256(instance)
    if task.get("fixture_sha256") not in (None, fixture):
        raise WorkError(f"item {iid}: fixture sha256 expected {task['fixture_sha256']} (items manifest), "
                        f"actual {fixture}")
    ref = _Reference(instance)
    values, micros = [], {}
    for arm in task["arms"]:
        t0 = time.perf_counter()
        try:
            measured = _arm_values(arm, instance, ref)
        except WorkError:
            raise
        except Exception as exc:  # an engine defect, never a candidate's failure (those are rows): stop, naming it
            raise WorkError(f"item {iid}, arm {arm.get('name')}: the engine raised {type(exc).__name__}: {exc}")
        for metric, value in measured:
            values.append([arm["name"], REPLICATE_SEED, metric, value])
        micros[arm["name"]] = round((time.perf_counter() - t0) * 1_000_000)
    return {"item_id": iid, "fixture_sha256": fixture, "values": values, "micros": micros}


def run_tasks(tasks) -> list:
    return [run_task(t) for t in tasks]


def run_task_json(text) -> str:
    """The Pyodide entry point: a task as JSON text in, its result as JSON text out."""
    import json
    return json.dumps(run_task(json.loads(text)), sort_keys=True)


def source_digests() -> dict:
    """{repo path: sha256} of the engine sources this interpreter imports: the
    same set the bundle is compiled from (every file of engine/, as
    builders/bundle/_sources.py lists it). A Modal container reports them so
    the host can check them against the bundle manifest."""
    import hashlib
    import os
    base = os.path.dirname(os.path.abspath(engine.__file__))
    root = os.path.dirname(base)
    out = {}
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for name in filenames:
            if name.endswith((".py", ".json")):
                with open(os.path.join(dirpath, name), "rb") as fh:
                    out[f"{rel}/{name}"] = hashlib.sha256(fh.read()).hexdigest()
    return out


def remote_chunk(tasks) -> dict:
    """The Modal function body: one chunk of tasks, and the sources that graded them."""
    return {"sources": source_digests(), "results": run_tasks(tasks)}
