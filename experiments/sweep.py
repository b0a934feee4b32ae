"""`fundbook sweep`: arms over items under a frozen evaluator, rows out.

Order of work: check the bundle and that the host's engine sources are the
bundle's; compute the evaluator id; open the journal (experiments/journal.py)
and record in it, before any row, each comparison this sweep serves (each must
already be frozen, and a comparison whose arms already have rows here is
refused: it was frozen after they existed); for a held-out split require the
published commitment and a feasibility pilot; re-verify what a resumed sweep
reuses (each item's rows against the journal, and a seeded sample recomputed);
then measure every (item, arm) not yet measured, appending each finished item
to observations.partial.jsonl and its rows' sha256 to the journal -- in the
committed order, stopping where the served betting rules stop, when every
comparison is sequential (experiments/sequential.py); re-execute a seeded
sample through the bundle in Pyodide and require identical values; finally
write items.jsonl, observations.jsonl, observations.parquet and sweep.json
(each to a temporary name, then renamed).
"""

import datetime
import os
import platform
import time
from dataclasses import dataclass

import engine

from . import arms as arms_mod
from . import executors, items as items_mod, observations as obs, pyodide, sequential, work
from .errors import ExperimentError
from .evaluator import HOST_PATH, check_sources, evaluator_id, load_bundle, provenance
from .files import make_folder, read_file, write_all, write_atomic  # noqa: F401  (the writers, as before)
from .journal import JOURNAL, Journal, rows_sha256
from .jsondoc import pretty, read_doc  # noqa: F401  (imported from here by compare, study, shipped, the CLI)
from .plans import heldout_plan, normal_plan, plan_rows, practice_plan  # noqa: F401  (the item plan, as before)
from .resume import RESUME_RECHECK, _arm_metrics, _expected, _grouped, _recheck_reused, reusable  # noqa: F401  (reuse)
from .served import frozen_comparison, public_comparison, serve  # noqa: F401  (the comparisons it serves)

SWEEP_SCHEMA = "fundbook.sweep/1"
DEFAULT_SAMPLE = 8


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- the sweep -----------------------------------------------------------------------


def _check_feasibility(out, eid, plan=None, rows=None, arm_list=None):
    """The published feasibility pilot is this sweep's: the same evaluator, the same items (plan and count) and
    every arm the sweep runs (a one-arm pilot does not license a two-arm held-out sweep)."""
    path = os.path.join(out, "feasibility.json")
    if not os.path.exists(path):
        raise ExperimentError(
            f"{path}: a held-out sweep starts only after its feasibility pilot is published "
            f"(run the same command with --pilot N first)"
        )
    doc, _ = read_doc(path, "the feasibility pilot")
    made = doc.get("plan") if isinstance(doc.get("plan"), dict) else {}
    if made.get("evaluator_id") != eid:
        raise ExperimentError(
            f"{path}: the pilot was made for evaluator {made.get('evaluator_id')}, "
            f"this sweep is {eid}: run the pilot again"
        )
    if plan is not None and (made.get("items") != plan or made.get("item_count") != len(rows)):
        raise ExperimentError(
            f"{path}: plan.items: the pilot was made for other items ({made.get('item_count')} "
            f"items of {made.get('items')!r}), this sweep runs {len(rows)} items of {plan!r}: run "
            f"the pilot again"
        )
    if arm_list is not None:
        piloted = made.get("arms") if isinstance(made.get("arms"), list) else []
        missing = [a["name"] for a in arm_list if a["name"] not in piloted]
        if missing:
            raise ExperimentError(
                f"{path}: plan.arms: the pilot was made for arms {piloted}, this sweep also runs "
                f"{missing}: run the pilot again with every arm"
            )


def prepare(out, plan, rows, arm_list, bundle_dir, comparisons=()):
    """Everything fixed before any arm runs: bundle, sources, evaluator, comparisons."""
    bundle = load_bundle(bundle_dir)
    sources = check_sources(bundle)
    prov = provenance(bundle, items_mod.manifest_sha256(rows), len(rows))
    eid = evaluator_id(prov)
    served = [frozen_comparison(d, plan, [a["name"] for a in arm_list]) for d in comparisons]
    return {"bundle": bundle, "sources": sources, "provenance": prov, "evaluator_id": eid, "comparisons": served}


@dataclass(frozen=True)
class Running:
    """How a sweep runs, not what it measures: the pool (`workers`, `executor` local or modal, `modal` the remote
    seam), the Pyodide re-check's sample, progress output, whether a feasibility pilot is required (default: for
    a held-out split) and `after_result(item_id)`, called as each world finishes (a study rewrites its status)."""

    workers: int = 1
    executor: str = "local"
    sample_size: int = DEFAULT_SAMPLE
    sample_seed: int | None = None
    progress: bool = True
    modal: object = None
    require_pilot: bool | None = None
    after_result: object = None


def run_sweep(out, plan, rows, arm_list, bundle_dir, *, comparisons=(), commitment=None, running=Running()):
    workers, executor, modal, progress = running.workers, running.executor, running.modal, running.progress
    sample_size, sample_seed = running.sample_size, running.sample_seed
    require_pilot, after_result = running.require_pilot, running.after_result
    fixed = prepare(out, plan, rows, arm_list, bundle_dir, comparisons)
    eid = fixed["evaluator_id"]
    monitors = sequential.monitors_for(fixed["comparisons"])
    if monitors and executor != "local":
        raise ExperimentError(
            "--executor modal: a sequential sweep (one that serves only betting rules) runs "
            "in the committed order on the local pool"
        )
    make_folder(out)
    if plan["split"] == "heldout":
        cpath = os.path.join(out, "commitment.json")
        published, _ = read_doc(cpath, "the published held-out commitment")
        if published.get("sha256") != commitment["sha256"]:
            raise ExperimentError(
                f"{cpath}: sha256 {published.get('sha256')}, the sweep's commitment is {commitment['sha256']}"
            )
    if require_pilot if require_pilot is not None else plan["split"] == "heldout":
        _check_feasibility(out, eid, plan, rows, arm_list)
    names = [a["name"] for a in arm_list]
    journal = Journal.open(os.path.join(out, JOURNAL), eid, items_mod.manifest_sha256(rows), names)
    dropped = [a for a in journal.arms if a not in names]
    if dropped:
        raise ExperimentError(
            f"{journal.path}: this sweep measured arm {dropped[0]}: give every arm again (a sweep's arms only grow)"
        )
    given = {c["spec_sha256"] for c in fixed["comparisons"]}
    unserved = [e["comparison"] for _, e in journal.served.values() if e["spec_sha256"] not in given]
    if unserved:
        raise ExperimentError(
            f"{journal.path}: this sweep serves comparison {unserved[0]}: give its folder with "
            f"--comparison again (its stopping rule applies to every run of the sweep)"
        )
    journal.add_arms(names)
    serve(journal, fixed["comparisons"])
    started, t0 = _now(), time.perf_counter()
    done = reusable(out, eid, journal, arm_list)
    rechecked = _recheck_reused(done, rows, arm_list, eid) if done else []
    partial = obs.Partial(os.path.join(out, obs.PARTIAL))
    inputs = {a["name"]: {} for a in arm_list if a["kind"] not in arms_mod.ENGINE_KINDS}
    if inputs and os.path.exists(os.path.join(out, "inputs.json")):
        earlier, _ = read_doc(os.path.join(out, "inputs.json"), "the host arms' input hashes")
        for name in inputs:
            inputs[name].update({k: v for k, v in (earlier.get(name) or {}).items() if k in done})
    usage = {}
    computed = []

    def on_result(result):
        iid = result["item_id"]
        partial.append(iid, result["values"], eid)
        arms = [a for a in dict.fromkeys(v[0] for v in result["values"])]
        journal.append(
            {
                "entry": "rows",
                "item_id": iid,
                "arms": arms,
                "rows_sha256": rows_sha256(obs.rows_for(iid, result["values"], eid)),
            }
        )
        have = done.setdefault(iid, {})
        for value in result["values"]:
            have.setdefault(value[0], []).append(value)
        for name, got in (result.get("inputs") or {}).items():
            inputs[name][iid] = got["sha256"]
            if got.get("usage"):
                usage.setdefault(name, {})[iid] = got["usage"]
        computed.append(iid)
        if after_result is not None:  # a study rewrites its status.json as each world finishes
            after_result(iid)

    def task_for(row):
        have = done.get(row["item_id"], {})
        missing = [a for a in arm_list if a["name"] not in have]
        if not missing:
            return None
        return {"row": row, "item": items_mod.item_of(row), "fixture_sha256": row["fixture_sha256"], "arms": missing}

    stop = None
    try:
        if monitors:
            stop = _run_sequential(rows, workers, task_for, on_result, _Watch(monitors, names, done), journal, progress)
        else:
            tasks = [t for t in (task_for(row) for row in rows) if t is not None]
            if executor == "local":
                executors.run_local(tasks, workers, on_result, progress)
            elif executor == "modal":
                listed = {
                    f["path"]: f["sha256"]
                    for f in fixed["bundle"]["manifest"]["files"]
                    if not f["path"].endswith(".pyc")
                }
                executors.run_modal(tasks, on_result, listed, progress, modal=modal)
            else:
                raise ExperimentError(f"--executor: expected local or modal, got {executor!r}")
    except work.WorkError as exc:
        raise ExperimentError(f"sweep stopped: {exc}; finished items are kept in {obs.PARTIAL}")
    compute_s = time.perf_counter() - t0
    measured = rows if stop is None else rows[: stop["n"]]
    ordered = []
    for row in measured:
        have = done.get(row["item_id"], {})
        for name in names:
            if name not in have:
                raise ExperimentError(f"sweep: item {row['item_id']} has no rows for arm {name} after the run")
            ordered.extend(obs.rows_for(row["item_id"], have[name], eid))
    _inputs_of_reused(measured, arm_list, inputs, usage)
    sample = _pyodide_sample(fixed, measured, arm_list, done, sample_size, sample_seed)
    manifest_bytes = items_mod.manifest_bytes(rows)
    jsonl = obs.jsonl_bytes(ordered)
    parquet = obs.parquet_bytes(ordered)
    files = {"items.jsonl": manifest_bytes, obs.JSONL: jsonl, obs.PARQUET: parquet}
    if inputs:
        files["inputs.json"] = pretty({name: dict(sorted(v.items())) for name, v in sorted(inputs.items())})
    listed = dict(files, **{JOURNAL: read_file(journal.path, "the sweep journal", 1 << 40)})
    doc = {
        "schema": SWEEP_SCHEMA,
        "evaluator_id": eid,
        "provenance": fixed["provenance"],
        "items": plan,
        "arms": [arms_mod.public(a) for a in arm_list],
        "comparisons": [public_comparison(c) for c in fixed["comparisons"]],
        "files": {name: engine.sha256_hex(data) for name, data in sorted(listed.items())},
        "journal": journal.summary(),
        "sequential": None if stop is None else dict(stop, comparisons={m.name: m.record() for m in monitors}),
        "counts": {"items": len(rows), "measured": len(measured), "arms": len(arm_list), "rows": len(ordered)},
        "execution": {
            "path": HOST_PATH,
            "python": platform.python_version(),
            "source_check": fixed["sources"],
            "executor": executor,
            "workers": workers if executor == "local" else None,
            "pyodide_sample": sample,
        },
        "volatile": {
            "started": started,
            "finished": _now(),
            "compute_seconds": round(compute_s, 3),
            "items_computed": len(computed),
            "usage": usage,
            "resume_rechecked": rechecked,
        },
    }
    _keep_timings(out, doc, computed)
    write_all(
        {
            **{os.path.join(out, name): data for name, data in files.items()},
            os.path.join(out, "sweep.json"): pretty(doc),
        }
    )
    partial.remove()
    return doc


def _keep_timings(out, doc, computed):
    """A stopped sweep finished again with nothing computed (its manifest rewritten from its records) keeps the
    timings of the run that measured its last worlds, and says when it was rewritten."""
    path = os.path.join(out, "sweep.json")
    if computed or not os.path.exists(path):
        return
    old, _ = read_doc(path, "the sweep manifest")
    was = old.get("volatile") if isinstance(old, dict) else None
    if isinstance(was, dict) and was.get("items_computed"):
        rewritten = doc["volatile"]["finished"]
        doc["volatile"].update(
            {k: was[k] for k in ("started", "finished", "compute_seconds", "items_computed") if k in was},
            rewritten=rewritten,
        )


USAGE_KINDS = ("model", "mock-worker")  # host arms whose producer reports usage (calls, tokens, cost)


def _inputs_of_reused(measured, arm_list, inputs, usage):
    """inputs.json names every measured world's input, not only those of the last session: a world measured in
    an earlier run (its rows reused) has its input read back (a model arm's recorded attempt, never run)."""
    producer = None
    for arm in arm_list:
        if arm["name"] not in inputs:
            continue
        for row in measured:
            if row["item_id"] in inputs[arm["name"]] and (
                arm["kind"] not in USAGE_KINDS or row["item_id"] in usage.get(arm["name"], {})
            ):
                continue
            producer = producer or arms_mod.Producer([a for a in arm_list if a["name"] in inputs])
            producer.task_arm(dict(arm, read_only=True) if arm["kind"] == "model" else arm, row)
            got = producer.inputs[arm["name"]][row["item_id"]]
            if inputs[arm["name"]].setdefault(row["item_id"], got) != got:
                raise ExperimentError(
                    f"sweep: item {row['item_id']}, arm {arm['name']}: its input now hashes to "
                    f"{got[:16]}, the sweep recorded {inputs[arm['name']][row['item_id']][:16]}"
                )
            got = producer.usage.get(arm["name"], {}).get(row["item_id"])
            if got:
                usage.setdefault(arm["name"], {})[row["item_id"]] = got


@dataclass(frozen=True)
class _Watch:
    """What a sequential sweep watches: the served comparisons' monitors, fed each world's values of the arms
    `names` (in that order) from `done` {item_id: {arm: values}}."""

    monitors: list
    names: list
    done: dict


def _run_sequential(rows, workers, task_for, on_result, watch: _Watch, journal, progress):
    """Items in manifest order until every monitor stops; returns the stop record {n, reason}."""
    monitors, done, names = watch.monitors, watch.done, watch.names
    state = {"n": 0}
    bar = executors._progress(len(rows), f"sequential sweep ({workers} worker{'s' if workers > 1 else ''})", progress)

    def on_item(iid, result):
        if result is not None:
            on_result(result)
        have = done[iid]
        values = [v for name in names for v in have[name]]
        for m in monitors:
            m.feed(iid, values)
        state["n"] += 1
        bar and bar.update(1)
        return not all(m.stopped for m in monitors)

    try:
        sequential.run_in_order([(r["item_id"], task_for(r)) for r in rows], workers, executors.host_run, on_item)
    finally:
        if bar:
            bar.render_finish()
    n = state["n"]
    if all(m.stopped for m in monitors):
        reason = "every served comparison's rule stopped"
    else:
        reason = "every planned world was measured"
    stop = {"n": n, "reason": reason}
    if journal.stop is None or journal.stop["n"] != n:
        journal.append({"entry": "stop", **stop})
    return stop


def _pyodide_sample(fixed, rows, arm_list, done, size, seed):
    if size <= 0:
        return {"size": 0, "identical": None, "note": "no sampled re-execution through the bundle was run"}
    seed = pyodide.default_seed(fixed["evaluator_id"]) if seed is None else seed
    ids = pyodide.select_sample([r["item_id"] for r in rows], size, seed)
    by_id = {r["item_id"]: r for r in rows}
    tasks, host = [], {}
    for iid in ids:
        row = by_id[iid]
        prepared = executors.host_prepare(
            {"row": row, "item": items_mod.item_of(row), "fixture_sha256": row["fixture_sha256"], "arms": arm_list}
        )
        tasks.append(prepared["graded"])
        host[iid] = [v for a in arm_list for v in done[iid][a["name"]]]
    out = pyodide.run_in_pyodide(fixed["bundle"], tasks)
    pyodide.compare(host, out["results"])
    return pyodide.summary(out["runtime"], ids, seed, len(ids))
