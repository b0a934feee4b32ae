"""The grammar-1 erratum, whole: each attempt's inexpressible days (launchers.grammar_erratum) and, for every
study whose model arm was decoded under grammar 1, the sensitivity of its verdicts.

The study stays as it was run: nothing here rewrites a row, a status or a decision. The sensitivity asks one
question of each comparison: fed the same committed worlds in the same order, with the model's score on each
world raised to the erratum's upper bound (every point the grammar could have withheld), would the
pre-registered rule have reached another verdict? A rule that would not have stopped within the worlds the study
measured is said to be undetermined there (no world past its stop was measured, and none is invented).

    python -m experiments.erratum write   runs/errata/grammar-1.json   (make erratum)
    python -m experiments.erratum check   runs/errata/grammar-1.json   (make verify-erratum, part of make verify)
"""

import argparse
import os
import sys

from launchers import LaunchError, grammar_erratum

from . import rules, sequential, study as study_mod
from .errors import ExperimentError
from .files import write_atomic
from .sweep import pretty

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join("runs", "errata", "grammar-1.json")
STUDIES = os.path.join("runs", "studies")


def _model_arm(arm_list):
    models = [a for a in arm_list if a["kind"] == "model"]
    return models[0] if len(models) == 1 else None


def _verdicts(monitors, worlds):
    for item_id, values in worlds:
        for m in monitors:
            m.feed(item_id, values)
    return {
        m.name: {
            "verdict": m.test.outcome if m.stopped else "undetermined within the measured worlds",
            "n": m.test.n,
            "stopped": m.stopped,
            "wealth_for": rules.wealth_text(m.test.mp, m.test.ep),
            "wealth_against": rules.wealth_text(m.test.mm, m.test.em),
        }
        for m in monitors
    }


def study_sensitivity(study_dir, bounds) -> dict | None:
    """{as_run, with_bound, changed} of a study's comparisons, or None when its model arm was not decoded under
    grammar 1. `bounds`: {attempt id: bound points} from the attempts' erratum."""
    doc, out, _, rows, arm_list, _, fixed, _ = study_mod._setup(study_dir, study_mod.DEFAULT_BUNDLE, verifying=True)
    arm = _model_arm(arm_list)
    sampling = ((arm or {}).get("configuration") or {}).get("sampling") or {}
    if arm is None or sampling.get("grammar") != grammar_erratum.GRAMMAR_1:
        return None
    _, done = study_mod._journalled(out, fixed, arm_list)
    tries = study_mod._tries(study_dir)
    names = [a["name"] for a in arm_list]
    measured, raised, changed_worlds = [], [], 0
    for row in rows:
        have = done.get(row["item_id"])
        if have is None or not all(n in have for n in names):
            break
        values = [list(v) for n in names for v in have[n]]
        measured.append((row["item_id"], values))
        last = tries[row["item_id"]][-1][0]
        bound = bounds.get(last)
        up = []
        for v in values:
            if v[0] == arm["name"] and v[2] == "score" and bound is not None and v[3] is not None and bound > v[3]:
                up.append([v[0], v[1], v[2], bound])
                changed_worlds += 1
            else:
                up.append(v)
        raised.append((row["item_id"], up))
    as_run = _verdicts(sequential.monitors_for(fixed["comparisons"]), measured)
    with_bound = _verdicts(sequential.monitors_for(fixed["comparisons"]), raised)
    return {
        "study": doc["name"],
        "model_arm": arm["name"],
        "worlds": len(measured),
        "worlds_raised": changed_worlds,
        "comparisons": {
            name: {
                "as_run": as_run[name],
                "with_bound": with_bound[name],
                "verdict_changes": as_run[name]["verdict"] != with_bound[name]["verdict"],
            }
            for name in as_run
        },
    }


def build(attempts_dir=os.path.join("runs", "attempts"), studies_dir=STUDIES) -> dict:
    doc = grammar_erratum.erratum(attempts_dir)
    bounds = {e["attempt_id"]: e["bound"]["points"] for e in doc["attempts"] if e["bound"]}
    found = []
    for name in sorted(os.listdir(studies_dir)) if os.path.isdir(studies_dir) else []:
        # a study not yet started has no world to re-read (and its held-out list is still secret)
        if os.path.isfile(os.path.join(studies_dir, name, study_mod.STUDY)) and study_mod.started(
            os.path.join(studies_dir, name)
        ):
            s = study_sensitivity(os.path.join(studies_dir, name), bounds)
            if s is not None:
                found.append(dict(s, deviation=_deviation(doc, s)))
    return dict(doc, studies=found)


def _deviation(doc, sensitivity) -> dict:
    """The dated deviation entry a study page shows (EXPERIMENTS.md's shape): recorded, never applied."""
    said = []
    for name, c in sensitivity["comparisons"].items():
        run, up = c["as_run"], c["with_bound"]
        after = (
            f"{up['verdict']} at n {up['n']}"
            if up["stopped"]
            else f"undetermined: the rule would not have stopped within the {sensitivity['worlds']} worlds measured"
        )
        said.append(f"{name}: {run['verdict']} at n {run['n']} as run; with every withheld point restored, {after}")
    return {
        "date": doc["date"],
        "field": "model arm: answer grammar",
        "original": doc["grammar"],
        "effective": doc["grammar"] + " (the study stays as it was run; new studies decode under grammar 2)",
        "reason": doc["finding"] + " Sensitivity: " + "; ".join(said) + ".",
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.erratum", description=__doc__.split("\n")[0])
    parser.add_argument("verb", choices=("write", "check"))
    parser.add_argument("path", nargs="?", default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    try:
        text = pretty(build())
        if args.verb == "write":
            os.makedirs(os.path.dirname(args.path) or ".", exist_ok=True)
            write_atomic(args.path, text)
            print(f"erratum: {args.path} written")
            return 0
        folder = os.path.dirname(os.path.abspath(args.path))
        stray = sorted(set(os.listdir(folder)) - {os.path.basename(args.path)})
        if stray:
            print(
                f"error: {os.path.join(os.path.dirname(args.path), stray[0])}: no erratum names this file",
                file=sys.stderr,
            )
            return 1
        with open(args.path, "rb") as fh:
            if fh.read() != text:
                print(
                    f"error: {args.path}: differs from the erratum this checkout computes (run `make erratum`)",
                    file=sys.stderr,
                )
                return 1
        print(f"verify-erratum: {args.path}: recomputed from the attempts and the studies, byte for byte")
        return 0
    except (ExperimentError, LaunchError, OSError) as exc:
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        print(f"error: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
