"""The feasibility pilot: measure before the full sweep, publish, then continue.

`fundbook sweep ... --pilot N` runs N practice worlds of the sweep's families
(never a held-out one) through every arm in this process, one core, and
records per arm: seconds per item (integer microseconds), model tokens and
USD per item (the mock worker's tokens are real counts at a price of 0).
From those it projects the full sweep: CPU time, wall time on the local pool
and on Modal, and Modal's compute cost. Projections, observed usage and
budgets are kept apart; a held-out sweep refuses to start without this file.

Every number is an integer: microseconds, micro-USD, tokens. The Modal price
and container assumptions are written into the file next to the projection.

For each comparison the sweep serves, the pilot also measures its paired
difference on the pilot worlds and reports the worlds each registered rule
(Hoeffding, empirical Bernstein, betting) would need to say "supported" with
80 % power for that effect (experiments/power.py: the rules' own code run on
the pilot's differences resampled, seeded by the pilot's rows).
"""

import datetime
import os
import subprocess
import sys
import time

import hashlib

from . import executors, items as items_mod, power, rules, work
from .seeds import format_seeds

FEASIBILITY_SCHEMA = "fundbook.feasibility/1"
# Modal's list prices (modal.com/pricing, as transcribed 2026-06; check before a paid sweep):
# CPU $0.0000131 per physical core-second, memory $0.00000222 per GiB-second.
MODAL_NANO_USD_PER_CORE_S = 13_100
MODAL_NANO_USD_PER_GIB_S = 2_220
MODAL_CONTAINERS = 100  # concurrent containers assumed (a workspace limit, not a promise)
MODAL_CHUNK_ITEMS = executors.CHUNK_ITEMS * 20
MODAL_COLD_START_S = 15  # per container: image pull and interpreter start (assumed, not measured here)
MODAL_IMAGE_BUILD_S = 60  # once per image change (assumed)
SCALE_ITEMS = (1_000, 10_000, 100_000)  # the sweep sizes the published scale table projects


def _ceil_div(a, b):
    return -(-a // b)


def modal_projection(items, micros_per_item) -> dict:
    """Modal: chunks of items over warm containers, each cold-started once.
    Billed core time = compute + cold starts; cost rounded up to the micro-USD."""
    chunks = _ceil_div(items, MODAL_CHUNK_ITEMS)
    containers = min(MODAL_CONTAINERS, chunks)
    waves = _ceil_div(chunks, containers) if containers else 0
    cold_us = MODAL_COLD_START_S * 1_000_000
    compute_us = items * micros_per_item
    billed_us = compute_us + containers * cold_us
    wall_us = MODAL_IMAGE_BUILD_S * 1_000_000 + cold_us + waves * min(MODAL_CHUNK_ITEMS, items) * micros_per_item
    cores_x1000 = int(executors.MODAL_CPU * 1000)
    gib_x1024 = executors.MODAL_MEMORY_MIB  # MiB = GiB x 1024
    nano_x = billed_us * (cores_x1000 * 1024 * MODAL_NANO_USD_PER_CORE_S + gib_x1024 * 1000 * MODAL_NANO_USD_PER_GIB_S)
    micro_usd = _ceil_div(nano_x, 1_000_000 * 1000 * 1024 * 1000)
    return {
        "items": items,
        "chunks": chunks,
        "containers": containers,
        "waves": waves,
        "billed_container_us": billed_us,
        "wall_us": wall_us,
        "compute_micro_usd": micro_usd,
    }


def projection(items, micros, micro_usd_per_item=0, workers=2) -> dict:
    """A sweep of `items` worlds at `micros` CPU µs per world (all arms) and the arms' inference cost."""
    inference = micro_usd_per_item * items
    return {
        "items": items,
        "cpu_us": items * micros,
        "local": {
            "workers": workers,
            "wall_us": _ceil_div(items * micros, workers),
            "note": "ideal speed-up; `make bench-experiments` measures the real 2-worker ratio",
        },
        "modal": modal_projection(items, micros),
        "inference_micro_usd": inference,
    }


def assumptions() -> dict:
    return {
        "modal_nano_usd_per_core_second": MODAL_NANO_USD_PER_CORE_S,
        "modal_nano_usd_per_gib_second": MODAL_NANO_USD_PER_GIB_S,
        "modal_cpu_cores_per_container": executors.MODAL_CPU,
        "modal_memory_mib": executors.MODAL_MEMORY_MIB,
        "modal_containers": MODAL_CONTAINERS,
        "modal_chunk_items": MODAL_CHUNK_ITEMS,
        "modal_cold_start_seconds": MODAL_COLD_START_S,
        "modal_image_build_seconds": MODAL_IMAGE_BUILD_S,
        "per_core_speed": "A Modal core is assumed as fast as the pilot's host core (to confirm with a pilot on Modal)",
        "prices_source": "modal.com/pricing as transcribed 2026-06; model prices from launchers/prices.json",
    }


RESERVE_BPS = 1_500  # recovery reserve: tries lost to operator stops and host failures (1 of 27 in the first study)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _one_call_processes(model_file, k) -> int:
    """Wall ms of `k` fresh processes each answering one day-1 call of the model, started together."""
    cmd = [sys.executable, "-m", "launchers.bench_local", "--model-file", model_file, "--one-call"]
    w0 = time.perf_counter()
    procs = [subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(k)]
    for p in procs:
        _, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            from .errors import ExperimentError

            raise ExperimentError(
                f"feasibility: the one-call process for {model_file} failed: "
                f"{err.decode('utf-8', 'replace').strip()[-200:]}"
            )
    return round((time.perf_counter() - w0) * 1000)


def parallel_speedup(model_file) -> dict:
    """The measured speed-up of two model processes on this host against one: a fresh process answering one
    call alone, then two at once. speedup = 2 x alone / pair, in thousandths (2000 would be ideal)."""
    alone = _one_call_processes(model_file, 1)
    pair = _one_call_processes(model_file, 2)
    return {
        "alone_ms": alone,
        "pair_ms": pair,
        "speedup_milli": _ceil_div(2 * alone * 1000, pair) if pair else None,
        "measured_on": "this host, as loaded when the pilot ran",
    }


def study_projection(worlds, per_world_us, model_arms, speedup_milli, reserve_bps=RESERVE_BPS) -> dict:
    """A study's cost up to its cap: `worlds` worlds of every arm at the pilot's measured CPU per world, plus a
    recovery reserve, on two worker processes at the measured speed-up (not the ideal 2x)."""
    cpu = worlds * per_world_us
    reserved = _ceil_div(cpu * (10_000 + reserve_bps), 10_000)
    wall = _ceil_div(reserved * 1000, speedup_milli) if speedup_milli else None
    return {
        "worlds": worlds,
        "model_attempts": worlds * model_arms,
        "cpu_us": cpu,
        "reserve_bps": reserve_bps,
        "cpu_us_with_reserve": reserved,
        "processes": 2,
        "speedup_milli": speedup_milli,
        "wall_us": wall,
        "note": "wall = CPU with the reserve / the measured speed-up of two processes (parallel.speedup_milli)",
    }


def pilot_rows(plan, n) -> list:
    fams = plan["families"]
    seeds = list(range(1, _ceil_div(n, len(fams)) + 1))
    return items_mod.manifest_rows(items_mod.practice_items(fams, seeds), items_mod.PRACTICE)[:n]


def _timed(task):
    """(prepared task, result, CPU µs, wall µs) of producing and grading one task in this process."""
    c0, w0 = time.process_time(), time.perf_counter()
    prepared = executors.host_prepare(task)
    result = work.run_task(prepared["graded"])
    return (
        prepared,
        result,
        round((time.process_time() - c0) * 1_000_000),
        round((time.perf_counter() - w0) * 1_000_000),
    )


def pilot_power(spec, item_ids, values) -> dict:
    """The pilot's effect for one comparison and the worlds each rule needs at 80 % power."""
    rule = rules.Rule(spec)
    Ds = [r[0] for r in rule.differences(item_ids, values, spec["metric"], "pilot")]
    n = len(Ds)
    s1, s2 = sum(Ds), sum(D * D for D in Ds)
    seed = int.from_bytes(hashlib.sha256(repr((spec["name"], Ds)).encode()).digest()[:6], "big")  # JSON-safe
    sd = rules._sqrt_text(n * s2 - s1 * s1, n * (n - 1) * rule.Q * rule.Q) if n >= 2 else None
    out = {
        "method_registered": rule.method,
        "effect": {"n": n, "mean_difference": rule.d_text(s1, n), "sd": sd},
        "power": f"{power.POWER[0]}/{power.POWER[1]}",
        "seed": seed,
        "worlds_needed": power.worlds_needed(spec, Ds, seed),
    }
    if n and s1 < rule.M * n and rule.M - rule.LO == rule.HI - rule.M:
        # An effect below the margin: the worlds for the opposite verdict ("not supported" by the bet against
        # the claim, a bound below the margin), found by mirroring the differences about the margin.
        out["worlds_needed_against"] = power.worlds_needed(spec, [2 * rule.M - D for D in Ds], seed)
    return out


def run_pilot(out, plan, full_rows, arm_list, evaluator_id, n, date=None, comparisons=()) -> dict:
    """Each arm alone on every pilot world (its share of the reference plan included), then all arms
    together per world (the reference played once): CPU time of this process, so a busy machine does
    not inflate the figures; wall time is kept beside it."""
    rows = pilot_rows(plan, n)
    totals = {a["name"]: {"cpu": 0, "wall": 0, "tokens_in": 0, "tokens_out": 0, "micro_usd": 0} for a in arm_list}
    world_cpu = world_wall = 0
    values = {}
    for row in rows:
        base = {"row": row, "item": items_mod.item_of(row), "fixture_sha256": row["fixture_sha256"]}
        for arm in arm_list:
            prepared, _, cpu, wall = _timed(dict(base, arms=[arm]))
            t = totals[arm["name"]]
            t["cpu"] += cpu
            t["wall"] += wall
            usage = (prepared["inputs"].get(arm["name"]) or {}).get("usage") or {}
            for key in ("tokens_in", "tokens_out", "micro_usd"):
                t[key] += usage.get(key, 0)
            # a model attempt's own CPU, from its record: the same whether it ran now or was read back
            t["attempt_cpu_ms"] = t.get("attempt_cpu_ms", 0) + (usage.get("cpu_ms") or 0)
        _, result, cpu, wall = _timed(dict(base, arms=arm_list))
        world_cpu += cpu
        world_wall += wall
        for arm, seed, metric, value in result["values"]:
            values.setdefault(metric, {})[(row["item_id"], arm, seed)] = value
    k = len(rows)
    per_arm = {
        name: {
            "micros_per_item": _ceil_div(t["cpu"], k),
            "wall_micros_per_item": _ceil_div(t["wall"], k),
            "tokens_in_per_item": _ceil_div(t["tokens_in"], k),
            "tokens_out_per_item": _ceil_div(t["tokens_out"], k),
            "micro_usd_per_item": _ceil_div(t["micro_usd"], k),
            **({"attempt_cpu_ms_per_item": _ceil_div(t["attempt_cpu_ms"], k)} if t.get("attempt_cpu_ms") else {}),
        }
        for name, t in totals.items()
    }
    # The all-arms pass reads recorded attempts back, so a model arm's own cost is added from its records.
    attempts_us = 1000 * sum(a.get("attempt_cpu_ms_per_item", 0) for a in per_arm.values())
    per_world = {"micros": _ceil_div(world_cpu, k) + attempts_us, "wall_micros": _ceil_div(world_wall, k)}
    return {
        "schema": FEASIBILITY_SCHEMA,
        "date": date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "plan": {
            "evaluator_id": evaluator_id,
            "items": plan,
            "item_count": len(full_rows),
            "arms": [a["name"] for a in arm_list],
        },
        "pilot": {
            "items": k,
            "split": "practice",
            "seeds": format_seeds(sorted({r["seed"] for r in rows})),
            "families": plan["families"],
            "measured_on": "on this host, one process, CPU time with wall time beside it",
        },
        "per_arm": per_arm,
        "per_world_all_arms": per_world,
        "projection": projection(
            len(full_rows), per_world["micros"], sum(a["micro_usd_per_item"] for a in per_arm.values())
        ),
        "projection_100k": projection(
            100_000, per_world["micros"], sum(a["micro_usd_per_item"] for a in per_arm.values())
        ),
        "scale": [
            projection(n, per_world["micros"], sum(a["micro_usd_per_item"] for a in per_arm.values()))
            for n in SCALE_ITEMS
        ],
        "assumptions": assumptions(),
        "power": {
            c["name"]: pilot_power(c["spec"], [r["item_id"] for r in rows], values.get(c["spec"]["metric"], {}))
            for c in comparisons
        },
        **_study_block(arm_list, comparisons, per_world["micros"]),
    }


def _study_block(arm_list, comparisons, per_world_us) -> dict:
    """For a sweep with model arms that stops at a cap: each model's measured two-process speed-up (the slowest
    governs) and the projection up to the cap."""
    models = [a for a in arm_list if a["kind"] == "model" and a.get("provider", "llama-cpp") == "llama-cpp"]
    caps = [(c["spec"].get("stopping") or {}).get("max_n") for c in comparisons]
    if not models or not caps or not all(isinstance(m, int) for m in caps):
        return {}
    parallel = {a["name"]: parallel_speedup(a["model_file"]) for a in models}
    slowest = min(p["speedup_milli"] for p in parallel.values())
    return {"parallel": parallel, "projection_study": study_projection(max(caps), per_world_us, len(models), slowest)}
