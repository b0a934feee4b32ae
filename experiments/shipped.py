"""The shipped experiments: what `make build` publishes, and how it stays fast.

  runs/comparisons/heldout-baselines/   one held-out sweep: 1,000 worlds, the three scripted baselines
  runs/comparisons/<name>/              two frozen paired-Hoeffding comparisons decided from it
  runs/comparisons/heldout-baselines-betting/
                                        the same committed worlds in the same order, swept
                                        sequentially for two frozen paired-betting specs of the
                                        same questions: it stops where their wealth reaches 1/alpha
  runs/comparisons/<name>-betting/      those two comparisons
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
from .journal import JOURNAL
from . import calibration
from .sweep import Running, heldout_plan, plan_rows, practice_plan, prepare, pretty, read_doc, run_sweep
from .files import write_atomic
from .seeds import parse_seeds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE_ARMS = ("baseline:reference", "baseline:shortest-cheapest", "baseline:do-nothing")
HELDOUT_SWEEP = "comparisons/heldout-baselines"
COMPARISONS = ("comparisons/reference-vs-shortest-cheapest", "comparisons/shortest-cheapest-vs-do-nothing")
BETTING_SWEEP = "comparisons/heldout-baselines-betting"
BETTING_COMPARISONS = (
    "comparisons/reference-vs-shortest-cheapest-betting",
    "comparisons/shortest-cheapest-vs-do-nothing-betting",
)
CERT_SWEEP = "certificates/grader"
CALIBRATION_DIR = "comparisons/calibration"  # the rules' calibration (experiments/calibration.py)
CERT_SEEDS = "1..1000"
MIN_WORLDS_PER_FAMILY = 1000
PILOT_ITEMS = 40
RECHECK_ITEMS = 24  # per sweep, per build: host CPython and the bundle in Pyodide
WORKERS = 2
FAMILIES = ("FUND_01", "FUND_02", "FUND_03", "FUND_04")


def sweeps():
    return [
        {"dir": HELDOUT_SWEEP, "split": "heldout", "arms": list(BASELINE_ARMS), "comparisons": list(COMPARISONS)},
        {
            "dir": BETTING_SWEEP,
            "split": "heldout",
            "arms": list(BASELINE_ARMS),
            "comparisons": list(BETTING_COMPARISONS),
        },
        {
            "dir": CERT_SWEEP,
            "split": "practice",
            "arms": ["gold", "mutations"],
            "comparisons": [],
            "plan": practice_plan(FAMILIES, parse_seeds(CERT_SEEDS)),
        },
    ]


def all_comparisons():
    """[(comparison folder, its sweep folder)] of the shipped sweeps, in order."""
    return [(c, d["dir"]) for d in sweeps() for c in d["comparisons"]]


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
    key = (commitment["sha256"], secret)
    if key not in _ROWS:  # the held-out Hoeffding and betting sweeps share one committed list: generate it once
        _ROWS[key] = plan_rows(plan, secret, commitment)
    return plan, [dict(r) for r in _ROWS[key]], commitment


_ROWS = {}


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
    for name in (obs.JSONL, obs.PARQUET, obs.PARTIAL, "sweep.json", "inputs.json", JOURNAL):
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
        log(
            f"experiments: {definition['dir']}: computing {len(rows)} items x {len(arm_list)} arms for evaluator "
            f"{eid[:16]} ({'recompute asked' if recompute else 'the committed rows are for another evaluator'})"
        )
        _fresh(out)  # rows of another evaluator (or a recompute): the sweep begins again, journal and all
        if definition["split"] == "heldout":
            doc = run_pilot(out, plan, rows, arm_list, eid, PILOT_ITEMS, comparisons=fixed["comparisons"])
            write_atomic(os.path.join(out, "feasibility.json"), pretty(doc))
        run_sweep(
            out,
            plan,
            rows,
            arm_list,
            bundle_dir,
            comparisons=comparisons,
            commitment=commitment,
            running=Running(workers=WORKERS, progress=progress, require_pilot=definition["split"] == "heldout"),
        )
    sweep_doc, _ = read_doc(os.path.join(out, "sweep.json"), "the sweep manifest")
    return {
        "definition": definition,
        "out": out,
        "rows": rows,
        "arms": arm_list,
        "fixed": fixed,
        "sweep": sweep_doc,
        "reused": reused,
    }


def recheck(runs, bundle, seed, size=RECHECK_ITEMS, session=None) -> dict:
    """A fresh sample of every sweep on host CPython and in Pyodide, against the committed values."""
    tasks, expected, report = [], {}, {}
    for r in runs:
        committed = obs.done_from_rows(obs.read_jsonl(os.path.join(r["out"], obs.JSONL)), r["sweep"]["evaluator_id"])
        measured = [row["item_id"] for row in r["rows"] if row["item_id"] in committed]  # a sequential sweep's prefix
        ids = pyodide.select_sample(measured, size, seed)
        by_id = {row["item_id"]: row for row in r["rows"]}
        for iid in ids:
            row = by_id[iid]
            prepared = executors.host_prepare(
                {"row": row, "item": items_mod.item_of(row), "fixture_sha256": row["fixture_sha256"], "arms": r["arms"]}
            )
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
    return {
        "seed": seed,
        "per_sweep": report,
        "pyodide_version": out["runtime"]["pyodide_version"],
        "bundle_sha256": out["runtime"]["bundle_sha256"],
        "tasks": len(tasks),
    }


def rules_in_pyodide(runs_dir, session=None) -> dict:
    """Every shipped decision recomputed by experiments/rules.py in Pyodide: the same figures, digit for digit."""
    payloads, published = [], []
    for c, _ in all_comparisons():
        keep = {}
        published.append((c, cmp.verify(os.path.join(runs_dir, c), keep)))
        payloads.append(keep["payload"])
    out = pyodide.decide_in_pyodide(cmp.RULES_SOURCE, payloads, session)
    for (c, decision), answer in zip(published, out["results"]):
        if not answer.get("ok"):
            raise ExperimentError(f"{c}: the rules in Pyodide refuse the rows ({answer.get('error')})")
        mine = {k: decision[k] for k in answer["decision"]}
        if answer["decision"] != mine:
            where = engine.first_difference(mine, answer["decision"])
            raise ExperimentError(
                f"{c}/decision.json: experiments/rules.py in Pyodide computes another figure at {where}"
            )
    return {
        "decisions": len(payloads),
        "identical": True,
        "pyodide_version": out["runtime"]["pyodide_version"],
        "rules_sha256": out["runtime"]["rules_sha256"],
    }


def build(
    runs_dir=None, bundle_dir=None, check_dir=None, recompute=False, progress=True, seed=None, log=print, session=None
):
    runs_dir = runs_dir or os.path.join(ROOT, "runs")
    bundle_dir = bundle_dir or os.path.join(ROOT, "build", "engine")
    check_dir = check_dir or os.path.join(ROOT, "build", "experiments")
    runs = [run_definition(runs_dir, d, bundle_dir, recompute, progress, log) for d in sweeps()]
    seed = seed if seed is not None else int(os.environ.get("FUNDBOOK_RECHECK_SEED") or secrets.randbits(48))
    from builders import BuildError
    from builders import own_session

    try:
        with own_session(session) as runtime:  # one Pyodide runtime for the re-check and the rules
            return _build(runs, runs_dir, check_dir, seed, runtime)
    except BuildError as exc:
        raise ExperimentError(f"Pyodide: {exc.format_message()}")


def _build(runs, runs_dir, check_dir, seed, session):
    checked = recheck(runs, runs[0]["fixed"]["bundle"], seed, session=session)
    decisions = {}
    for c, sweep_dir in all_comparisons():
        directory = os.path.join(runs_dir, c)
        cmp.run_compare(directory, os.path.join(runs_dir, sweep_dir))
        decision = cmp.verify(directory)
        decisions[c] = {
            "verdict": decision["verdict"],
            "confidence": decision["confidence"],
            "n": decision["n"],
            "method": decision["method"],
            "evidence_verified": True,
        }
    pyodide_decisions = rules_in_pyodide(runs_dir, session)
    cert_run = next(r for r in runs if r["definition"]["dir"] == CERT_SWEEP)
    cert = certificate(
        "grader",
        cert_run["sweep"],
        obs.read_jsonl(os.path.join(cert_run["out"], obs.JSONL)),
        cert_run["rows"],
        MIN_WORLDS_PER_FAMILY,
    )
    write_atomic(os.path.join(cert_run["out"], "certificate.json"), pretty(cert))
    if not cert["passed"]:
        first = cert["failures"][0] if cert["failures"] else {"item_id": "?", "arm": "?"}
        raise ExperimentError(
            f"{cert_run['out']}/certificate.json: the grader certificate fails ({cert['met']} of "
            f"{cert['checked']} expectations met; first: {first['arm']} on {first['item_id']})"
        )
    checks = {
        "schema": "fundbook.experiment-checks/1",
        "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "sweeps": {
            r["definition"]["dir"]: {
                "evaluator_id": r["sweep"]["evaluator_id"],
                "reused": r["reused"],
                "rows": r["sweep"]["counts"]["rows"],
                "source_check": r["fixed"]["sources"],
            }
            for r in runs
        },
        "recheck": checked,
        "comparisons": decisions,
        "decisions_in_pyodide": pyodide_decisions,
        "certificate": {"passed": cert["passed"], "checked": cert["checked"], "met": cert["met"]},
    }
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
            run_sweep(
                dst,
                plan,
                rows,
                arm_list,
                bundle_dir,
                comparisons=[os.path.join(scratch, c) for c in d["comparisons"]],
                commitment=commitment,
                running=Running(workers=WORKERS, require_pilot=False, sample_size=0, progress=progress),
            )
            for name in ("items.jsonl", obs.JSONL, obs.PARQUET):
                with open(os.path.join(src, name), "rb") as a, open(os.path.join(dst, name), "rb") as b:
                    mine, theirs = a.read(), b.read()
                if mine != theirs:
                    line = next(
                        (i for i, (x, y) in enumerate(zip(mine.splitlines(), theirs.splitlines()), 1) if x != y), None
                    )
                    raise ExperimentError(
                        f"{src}/{name}: differs from a fresh recomputation"
                        + (f" at line {line}" if line and name.endswith("l") else "")
                    )
            _check_published(runs_dir, d, src, dst, rows, log)
            done.append(d["dir"])
            log(f"verify-experiments: {d['dir']}: items, observations.jsonl and .parquet identical to a recomputation")
    _check_unlisted(runs_dir)
    return done


# What each shipped folder may hold; anything else is not part of the publication.
SWEEP_FILES = {
    "items.jsonl",
    obs.JSONL,
    obs.PARQUET,
    "sweep.json",
    "commitment.json",
    "reveal.json",
    "feasibility.json",
    JOURNAL,
}
CERT_FILES = SWEEP_FILES | {"certificate.json"}
COMPARISON_FILES = {
    "spec.json",
    "freeze.json",
    "deviations.json",
    "decision.json",
    "evidence.json",
    cmp.RULES_FILE,
    "result.json",
}  # result.json: the structured result, checked by cmp.verify


def _check_published(runs_dir, d, src, dst, rows, log):
    """Beyond the rows: the sweep manifest, every decision and the certificate, from the verified rows."""
    committed, _ = read_doc(os.path.join(src, "sweep.json"), "the sweep manifest")
    fresh, _ = read_doc(os.path.join(dst, "sweep.json"), "the recomputed sweep manifest")
    if committed.get("evaluator_id") != fresh.get("evaluator_id"):
        raise ExperimentError(
            f"{src}/sweep.json: evaluator_id {str(committed.get('evaluator_id'))[:16]} is not this "
            f"checkout's {str(fresh.get('evaluator_id'))[:16]}"
        )
    if not committed_matches(src, fresh["evaluator_id"]):
        raise ExperimentError(f"{src}/sweep.json: does not list the committed files")
    if committed.get("sequential") != fresh.get("sequential"):
        raise ExperimentError(
            f"{src}/sweep.json: sequential: records {committed.get('sequential')}, a fresh run stops "
            f"at {fresh.get('sequential')}"
        )
    for c in d["comparisons"]:
        decision = cmp.verify(os.path.join(runs_dir, c))
        log(
            f"verify-experiments: {c}: decision recomputed from its evidence ({decision['verdict']}, "
            f"{decision['confidence']})"
        )
    if d["dir"] == CERT_SWEEP:
        cert = certificate(
            "grader", committed, obs.read_jsonl(os.path.join(src, obs.JSONL)), rows, MIN_WORLDS_PER_FAMILY
        )
        with open(os.path.join(src, "certificate.json"), "rb") as fh:
            if fh.read() != pretty(cert):
                raise ExperimentError(
                    f"{src}/certificate.json: differs from the certificate of the verified rows "
                    f"({'PASSED' if cert['passed'] else 'FAILED'}, {cert['met']} of {cert['checked']})"
                )
        log(f"verify-experiments: {d['dir']}/certificate.json: the certificate of the verified rows")


def _check_unlisted(runs_dir):
    allowed = {
        **{d["dir"]: (CERT_FILES if d["dir"] == CERT_SWEEP else SWEEP_FILES) for d in sweeps()},
        **{c: COMPARISON_FILES for c, _ in all_comparisons()},
        CALIBRATION_DIR: {os.path.basename(calibration.OUT)},
    }
    for top in ("comparisons", "certificates"):
        for dirpath, dirnames, files in os.walk(os.path.join(runs_dir, top)):
            relative = os.path.relpath(dirpath, runs_dir).replace(os.sep, "/")
            if relative != top and relative not in allowed:
                raise ExperimentError(f"{runs_dir}/{relative}: not part of the shipped experiments")
            for name in sorted(files):
                if name not in allowed.get(relative, ()):
                    raise ExperimentError(f"{runs_dir}/{relative}/{name}: not part of the shipped experiments")
            dirnames.sort()
