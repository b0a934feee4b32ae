"""The shipped experiments: what `make build` publishes, and how it stays fast.

  runs/comparisons/heldout-baselines/   one held-out sweep: 1,000 worlds, the three scripted baselines
  runs/comparisons/<name>/              two frozen comparisons decided from it
  runs/certificates/grader/             the certification sweep: gold and every mutation on
                                        1,000 practice worlds per family, and certificate.json

The observations are committed. `make build` (build-experiments) reuses a
sweep's rows only when its committed sweep.json names the evaluator id this
checkout computes (same bundle, same grader, same metrics, same items) and its
files hash to what that manifest lists; otherwise it recomputes the sweep (a
held-out one after a fresh feasibility pilot). Either way it then re-executes
a sample of items drawn with a fresh random seed -- on host CPython and
through the bundle in Pyodide -- and requires exactly the committed values,
recomputes every decision from its evidence, rebuilds the certificate, and
records what it checked in build/experiments/checks.json for the site.
`make experiments-recompute` recomputes everything; `make verify-experiments`
recomputes into a scratch folder and compares the bytes.
"""

import datetime
import json
import os
import secrets
import shutil
import tempfile

import engine

from . import compare as cmp, executors, heldout, items as items_mod, observations as obs, pyodide, work
from .arms import parse_arms
from .certificate import certificate
from .errors import ExperimentError
from .feasibility import run_pilot
from .sweep import heldout_plan, plan_rows, practice_plan, prepare, pretty, read_doc, run_sweep, write_atomic
from .seeds import parse_seeds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE_ARMS = ("baseline:reference", "baseline:shortest-cheapest", "baseline:do-nothing")
HELDOUT_SWEEP = "comparisons/heldout-baselines"
COMPARISONS = ("comparisons/reference-vs-shortest-cheapest", "comparisons/shortest-cheapest-vs-do-nothing")
CERT_SWEEP = "certificates/grader"
CERT_SEEDS = "1..1000"
MIN_WORLDS_PER_FAMILY = 1000
PILOT_ITEMS = 40
RECHECK_ITEMS = 24      # per sweep, per build: host CPython and the bundle in Pyodide
WORKERS = 2
FAMILIES = ("FUND_01", "FUND_02", "FUND_03", "FUND_04")


def sweeps():
    return [
        {"dir": HELDOUT_SWEEP, "split": "heldout", "arms": list(BASELINE_ARMS), "comparisons": list(COMPARISONS)},
        {"dir": CERT_SWEEP, "split": "practice", "arms": ["gold", "mutations"], "comparisons": [],
         "plan": practice_plan(FAMILIES, parse_seeds(CERT_SEEDS))},
    ]


def plan_of(runs_dir, definition):
    """(plan, manifest rows, commitment) of a shipped sweep."""
    out = os.path.join(runs_dir, definition["dir"])
    if definition["split"] == "practice":
        return definition["plan"], plan_rows(definition["plan"]), None
    commitment, _ = read_doc(os.path.join(out, "commitment.json"), "the held-out commitment")
    heldout.check_commitment_doc(commitment, os.path.join(out, "commitment.json"))
    secret = None
    if os.path.exists(os.path.join(out, "reveal.json")):
        secret = heldout.read_secret(os.path.join(out, "reveal.json"))
    elif os.environ.get("FUNDBOOK_HELDOUT_SECRET"):
        secret = heldout.read_secret(os.environ["FUNDBOOK_HELDOUT_SECRET"])
    plan = heldout_plan(commitment)
    return plan, plan_rows(plan, secret, commitment), commitment


def committed_matches(out, eid) -> bool:
    """The committed sweep is this evaluator's and its files are the ones its manifest lists."""
    path = os.path.join(out, "sweep.json")
    if not os.path.exists(path):
        return False
    doc, _ = read_doc(path, "a sweep manifest")
    if doc.get("evaluator_id") != eid:
        return False
    for name, sha in (doc.get("files") or {}).items():
        p = os.path.join(out, name)
        if not os.path.exists(p):
            return False
        with open(p, "rb") as fh:
            if engine.sha256_hex(fh.read()) != sha:
                raise ExperimentError(f"{p}: sha256 differs from {path} (a committed file was edited)")
    return True


def _fresh(out):
    for name in (obs.JSONL, obs.PARQUET, obs.PARTIAL, "sweep.json", "inputs.json"):
        path = os.path.join(out, name)
        if os.path.exists(path):
            os.remove(path)


def run_definition(runs_dir, definition, bundle_dir, recompute=False, progress=True, log=print) -> dict:
    out = os.path.join(runs_dir, definition["dir"])
    arm_list = parse_arms(definition["arms"])
    plan, rows, commitment = plan_of(runs_dir, definition)
    comparisons = [os.path.join(runs_dir, c) for c in definition["comparisons"]]
    fixed = prepare(out, plan, rows, arm_list, bundle_dir, comparisons)
    eid = fixed["evaluator_id"]
    reused = not recompute and committed_matches(out, eid)
    if not reused:
        log(f"experiments: {definition['dir']}: computing {len(rows)} items x {len(arm_list)} arms for evaluator "
            f"{eid[:16]} ({'recompute asked' if recompute else 'the committed rows are for another evaluator'})")
        if recompute:
            _fresh(out)
        if definition["split"] == "heldout":
            doc = run_pilot(out, plan, rows, arm_list, eid, PILOT_ITEMS)
            write_atomic(os.path.join(out, "feasibility.json"), pretty(doc))
        run_sweep(out, plan, rows, arm_list, bundle_dir, workers=WORKERS, comparisons=comparisons,
                  commitment=commitment, progress=progress, require_pilot=definition["split"] == "heldout")
    sweep_doc, _ = read_doc(os.path.join(out, "sweep.json"), "the sweep manifest")
    return {"definition": definition, "out": out, "rows": rows, "arms": arm_list, "fixed": fixed,
            "sweep": sweep_doc, "reused": reused}


def recheck(runs, bundle, seed, size=RECHECK_ITEMS, session=None) -> dict:
    """A fresh sample of every sweep on host CPython and in Pyodide, against the committed values."""
    tasks, expected, report = [], {}, {}
    for r in runs:
        committed = obs.done_from_rows(obs.read_jsonl(os.path.join(r["out"], obs.JSONL)), r["sweep"]["evaluator_id"])
        ids = pyodide.select_sample([row["item_id"] for row in r["rows"]], size, seed)
        by_id = {row["item_id"]: row for row in r["rows"]}
        for iid in ids:
            row = by_id[iid]
            prepared = executors.host_prepare({"row": row, "item": items_mod.item_of(row),
                                               "fixture_sha256": row["fixture_sha256"], "arms": r["arms"]})
            want = [v for a in r["arms"] for v in committed[iid][a["name"]]]
            host = work.run_task(prepared["graded"])["values"]
            if host != want:
                pyodide.compare({iid: want}, [{"item_id": iid, "values": host}])  # names the first differing row
            tasks.append(prepared["graded"])
            expected[iid] = want
        report[r["definition"]["dir"]] = {"items": ids, "host_identical": True}
    out = pyodide.run_in_pyodide(bundle, tasks, session)
    pyodide.compare(expected, out["results"])
    for entry in report.values():
        entry["pyodide_identical"] = True
    return {"seed": seed, "per_sweep": report, "pyodide_version": out["runtime"]["pyodide_version"],
            "bundle_sha256": out["runtime"]["bundle_sha256"], "tasks": len(tasks)}


def build(runs_dir=None, bundle_dir=None, check_dir=None, recompute=False, progress=True, seed=None, log=print,
          session=None):
    runs_dir = runs_dir or os.path.join(ROOT, "runs")
    bundle_dir = bundle_dir or os.path.join(ROOT, "build", "engine")
    check_dir = check_dir or os.path.join(ROOT, "build", "experiments")
    runs = [run_definition(runs_dir, d, bundle_dir, recompute, progress, log) for d in sweeps()]
    seed = seed if seed is not None else int(os.environ.get("FUNDBOOK_RECHECK_SEED") or secrets.randbits(48))
    checked = recheck(runs, runs[0]["fixed"]["bundle"], seed, session=session)
    decisions = {}
    for c in COMPARISONS:
        directory = os.path.join(runs_dir, c)
        cmp.run_compare(directory, os.path.join(runs_dir, HELDOUT_SWEEP))
        decision = cmp.verify(directory)
        decisions[c] = {"verdict": decision["verdict"], "confidence": decision["confidence"],
                        "evidence_verified": True}
    cert_run = runs[1]
    cert = certificate("grader", cert_run["sweep"], obs.read_jsonl(os.path.join(cert_run["out"], obs.JSONL)),
                       cert_run["rows"], MIN_WORLDS_PER_FAMILY)
    write_atomic(os.path.join(cert_run["out"], "certificate.json"), pretty(cert))
    if not cert["passed"]:
        first = cert["failures"][0] if cert["failures"] else {"item_id": "?", "arm": "?"}
        raise ExperimentError(f"{cert_run['out']}/certificate.json: the grader certificate fails ({cert['met']} of "
                              f"{cert['checked']} expectations met; first: {first['arm']} on {first['item_id']})")
    checks = {"schema": "fundbook.experiment-checks/1",
              "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
              "sweeps": {r["definition"]["dir"]: {"evaluator_id": r["sweep"]["evaluator_id"], "reused": r["reused"],
                                                  "rows": r["sweep"]["counts"]["rows"],
                                                  "source_check": r["fixed"]["sources"]} for r in runs},
              "recheck": checked, "comparisons": decisions,
              "certificate": {"passed": cert["passed"], "checked": cert["checked"], "met": cert["met"]}}
    os.makedirs(check_dir, exist_ok=True)
    write_atomic(os.path.join(check_dir, "checks.json"), pretty(checks))
    return checks


def verify(runs_dir=None, bundle_dir=None, log=print, progress=True) -> list:
    """Recompute every shipped sweep in a scratch copy; the observation bytes must equal the committed ones."""
    runs_dir = runs_dir or os.path.join(ROOT, "runs")
    bundle_dir = bundle_dir or os.path.join(ROOT, "build", "engine")
    done = []
    with tempfile.TemporaryDirectory(prefix="fundbook-verify-experiments-") as scratch:
        for d in sweeps():
            src = os.path.join(runs_dir, d["dir"])
            dst = os.path.join(scratch, d["dir"])
            os.makedirs(dst)
            for name in ("commitment.json", "reveal.json", "feasibility.json"):
                if os.path.exists(os.path.join(src, name)):
                    shutil.copy(os.path.join(src, name), dst)
            for c in d["comparisons"]:
                shutil.copytree(os.path.join(runs_dir, c), os.path.join(scratch, c))
            definition = dict(d)
            plan, rows, commitment = plan_of(scratch, definition)
            arm_list = parse_arms(d["arms"])
            run_sweep(dst, plan, rows, arm_list, bundle_dir, workers=WORKERS,
                      comparisons=[os.path.join(scratch, c) for c in d["comparisons"]], commitment=commitment,
                      require_pilot=False, sample_size=0, progress=progress)
            for name in ("items.jsonl", obs.JSONL, obs.PARQUET):
                with open(os.path.join(src, name), "rb") as a, open(os.path.join(dst, name), "rb") as b:
                    mine, theirs = a.read(), b.read()
                if mine != theirs:
                    line = next((i for i, (x, y) in enumerate(zip(mine.splitlines(), theirs.splitlines()), 1) if x != y),
                                None)
                    raise ExperimentError(f"{src}/{name}: differs from a fresh recomputation"
                                          + (f" at line {line}" if line and name.endswith("l") else ""))
            _check_published(runs_dir, d, src, dst, rows, log)
            done.append(d["dir"])
            log(f"verify-experiments: {d['dir']}: items, observations.jsonl and .parquet identical to a recomputation")
    _check_unlisted(runs_dir)
    return done


# What each shipped folder may hold; anything else is not part of the publication.
SWEEP_FILES = {"items.jsonl", obs.JSONL, obs.PARQUET, "sweep.json", "commitment.json", "reveal.json",
               "feasibility.json"}
CERT_FILES = SWEEP_FILES | {"certificate.json"}
COMPARISON_FILES = {"spec.json", "freeze.json", "deviations.json", "decision.json", "evidence.json"}


def _check_published(runs_dir, d, src, dst, rows, log):
    """Beyond the rows: the sweep manifest, every decision and the certificate, from the verified rows."""
    committed, _ = read_doc(os.path.join(src, "sweep.json"), "the sweep manifest")
    fresh, _ = read_doc(os.path.join(dst, "sweep.json"), "the recomputed sweep manifest")
    if committed.get("evaluator_id") != fresh.get("evaluator_id"):
        raise ExperimentError(f"{src}/sweep.json: evaluator_id {str(committed.get('evaluator_id'))[:16]} is not this "
                              f"checkout's {str(fresh.get('evaluator_id'))[:16]}")
    if not committed_matches(src, fresh["evaluator_id"]):
        raise ExperimentError(f"{src}/sweep.json: does not list the committed files")
    for c in d["comparisons"]:
        decision = cmp.verify(os.path.join(runs_dir, c))
        log(f"verify-experiments: {c}: decision recomputed from its evidence ({decision['verdict']}, "
            f"{decision['confidence']})")
    if d["dir"] == CERT_SWEEP:
        cert = certificate("grader", committed, obs.read_jsonl(os.path.join(src, obs.JSONL)), rows,
                           MIN_WORLDS_PER_FAMILY)
        with open(os.path.join(src, "certificate.json"), "rb") as fh:
            if fh.read() != pretty(cert):
                raise ExperimentError(f"{src}/certificate.json: differs from the certificate of the verified rows "
                                      f"({'PASSED' if cert['passed'] else 'FAILED'}, {cert['met']} of {cert['checked']})")
        log(f"verify-experiments: {d['dir']}/certificate.json: the certificate of the verified rows")


def _check_unlisted(runs_dir):
    allowed = {HELDOUT_SWEEP: SWEEP_FILES, CERT_SWEEP: CERT_FILES, **{c: COMPARISON_FILES for c in COMPARISONS}}
    for top in ("comparisons", "certificates"):
        for dirpath, dirnames, files in os.walk(os.path.join(runs_dir, top)):
            relative = os.path.relpath(dirpath, runs_dir).replace(os.sep, "/")
            if relative != top and relative not in allowed:
                raise ExperimentError(f"{runs_dir}/{relative}: not part of the shipped experiments")
            for name in sorted(files):
                if name not in allowed.get(relative, ()):
                    raise ExperimentError(f"{runs_dir}/{relative}/{name}: not part of the shipped experiments")
            dirnames.sort()
