"""runs/index.json: every record, sorted by run id, hash-chained, with a head. build-runs writes and verifies it,
the site checks it before it renders a page (and the desk's checks.js mirrors the chain), so it sits below both.

The chain (fundbook.index/2; the contract page states it for readers):

    genesis      = sha256(canonical_json({"schema": index.schema, "engine": index.engine}))
    entry.prev_hash = genesis for the first entry, else the previous entry's hash
    entry.hash   = sha256(canonical_json(entry without "hash"))
    head         = {"size": number of entries, "hash": last entry's hash (genesis if none)}

Every entry field is covered, file_sha256 included, so the head fixes every
byte of every record file (volatile part too); a record's content fixes its
receipts, trace and input files by their sha256; the genesis fixes the engine
block. index.volatile.durations_ms repeats each record's volatile.duration_ms
(derived, so checked rather than chained).
"""

import engine

INDEX_SCHEMA = "fundbook.index/2"
ENTRY_FIELDS = ("run_id", "kind", "fixture_id", "fixture_sha256", "record", "content_sha256", "file_sha256")


def genesis(index_schema, engine_ids) -> str:
    return engine.content_sha256({"schema": index_schema, "engine": engine_ids})


def entry_hash(entry) -> str:
    return engine.content_sha256({k: v for k, v in entry.items() if k != "hash"})


def build_index(rows, engine_ids, durations) -> dict:
    """rows: [{"run_id", "kind", "fixture_id", "fixture_sha256", "record", "content_sha256", "file_sha256"}]."""
    entries, prev = [], genesis(INDEX_SCHEMA, engine_ids)
    for row in sorted(rows, key=lambda r: r["run_id"]):
        entry = {k: row[k] for k in ENTRY_FIELDS}
        entry["prev_hash"] = prev
        entry["hash"] = entry_hash(entry)
        prev = entry["hash"]
        entries.append(entry)
    return {
        "schema": INDEX_SCHEMA,
        "head": {"size": len(entries), "hash": prev},
        "engine": dict(engine_ids),
        "entries": entries,
        "volatile": {"durations_ms": dict(sorted(durations.items()))},
    }


def check_chain(index) -> str | None:
    """None if the chain and head hold, else where it first breaks: the first
    entry whose link or hash is wrong (by run id), or "head"."""
    prev = genesis(index.get("schema"), index.get("engine"))
    for entry in index["entries"]:
        if entry.get("prev_hash") != prev or entry_hash(entry) != entry.get("hash"):
            return entry.get("run_id", "an entry without run_id")
        prev = entry["hash"]
    if index.get("head") != {"size": len(index["entries"]), "hash": prev}:
        return "head"
    return None
