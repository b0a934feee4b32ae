"""`fundbook sweep`: arms over items under a frozen evaluator, rows out.

Order of work: check the bundle and that the host's engine sources are the
bundle's; compute the evaluator id; record the comparison specs this sweep
serves (each must already be frozen: a spec frozen later cannot appear here);
for a held-out split require the published commitment and a feasibility pilot;
then measure every (item, arm) not already measured under this evaluator id,
appending each finished item to observations.partial.jsonl; re-execute a seeded
sample through the bundle in Pyodide and require identical values; finally
write items.jsonl, observations.jsonl, observations.parquet and sweep.json
(each to a temporary name, then renamed).
"""

import datetime
import json
import os
import platform
import time

import engine

from . import arms as arms_mod
from . import executors, heldout, items as items_mod, jsondoc, observations as obs, pyodide, work
from .errors import ExperimentError
from .evaluator import HOST_PATH, check_sources, evaluator_id, load_bundle, provenance
from .seeds import format_seeds, parse_seeds

SWEEP_SCHEMA = "fundbook.sweep/1"
DEFAULT_SAMPLE = 8


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def write_atomic(path, data: bytes):
    write_all({path: data})


def write_all(files):
    """Write {path: bytes} together: every file to a temporary name first, then each renamed
    into place, so a file that cannot be written (a folder in its place, a full disk) leaves
    none of them changed; only a rename failing after every write succeeded could."""
    tmps = {path: f"{path}.tmp-{os.getpid()}" for path in files}
    path = None
    try:
        for path, data in files.items():
            if os.path.isdir(path):
                raise IsADirectoryError(21, "Is a directory")
            with open(tmps[path], "wb") as fh:
                fh.write(data)
        for path in files:
            os.replace(tmps[path], path)
    except OSError as exc:
        for tmp in tmps.values():
            if os.path.lexists(tmp):
                os.remove(tmp)
        raise ExperimentError(f"{path}: cannot write ({exc.strerror or exc})")


def make_folder(path):
    """Create an output folder (and its parents); ExperimentError naming it when that cannot be done."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot create the folder ({exc.strerror or exc})")


def pretty(doc) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False) + "\n").encode()


def read_doc(path, what):
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise ExperimentError(f"{path}: no such file ({what} expected)")
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read ({exc.strerror})")
    doc = jsondoc.loads(data, path, what)
    if not isinstance(doc, dict):
        raise ExperimentError(f"{path}: expected a JSON object ({what})")
    return doc, data


# -- the item plan -------------------------------------------------------------------

def practice_plan(families, seeds, episodes=()) -> dict:
    plan = {"split": "practice", "families": list(families), "seeds": format_seeds(seeds)}
    if episodes:
        plan["episodes"] = list(episodes)
    return plan


def heldout_plan(commitment) -> dict:
    return {"split": "heldout", "families": commitment["families"], "count": commitment["count"],
            "commitment_sha256": commitment["sha256"]}


def normal_plan(plan) -> dict:
    if plan.get("split") == "practice":
        return practice_plan(plan["families"], parse_seeds(plan["seeds"]), plan.get("episodes", ()))
    return dict(plan)


def plan_rows(plan, secret=None, commitment=None) -> list:
    """The items manifest rows of a plan (a held-out plan needs the secret that opens its commitment)."""
    if plan["split"] == "practice":
        items = items_mod.practice_items(plan["families"], parse_seeds(plan["seeds"]), plan.get("episodes", ()))
        return items_mod.manifest_rows(items, items_mod.PRACTICE)
    if secret is None:
        raise ExperimentError("a held-out sweep needs --secret-file (the secret behind the commitment)")
    pairs = heldout.open_commitment(secret, commitment, "commitment.json")
    return items_mod.manifest_rows(items_mod.heldout_items(pairs), items_mod.HELDOUT)


# -- comparisons this sweep serves ----------------------------------------------------

def frozen_comparison(directory, plan, arm_names) -> dict:
    from .decide import check_frozen
    freeze, _ = read_doc(os.path.join(directory, "freeze.json"), "the freeze record (`fundbook compare DIR --freeze`)")
    try:
        with open(os.path.join(directory, "spec.json"), "rb") as fh:
            spec_bytes = fh.read()
    except OSError as exc:
        raise ExperimentError(f"{directory}/spec.json: cannot read ({exc.strerror})")
    spec = check_frozen(spec_bytes, freeze, directory)
    if normal_plan(spec["items"]) != normal_plan(plan):
        raise ExperimentError(f"{directory}/spec.json: items {json.dumps(spec['items'], sort_keys=True)} are not "
                              f"this sweep's {json.dumps(plan, sort_keys=True)}")
    missing = sorted(set(spec["arms"]) - set(arm_names))
    if missing:
        raise ExperimentError(f"{directory}/spec.json: arm {missing[0]} is not in this sweep")
    return {"name": spec["name"], "spec_sha256": freeze["spec_sha256"], "frozen_on": freeze["frozen_on"]}


# -- the sweep -----------------------------------------------------------------------

def _check_feasibility(out, eid):
    path = os.path.join(out, "feasibility.json")
    if not os.path.exists(path):
        raise ExperimentError(f"{path}: a held-out sweep starts only after its feasibility pilot is published "
                              f"(run the same command with --pilot N first)")
    doc, _ = read_doc(path, "the feasibility pilot")
    if (doc.get("plan") or {}).get("evaluator_id") != eid:
        raise ExperimentError(f"{path}: the pilot was made for evaluator {(doc.get('plan') or {}).get('evaluator_id')}, "
                              f"this sweep is {eid}: run the pilot again")


def _arm_metrics(arm_kind) -> list:
    """The metrics a run writes for one arm of this kind on one world, in row order (experiments/work.py:
    the certification arms measure expected_met; every other arm the result metrics with the engine's gates).
    Kept here, not in work.py, whose bytes are part of the evaluator id."""
    if arm_kind in ("gold", "mutation"):
        return ["expected_met"]
    return ["scored", "qualified", "score", "funding_cost"] + [f"gate:{name}" for name in work.GATES]


def _existing(out, eid, arm_list):
    """{item_id: {arm: values}} already measured under `eid`, for the arms of this sweep.

    An (item, arm) is reused only when its rows are exactly the ones a run writes
    (each metric of the arm once, in order, at the replicate seed); anything else --
    a row missing, twice or edited out of shape -- is measured again, never trusted."""
    done = {}
    path = os.path.join(out, obs.JSONL)
    if os.path.exists(path):
        try:
            done = obs.done_from_rows(obs.read_jsonl(path), eid)
        except ExperimentError:
            done = {}  # an unreadable old file is recomputed, never trusted
    for iid, arms in obs.Partial(os.path.join(out, obs.PARTIAL)).done(eid).items():
        done.setdefault(iid, {}).update(arms)
    expected = {a["name"]: [[a["name"], work.REPLICATE_SEED, m] for m in _arm_metrics(a["kind"])] for a in arm_list}
    for arms in done.values():
        for name in list(arms):
            if name not in expected or [v[:3] for v in arms[name]] != expected[name]:
                del arms[name]
    return done


def prepare(out, plan, rows, arm_list, bundle_dir, comparisons=()):
    """Everything fixed before any arm runs: bundle, sources, evaluator, comparisons."""
    bundle = load_bundle(bundle_dir)
    sources = check_sources(bundle)
    prov = provenance(bundle, items_mod.manifest_sha256(rows), len(rows))
    eid = evaluator_id(prov)
    served = [frozen_comparison(d, plan, [a["name"] for a in arm_list]) for d in comparisons]
    return {"bundle": bundle, "sources": sources, "provenance": prov, "evaluator_id": eid, "comparisons": served}


def run_sweep(out, plan, rows, arm_list, bundle_dir, *, workers=1, executor="local", sample_size=DEFAULT_SAMPLE,
              sample_seed=None, comparisons=(), commitment=None, progress=True, modal=None, require_pilot=None):
    fixed = prepare(out, plan, rows, arm_list, bundle_dir, comparisons)
    eid = fixed["evaluator_id"]
    make_folder(out)
    if plan["split"] == "heldout":
        cpath = os.path.join(out, "commitment.json")
        published, _ = read_doc(cpath, "the published held-out commitment")
        if published.get("sha256") != commitment["sha256"]:
            raise ExperimentError(f"{cpath}: sha256 {published.get('sha256')}, the sweep's commitment is {commitment['sha256']}")
    if require_pilot if require_pilot is not None else plan["split"] == "heldout":
        _check_feasibility(out, eid)
    started, t0 = _now(), time.perf_counter()
    done = _existing(out, eid, arm_list)
    names = [a["name"] for a in arm_list]
    tasks = []
    for row in rows:
        have = done.get(row["item_id"], {})
        missing = [a for a in arm_list if a["name"] not in have]
        if missing:
            tasks.append({"row": row, "item": items_mod.item_of(row), "fixture_sha256": row["fixture_sha256"],
                          "arms": missing})
    partial = obs.Partial(os.path.join(out, obs.PARTIAL))
    inputs = {a["name"]: {} for a in arm_list if a["kind"] not in arms_mod.ENGINE_KINDS}
    if inputs and os.path.exists(os.path.join(out, "inputs.json")):
        earlier, _ = read_doc(os.path.join(out, "inputs.json"), "the host arms' input hashes")
        for name in inputs:
            inputs[name].update({k: v for k, v in (earlier.get(name) or {}).items() if k in done})
    usage = {}

    def on_result(result):
        partial.append(result["item_id"], result["values"], eid)
        arms = done.setdefault(result["item_id"], {})
        for value in result["values"]:
            arms.setdefault(value[0], []).append(value)
        for name, got in (result.get("inputs") or {}).items():
            inputs[name][result["item_id"]] = got["sha256"]
            if got.get("usage"):
                usage.setdefault(name, {})[result["item_id"]] = got["usage"]

    try:
        if executor == "local":
            executors.run_local(tasks, workers, on_result, progress)
        elif executor == "modal":
            listed = {f["path"]: f["sha256"] for f in fixed["bundle"]["manifest"]["files"] if not f["path"].endswith(".pyc")}
            executors.run_modal(tasks, on_result, listed, progress, modal=modal)
        else:
            raise ExperimentError(f"--executor: expected local or modal, got {executor!r}")
    except work.WorkError as exc:
        raise ExperimentError(f"sweep stopped: {exc}; finished items are kept in {obs.PARTIAL}")
    compute_s = time.perf_counter() - t0
    ordered = []
    for row in rows:
        have = done.get(row["item_id"], {})
        for name in names:
            if name not in have:
                raise ExperimentError(f"sweep: item {row['item_id']} has no rows for arm {name} after the run")
            ordered.extend(obs.rows_for(row["item_id"], have[name], eid))
    sample = _pyodide_sample(fixed, rows, arm_list, done, sample_size, sample_seed)
    manifest_bytes = items_mod.manifest_bytes(rows)
    jsonl = obs.jsonl_bytes(ordered)
    parquet = obs.parquet_bytes(ordered)
    files = {"items.jsonl": manifest_bytes, obs.JSONL: jsonl, obs.PARQUET: parquet}
    if inputs:
        files["inputs.json"] = pretty({name: dict(sorted(v.items())) for name, v in sorted(inputs.items())})
    doc = {
        "schema": SWEEP_SCHEMA, "evaluator_id": eid, "provenance": fixed["provenance"], "items": plan,
        "arms": [arms_mod.public(a) for a in arm_list], "comparisons": fixed["comparisons"],
        "files": {name: engine.sha256_hex(data) for name, data in sorted(files.items())},
        "counts": {"items": len(rows), "arms": len(arm_list), "rows": len(ordered)},
        "execution": {"path": HOST_PATH, "python": platform.python_version(), "source_check": fixed["sources"],
                      "executor": executor, "workers": workers if executor == "local" else None,
                      "pyodide_sample": sample},
        "volatile": {"started": started, "finished": _now(), "compute_seconds": round(compute_s, 3),
                     "items_computed": len(tasks), "usage": usage},
    }
    write_all({**{os.path.join(out, name): data for name, data in files.items()},
               os.path.join(out, "sweep.json"): pretty(doc)})
    partial.remove()
    return doc


def _pyodide_sample(fixed, rows, arm_list, done, size, seed):
    if size <= 0:
        return {"size": 0, "identical": None, "note": "no sampled re-execution through the bundle was run"}
    seed = pyodide.default_seed(fixed["evaluator_id"]) if seed is None else seed
    ids = pyodide.select_sample([r["item_id"] for r in rows], size, seed)
    by_id = {r["item_id"]: r for r in rows}
    tasks, host = [], {}
    for iid in ids:
        row = by_id[iid]
        prepared = executors.host_prepare({"row": row, "item": items_mod.item_of(row),
                                           "fixture_sha256": row["fixture_sha256"], "arms": arm_list})
        tasks.append(prepared["graded"])
        host[iid] = [v for a in arm_list for v in done[iid][a["name"]]]
    out = pyodide.run_in_pyodide(fixed["bundle"], tasks)
    pyodide.compare(host, out["results"])
    return pyodide.summary(out["runtime"], ids, seed, len(ids))
