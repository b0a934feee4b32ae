"""Items: the worlds a sweep runs on, and the manifest that pins them.

An item is one family instance `FUND_0k/seed-N` or one episode `W1..W5`.
The manifest (items.jsonl) lists every item once, in sweep order, with its
split and the sha256 of its fixture; the manifest's own sha256 is part of the
evaluator id, so a row is bound to the exact worlds it was measured on.
Practice items come seed by seed, families in turn, so any prefix of the list
covers every family.
"""

import hashlib
import json

import engine

from . import work
from .errors import ExperimentError

PRACTICE, HELDOUT = "practice", "heldout"


def practice_items(families, seeds, episodes=()) -> list:
    items = [{"kind": "family", "family": f, "seed": s} for s in seeds for f in families]
    items += [{"kind": "episode", "episode": e} for e in episodes]
    return items


def heldout_items(pairs) -> list:
    return [{"kind": "family", "family": f, "seed": s} for f, s in pairs]


def manifest_rows(items, split) -> list:
    rows, seen = [], set()
    for item in items:
        iid = work.item_id(item)
        if iid in seen:
            raise ExperimentError(f"items: {iid} is listed twice")
        seen.add(iid)
        row = {"item_id": iid, "split": split, **item, "fixture_sha256": engine.fixture_sha256(work.instance_for(item))}
        rows.append(row)
    return rows


def manifest_bytes(rows) -> bytes:
    return b"".join(json.dumps(r, sort_keys=True, separators=(",", ":")).encode() + b"\n" for r in rows)


def manifest_sha256(rows) -> str:
    return hashlib.sha256(manifest_bytes(rows)).hexdigest()


def read_manifest(path) -> list:
    rows = []
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                try:
                    row = json.loads(line)
                except ValueError:
                    raise ExperimentError(f"{path} line {number}: not a JSON item")
                if not isinstance(row, dict) or not isinstance(row.get("item_id"), str):
                    raise ExperimentError(f"{path} line {number}: expected an object with item_id")
                rows.append(row)
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read the items manifest ({exc.strerror})")
    return rows


def item_of(row) -> dict:
    """The item spec of a manifest row (what the work unit needs)."""
    keys = ("kind", "episode") if row.get("kind") == "episode" else ("kind", "family", "seed", "horizon")
    return {k: row[k] for k in keys if k in row}


def family_of(item_id) -> str:
    return item_id.split("/", 1)[0] if "/" in item_id else "episodes"
