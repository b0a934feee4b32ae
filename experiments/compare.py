"""`fundbook compare`: freeze a spec, decide from a sweep, verify from evidence.

A comparison folder holds spec.json, freeze.json (written by --freeze, before
any observation is read), deviations.json (dated entries; empty when the
spec ran as written), then decision.json, evidence.json and rules.py (a copy
of experiments/rules.py, the arithmetic the decision ran, for anyone -- the
browser's verify included -- to run again). The evidence lists every file the
decision rests on -- the spec, its freeze, the sweep manifest and journal,
the items manifest, the observations (JSONL and Parquet), the held-out
commitment and its reveal, the feasibility pilot, the rules -- with name,
kind and sha256. `compute_decision` (experiments/decision.py) takes those files' bytes and nothing
else, so `--verify` recomputes the decision from the evidence alone and
compares. Each file is read within its limit (experiments/files.py).
"""

import os

import engine

from . import heldout, items as items_mod, jsondoc, observations as obs, result as result_mod
from .decide import check_frozen, freeze_doc
from .decision import (  # noqa: F401  (the decision from the evidence's bytes, importable from here as before)
    DECISION_SCHEMA,
    DEVIATION_KEYS,
    DEVIATIONS_SCHEMA,
    RULES_FILE,
    RULES_SOURCE,
    SWEEP_FIELDS,
    _check_journal,
    _check_parquet,
    _check_stop,
    _check_sweep_manifest,
    _json,
    _measured_prefix,
    check_deviations,
    compute_decision,
    rules_source,
)
from .errors import ExperimentError
from .files import MAX_DOC_BYTES, MAX_ITEMS_BYTES, MAX_OBSERVATIONS_BYTES, read_file
from .journal import JOURNAL, Journal
from .seeds import parse_seeds
from .files import write_all, write_atomic
from .jsondoc import pretty, read_doc

LIMITS = {
    "observations": MAX_OBSERVATIONS_BYTES,
    "observations_parquet": MAX_OBSERVATIONS_BYTES,
    "attempt": MAX_OBSERVATIONS_BYTES,
    "journal": MAX_OBSERVATIONS_BYTES,
    "items": MAX_ITEMS_BYTES,
}
EVIDENCE_SCHEMA = "fundbook.evidence/1"


def _read(path, what, kind=None) -> bytes:
    return read_file(path, what, LIMITS.get(kind, MAX_DOC_BYTES))


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
