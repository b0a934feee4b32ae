"""Each study's outcomes per world (studies/<study>/worlds/): one row per world in the committed order, one cell
per arm -- qualified, scored (with its points) or no score -- filterable by family, by any arm's outcome and by
search (register.js, the register's own filters, kept in the query string), and a card a world on a phone.

Read from the study's sweep: its observations.jsonl rows of the metrics `scored`, `qualified` and `score` (the
rows every decision of the study was computed from; their sha256 is pinned in each decision's evidence) and the
worlds in the order status.json journals them. The arms are the sweep manifest's, a model arm named by its
weights (weights.py) and labelled a base model when it is one.
"""

import json

from . import fmt, weights
from .records import SiteInputError, load_json

OUTCOMES = (("qualified", "qualified"), ("scored", "scored"), ("none", "no score"))


def _rows(path, where) -> list:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        raise SiteInputError(f"{where}: file not found") from None
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise SiteInputError(f"{where}: line {i}: not JSON") from None
        if not isinstance(row, dict):
            raise SiteInputError(f"{where}: line {i}: expected an object")
        out.append(row)
    return out


def _arm_label(arm) -> dict:
    name = str(arm.get("name"))
    sha = arm.get("model_sha256")
    if arm.get("kind") == "model":
        entry = weights.by_sha(sha) if isinstance(sha, str) else None
        return {
            "name": name,
            "label": entry["title"] if entry else str(arm.get("model") or name),
            "base": bool(entry and entry["tuning"].startswith("base")),
            "card": f"models/{entry['name']}/" if entry else None,
        }
    return {"name": name, "label": name.split(":", 1)[-1], "base": False, "card": None}


def cell(metrics) -> dict:
    """{outcome, points} of one world and arm from its scored/qualified/score rows (none: no score)."""
    if metrics.get("scored") == 1:
        outcome = "qualified" if metrics.get("qualified") == 1 else "scored"
        return {"outcome": outcome, "points": metrics.get("score")}
    return {"outcome": "none", "points": None}


def study_view(runs_dir, name) -> dict:
    where = f"runs/studies/{name}"
    base = runs_dir / "studies" / name
    study = load_json(base / "study.json", f"{where}/study.json")
    status = load_json(base / "status.json", f"{where}/status.json")
    sweep_dir = base / str(study.get("sweep") or "sweep")
    sweep = load_json(sweep_dir / "sweep.json", f"{where}/sweep/sweep.json")
    arms = [_arm_label(a) for a in sweep.get("arms") or [] if isinstance(a, dict)]
    by_key = {}
    for r in _rows(sweep_dir / "observations.jsonl", f"{where}/sweep/observations.jsonl"):
        if r.get("metric") in ("scored", "qualified", "score"):
            by_key.setdefault((r.get("item_id"), r.get("arm")), {})[r["metric"]] = r.get("value")
    worlds = []
    for i, w in enumerate(status.get("per_world") or []):
        item = str(w.get("item_id"))
        cells = [dict(cell(by_key.get((item, a["name"]), {})), arm=a["name"]) for a in arms]
        worlds.append(
            {"order": i + 1, "world": item, "family": str(w.get("family") or item.split("/", 1)[0]), "cells": cells}
        )
    totals = [
        {o: sum(1 for w in worlds if w["cells"][j]["outcome"] == o) for o, _ in OUTCOMES} for j in range(len(arms))
    ]
    return {
        "name": name,
        "arms": arms,
        "worlds": worlds,
        "totals": totals,
        "state": status.get("state"),
        "families": sorted({w["family"] for w in worlds}),
        "sweep": f"{where}/{sweep_dir.name}",
    }


def studies(runs_dir) -> list:
    root = runs_dir / "studies"
    if not root.is_dir():
        return []
    return [
        p.name
        for p in sorted(root.iterdir())
        if p.is_dir() and fmt.SAFE_ID.match(p.name) and (p / "study.json").is_file() and (p / "status.json").is_file()
    ]


def generated_pages(env, pub) -> dict:
    out = {}
    for name in studies(pub.runs_dir):
        view = study_view(pub.runs_dir, name)
        out[f"studies/{name}/worlds/index.md"] = env.get_template("outcomes.md.j2").render(
            v=view,
            outcomes=OUTCOMES,
            description=f"Outcomes per world of the study {name}: one cell per world and arm, filterable.",
        )
    return out


def titles(pub) -> dict:
    return {
        f"studies/{name}/worlds/index.md": (f"{name}: outcomes per world", ["one cell per world and arm"])
        for name in studies(pub.runs_dir)
    }
