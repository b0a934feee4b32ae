"""`fundbook compare`: freeze a spec, decide from a sweep, verify from evidence.

A comparison folder holds spec.json, freeze.json (written by --freeze, before
any observation is read), deviations.json (dated entries; empty when the
spec ran as written), then decision.json, evidence.json and rules.py (a copy
of experiments/rules.py, the arithmetic the decision ran, for anyone -- the
browser's verify included -- to run again). The evidence lists every file the
decision rests on -- the spec, its freeze, the sweep manifest and journal,
the items manifest, the observations (JSONL and Parquet), the held-out
commitment and its reveal, the feasibility pilot, the rules -- with name,
kind and sha256. `compute_decision` takes those files' bytes and nothing
else, so `--verify` recomputes the decision from the evidence alone and
compares. Each file is read within its limit (experiments/files.py).
"""

import datetime
import os

import engine

from . import heldout, items as items_mod, jsondoc, observations as obs, result as result_mod, rules as rules_mod, work
from .decide import check_frozen, freeze_doc
from .errors import ExperimentError
from .evaluator import evaluator_id
from .files import MAX_DOC_BYTES, MAX_ITEMS, MAX_ITEMS_BYTES, MAX_OBSERVATIONS_BYTES, count_lines, read_file
from .journal import JOURNAL, Journal, rows_sha256
from .seeds import parse_seeds
from .files import write_all, write_atomic
from .sweep import normal_plan, pretty, read_doc

DECISION_SCHEMA = "fundbook.decision/2"  # /2: the rule's parameters, the full report, the journal check, rules.py
RULES_FILE = "rules.py"
RULES_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules.py")
LIMITS = {
    "observations": MAX_OBSERVATIONS_BYTES,
    "observations_parquet": MAX_OBSERVATIONS_BYTES,
    "attempt": MAX_OBSERVATIONS_BYTES,
    "journal": MAX_OBSERVATIONS_BYTES,
    "items": MAX_ITEMS_BYTES,
}
EVIDENCE_SCHEMA = "fundbook.evidence/1"
DEVIATIONS_SCHEMA = "fundbook.deviations/1"
DEVIATION_KEYS = {"date", "field", "original", "effective", "reason"}


def _read(path, what, kind=None) -> bytes:
    return read_file(path, what, LIMITS.get(kind, MAX_DOC_BYTES))


def rules_source() -> bytes:
    with open(RULES_SOURCE, "rb") as fh:
        return fh.read()


def _json(data, label, shape=dict):
    doc = jsondoc.loads(data, label, "a JSON object" if shape is dict else "JSON")
    if shape is not None and not isinstance(doc, shape):
        raise ExperimentError(f"{label}: expected a JSON object")
    return doc


# -- freeze --------------------------------------------------------------------------


def freeze(directory, date=None) -> dict:
    spec_path = os.path.join(directory, "spec.json")
    spec_bytes = _read(spec_path, "a comparison spec")
    doc = freeze_doc(spec_bytes, date, spec_path)
    path = os.path.join(directory, "freeze.json")
    if os.path.exists(path):
        old, _ = read_doc(path, "the freeze record")
        if old.get("spec_sha256") != doc["spec_sha256"]:
            raise ExperimentError(
                f"{spec_path}: changed after freezing (sha256 {doc['spec_sha256']}, frozen "
                f"{old.get('spec_sha256')} on {old.get('frozen_on')}): a changed spec is a new spec"
            )
        return old
    if os.path.exists(os.path.join(directory, "decision.json")):
        raise ExperimentError(f"{directory}: already holds a decision; a spec is frozen before any observation is read")
    write_atomic(path, pretty(doc))
    dev = os.path.join(directory, "deviations.json")
    if not os.path.exists(dev):
        write_atomic(dev, pretty({"schema": DEVIATIONS_SCHEMA, "deviations": []}))
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


# -- the decision from bytes -----------------------------------------------------------


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


# -- evidence --------------------------------------------------------------------------

SWEEP_FILES = (
    ("sweep_manifest", "sweep.json"),
    ("journal", JOURNAL),
    ("items", "items.jsonl"),
    ("observations", obs.JSONL),
    ("observations_parquet", obs.PARQUET),
    ("commitment", "commitment.json"),
    ("reveal", "reveal.json"),
    ("feasibility", "feasibility.json"),
    ("inputs", "inputs.json"),
)
COMPARISON_FILES = (
    ("spec", "spec.json"),
    ("freeze", "freeze.json"),
    ("deviations", "deviations.json"),
    ("rules", RULES_FILE),
)
REQUIRED = ("sweep_manifest", "journal", "items", "observations", "observations_parquet")


def _evidence_entries(directory, sweep_dir):
    entries = []
    for kind, name in COMPARISON_FILES:
        entries.append((kind, os.path.join(directory, name)))
    for kind, name in SWEEP_FILES:
        path = os.path.join(sweep_dir, name)
        if os.path.lexists(path) or kind in REQUIRED or kind == "rules":
            entries.append((kind, path))
    return entries


def _entry(directory, kind, path, data):
    rel = os.path.relpath(path, directory).replace(os.sep, "/")
    parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return {
        "name": f"{parent}/{os.path.basename(path)}",
        "kind": kind,
        "path": rel,
        "sha256": engine.sha256_hex(data),
        "bytes": len(data),
    }


def run_compare(directory, sweep_dir, secret=None, attempts=()) -> dict:
    """Decide, publish the reveal (held-out), write decision.json, evidence.json and result.json. `attempts`:
    the attempt files the sweep's model arm read (a study's), listed in the evidence with their sha256. A
    sweep that has not finished (no sweep.json) gets a failed result.json, and the error says so."""
    spec_bytes = _read(os.path.join(directory, "spec.json"), "a comparison spec")
    freeze_rec, _ = read_doc(os.path.join(directory, "freeze.json"), "the freeze record (`--freeze` first)")
    spec = check_frozen(spec_bytes, freeze_rec, directory)
    if not os.path.exists(os.path.join(sweep_dir, "sweep.json")):
        _record_failure(directory, sweep_dir, spec)
    if spec["items"]["split"] == "heldout":
        _publish_reveal(sweep_dir, secret)
    rules_path = os.path.join(directory, RULES_FILE)
    source = rules_source()  # written with the decision: the code that made it, for anyone to run again
    blobs, files = {}, []
    for kind, path in _evidence_entries(directory, sweep_dir):
        data = source if kind == "rules" else _read(path, kind.replace("_", " "), kind)
        blobs[kind] = data
        files.append(_entry(directory, kind, path, data))
    decision = compute_decision(blobs, directory)
    for path in attempts:  # what the model arm's rows came from: bound by sha256, read by verify-study
        files.append(_entry(directory, "attempt", path, _read(path, "an attempt file", "attempt")))
    decision_bytes = pretty(decision)
    files.append(_entry(directory, "decision", os.path.join(directory, "decision.json"), decision_bytes))
    from builders import rel

    evidence = {
        "schema": EVIDENCE_SCHEMA,
        "comparison": spec["name"],
        "files": files,
        "verify": f"fundbook compare {rel(directory)} --verify",
    }
    write_all(
        {
            rules_path: source,
            os.path.join(directory, "decision.json"): decision_bytes,
            os.path.join(directory, "evidence.json"): pretty(evidence),
            os.path.join(directory, result_mod.RESULT): pretty(result_mod.succeeded(decision, *_rows_and_ids(blobs))),
        }
    )
    return decision


def _record_failure(directory, sweep_dir, spec):
    """The sweep did not finish: result.json says the comparison failed (no verdict), with the arms' journalled
    worlds; a comparison already decided keeps its decision."""
    where = os.path.join(sweep_dir, "sweep.json")
    if os.path.exists(os.path.join(directory, "decision.json")):
        raise ExperimentError(f"{where}: no such file; {directory} keeps the decision it has")
    plan = spec["items"]
    planned = (
        (spec.get("stopping") or {}).get("max_n")
        or plan.get("count")
        or len(items_mod.practice_items(plan["families"], parse_seeds(plan["seeds"]), plan.get("episodes", ())))
    )
    worlds = {}
    journal_path = os.path.join(sweep_dir, JOURNAL)
    if os.path.exists(journal_path):
        journal = Journal.read(journal_path, torn_ok=True)
        for _, arm in journal.covered:
            worlds[arm] = worlds.get(arm, 0) + 1
    reason = f"{where}: no such file: the sweep has not finished (interrupted, or still running)"
    deviations = check_deviations(
        read_doc(os.path.join(directory, "deviations.json"), "the deviations")[0],
        os.path.join(directory, "deviations.json"),
    )
    doc = result_mod.failed(spec["name"], {a: planned for a in spec["arms"]}, deviations, worlds, reason)
    write_atomic(os.path.join(directory, result_mod.RESULT), pretty(doc))
    raise ExperimentError(
        f"{reason}: no decision; the failed result is recorded in {os.path.join(directory, result_mod.RESULT)}"
    )


def _publish_reveal(sweep_dir, secret):
    path = os.path.join(sweep_dir, "reveal.json")
    commitment, _ = read_doc(os.path.join(sweep_dir, "commitment.json"), "the held-out commitment")
    heldout.check_commitment_doc(commitment, os.path.join(sweep_dir, "commitment.json"))
    if os.path.exists(path):
        doc, _ = read_doc(path, "the reveal")
        heldout.check_reveal(doc, commitment, path)
        return
    if secret is None:
        raise ExperimentError(f"{path}: the held-out list is revealed with the comparison: pass --secret-file")
    write_atomic(path, pretty(heldout.reveal(secret, commitment)))


EVIDENCE_KINDS = {kind for kind, _ in COMPARISON_FILES + SWEEP_FILES} | {"decision", "attempt"}
REPEATED_KINDS = {"attempt"}  # one entry per attempt file; the decision never reads them
ENTRY_FIELDS = ("name", "kind", "path", "sha256")


def _check_entry(entry, seen, directory, where):
    """One evidence entry: its fields, a kind listed once, and the comparison's own files at their own names
    (a decision verified from a copy elsewhere would say nothing about DIRECTORY/decision.json)."""
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ENTRY_FIELDS):
        raise ExperimentError(f"{where}: expected an object with {', '.join(ENTRY_FIELDS)} as texts")
    if entry["kind"] not in EVIDENCE_KINDS:
        raise ExperimentError(f"{where}.kind: {entry['kind'][:40]!r} is not a kind of evidence")
    if entry["kind"] in seen and entry["kind"] not in REPEATED_KINDS:
        raise ExperimentError(f"{where}.kind: {entry['kind']} is listed twice")
    own = dict(COMPARISON_FILES + (("decision", "decision.json"),)).get(entry["kind"])
    if own and os.path.normpath(os.path.join(directory, entry["path"])) != os.path.normpath(
        os.path.join(directory, own)
    ):
        raise ExperimentError(
            f"{where}.path: the {entry['kind']} is {own} in the comparison folder, not {entry['path'][:80]!r}"
        )


def verify(directory, keep=None) -> dict:
    """Recompute the decision from the files evidence.json lists; ExperimentError on any difference."""
    evidence, _ = read_doc(os.path.join(directory, "evidence.json"), "the evidence list")
    if evidence.get("schema") != EVIDENCE_SCHEMA or not isinstance(evidence.get("files"), list):
        raise ExperimentError(f"{directory}/evidence.json: schema: expected {EVIDENCE_SCHEMA!r} with files")
    blobs, published = {}, None
    for i, entry in enumerate(evidence["files"]):
        _check_entry(
            entry,
            blobs.keys() | ({"decision"} if published is not None else set()),
            directory,
            f"{directory}/evidence.json: files[{i}]",
        )
        path = os.path.normpath(os.path.join(directory, entry["path"]))
        data = _read(path, f"evidence {entry['name']}", entry["kind"])
        got = engine.sha256_hex(data)
        if got != entry["sha256"]:
            raise ExperimentError(f"{path}: sha256 {got}, the evidence lists {entry['sha256']} ({entry['name']})")
        if entry["kind"] == "decision":
            published = _json(data, path)
        elif entry["kind"] in REPEATED_KINDS:
            continue
        else:
            blobs[entry["kind"]] = data
    if published is None:
        raise ExperimentError(f"{directory}/evidence.json: lists no decision")
    recomputed = compute_decision(blobs, f"{directory}/evidence.json", keep)
    if recomputed != published:
        where = engine.first_difference(published, recomputed)
        raise ExperimentError(
            f"{directory}/decision.json: differs from the decision recomputed from the evidence at {where}"
        )
    result_mod.check(directory, recomputed, *_rows_and_ids(blobs), pretty)
    return recomputed


def _rows_and_ids(blobs):
    """(observation rows, item ids in sweep order) of verified evidence: what result.json's per-arm means read."""
    rows = obs.parse_jsonl(blobs["observations"], "observations.jsonl")
    ids = [jsondoc.loads(raw, "items.jsonl", "an item").get("item_id") for raw in blobs["items"].splitlines()]
    return rows, ids
