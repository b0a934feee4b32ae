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
import json
import os
import platform
import time
from dataclasses import dataclass

import engine

from . import arms as arms_mod
from . import executors, heldout, items as items_mod, jsondoc, observations as obs, pyodide, sequential, work
from .errors import ExperimentError
from .evaluator import HOST_PATH, check_sources, evaluator_id, load_bundle, provenance
from .files import make_folder, read_file, write_all, write_atomic  # noqa: F401  (the writers, as before)
from .journal import JOURNAL, Journal, rows_sha256
from .seeds import MAX_PRACTICE_SEED, format_seeds, parse_seeds

SWEEP_SCHEMA = "fundbook.sweep/1"
DEFAULT_SAMPLE = 8
RESUME_RECHECK = 4  # reused items recomputed on host when a sweep resumes


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def pretty(doc) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False) + "\n").encode()


def read_doc(path, what):
    data = read_file(path, what)
    doc = jsondoc.loads(data, path, what)
    if not isinstance(doc, dict):
        raise ExperimentError(f"{path}: expected a JSON object ({what})")
    return doc, data


# -- the item plan -------------------------------------------------------------------


def practice_plan(families, seeds, episodes=()) -> dict:
    if seeds and max(seeds) > MAX_PRACTICE_SEED:
        raise ExperimentError(
            f"--seeds: {max(seeds)}: practice seeds are at most 2^32-1 (seeds from 2^32 on are the "
            f"held-out split's: run a held-out sweep with --heldout)"
        )
    plan = {"split": "practice", "families": list(families), "seeds": format_seeds(seeds)}
    if episodes:
        plan["episodes"] = list(episodes)
    return plan


def heldout_plan(commitment) -> dict:
    return {
        "split": "heldout",
        "families": commitment["families"],
        "count": commitment["count"],
        "commitment_sha256": commitment["sha256"],
    }


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

    freeze, freeze_bytes = read_doc(
        os.path.join(directory, "freeze.json"), "the freeze record (`fundbook compare DIR --freeze`)"
    )
    spec_bytes = read_file(os.path.join(directory, "spec.json"), "a comparison spec")
    spec = check_frozen(spec_bytes, freeze, directory)
    if normal_plan(spec["items"]) != normal_plan(plan):
        raise ExperimentError(
            f"{directory}/spec.json: items {json.dumps(spec['items'], sort_keys=True)} are not "
            f"this sweep's {json.dumps(plan, sort_keys=True)}"
        )
    missing = sorted(set(spec["arms"]) - set(arm_names))
    if missing:
        raise ExperimentError(f"{directory}/spec.json: arm {missing[0]} is not in this sweep")
    return {
        "name": spec["name"],
        "spec_sha256": freeze["spec_sha256"],
        "frozen_on": freeze["frozen_on"],
        "freeze_sha256": engine.sha256_hex(freeze_bytes),
        "spec": spec,
        "dir": directory,
    }


def public_comparison(c) -> dict:
    """What sweep.json records about a served comparison."""
    return {k: c[k] for k in ("name", "spec_sha256", "frozen_on", "freeze_sha256")}


def serve(journal, served):
    """Record each served comparison in the journal before any of its rows: a comparison already
    recorded is fine; one whose arms have rows here already was frozen too late and is refused."""
    for c in served:
        if c["spec_sha256"] in journal.served:
            recorded = journal.served[c["spec_sha256"]][1]
            if recorded["freeze_sha256"] != c["freeze_sha256"]:
                raise ExperimentError(
                    f"{c['dir']}/freeze.json: not the freeze this sweep recorded for {c['name']} "
                    f"(sha256 {recorded['freeze_sha256'][:16]} on {recorded['frozen_on']}): "
                    f"frozen again after the sweep began"
                )
            continue
        line = journal.first_row_line(set(c["spec"]["arms"]))
        if line is not None:
            raise ExperimentError(
                f"{c['dir']}: this sweep measured its arms before the spec was recorded here "
                f"({journal.path} line {line + 1}): a spec frozen after any of its rows existed "
                f"cannot use them -- run it in a new sweep folder"
            )
        journal.append(
            {
                "entry": "serve",
                "comparison": c["name"],
                "spec_sha256": c["spec_sha256"],
                "freeze_sha256": c["freeze_sha256"],
                "frozen_on": c["frozen_on"],
            }
        )


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


def _arm_metrics(arm_kind) -> list:
    """The metrics a run writes for one arm of this kind on one world, in row order (experiments/work.py:
    the certification arms measure expected_met; every other arm the result metrics with the engine's gates).
    Kept here, not in work.py, whose bytes are part of the evaluator id."""
    if arm_kind in ("gold", "mutation"):
        return ["expected_met"]
    return ["scored", "qualified", "score", "funding_cost"] + [f"gate:{name}" for name in work.GATES]


def _expected(arm_list) -> dict:
    return {a["name"]: [[a["name"], work.REPLICATE_SEED, m] for m in _arm_metrics(a["kind"])] for a in arm_list}


def _grouped(pairs) -> dict:
    """{item_id: {arm: [values]}} from (item_id, [[arm, seed, metric, value], ...]) pairs."""
    out = {}
    for iid, values in pairs:
        arms = out.setdefault(iid, {})
        for value in values:
            arms.setdefault(value[0], []).append(value)
    return out


def reusable(out, eid, journal, arm_list) -> dict:
    """{item_id: {arm: values}} measured before and journalled: every (item, arm) the journal lists is
    read back from observations.jsonl or the partial file and must hash to its journal entry; rows edited
    after they were written, or rows the journal does not list, stop the sweep (never re-signed)."""
    path = os.path.join(out, obs.JSONL)
    finished = {}
    if os.path.lexists(path):
        rows = obs.read_jsonl(path)
        other = next((r for r in rows if r["evaluator_id"] != eid), None)
        if other is not None:
            raise ExperimentError(
                f"{path}: holds a row of evaluator {other['evaluator_id'][:16]}, the journal is {eid[:16]}'s"
            )
        finished = _grouped((r["item_id"], [[r["arm"], r["seed"], r["metric"], r["value"]]]) for r in rows)
    partial = _grouped(obs.Partial(os.path.join(out, obs.PARTIAL)).entries(eid))
    expected = _expected(arm_list)
    done = {}
    for (iid, arm), (index, entry) in sorted(journal.covered.items(), key=lambda kv: kv[1][0]):
        if iid in done and arm in done[iid]:
            continue
        source = finished if all(a in finished.get(iid, {}) for a in entry["arms"]) else partial
        got = source.get(iid, {})
        if not all(a in got for a in entry["arms"]):
            raise ExperimentError(
                f"{journal.path} line {index + 1}: lists rows of item {iid} that neither "
                f"{obs.JSONL} nor {obs.PARTIAL} holds: use a new sweep folder"
            )
        values = [v for a in entry["arms"] for v in got[a]]
        if rows_sha256(obs.rows_for(iid, values, eid)) != entry["rows_sha256"]:
            name = obs.JSONL if source is finished else obs.PARTIAL
            raise ExperimentError(
                f"{os.path.join(out, name)}: the rows of item {iid} (arms {', '.join(entry['arms'])}) "
                f"are not the ones journalled at {JOURNAL} line {index + 1}: edited after they "
                f"were written; refusing to reuse them"
            )
        for a in entry["arms"]:
            if a in expected and [v[:3] for v in got[a]] != expected[a]:
                raise ExperimentError(
                    f"{journal.path} line {index + 1}: the rows of item {iid}, arm {a} are not "
                    f"the metrics this arm writes"
                )
            done.setdefault(iid, {})[a] = got[a]
    unlisted = [(iid, a) for iid, arms in finished.items() for a in arms if (iid, a) not in journal.covered]
    if unlisted:
        raise ExperimentError(
            f"{path}: rows of item {unlisted[0][0]}, arm {unlisted[0][1]} that {JOURNAL} does not "
            f"list: refusing to reuse them"
        )
    return done


def _recheck_reused(done, rows, arm_list, eid):
    """Recompute a seeded sample of the reused items on host and require their journalled values."""
    ids = [r["item_id"] for r in rows if all(a["name"] in done.get(r["item_id"], {}) for a in arm_list)]
    arms = [a for a in arm_list if arms_mod.recheckable(a)]
    if not ids or not arms:
        return []
    picked = pyodide.select_sample(ids, RESUME_RECHECK, pyodide.default_seed(eid))
    by_id = {r["item_id"]: r for r in rows}
    for iid in picked:
        row = by_id[iid]
        got = executors.host_run(
            {"row": row, "item": items_mod.item_of(row), "fixture_sha256": row["fixture_sha256"], "arms": arms}
        )["values"]
        want = [v for a in arms for v in done[iid][a["name"]]]
        if got != want:
            raise ExperimentError(
                f"sweep: item {iid} recomputes to other values than the rows this sweep reuses: "
                f"the folder's rows are not this evaluator's output; use a new folder"
            )
    return picked


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
