"""The local model's feasibility pilot: real attempts on practice worlds, timed, before a study's n is chosen.

  python -m experiments.pilot_model --model-file F.gguf [--family FUND_01 ...] [--seed 1] [--out runs/attempts]

Runs the model arm (experiments/arm_model.py) on one practice world of each family -- full records, published
beside every other attempt and read back when already recorded -- and writes `<out>/pilot-<model>.json`: per
attempt and per call, wall and CPU time, tokens, how many answers were valid and how many checkpoints were
settled, the graded result; then the means and a projection of the wall and CPU time of a study of n
attempts run one at a time on this machine. Timings are measurements on a shared host (the load average is
recorded beside them): CPU time is the sampler's own (the ledger's cpu_ms), wall time the record's.
"""

import argparse
import datetime
import json
import os
import sys

from . import arm_model, items as items_mod
from .errors import ExperimentError

PILOT_SCHEMA = "fundbook.local-pilot/1"
STUDY_SIZES = (10, 20, 40, 60, 100)


def _mean(values):
    return -(-sum(values) // len(values)) if values else 0


def _median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0


def attempt_figures(record) -> dict:
    c, vol = record["content"], record["volatile"]
    charges = [e for e in c["ledger"]["entries"] if e["account"] == "inference" and e["kind"] == "charge"]
    walls = list(vol.get("calls_ms") or [])
    result = c.get("result") or {}
    return {
        "attempt_id": c["attempt_id"],
        "family": c["task"]["family"],
        "seed": c["task"]["seed"],
        "status": c["termination"]["status"],
        "calls": c["cost"]["calls"],
        "answers_valid": c["cost"]["calls"] - c["invalid_artefacts"],
        "invalid_artefacts": c["invalid_artefacts"],
        "batches_accepted": sum(1 for p in c["proposals"] if p.get("outcome") == "accepted"),
        "batches_rejected": sum(1 for p in c["proposals"] if p.get("outcome") == "rejected"),
        "checkpoints": c["task"]["horizon"],
        "settled_days": c["settled_days"],
        "accepted_actions": c["accepted_actions"],
        "tokens_in": c["cost"]["tokens_in"],
        "tokens_out": c["cost"]["tokens_out"],
        "prompt_cache_hit_tokens": c["cost"]["prompt_cache_hit_tokens"],
        "cpu_ms": c["cost"].get("cpu_ms", 0),
        "wall_ms": vol["duration_ms"],
        "call_cpu_ms": [e.get("cpu_ms", 0) for e in charges],
        "call_wall_ms": walls,
        "result": {
            "status": result.get("status"),
            "verdict": result.get("verdict"),
            "points": (result.get("score") or {}).get("points"),
        },
    }


def summary(attempts) -> dict:
    calls_cpu = [ms for a in attempts for ms in a["call_cpu_ms"]]
    calls_wall = [ms for a in attempts for ms in a["call_wall_ms"]]
    wall, cpu = _mean([a["wall_ms"] for a in attempts]), _mean([a["cpu_ms"] for a in attempts])
    return {
        "attempts": len(attempts),
        "calls": len(calls_cpu),
        "per_call": {
            "cpu_ms_median": _median(calls_cpu),
            "cpu_ms_mean": _mean(calls_cpu),
            "cpu_ms_max": max(calls_cpu, default=0),
            "wall_ms_median": _median(calls_wall),
            "wall_ms_mean": _mean(calls_wall),
            "wall_ms_max": max(calls_wall, default=0),
        },
        "per_attempt": {
            "wall_ms_mean": wall,
            "cpu_ms_mean": cpu,
            "calls_mean": _mean([a["calls"] for a in attempts]),
            "tokens_in_mean": _mean([a["tokens_in"] for a in attempts]),
            "tokens_out_mean": _mean([a["tokens_out"] for a in attempts]),
        },
        "validity": {
            "answers": sum(a["calls"] for a in attempts),
            "answers_valid": sum(a["answers_valid"] for a in attempts),
            "checkpoints": sum(a["checkpoints"] for a in attempts),
            "checkpoints_settled": sum(a["settled_days"] for a in attempts),
            "completed": sum(1 for a in attempts if a["status"] == "completed"),
        },
        "projection": [
            {
                "attempts": n,
                "wall_hours_x100": -(-n * wall * 100 // 3_600_000),
                "cpu_hours_x100": -(-n * cpu * 100 // 3_600_000),
            }
            for n in STUDY_SIZES
        ],
    }


def run(model_file, families, seed, out, report=None) -> dict:
    os.environ[arm_model.ATTEMPTS_ENV] = out
    arm = arm_model.parse(None, f"llama-cpp:{model_file}", f"model:llama-cpp:{model_file}")
    rows = items_mod.manifest_rows(items_mod.practice_items(families, [seed]), items_mod.PRACTICE)
    load = [os.getloadavg()[0]]
    attempts = []
    for row in rows:  # one at a time: a pilot measures what a study run in this order will cost
        record, _ = arm_model.attempt_for(arm, row)
        attempts.append(attempt_figures(record))
        load.append(os.getloadavg()[0])
        print(
            f"pilot: {attempts[-1]['attempt_id']}: {attempts[-1]['status']}, {attempts[-1]['calls']} calls, "
            f"{attempts[-1]['wall_ms'] / 1000:.0f} s wall, {attempts[-1]['cpu_ms'] / 1000:.0f} s CPU",
            file=sys.stderr,
        )
    doc = {
        "schema": PILOT_SCHEMA,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "arm": arm,
        "worlds": [r["item_id"] for r in rows],
        "split": "practice",
        "measured_on": {
            "cores": os.cpu_count(),
            "load_average_1min_x100": [round(x * 100) for x in load],
            "note": "a host shared with other work: CPU time is the sampler's own; wall time is "
            "what a study run here one attempt at a time would take",
        },
        "attempts": attempts,
        "summary": summary(attempts),
    }
    path = report or os.path.join(out, f"pilot-{arm_model._slug(arm).rsplit('-', 1)[0]}.json")
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=True) + "\n")
    os.replace(path + ".tmp", path)
    return doc


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m experiments.pilot_model")
    ap.add_argument("--model-file", required=True, help="a GGUF file, or `packaged` (SmolLM2-135M-Instruct)")
    ap.add_argument("--family", dest="families", action="append", choices=("FUND_01", "FUND_02", "FUND_03", "FUND_04"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=arm_model.attempts_dir())
    ap.add_argument("--report", default=None, help="the pilot file (default: <out>/pilot-<model>.json)")
    args = ap.parse_args(argv)
    try:
        doc = run(
            args.model_file,
            args.families or ["FUND_01", "FUND_02", "FUND_03", "FUND_04"],
            args.seed,
            args.out,
            args.report,
        )
    except ExperimentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(doc["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
