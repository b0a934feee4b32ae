"""Tiers and the order of sacrifice (seed 002, section 5.2-5.3): a paid study's frozen spending plan.

A tier plan (`fundbook.tier-plan/1`, frozen into freeze.json with `fundbook-launch freeze --tiers FILE`):

  {"schema": "fundbook.tier-plan/1",
   "overrun_bps": 1000,                      cut when cumulative spend runs over plan by more than this (10 %)
   "tiers": [{"name": "T1",                  run in this order
              "cells": [{"name": "smollm2-FUND_01", "model": "<model id>", "family": "FUND_01",
                         "seeds": [101, 102, ...],       used in this order
                         "micro_usd_per_seed": 5000,     the planned cost of one seed (its budget share)
                         "keep_at_least": 8}]}, ...],    never cut below this many seeds
   "sacrifice": [{"tier": "T6", "cell": "..."}, ...],    the fixed order in which seeds are cut
   "sd_table": "pilot",                                  the pilot's sd of paired differences: taken from the
                                                         passing pilot (pilot.json's decisions.paired.sd) when a
                                                         confirmatory attempt runs, and recorded in its freeze
                                                         reference (freeze.pilot.sd_table); a pilot without it is
                                                         refused. A table typed in ({"<metric>": "<sd>"}) is still
                                                         read, as plans frozen before were
   "budgets": {"T1": micro-USD, ...}}                    written by the freeze: each tier's budget (checked)

A tier's budget is the sum of its cells' seeds times their planned cost. Spend
is reconciled after each tier from the records (each attempt's own cost,
integers in micro-USD): once every seed a tier still holds has a record, the
cumulative spend through it is compared with the cumulative budget; over by
more than `overrun_bps`, seeds of later tiers are cut -- the sacrifice order's
cells in turn, each from its last seed back, never below `keep_at_least` --
until the projected total (spend so far plus the remaining seeds' planned cost
scaled by the overrun so far) is within the whole plan's budget. A cut is never
undone and nothing is ever added: what runs is the frozen plan minus its cuts,
a function of the plan and the records alone, so anyone recomputes it.

The paid path (`execute` under a freeze with a tier plan) and the study runner
both ask `admit` before an attempt: a seed the plan does not hold, or one the
order of sacrifice has cut, is refused.
"""

from ._errors import InputError

SCHEMA = "fundbook.tier-plan/1"
PLAN_KEYS = {"schema", "overrun_bps", "tiers", "sacrifice", "sd_table"}
CELL_KEYS = {"name", "model", "family", "seeds", "micro_usd_per_seed", "keep_at_least"}


def _int(value, where, low=0):
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise InputError(f"{where}: expected an integer >= {low}, got {value!r}"[:300])
    return value


def _name(value, where):
    if not isinstance(value, str) or not value or len(value) > 80 or not value.isprintable():
        raise InputError(f"{where}: expected a name (1-80 printable characters)")
    return value


def check_plan(doc, where="tier plan") -> dict:
    """The plan, checked; InputError naming the field otherwise."""
    if not isinstance(doc, dict) or not PLAN_KEYS <= set(doc) <= PLAN_KEYS | {"budgets"} or doc.get("schema") != SCHEMA:
        raise InputError(
            f"{where}: expected {SCHEMA} with exactly {', '.join(sorted(PLAN_KEYS))} (and the "
            f"budgets the freeze records)"
        )
    _int(doc["overrun_bps"], f"{where}: overrun_bps")
    if not isinstance(doc["tiers"], list) or not doc["tiers"]:
        raise InputError(f"{where}: tiers: expected a non-empty list")
    cells, keys = {}, set()
    for i, tier in enumerate(doc["tiers"]):
        w = f"{where}: tiers[{i}]"
        if (
            not isinstance(tier, dict)
            or set(tier) != {"name", "cells"}
            or not isinstance(tier["cells"], list)
            or not tier["cells"]
        ):
            raise InputError(f"{w}: expected {{name, cells: [...]}} with at least one cell")
        _name(tier["name"], f"{w}.name")
        if any(t == tier["name"] for t, _ in cells):
            raise InputError(f"{w}.name: tier {tier['name']} twice")
        for j, cell in enumerate(tier["cells"]):
            cw = f"{w}.cells[{j}]"
            if not isinstance(cell, dict) or set(cell) != CELL_KEYS:
                raise InputError(f"{cw}: expected exactly {', '.join(sorted(CELL_KEYS))}")
            for k in ("name", "model", "family"):
                _name(cell[k], f"{cw}.{k}")
            seeds = cell["seeds"]
            if not isinstance(seeds, list) or not seeds or len(set(map(repr, seeds))) != len(seeds):
                raise InputError(f"{cw}.seeds: expected a non-empty list of distinct seeds")
            for s in seeds:
                _int(s, f"{cw}.seeds")
            _int(cell["micro_usd_per_seed"], f"{cw}.micro_usd_per_seed")
            if _int(cell["keep_at_least"], f"{cw}.keep_at_least") > len(seeds):
                raise InputError(f"{cw}.keep_at_least: {cell['keep_at_least']} is more than its {len(seeds)} seeds")
            if (tier["name"], cell["name"]) in cells:
                raise InputError(f"{cw}.name: cell {cell['name']} twice in tier {tier['name']}")
            for s in seeds:  # one seed of one (model, family) belongs to one cell: the records map back
                if (cell["model"], cell["family"], s) in keys:
                    raise InputError(f"{cw}.seeds: {cell['model']} {cell['family']} seed {s} is planned twice")
                keys.add((cell["model"], cell["family"], s))
            cells[(tier["name"], cell["name"])] = cell
    if not isinstance(doc["sacrifice"], list):
        raise InputError(f"{where}: sacrifice: expected a list of {{tier, cell}}")
    seen = set()
    for i, entry in enumerate(doc["sacrifice"]):
        if (
            not isinstance(entry, dict)
            or set(entry) != {"tier", "cell"}
            or (entry["tier"], entry["cell"]) not in cells
            or (entry["tier"], entry["cell"]) in seen
        ):
            raise InputError(f"{where}: sacrifice[{i}]: expected a {{tier, cell}} of the plan, each at most once")
        seen.add((entry["tier"], entry["cell"]))
    if "budgets" in doc and doc["budgets"] != budgets(doc):  # as frozen: {tier: micro-USD}, the plan's own sums
        raise InputError(
            f"{where}: budgets: {doc['budgets']!r} are not the tiers' planned costs {budgets(doc)!r}"[:400]
        )
    sd = doc["sd_table"]
    if sd == "pilot":
        return doc
    if not isinstance(sd, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and len(v) <= 40 for k, v in sd.items()
    ):
        raise InputError(
            f'{where}: sd_table: expected "pilot" (taken from the pilot) or {{name: sd as a decimal text}}'
        )
    return doc


def budgets(plan) -> dict:
    """{tier: planned micro-USD}, in tier order."""
    return {t["name"]: sum(c["micro_usd_per_seed"] * len(c["seeds"]) for c in t["cells"]) for t in plan["tiers"]}


def _cell_of(plan, model, family, seed):
    for tier in plan["tiers"]:
        for cell in tier["cells"]:
            if (cell["model"], cell["family"]) == (model, family) and seed in cell["seeds"]:
                return tier["name"], cell
    return None, None


def reconcile(plan, spent) -> dict:
    """The plan's state from the records: `spent` {(model, family, seed): micro-USD} of every recorded attempt.

    {"tiers": [{name, budget_micro_usd, spent_micro_usd, cumulative_budget, cumulative_spent, over_bps,
                complete, ran: {cell: [seeds]}, cut: {cell: [seeds]}, action}], "cut": {(tier, cell): [seeds]},
     "total_budget", "total_spent"}"""
    budget = budgets(plan)
    total_budget = sum(budget.values())
    cut = {}  # (tier, cell) -> seeds cut, from the last back
    kept = {(t["name"], c["name"]): list(c["seeds"]) for t in plan["tiers"] for c in t["cells"]}
    rows, cum_budget, cum_spent = [], 0, 0
    names = [t["name"] for t in plan["tiers"]]
    for index, tier in enumerate(plan["tiers"]):
        ran, spend = {}, 0
        complete = True
        for cell in tier["cells"]:
            key = (tier["name"], cell["name"])
            for seed in kept[key]:
                got = spent.get((cell["model"], cell["family"], seed))
                if got is None:
                    complete = False
                else:
                    ran.setdefault(cell["name"], []).append(seed)
                    spend += got
        cum_budget += budget[tier["name"]]
        cum_spent += spend
        over = (cum_spent - cum_budget) * 10000 // cum_budget if cum_budget else (10000 if cum_spent else 0)
        action = None
        if complete and cum_spent * 10000 > cum_budget * (10000 + plan["overrun_bps"]):
            action = _cut(plan, kept, cut, names[index + 1 :], cum_spent, cum_budget, total_budget)
        rows.append(
            {
                "name": tier["name"],
                "budget_micro_usd": budget[tier["name"]],
                "spent_micro_usd": spend,
                "cumulative_budget": cum_budget,
                "cumulative_spent": cum_spent,
                "over_bps": over,
                "complete": complete,
                "ran": ran,
                "action": action,
            }
        )
        if not complete:  # later tiers wait for this one's reconciliation
            for later in plan["tiers"][index + 1 :]:
                rows.append(
                    {
                        "name": later["name"],
                        "budget_micro_usd": budget[later["name"]],
                        "spent_micro_usd": sum(
                            spent.get((c["model"], c["family"], s), 0)
                            for c in later["cells"]
                            for s in kept[(later["name"], c["name"])]
                        ),
                        "cumulative_budget": None,
                        "cumulative_spent": None,
                        "over_bps": None,
                        "complete": False,
                        "ran": {
                            c["name"]: [
                                s for s in kept[(later["name"], c["name"])] if (c["model"], c["family"], s) in spent
                            ]
                            for c in later["cells"]
                        },
                        "action": None,
                    }
                )
            break
    for row in rows:
        row["ran"] = {k: v for k, v in row["ran"].items() if v}
        row["cut"] = {cell: seeds for (t, cell), seeds in cut.items() if t == row["name"] and seeds}
    return {
        "tiers": rows,
        "cut": {k: v for k, v in cut.items() if v},
        "total_budget": total_budget,
        "total_spent": sum(spent.values()),
    }


def _cut(plan, kept, cut, later, cum_spent, cum_budget, total_budget):
    """Cut seeds of the later tiers in the sacrifice order until the projection fits the plan's budget."""
    cells = {(t["name"], c["name"]): c for t in plan["tiers"] for c in t["cells"]}

    def projected():
        remaining = sum(cells[k]["micro_usd_per_seed"] * len(v) for k, v in kept.items() if k[0] in later)
        if not cum_budget:  # a free plan so far that spent: the remaining seeds at their planned cost
            return cum_spent + remaining
        return cum_spent + -(-remaining * cum_spent // cum_budget)  # scaled by the overrun so far, rounded up

    done = []
    for entry in plan["sacrifice"]:
        key = (entry["tier"], entry["cell"])
        if key[0] not in later:
            continue
        while projected() > total_budget and len(kept[key]) > cells[key]["keep_at_least"]:
            seed = kept[key].pop()
            cut.setdefault(key, []).insert(0, seed)
            done.append(f"{key[0]}/{key[1]} seed {seed}")
        if projected() <= total_budget:
            break
    return f"cut {len(done)} seed{'s' if len(done) != 1 else ''}" + (
        f": {', '.join(done)}" if done else " (nothing left to cut above the floors)"
    )


def admit(plan, spent, model, family, seed, where="tier plan"):
    """(tier, cell) of the seed about to run; InputError when the plan does not hold it or has cut it."""
    tier, cell = _cell_of(plan, model, family, seed)
    if cell is None:
        raise InputError(
            f"{where}: {model} {family} seed {seed} is not in the frozen tier plan (nothing is added after the freeze)"
        )
    state = reconcile(plan, spent)
    names = [t["name"] for t in plan["tiers"]]
    open_tier = next((r["name"] for r in state["tiers"] if not r["complete"]), None)
    if open_tier is not None and names.index(tier) > names.index(open_tier):
        raise InputError(
            f"{where}: {tier}/{cell['name']} seed {seed} waits for tier {open_tier}: tiers run in "
            f"order, and spend is reconciled after each one"
        )
    if seed in state["cut"].get((tier, cell["name"]), []):
        after = next((r["name"] for r in state["tiers"] if r["action"] and r["action"].startswith("cut")), "?")
        raise InputError(
            f"{where}: {tier}/{cell['name']} seed {seed} was cut in the order of sacrifice after tier "
            f"{after} (cumulative spend over plan by more than {plan['overrun_bps']} bps)"
        )
    return tier, cell["name"]


def records_in(folder) -> list:
    """The content of every attempt record directly in `folder` (the project's attempts folder), by name."""
    import os
    from ._jsonfile import read_json

    out = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name, "record.json")
        if os.path.isfile(path):
            doc = read_json(path, "attempt record")  # strict, bounded: a bad record is refused, never skipped
            if isinstance(doc, dict) and isinstance(doc.get("content"), dict):
                out.append(doc["content"])
    return out


def spent_from_records(records, freeze_sha256=None) -> dict:
    """{(model, family, seed): micro-USD} from attempt records' content (the confirmatory ones under the freeze
    when `freeze_sha256` is given); a seed tried twice counts both tries' spend."""
    out = {}
    for content in records:
        freeze = content.get("freeze") or {}
        if (freeze_sha256 is not None and freeze.get("sha256") != freeze_sha256) or content.get("role") == "pilot":
            continue  # the pilot's spend is the pilot's, capped apart
        task = content.get("task") or {}
        key = ((content.get("model") or {}).get("id"), task.get("family"), task.get("seed"))
        out[key] = out.get(key, 0) + int((content.get("cost") or {}).get("micro_usd") or 0)
    return out
