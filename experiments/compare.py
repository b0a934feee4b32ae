"""`fundbook compare`: freeze a spec, decide from a sweep, verify from evidence.

A comparison folder holds spec.json, freeze.json (written by --freeze, before
any observation is read), deviations.json (dated entries; empty when the
spec ran as written), then decision.json and evidence.json. The evidence
lists every file the decision rests on -- the spec, its freeze, the sweep
manifest, the items manifest, the observations (JSONL and Parquet), the
held-out commitment and its reveal, the feasibility pilot -- with name, kind
and sha256. `compute_decision` takes those files' bytes and nothing else, so
`--verify` recomputes the decision from the evidence alone and compares.
"""

import datetime
import os

import engine

from . import heldout, items as items_mod, jsondoc, observations as obs, work
from .decide import check_frozen, decide, freeze_doc
from .errors import ExperimentError
from .evaluator import evaluator_id
from .seeds import parse_seeds
from .sweep import normal_plan, pretty, read_doc, write_all, write_atomic

DECISION_SCHEMA = "fundbook.decision/1"
EVIDENCE_SCHEMA = "fundbook.evidence/1"
DEVIATIONS_SCHEMA = "fundbook.deviations/1"
DEVIATION_KEYS = {"date", "field", "original", "effective", "reason"}


def _read(path, what) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise ExperimentError(f"{path}: no such file ({what} expected)")
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read ({exc.strerror})")
    except ValueError:  # a NUL byte or a lone surrogate in the name
        raise ExperimentError(f"{path!r}: not a file name ({what} expected)")


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
            raise ExperimentError(f"{spec_path}: changed after freezing (sha256 {doc['spec_sha256']}, frozen "
                                  f"{old.get('spec_sha256')} on {old.get('frozen_on')}): a changed spec is a new spec")
        return old
    if os.path.exists(os.path.join(directory, "decision.json")):
        raise ExperimentError(f"{directory}: already holds a decision; a spec is frozen before any observation is read")
    write_atomic(path, pretty(doc))
    dev = os.path.join(directory, "deviations.json")
    if not os.path.exists(dev):
        write_atomic(dev, pretty({"schema": DEVIATIONS_SCHEMA, "deviations": []}))
    return doc


def check_deviations(doc, where) -> list:
    if not isinstance(doc, dict) or doc.get("schema") != DEVIATIONS_SCHEMA or not isinstance(doc.get("deviations"), list):
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

def compute_decision(blobs, label="evidence") -> dict:
    """The decision from the evidence files' bytes ({kind: bytes}) and nothing else."""
    def need(kind):
        if kind not in blobs:
            raise ExperimentError(f"{label}: no {kind} file")
        return blobs[kind]
    freeze_rec = _json(need("freeze"), f"{label}: freeze")
    spec = check_frozen(need("spec"), freeze_rec, label)
    sweep = _check_sweep_manifest(_json(need("sweep_manifest"), f"{label}: sweep manifest"), f"{label}: sweep manifest")
    if freeze_rec["spec_sha256"] not in [c.get("spec_sha256") for c in sweep.get("comparisons") or []]:
        raise ExperimentError(f"{label}: the sweep does not record spec {freeze_rec['spec_sha256'][:16]} as frozen "
                              f"before it ran (run `fundbook sweep ... --comparison DIR` after `--freeze`)")
    for kind, name in (("items", "items.jsonl"), ("observations", obs.JSONL), ("observations_parquet", obs.PARQUET)):
        got = engine.sha256_hex(need(kind))
        if got != sweep["files"].get(name):
            raise ExperimentError(f"{label}: {name}: sha256 {got}, the sweep manifest lists {sweep['files'].get(name)}")
    try:
        eid = evaluator_id(sweep["provenance"])
    except ValueError:  # a float the canonical form refuses
        raise ExperimentError(f"{label}: sweep manifest: provenance is not canonical JSON")
    if eid != sweep["evaluator_id"]:
        raise ExperimentError(f"{label}: sweep manifest: evaluator_id {sweep['evaluator_id']} is not the sha256 of "
                              f"its provenance ({eid})")
    if engine.sha256_hex(need("items")) != sweep["provenance"]["items"]["manifest_sha256"]:
        raise ExperimentError(f"{label}: items.jsonl is not the manifest the evaluator id names")
    manifest = [_json(raw, f"{label}: items.jsonl") for raw in need("items").splitlines()]
    if normal_plan(spec["items"]) != normal_plan(sweep["items"]):
        raise ExperimentError(f"{label}: the spec's items differ from the sweep's")
    ids = [r.get("item_id") for r in manifest]
    if len(set(ids)) != len(ids):
        raise ExperimentError(f"{label}: items.jsonl lists an item twice")
    heldout_info = None
    if spec["items"]["split"] == "practice":
        plan = spec["items"]
        want = [work.item_id(i) for i in items_mod.practice_items(plan["families"], parse_seeds(plan["seeds"]),
                                                                   plan.get("episodes", ()))]
        if ids != want:
            raise ExperimentError(f"{label}: items.jsonl does not list the spec's practice worlds in sweep order")
    if spec["items"]["split"] == "heldout":
        commitment = heldout.check_commitment_doc(_json(need("commitment"), f"{label}: commitment"), f"{label}: commitment")
        if commitment["sha256"] != spec["items"]["commitment_sha256"]:
            raise ExperimentError(f"{label}: commitment sha256 {commitment['sha256']} is not the spec's "
                                  f"{spec['items']['commitment_sha256']}")
        pairs = heldout.check_reveal(_json(need("reveal"), f"{label}: reveal"), commitment, f"{label}: reveal")
        if [[r.get("family"), r.get("seed")] for r in manifest] != pairs:
            raise ExperimentError(f"{label}: items.jsonl is not the revealed held-out list")
        heldout_info = {"commitment_sha256": commitment["sha256"], "committed_on": commitment["created"],
                        "revealed": True, "count": len(pairs)}
    rows = obs.parse_jsonl(need("observations"), f"{label}: observations.jsonl")
    _check_parquet(need("observations_parquet"), rows, label)
    values = {}
    for r in rows:
        if r["evaluator_id"] != eid:
            raise ExperimentError(f"{label}: observations.jsonl holds a row of evaluator {r['evaluator_id'][:16]}, "
                                  f"not {eid[:16]}: rows of different evaluators are never compared")
        if r["metric"] == spec["metric"] and r["arm"] in spec["arms"]:
            key = (r["item_id"], r["arm"], r["seed"])
            if key in values:
                raise ExperimentError(f"{label}: two {spec['metric']} rows for item {key[0]}, arm {key[1]}, seed {key[2]}")
            values[key] = r["value"]
    deviations = check_deviations(_json(need("deviations"), f"{label}: deviations"), f"{label}: deviations")
    execution = sweep["execution"]
    limits = []
    if deviations:
        limits.append(f"{len(deviations)} deviation(s) from the frozen spec")
    if not (execution.get("pyodide_sample") or {}).get("identical"):
        limits.append("no sampled re-execution through the engine bundle")
    result = decide(spec, [r["item_id"] for r in manifest], values, limits)
    return {"schema": DECISION_SCHEMA, "comparison": spec["name"], "question": spec.get("question"),
            "estimand": spec["estimand"], "unit": spec["unit"], "spec_sha256": freeze_rec["spec_sha256"],
            "frozen_on": freeze_rec["frozen_on"], "evaluator_id": eid, "items": {**spec["items"], "n": len(manifest)},
            "heldout": heldout_info, "deviations": deviations,
            "execution": {"path": execution["path"], "executor": execution["executor"],
                          "pyodide_sample": execution.get("pyodide_sample"),
                          "source_check": execution.get("source_check")},
            **result}


SWEEP_FIELDS = {"schema": str, "evaluator_id": str, "provenance": dict, "items": dict, "comparisons": list,
                "files": dict, "execution": dict}


def _check_sweep_manifest(sweep, where) -> dict:
    """The fields of a sweep manifest a decision reads, each of its type (the file is evidence: never trusted)."""
    if sweep.get("schema") != "fundbook.sweep/1":
        raise ExperimentError(f"{where}: schema expected 'fundbook.sweep/1'")
    for key, kind in SWEEP_FIELDS.items():
        if not isinstance(sweep.get(key), kind):
            raise ExperimentError(f"{where}: {key}: expected {'a text' if kind is str else 'a list' if kind is list else 'an object'}")
    if not all(isinstance(c, dict) for c in sweep["comparisons"]):
        raise ExperimentError(f"{where}: comparisons: expected a list of objects")
    if not isinstance(sweep["provenance"].get("items"), dict) or not isinstance(sweep["execution"].get("path"), str):
        raise ExperimentError(f"{where}: provenance.items and execution.path expected")
    return sweep


def _check_parquet(data, rows, label):
    import io

    import pyarrow.parquet as pq
    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as exc:  # a damaged file: pyarrow's own error types vary
        raise ExperimentError(f"{label}: observations.parquet is unreadable ({type(exc).__name__})")
    if table.to_pylist() != rows:
        raise ExperimentError(f"{label}: observations.parquet does not hold the same rows as observations.jsonl")


# -- evidence --------------------------------------------------------------------------

SWEEP_FILES = (("sweep_manifest", "sweep.json"), ("items", "items.jsonl"), ("observations", obs.JSONL),
               ("observations_parquet", obs.PARQUET), ("commitment", "commitment.json"), ("reveal", "reveal.json"),
               ("feasibility", "feasibility.json"), ("inputs", "inputs.json"))
COMPARISON_FILES = (("spec", "spec.json"), ("freeze", "freeze.json"), ("deviations", "deviations.json"))


def _evidence_entries(directory, sweep_dir):
    entries = []
    for kind, name in COMPARISON_FILES:
        entries.append((kind, os.path.join(directory, name)))
    for kind, name in SWEEP_FILES:
        path = os.path.join(sweep_dir, name)
        if os.path.exists(path) or kind in ("sweep_manifest", "items", "observations", "observations_parquet"):
            entries.append((kind, path))
    return entries


def _entry(directory, kind, path, data):
    rel = os.path.relpath(path, directory).replace(os.sep, "/")
    parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return {"name": f"{parent}/{os.path.basename(path)}", "kind": kind, "path": rel, "sha256": engine.sha256_hex(data),
            "bytes": len(data)}


def run_compare(directory, sweep_dir, secret=None) -> dict:
    """Decide, publish the reveal (held-out), write decision.json and evidence.json."""
    spec_bytes = _read(os.path.join(directory, "spec.json"), "a comparison spec")
    freeze_rec, _ = read_doc(os.path.join(directory, "freeze.json"), "the freeze record (`--freeze` first)")
    spec = check_frozen(spec_bytes, freeze_rec, directory)
    if spec["items"]["split"] == "heldout":
        _publish_reveal(sweep_dir, secret)
    blobs, files = {}, []
    for kind, path in _evidence_entries(directory, sweep_dir):
        data = _read(path, kind.replace("_", " "))
        blobs[kind] = data
        files.append(_entry(directory, kind, path, data))
    decision = compute_decision(blobs, directory)
    decision_bytes = pretty(decision)
    files.append(_entry(directory, "decision", os.path.join(directory, "decision.json"), decision_bytes))
    from builders._files import rel
    evidence = {"schema": EVIDENCE_SCHEMA, "comparison": spec["name"], "files": files,
                "verify": f"fundbook compare {rel(directory)} --verify"}
    write_all({os.path.join(directory, "decision.json"): decision_bytes,
               os.path.join(directory, "evidence.json"): pretty(evidence)})
    return decision


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


EVIDENCE_KINDS = {kind for kind, _ in COMPARISON_FILES + SWEEP_FILES} | {"decision"}
ENTRY_FIELDS = ("name", "kind", "path", "sha256")


def _check_entry(entry, seen, directory, where):
    """One evidence entry: its fields, a kind listed once, and the comparison's own files at their own names
    (a decision verified from a copy elsewhere would say nothing about DIRECTORY/decision.json)."""
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ENTRY_FIELDS):
        raise ExperimentError(f"{where}: expected an object with {', '.join(ENTRY_FIELDS)} as texts")
    if entry["kind"] not in EVIDENCE_KINDS:
        raise ExperimentError(f"{where}.kind: {entry['kind'][:40]!r} is not a kind of evidence")
    if entry["kind"] in seen:
        raise ExperimentError(f"{where}.kind: {entry['kind']} is listed twice")
    own = dict(COMPARISON_FILES + (("decision", "decision.json"),)).get(entry["kind"])
    if own and os.path.normpath(os.path.join(directory, entry["path"])) != os.path.normpath(os.path.join(directory, own)):
        raise ExperimentError(f"{where}.path: the {entry['kind']} is {own} in the comparison folder, "
                              f"not {entry['path'][:80]!r}")


def verify(directory) -> dict:
    """Recompute the decision from the files evidence.json lists; ExperimentError on any difference."""
    evidence, _ = read_doc(os.path.join(directory, "evidence.json"), "the evidence list")
    if evidence.get("schema") != EVIDENCE_SCHEMA or not isinstance(evidence.get("files"), list):
        raise ExperimentError(f"{directory}/evidence.json: schema: expected {EVIDENCE_SCHEMA!r} with files")
    blobs, published = {}, None
    for i, entry in enumerate(evidence["files"]):
        _check_entry(entry, blobs.keys() | ({"decision"} if published is not None else set()), directory,
                     f"{directory}/evidence.json: files[{i}]")
        path = os.path.normpath(os.path.join(directory, entry["path"]))
        data = _read(path, f"evidence {entry['name']}")
        got = engine.sha256_hex(data)
        if got != entry["sha256"]:
            raise ExperimentError(f"{path}: sha256 {got}, the evidence lists {entry['sha256']} ({entry['name']})")
        if entry["kind"] == "decision":
            published = _json(data, path)
        else:
            blobs[entry["kind"]] = data
    if published is None:
        raise ExperimentError(f"{directory}/evidence.json: lists no decision")
    recomputed = compute_decision(blobs, f"{directory}/evidence.json")
    if recomputed != published:
        where = engine.first_difference(published, recomputed)
        raise ExperimentError(f"{directory}/decision.json: differs from the decision recomputed from the evidence "
                              f"at {where}")
    return recomputed
