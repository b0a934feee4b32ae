"""runs/index.json: every record, sorted by run id, hash-chained, with a head.

Each entry's `hash` covers the entry without `hash` and `file_sha256`: the
file hash changes with the record's volatile timings, the chain must not, so
that a rebuild of the same commit reproduces the head (`make verify`).
"""

import engine

INDEX_SCHEMA = "fundbook.index/1"
GENESIS = "0" * 64
UNCHAINED = ("hash", "file_sha256")


def entry_hash(entry) -> str:
    return engine.content_sha256({k: v for k, v in entry.items() if k not in UNCHAINED})


def build_index(rows, engine_ids, durations, built) -> dict:
    """rows: [{"run_id", "kind", "fixture_id", "fixture_sha256", "record", "content_sha256", "file_sha256"}]."""
    entries, prev = [], GENESIS
    for row in sorted(rows, key=lambda r: r["run_id"]):
        entry = dict(row, prev_hash=prev)
        entry["hash"] = entry_hash(entry)
        prev = entry["hash"]
        entries.append(entry)
    return {"schema": INDEX_SCHEMA, "head": {"size": len(entries), "hash": prev},
            "engine": dict(engine_ids), "entries": entries,
            "volatile": {"durations_ms": dict(sorted(durations.items())), "built": built}}


def check_chain(index) -> str | None:
    """None if the chain and head hold, else the first broken entry's run id."""
    prev = GENESIS
    for entry in index["entries"]:
        if entry["prev_hash"] != prev or entry_hash(entry) != entry["hash"]:
            return entry["run_id"]
        prev = entry["hash"]
    if index["head"] != {"size": len(index["entries"]), "hash": prev}:
        return "head"
    return None
