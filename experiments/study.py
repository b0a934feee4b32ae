"""A pre-registered study whose sequential sweep spans sessions: run it, read its state, verify it.

  python -m experiments.study run    runs/studies/NAME   resume the sweep (a model arm: hours)
  python -m experiments.study status runs/studies/NAME   write NAME/status.json from the journalled worlds
  python -m experiments.study verify runs/studies/NAME   re-derive every journalled world and status.json
  python -m experiments.study decide runs/studies/NAME   once the sweep has stopped: each comparison's decision

A study folder holds `study.json` (the sweep's arms, its held-out secret file,
the comparisons it serves), one frozen comparison folder per question
(spec.json, freeze.json, deviations.json: committed before the first row) and
the sweep folder (commitment.json, journal.jsonl and, while the sweep has not
stopped, observations.partial.jsonl). A betting rule is valid at every n, so
the state between sessions is a fact, not a peek that spends alpha: each
comparison's wealth for and against its claim after the n worlds journalled so
far, and the verdict once its rule has stopped. When the sweep stops
(sweep.json written), `run` decides each comparison through `fundbook
compare`'s own path (decision.json, evidence.json, rules.py in the comparison
folder, the held-out reveal in the sweep folder); `decide` does it again.

`status` never runs an arm: it reads the rows the journal vouches for (the
sweep's own `reusable` check: every row hashes to its journal line). `verify`
also recomputes every journalled world -- the model arm reads its recorded,
verified attempt back, never running the model -- and requires the same rows
and the committed status.json byte for byte; once stopped, it also verifies
each comparison's decision from its evidence (`fundbook compare --verify`) and
requires the verdict status.json states.
"""

import argparse
import json
import os
import sys

from . import compare, executors, heldout, items as items_mod, rules, sequential
from .arms import parse_arms
from .errors import ExperimentError
from .journal import JOURNAL, Journal
from .jsondoc import pretty, read_doc
from .plans import heldout_plan, plan_rows
from .resume import reusable
from .study_definition import FAMILY_WISE, FIELDS, OPTIONAL, SCHEMA, family_wise, load  # noqa: F401  (as before)
from .study_files import STATUS, STUDY, attempt_files, check_attempts, no_stray_file
from .study_manifest import _as_run, _recorded
from .study_tiers import tier_plan, tier_report  # noqa: F401  (the tier plan, importable from here as before)
from .sweep import Running, prepare, run_sweep
from .files import write_atomic

STATUS_SCHEMA = "fundbook.study-status/1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BUNDLE = os.path.join(ROOT, "build", "engine")


def _setup(study_dir, bundle_dir, verifying=False):
    doc = load(study_dir)
    family_wise(study_dir, doc)
    out = os.path.join(study_dir, doc["sweep"])
    cpath = os.path.join(out, "commitment.json")
    commitment, _ = read_doc(cpath, "the held-out commitment")
    heldout.check_commitment_doc(commitment, cpath)
    secret = heldout.read_secret(os.path.join(ROOT, doc["secret_file"]))
    plan = heldout_plan(commitment)
    rows = plan_rows(plan, secret, commitment)
    arm_list = parse_arms(doc["arms"], _recorded(out, doc) if verifying else None)
    if verifying:  # recorded attempts are read back, never run
        arm_list = [dict(a, read_only=True) if a["kind"] == "model" else a for a in arm_list]
    tiers = tier_plan(study_dir, doc)
    if tiers is not None:  # every new model attempt is admitted by the frozen tier plan first
        arm_list = [dict(a, tiers=tiers) if a["kind"] == "model" else a for a in arm_list]
    comparisons = [os.path.join(study_dir, c) for c in doc["comparisons"]]
    fixed = prepare(out, plan, rows, arm_list, bundle_dir, comparisons)
    if verifying and os.path.exists(os.path.join(out, "sweep.json")):
        fixed = _as_run(out, fixed)
    return doc, out, plan, rows, arm_list, comparisons, fixed, commitment


def run(study_dir, bundle_dir=DEFAULT_BUNDLE, progress=True, workers=1) -> dict:
    """Resume the sweep; once it has stopped, finish it again from its records (its model arm read back, never
    run: the manifest and inputs.json rewritten from every world measured, in whichever session). `workers`
    worlds are under way at once, each in its own process with its own copy of each model (the sampler's thread
    counts are in the recorded settings, so an answer does not depend on how many run); the worlds are still
    fed to the rules in the committed order, and at most `workers - 1` worlds past the stop are measured."""
    stopped = os.path.exists(os.path.join(study_dir, load(study_dir)["sweep"], "sweep.json"))
    _, out, plan, rows, arm_list, comparisons, _, commitment = _setup(study_dir, bundle_dir, verifying=stopped)
    return run_sweep(
        out,
        plan,
        rows,
        arm_list,
        bundle_dir,
        comparisons=comparisons,
        commitment=commitment,
        running=Running(
            workers=workers,
            progress=progress,
            after_result=None if stopped else lambda _: write_status(study_dir, bundle_dir),
        ),
    )


def _journalled(out, fixed, arm_list):
    """(journal, {item_id: {arm: values}}) of the worlds the journal vouches for, in journal order."""
    path = os.path.join(out, JOURNAL)
    if not os.path.exists(path):
        return None, {}
    journal = Journal.read(path, torn_ok=True)
    if journal.start["evaluator_id"] != fixed["evaluator_id"]:
        raise ExperimentError(
            f"{path}: the journal is evaluator {journal.start['evaluator_id'][:16]}'s, this checkout's is "
            f"{fixed['evaluator_id'][:16]} (the code or a configuration changed: a deviation)"
        )
    return journal, reusable(out, fixed["evaluator_id"], journal, arm_list)


def status(study_dir, bundle_dir=DEFAULT_BUNDLE) -> dict:
    doc, out, _, rows, arm_list, _, fixed, _ = _setup(study_dir, bundle_dir, verifying=True)  # never runs an arm
    journal, done = _journalled(out, fixed, arm_list)
    names = [a["name"] for a in arm_list]
    monitors = sequential.monitors_for(fixed["comparisons"])
    if not monitors:
        raise ExperimentError(f"{os.path.join(study_dir, STUDY)}: a study serves betting comparisons only")
    worlds = []
    for row in rows:  # the committed order: the worlds measured so far are a prefix of it
        have = done.get(row["item_id"])
        if have is None or not all(n in have for n in names):
            break
        values = [v for n in names for v in have[n]]
        for m in monitors:
            m.feed(row["item_id"], values)
        worlds.append(
            {
                "item_id": row["item_id"],
                "family": row["family"],
                "score": {n: next((v[3] for v in have[n] if v[2] == "score"), None) for n in names},
                **_tries_named(arm_list, row),
            }
        )
    extra = sorted(set(done) - {w["item_id"] for w in worlds})
    if extra:
        raise ExperimentError(f"{out}: world {extra[0]} is journalled out of the committed order")
    comparisons = {}
    for m in monitors:
        t = m.test
        comparisons[m.name] = {
            "n": t.n,
            "max_n": m.rule.max_n,
            "verdict": t.outcome,
            "reason": t.why,
            "wealth_for": rules.wealth_text(t.mp, t.ep),
            "wealth_against": rules.wealth_text(t.mm, t.em),
            "threshold": str(t._tn // t._td) if t._tn % t._td == 0 else f"{t._tn}/{t._td}",
        }
    stopped = all(m.stopped for m in monitors)
    n_stop = max(m.test.n for m in monitors) if stopped else None
    serving = {m.name: set(m.spec.get("arms") or {}) for m in monitors}
    tiers = tier_report(study_dir, doc, arm_list, done)
    fw = family_wise(study_dir, doc)
    return {
        **({"tiers": tiers} if tiers is not None else {}),
        **({"family_wise": fw} if fw else {}),
        "schema": STATUS_SCHEMA,
        "name": doc["name"],
        "evaluator_id": fixed["evaluator_id"],
        "journal": journal.summary() if journal else None,
        "worlds": len(worlds),
        "planned_max": max(m.rule.max_n or len(rows) for m in monitors),
        "state": "stopped" if stopped else ("not started" if not worlds else "running"),
        # seed 004's progressive status: an arm is complete once no comparison will read another row of it
        # (every comparison it serves has stopped; an arm that serves none, once the sweep has stopped)
        "completed_arms": sorted(
            n
            for n in names
            if (stopped and len(worlds) >= n_stop)
            or (
                any(n in arms for arms in serving.values()) and all(m.stopped for m in monitors if n in serving[m.name])
            )
        ),
        "comparisons": comparisons,
        "per_world": worlds,
    }


def _tries_named(arm_list, row) -> dict:
    """{"tries": [attempt ids]} of the world's model-arm tries present (none for a study without a model arm):
    status.json, committed and required byte for byte by verify, lists them, so a try deleted, added or
    renamed is a difference; verify's recomputation reads each one back from its own folder."""
    from .arm_model import attempt_ids, attempts_dir

    found = [
        i
        for a in arm_list
        if a["kind"] == "model"
        for i in attempt_ids(a, row)
        if os.path.lexists(os.path.join(attempts_dir(), i))
    ]
    return {"tries": found} if any(a["kind"] == "model" for a in arm_list) else {}


def write_status(study_dir, bundle_dir=DEFAULT_BUNDLE) -> dict:
    doc = status(study_dir, bundle_dir)
    write_atomic(os.path.join(study_dir, STATUS), pretty(doc))
    return doc


def started(study_dir) -> bool:
    """Whether a study has begun: its sweep has a journal or a manifest. Before that its held-out list is secret."""
    out = os.path.join(study_dir, load(study_dir)["sweep"])
    return os.path.exists(os.path.join(out, JOURNAL)) or os.path.exists(os.path.join(out, "sweep.json"))


def _not_started(study_dir, log) -> dict | None:
    """A study frozen and committed but not yet run (no journal, no manifest): its held-out list is still secret,
    so what can be checked is what it froze -- each spec against its freeze, the commitment, the stated
    family-wise error -- and that nothing else is there yet."""
    if started(study_dir):
        return None
    doc = load(study_dir)
    out = os.path.join(study_dir, doc["sweep"])
    from .decide import check_frozen
    from .decision import check_deviations

    for name in doc["comparisons"]:
        folder = os.path.join(study_dir, name)
        with open(os.path.join(folder, "spec.json"), "rb") as fh:
            spec_bytes = fh.read()
        freeze_rec, _ = read_doc(os.path.join(folder, "freeze.json"), "the freeze record")
        check_frozen(spec_bytes, freeze_rec, folder)
        dev_path = os.path.join(folder, "deviations.json")  # dated changes may come before the first world
        check_deviations(read_doc(dev_path, "the deviations")[0], dev_path)
    cpath = os.path.join(out, "commitment.json")
    commitment, _ = read_doc(cpath, "the held-out commitment")
    heldout.check_commitment_doc(commitment, cpath)
    family_wise(study_dir, doc)
    allowed = {
        STUDY,
        "README.md",
        os.path.join(doc["sweep"], "commitment.json"),
        os.path.join(doc["sweep"], "feasibility.json"),
    } | {os.path.join(c, f) for c in doc["comparisons"] for f in ("spec.json", "freeze.json", "deviations.json")}
    for dirpath, _, names in os.walk(study_dir):
        for name in names:
            rel = os.path.relpath(os.path.join(dirpath, name), study_dir)
            if rel not in allowed:
                raise ExperimentError(f"{os.path.join(study_dir, rel)}: not part of a study that has not started")
    log(
        f"verify-study: {doc['name']}: not started: {len(doc['comparisons'])} frozen specs match their freezes, the "
        f"held-out commitment {commitment['sha256'][:12]} is well formed; no world has been played"
    )
    return {"name": doc["name"], "state": "not started", "worlds": 0}


def verify(study_dir, bundle_dir=DEFAULT_BUNDLE, log=print) -> dict:
    """Recompute every journalled world (model attempts read back and verified, never re-run) and status.json."""
    waiting = _not_started(study_dir, log)
    if waiting is not None:
        return waiting
    _, out, _, rows, arm_list, _, fixed, _ = _setup(study_dir, bundle_dir, verifying=True)
    _, done = _journalled(out, fixed, arm_list)
    by_id = {r["item_id"]: r for r in rows}
    for iid in [r["item_id"] for r in rows if r["item_id"] in done]:
        row = by_id[iid]
        got = executors.host_run(
            {"row": row, "item": items_mod.item_of(row), "fixture_sha256": row["fixture_sha256"], "arms": arm_list}
        )["values"]
        want = [v for a in arm_list for v in done[iid][a["name"]]]
        if got != want:
            raise ExperimentError(f"{out}: world {iid} recomputes to {got}, the journalled rows say {want}")
    fresh = pretty(status(study_dir, bundle_dir))
    path = os.path.join(study_dir, STATUS)
    with open(path, "rb") as fh:
        if fh.read() != fresh:
            raise ExperimentError(
                f"{path}: differs from the status of the journalled worlds (run `python -m "
                f"experiments.study status {study_dir}`)"
            )
    doc = json.loads(fresh)
    decided = ""
    if doc["state"] == "stopped":
        decisions = _verify_decisions(study_dir, load(study_dir), doc)
        decided = "; " + ", ".join(f"{n} {d['verdict']} at n {d['n']}" for n, d in decisions.items())
    no_stray_file(study_dir, load(study_dir), doc["state"] == "stopped")
    as_run = ""
    if fixed.get("current_evaluator_id", fixed["evaluator_id"]) != fixed["evaluator_id"]:
        as_run = (
            f" (run under evaluator {fixed['evaluator_id'][:12]}; this checkout's engine, evaluator "
            f"{fixed['current_evaluator_id'][:12]}, gives every value again)"
        )
    log(
        f"verify-study: {doc['name']}: {len(done)} journalled worlds recomputed from their records{as_run}; "
        f"status.json matches ({doc['state']}){decided}"
    )
    return doc


def decide(study_dir) -> dict:
    """{comparison: decision}: each comparison decided from the stopped sweep (`fundbook compare --sweep`)."""
    doc = load(study_dir)
    out = os.path.join(study_dir, doc["sweep"])
    if not os.path.exists(os.path.join(out, "sweep.json")):
        raise ExperimentError(
            f"{out}: the sweep has not stopped (no sweep.json): a study is decided when its rules "
            f"stop (`python -m experiments.study run {study_dir}`)"
        )
    secret = heldout.read_secret(os.path.join(ROOT, doc["secret_file"]))
    files = attempt_files(_tries(study_dir))
    return {c: compare.run_compare(os.path.join(study_dir, c), out, secret, files) for c in doc["comparisons"]}


def _tries(study_dir) -> dict:
    """{item_id: [(attempt_id, folder)]}: every try of every measured world of the study's model arms, in the
    committed order, each read back and checked (its own folder, its own id, none missing before a retry)."""
    _, out, _, rows, arm_list, _, fixed, _ = _setup(study_dir, DEFAULT_BUNDLE, verifying=True)
    _, done = _journalled(out, fixed, arm_list)
    from .arm_model import tries

    found = {}
    for arm in arm_list:
        if arm["kind"] == "model":
            for row in rows:
                if arm["name"] in done.get(row["item_id"], {}):
                    found.setdefault(row["item_id"], []).extend(tries(arm, row))
    return found


def _verify_decisions(study_dir, doc, status_doc) -> dict:
    """Every comparison's decision.json recomputed from its evidence, with the verdict status.json states."""
    out, tries = {}, _tries(study_dir)
    for name in doc["comparisons"]:
        folder = os.path.join(study_dir, name)
        if not os.path.exists(os.path.join(folder, "decision.json")):
            raise ExperimentError(
                f"{folder}: the study has stopped but this comparison has no decision.json (run "
                f"`python -m experiments.study decide {study_dir}`)"
            )
        decision = compare.verify(folder)
        check_attempts(os.path.join(study_dir, load(study_dir)["sweep"]), folder, tries)
        stated = status_doc["comparisons"][name]
        if (decision.get("verdict"), decision.get("n")) != (stated["verdict"], stated["n"]):
            raise ExperimentError(
                f"{folder}/decision.json: {decision.get('verdict')} at n {decision.get('n')}, "
                f"status.json says {stated['verdict']} at n {stated['n']}"
            )
        out[name] = decision
    return out


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, with the CLIs' usage exit code (64), never argparse's 2 (UNSCORABLE here)."""

    def error(self, message):
        print(f"error: {_plain(message)} (see `{self.prog} --help`)", file=sys.stderr)
        sys.exit(64)


def _workers(text):
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 8:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 8, got {text!r}")
    return int(text)


def _plain(text):
    """One line whatever a message quotes (a path with a newline in it)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def main(argv=None) -> int:
    parser = _Parser(prog="python -m experiments.study", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("run", "status", "verify", "decide"))
    parser.add_argument("study", help="the study folder, e.g. runs/studies/smollm2-heldout")
    parser.add_argument("--bundle", default=DEFAULT_BUNDLE)
    parser.add_argument(
        "--workers", type=_workers, default=1, help="run: worlds under way at once, one process each (default 1)"
    )
    args = parser.parse_args(argv)
    if args.workers != 1 and args.command != "run":
        parser.error("--workers: only `run` runs worlds")
    try:
        if args.command in ("run", "decide"):
            if args.command == "run":
                run(args.study, args.bundle, workers=args.workers)
            doc = write_status(args.study, args.bundle)
            if doc["state"] == "stopped":
                for name, d in decide(args.study).items():
                    print(
                        f"{name}: decided {d['verdict']} at n {d['n']} -> {os.path.join(args.study, name)}/"
                        f"decision.json"
                    )
            elif args.command == "decide":
                raise ExperimentError(f"{args.study}: the sweep has not stopped: nothing to decide yet")
        elif args.command == "status":
            doc = write_status(args.study, args.bundle)
        else:
            doc = verify(args.study, args.bundle)
            return 0
    except ExperimentError as exc:
        print(f"error: {_plain(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:  # a folder or file the study cannot write (nothing is half-written: temp then rename)
        print(f"error: {_plain(f'{exc.filename}: {exc.strerror}' if exc.filename else str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: the journalled worlds are kept; run it again to resume", file=sys.stderr)
        return 130
    for name, c in doc["comparisons"].items():
        print(
            f"{name}: n={c['n']} of at most {c['max_n']}, wealth for {c['wealth_for']}, against "
            f"{c['wealth_against']} (threshold {c['threshold']}): {c['verdict'] or 'no verdict yet'}"
        )
    return 0


def _exit(code):
    """Leave without the interpreter's teardown. A study loads llama.cpp (the model arm's configuration) and Arrow
    (the decisions' Parquet) into one process, and their native thread pools, shut down by exit handlers, at
    times aborted the process after its work was done ("terminate called without an active exception"):
    everything is written and flushed by now, so nothing is lost by skipping them."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit(main())
