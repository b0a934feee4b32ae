"""The decision from the evidence's bytes: `compute_decision` takes the files a comparison rests on ({kind:
bytes}) and nothing else -- the spec and its freeze, the sweep manifest, journal, items manifest and
observations, the held-out commitment and reveal, the deviations, the rules -- checks each against the others
and runs experiments/rules.py on the rows. `fundbook compare` decides and `--verify` recomputes through it."""

import datetime
import os

import engine

from . import heldout, items as items_mod, jsondoc, observations as obs, rules as rules_mod, work
from .decide import check_frozen
from .errors import ExperimentError
from .evaluator import evaluator_id
from .files import MAX_ITEMS, count_lines
from .journal import JOURNAL, Journal, rows_sha256
from .plans import normal_plan
from .seeds import parse_seeds

DECISION_SCHEMA = "fundbook.decision/2"  # /2: the rule's parameters, the full report, the journal check, rules.py
RULES_FILE = "rules.py"
RULES_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules.py")
DEVIATIONS_SCHEMA = "fundbook.deviations/1"
DEVIATION_KEYS = {"date", "field", "original", "effective", "reason"}


def rules_source() -> bytes:
    with open(RULES_SOURCE, "rb") as fh:
        return fh.read()


def _json(data, label, shape=dict):
    doc = jsondoc.loads(data, label, "a JSON object" if shape is dict else "JSON")
    if shape is not None and not isinstance(doc, shape):
        raise ExperimentError(f"{label}: expected a JSON object")
    return doc


def check_deviations(doc, where) -> list:
    if (
        not isinstance(doc, dict)
        or doc.get("schema") != DEVIATIONS_SCHEMA
        or not isinstance(doc.get("deviations"), list)
    ):
        raise ExperimentError(f"{where}: expected {{schema: {DEVIATIONS_SCHEMA!r}, deviations: [...]}}")
    for i, entry in enumerate(doc["deviations"]):
        if not isinstance(entry, dict) or set(entry) != DEVIATION_KEYS:
            raise ExperimentError(f"{where}: deviations[{i}]: expected exactly {', '.join(sorted(DEVIATION_KEYS))}")
        try:
            datetime.date.fromisoformat(entry["date"])
        except (TypeError, ValueError):
            raise ExperimentError(f"{where}: deviations[{i}].date: expected YYYY-MM-DD")
    return doc["deviations"]


def compute_decision(blobs, label="evidence", keep=None) -> dict:
    """The decision from the evidence files' bytes ({kind: bytes}) and nothing else (`keep`, a dict,
    receives the rules' payload: what the Pyodide recomputation is given)."""

    def need(kind):
        if kind not in blobs:
            raise ExperimentError(f"{label}: no {kind} file")
        return blobs[kind]

    own = rules_source()
    if engine.sha256_hex(need("rules")) != engine.sha256_hex(own):
        raise ExperimentError(
            f"{label}: {RULES_FILE}: sha256 {engine.sha256_hex(need('rules'))} is not this fundbook's "
            f"experiments/rules.py ({engine.sha256_hex(own)}): decided by other rules; verify it "
            f"with the fundbook that decided it"
        )
    freeze_rec = _json(need("freeze"), f"{label}: freeze")
    spec = check_frozen(need("spec"), freeze_rec, label)
    sweep = _check_sweep_manifest(_json(need("sweep_manifest"), f"{label}: sweep manifest"), f"{label}: sweep manifest")
    if freeze_rec["spec_sha256"] not in [c.get("spec_sha256") for c in sweep.get("comparisons") or []]:
        raise ExperimentError(
            f"{label}: the sweep does not record spec {freeze_rec['spec_sha256'][:16]} as frozen "
            f"before it ran (run `fundbook sweep ... --comparison DIR` after `--freeze`)"
        )
    for kind, name in (
        ("items", "items.jsonl"),
        ("observations", obs.JSONL),
        ("observations_parquet", obs.PARQUET),
        ("journal", JOURNAL),
        ("inputs", "inputs.json"),
    ):
        if kind == "inputs" and kind not in blobs and name not in sweep["files"]:
            continue  # a sweep of engine arms only has no host inputs
        got = engine.sha256_hex(need(kind))
        if got != sweep["files"].get(name):
            raise ExperimentError(f"{label}: {name}: sha256 {got}, the sweep manifest lists {sweep['files'].get(name)}")
    try:
        eid = evaluator_id(sweep["provenance"])
    except ValueError:  # a float the canonical form refuses
        raise ExperimentError(f"{label}: sweep manifest: provenance is not canonical JSON")
    if eid != sweep["evaluator_id"]:
        raise ExperimentError(
            f"{label}: sweep manifest: evaluator_id {sweep['evaluator_id']} is not the sha256 of its provenance ({eid})"
        )
    if engine.sha256_hex(need("items")) != sweep["provenance"]["items"]["manifest_sha256"]:
        raise ExperimentError(f"{label}: items.jsonl is not the manifest the evaluator id names")
    count_lines(need("items"), MAX_ITEMS, f"{label}: items.jsonl", "an items manifest")
    manifest = [_json(raw, f"{label}: items.jsonl") for raw in need("items").splitlines()]
    if normal_plan(spec["items"]) != normal_plan(sweep["items"]):
        raise ExperimentError(f"{label}: the spec's items differ from the sweep's")
    ids = [r.get("item_id") for r in manifest]
    if len(set(ids)) != len(ids) or not all(isinstance(i, str) for i in ids):
        raise ExperimentError(f"{label}: items.jsonl lists an item twice (or an item without an id)")
    heldout_info = None
    if spec["items"]["split"] == "practice":
        plan = spec["items"]
        want = [
            work.item_id(i)
            for i in items_mod.practice_items(plan["families"], parse_seeds(plan["seeds"]), plan.get("episodes", ()))
        ]
        if ids != want:
            raise ExperimentError(f"{label}: items.jsonl does not list the spec's practice worlds in sweep order")
    if spec["items"]["split"] == "heldout":
        commitment = heldout.check_commitment_doc(
            _json(need("commitment"), f"{label}: commitment"), f"{label}: commitment"
        )
        if commitment["sha256"] != spec["items"]["commitment_sha256"]:
            raise ExperimentError(
                f"{label}: commitment sha256 {commitment['sha256']} is not the spec's "
                f"{spec['items']['commitment_sha256']}"
            )
        pairs = heldout.check_reveal(_json(need("reveal"), f"{label}: reveal"), commitment, f"{label}: reveal")
        if [[r.get("family"), r.get("seed")] for r in manifest] != pairs:
            raise ExperimentError(f"{label}: items.jsonl is not the revealed held-out list")
        heldout_info = {
            "commitment_sha256": commitment["sha256"],
            "committed_on": commitment["created"],
            "revealed": True,
            "count": len(pairs),
        }
    rows = obs.parse_jsonl(need("observations"), f"{label}: observations.jsonl")
    _check_parquet(need("observations_parquet"), rows, label)
    order = _check_journal(need("journal"), sweep, need("freeze"), freeze_rec, spec, rows, eid, label)
    for r in rows:
        if r["evaluator_id"] != eid:
            raise ExperimentError(
                f"{label}: observations.jsonl holds a row of evaluator {r['evaluator_id'][:16]}, "
                f"not {eid[:16]}: rows of different evaluators are never compared"
            )
    measured = _measured_prefix(ids, rows, label)
    betting = rules_mod.Rule(spec).method == rules_mod.BETTING
    if not betting and measured < len(ids):
        raise ExperimentError(
            f"{label}: the sweep measured {measured} of the {len(ids)} planned worlds: a fixed-n "
            f"rule decides at the last planned world"
        )
    deviations = check_deviations(_json(need("deviations"), f"{label}: deviations"), f"{label}: deviations")
    execution = sweep["execution"]
    limits = []
    if deviations:
        limits.append(f"{len(deviations)} deviation(s) from the frozen spec")
    if not (execution.get("pyodide_sample") or {}).get("identical"):
        limits.append("no sampled re-execution through the engine bundle")
    data = rules_mod.payload(spec, ids, rows, limits)
    if keep is not None:
        keep["payload"] = data
    try:
        result = rules_mod.recompute(data)
    except rules_mod.RuleError as exc:
        raise ExperimentError(f"{label}: {exc}") from None
    if betting:
        _check_stop(result, sweep, spec, measured, len(ids), label)
    return {
        "schema": DECISION_SCHEMA,
        "comparison": spec["name"],
        "question": spec.get("question"),
        "estimand": spec["estimand"],
        "unit": spec["unit"],
        "spec_sha256": freeze_rec["spec_sha256"],
        "frozen_on": freeze_rec["frozen_on"],
        "evaluator_id": eid,
        "items": {**spec["items"], "n": len(manifest)},
        "heldout": heldout_info,
        "deviations": deviations,
        "order": order,
        "rules_sha256": engine.sha256_hex(own),
        "execution": {
            "path": execution["path"],
            "executor": execution["executor"],
            "pyodide_sample": execution.get("pyodide_sample"),
            "source_check": execution.get("source_check"),
        },
        **result,
    }


def _measured_prefix(ids, rows, label) -> int:
    """How many planned worlds, from the first, have rows; rows of a world after that prefix are refused."""
    seen = {r["item_id"] for r in rows}
    n = 0
    while n < len(ids) and ids[n] in seen:
        n += 1
    stray = seen - set(ids[:n])
    if stray:
        raise ExperimentError(
            f"{label}: observations.jsonl holds rows of {sorted(stray)[0]}, which is not in the "
            f"measured prefix of the items manifest (the first {n} worlds)"
        )
    return n


def _check_journal(data, sweep, freeze_bytes, freeze_rec, spec, rows, eid, label) -> dict:
    """The journal is intact, ends at the manifest's head, vouches for every row, and records this spec
    (its freeze's sha256) before the first row of the spec's arms: rows and freeze in an order anyone can check."""
    journal, _ = Journal.parse(data, f"{label}: {JOURNAL}")
    if journal.summary() != sweep.get("journal"):
        raise ExperimentError(
            f"{label}: {JOURNAL}: ends at {journal.summary()}, the sweep manifest records {sweep.get('journal')}"
        )
    if (
        journal.start["evaluator_id"] != eid
        or journal.start["items_sha256"] != sweep["provenance"]["items"]["manifest_sha256"]
    ):
        raise ExperimentError(f"{label}: {JOURNAL}: begun for another evaluator or items manifest")
    grouped = {}
    for r in rows:
        grouped.setdefault((r["item_id"], r["arm"]), []).append(r)
    listed = {}
    for (iid, arm), (index, entry) in journal.covered.items():
        listed.setdefault(index, entry)
    for index, entry in sorted(listed.items()):
        got = [r for a in entry["arms"] for r in grouped.get((entry["item_id"], a), [])]
        if rows_sha256(got) != entry["rows_sha256"]:
            raise ExperimentError(
                f"{label}: observations.jsonl: the rows of item {entry['item_id']} are not the ones "
                f"journalled at line {index + 1} when they were measured"
            )
    unlisted = sorted(k for k in grouped if k not in journal.covered)
    if unlisted:
        raise ExperimentError(
            f"{label}: observations.jsonl: rows of item {unlisted[0][0]}, arm {unlisted[0][1]} that "
            f"the journal does not list"
        )
    served = journal.served.get(freeze_rec["spec_sha256"])
    if served is None:
        raise ExperimentError(
            f"{label}: {JOURNAL} does not record spec {freeze_rec['spec_sha256'][:16]}: it was not "
            f"served by this sweep from its start"
        )
    line, entry = served
    if entry["freeze_sha256"] != engine.sha256_hex(freeze_bytes):
        raise ExperimentError(
            f"{label}: {JOURNAL} line {line + 1} recorded freeze {entry['freeze_sha256'][:16]}, not "
            f"this freeze.json ({engine.sha256_hex(freeze_bytes)[:16]}): frozen again after the sweep"
        )
    first = journal.first_row_line(set(spec["arms"]))
    if first is not None and first < line:
        raise ExperimentError(
            f"{label}: {JOURNAL}: rows of the spec's arms were written (line {first + 1}) before "
            f"the spec was recorded (line {line + 1}): a spec frozen after any of its rows existed "
            f"cannot decide from them"
        )
    return {
        "journal_lines": len(journal.entries),
        "journal_head": journal.head,
        "served_at_line": line + 1,
        "first_row_line": None if first is None else first + 1,
        "freeze_sha256": entry["freeze_sha256"],
    }


def _check_stop(result, sweep, spec, measured, planned, label):
    """A betting decision stops where its rule stops; the sweep must have measured that far and record it."""
    seq = result["sequential"]
    stopped = seq["stopped_at"] is not None
    if not stopped and measured < planned:
        raise ExperimentError(
            f"{label}: the sweep stopped after {measured} worlds, before this rule did "
            f"(it needs more of the planned {planned})"
        )
    want = {
        "n": result["n"],
        "verdict": result["verdict"] if stopped else None,
        "reason": seq["reason"] if stopped else None,
    }
    record = ((sweep.get("sequential") or {}).get("comparisons") or {}).get(spec["name"])
    if record is not None and record != want:
        raise ExperimentError(
            f"{label}: the sweep manifest records {spec['name']} stopping at n {record.get('n')} "
            f"({record.get('verdict')}); its rule recomputed from the rows stops at n {want['n']} "
            f"({want['verdict']})"
        )


SWEEP_FIELDS = {
    "schema": str,
    "evaluator_id": str,
    "provenance": dict,
    "items": dict,
    "comparisons": list,
    "files": dict,
    "execution": dict,
}


def _check_sweep_manifest(sweep, where) -> dict:
    """The fields of a sweep manifest a decision reads, each of its type (the file is evidence: never trusted)."""
    if sweep.get("schema") != "fundbook.sweep/1":
        raise ExperimentError(f"{where}: schema expected 'fundbook.sweep/1'")
    for key, kind in SWEEP_FIELDS.items():
        if not isinstance(sweep.get(key), kind):
            raise ExperimentError(
                f"{where}: {key}: expected {'a text' if kind is str else 'a list' if kind is list else 'an object'}"
            )
    if not all(isinstance(c, dict) for c in sweep["comparisons"]):
        raise ExperimentError(f"{where}: comparisons: expected a list of objects")
    if not isinstance(sweep["provenance"].get("items"), dict) or not isinstance(sweep["execution"].get("path"), str):
        raise ExperimentError(f"{where}: provenance.items and execution.path expected")
    return sweep


def _check_parquet(data, rows, label):
    try:
        table = obs.parquet_rows(data)
    except Exception as exc:  # a damaged file: pyarrow's own error types vary
        raise ExperimentError(f"{label}: observations.parquet is unreadable ({type(exc).__name__})")
    if table != rows:
        raise ExperimentError(f"{label}: observations.parquet does not hold the same rows as observations.jsonl")
