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
"""

import datetime
import os
import time

from . import executors, items as items_mod, work
from .seeds import format_seeds

FEASIBILITY_SCHEMA = "fundbook.feasibility/1"
# Modal's list prices (modal.com/pricing, as transcribed 2026-06; check before a paid sweep):
# CPU $0.0000131 per physical core-second, memory $0.00000222 per GiB-second.
MODAL_NANO_USD_PER_CORE_S = 13_100
MODAL_NANO_USD_PER_GIB_S = 2_220
MODAL_CONTAINERS = 100          # concurrent containers assumed (a workspace limit, not a promise)
MODAL_CHUNK_ITEMS = executors.CHUNK_ITEMS * 20
MODAL_COLD_START_S = 15         # per container: image pull and interpreter start (assumed, not measured here)
MODAL_IMAGE_BUILD_S = 60        # once per image change (assumed)


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
    return {"items": items, "chunks": chunks, "containers": containers, "waves": waves,
            "billed_container_us": billed_us, "wall_us": wall_us, "compute_micro_usd": micro_usd}


def projection(items, per_arm, workers=2) -> dict:
    micros = sum(a["micros_per_item"] for a in per_arm.values())
    inference = sum(a["micro_usd_per_item"] for a in per_arm.values()) * items
    return {"items": items, "cpu_us": items * micros,
            "local": {"workers": workers, "wall_us": _ceil_div(items * micros, workers),
                      "note": "ideal speed-up; `make bench-experiments` measures the real 2-worker ratio"},
            "modal": modal_projection(items, micros), "inference_micro_usd": inference}


def assumptions() -> dict:
    return {"modal_nano_usd_per_core_second": MODAL_NANO_USD_PER_CORE_S,
            "modal_nano_usd_per_gib_second": MODAL_NANO_USD_PER_GIB_S,
            "modal_cpu_cores_per_container": executors.MODAL_CPU, "modal_memory_mib": executors.MODAL_MEMORY_MIB,
            "modal_containers": MODAL_CONTAINERS, "modal_chunk_items": MODAL_CHUNK_ITEMS,
            "modal_cold_start_seconds": MODAL_COLD_START_S, "modal_image_build_seconds": MODAL_IMAGE_BUILD_S,
            "per_core_speed": "a Modal core is assumed as fast as the pilot's host core (to confirm with a Modal pilot)",
            "prices_source": "modal.com/pricing as transcribed 2026-06; model prices from launchers/prices.json"}


def pilot_rows(plan, n) -> list:
    fams = plan["families"]
    seeds = list(range(1, _ceil_div(n, len(fams)) + 1))
    return items_mod.manifest_rows(items_mod.practice_items(fams, seeds), items_mod.PRACTICE)[:n]


def run_pilot(out, plan, full_rows, arm_list, evaluator_id, n, date=None) -> dict:
    rows = pilot_rows(plan, n)
    totals = {a["name"]: {"micros": 0, "tokens_in": 0, "tokens_out": 0, "micro_usd": 0} for a in arm_list}
    for row in rows:
        for arm in arm_list:
            t0 = time.perf_counter()
            task = {"row": row, "item": items_mod.item_of(row), "fixture_sha256": row["fixture_sha256"], "arms": [arm]}
            prepared = executors.host_prepare(task)
            work.run_task(prepared["graded"])
            t = totals[arm["name"]]
            t["micros"] += round((time.perf_counter() - t0) * 1_000_000)
            usage = (prepared["inputs"].get(arm["name"]) or {}).get("usage") or {}
            for key in ("tokens_in", "tokens_out", "micro_usd"):
                t[key] += usage.get(key, 0)
    per_arm = {name: {"micros_per_item": _ceil_div(t["micros"], len(rows)),
                      "tokens_in_per_item": _ceil_div(t["tokens_in"], len(rows)),
                      "tokens_out_per_item": _ceil_div(t["tokens_out"], len(rows)),
                      "micro_usd_per_item": _ceil_div(t["micro_usd"], len(rows))} for name, t in totals.items()}
    doc = {
        "schema": FEASIBILITY_SCHEMA,
        "date": date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "plan": {"evaluator_id": evaluator_id, "items": plan, "item_count": len(full_rows),
                 "arms": [a["name"] for a in arm_list]},
        "pilot": {"items": len(rows), "split": "practice", "seeds": format_seeds(sorted({r["seed"] for r in rows})),
                  "families": plan["families"], "measured_on": "this host, one process, one core"},
        "per_arm": per_arm,
        "projection": projection(len(full_rows), per_arm),
        "projection_100k": projection(100_000, per_arm),
        "assumptions": assumptions(),
    }
    return doc
