"""Parquet tables of the retained attempts, beside the runs' tables:
`runs/attempts.parquet` (one row per attempt) and `runs/calls.parquet` (one
row per model call). Only hashed content goes in (never `volatile`), and every
record is verified before it is read, so the files are identical across
rebuilds and never show a number a record does not back.
"""

import os

import pyarrow as pa
import pyarrow.parquet as pq

from ._errors import InputError
from ._jsonfile import read_json
from ._verify import bind, verify_attempt
from .inspect._kind import is_inspect_record

ATTEMPTS = pa.schema(
    [
        ("attempt_id", pa.string()),
        ("label", pa.string()),
        ("model", pa.string()),
        ("provider", pa.string()),
        ("family", pa.string()),
        ("seed", pa.int64()),
        ("split", pa.string()),
        ("horizon", pa.int64()),
        ("status", pa.string()),
        ("limit", pa.string()),
        ("reason", pa.string()),
        ("settled_days", pa.int64()),
        ("accepted_actions", pa.int64()),
        ("invalid_artefacts", pa.int64()),
        ("result_status", pa.string()),
        ("verdict", pa.string()),
        ("points", pa.int64()),
        ("denominator", pa.int64()),
        ("calls", pa.int64()),
        ("cache_hits", pa.int64()),
        ("tokens_in", pa.int64()),
        ("tokens_out", pa.int64()),
        ("prompt_cache_hit_tokens", pa.int64()),
        ("micro_usd", pa.int64()),
        ("unresolved_micro_usd", pa.int64()),
        ("sandbox_micro_usd", pa.int64()),
        ("sandbox_unresolved_micro_usd", pa.int64()),
        ("claim_id", pa.string()),
        ("cap_micro_usd", pa.int64()),
        ("config_hash", pa.string()),
        ("freeze_sha256", pa.string()),
        ("deviations", pa.int64()),
        ("bundle_sha256", pa.string()),
        ("code_commit", pa.string()),
        ("resumed_from", pa.string()),
        ("replay_of", pa.string()),
        ("receipts_size", pa.int64()),
        ("receipts_hash", pa.string()),
        ("content_sha256", pa.string()),
        ("projection", pa.bool_()),
        ("cpu_ms", pa.int64()),  # the local sampler's CPU time (null for a provider that reports none)
        ("role", pa.string()),
    ]
)
CALLS = pa.schema(
    [
        ("attempt_id", pa.string()),
        ("call", pa.int64()),
        ("day", pa.int64()),
        ("outcome", pa.string()),
        ("request_sha256", pa.string()),
        ("tokens_in", pa.int64()),
        ("tokens_out", pa.int64()),
        ("prompt_cache_hit_tokens", pa.int64()),
        ("micro_usd", pa.int64()),
        ("reserved_micro_usd", pa.int64()),
        ("cached", pa.bool_()),
        ("stop_reason", pa.string()),
        ("cpu_ms", pa.int64()),
    ]
)


def attempt_row(record) -> dict:
    c = record["content"]
    result, term, cost = c.get("result") or {}, c["termination"], c["cost"]
    score = result.get("score") or {}
    head = c.get("receipts_head") or {}
    return {
        "attempt_id": c["attempt_id"],
        "label": c["label"],
        "model": c["model"]["id"],
        "provider": c["model"]["provider"],
        "family": c["task"]["family"],
        "seed": c["task"]["seed"],
        "split": c["task"]["split"],
        "horizon": c["task"]["horizon"],
        "status": term["status"],
        "limit": term.get("limit"),
        "reason": term["reason"],
        "settled_days": c["settled_days"],
        "accepted_actions": c["accepted_actions"],
        "invalid_artefacts": c["invalid_artefacts"],
        "result_status": result.get("status"),
        "verdict": result.get("verdict"),
        "points": score.get("points"),
        "denominator": score.get("denominator"),
        "calls": cost["calls"],
        "cache_hits": cost["cache_hits"],
        "tokens_in": cost["tokens_in"],
        "tokens_out": cost["tokens_out"],
        "prompt_cache_hit_tokens": cost["prompt_cache_hit_tokens"],
        "micro_usd": cost["micro_usd"],
        "unresolved_micro_usd": cost["unresolved_micro_usd"],
        "sandbox_micro_usd": cost["sandbox_micro_usd"],
        "sandbox_unresolved_micro_usd": cost["sandbox_unresolved_micro_usd"],
        "claim_id": c["claim"]["id"],
        "cap_micro_usd": c["claim"]["cap_micro_usd"],
        "config_hash": c["config_hash"],
        "freeze_sha256": (c.get("freeze") or {}).get("sha256"),
        "deviations": len((c.get("freeze") or {}).get("deviations") or []),
        "bundle_sha256": c["engine"]["bundle_sha256"],
        "code_commit": c["code"]["commit"],
        "resumed_from": (c.get("resumed_from") or {}).get("attempt_id"),
        "replay_of": (c.get("replay_of") or {}).get("attempt_id"),
        "receipts_size": head.get("size"),
        "receipts_hash": head.get("hash"),
        "content_sha256": record["content_sha256"],
        "cpu_ms": cost.get("cpu_ms"),
        "projection": bool(cost.get("projection")),
        "role": c.get("role"),
    }


def call_rows(record, transcript) -> list:
    c = record["content"]
    reserved = {
        e["call"]: e["micro_usd"]
        for e in c["ledger"]["entries"]
        if e["account"] == "inference" and e["kind"] == "reserve"
    }
    rows = []
    for step in transcript["steps"]:
        call = step.get("call")
        if not call:
            continue
        answered = "tokens_in" in call
        rows.append(
            {
                "attempt_id": c["attempt_id"],
                "call": call["index"],
                "day": step.get("day"),
                "outcome": "answered" if answered else call.get("outcome"),
                "request_sha256": call.get("request_sha256"),
                "tokens_in": call.get("tokens_in"),
                "tokens_out": call.get("tokens_out"),
                "prompt_cache_hit_tokens": call.get("prompt_cache_hit_tokens"),
                "micro_usd": call.get("micro_usd"),
                "reserved_micro_usd": reserved.get(call["index"]),
                "cached": call.get("cached"),
                "stop_reason": call.get("stop_reason"),
                "cpu_ms": call.get("cpu_ms"),
            }
        )
    seen = {row["call"] for row in rows}
    for index in sorted(set(c["cost"].get("unresolved_calls") or []) - seen):
        # a call the attempt reserved and never saw end (an operator stop, a host that died): a row all the same
        rows.append(
            {
                "attempt_id": c["attempt_id"],
                "call": index,
                "day": None,
                "outcome": "unresolved",
                "request_sha256": None,
                "tokens_in": None,
                "tokens_out": None,
                "prompt_cache_hit_tokens": None,
                "micro_usd": None,
                "reserved_micro_usd": reserved.get(index),
                "cached": None,
                "stop_reason": None,
                "cpu_ms": None,
            }
        )
    return rows


def attempt_folders(attempts_dir) -> list:
    """The attempt folders (holding a record.json) of an attempts folder: its own, then those of each pilot folder
    in it (`pilot/`, or a subfolder holding pilot.json: `fundbook-launch pilot` writes its attempts there, and
    pilot.json last, so a pilot cut short is still read), sorted by path."""
    out = []
    for name in sorted(os.listdir(attempts_dir)):
        folder = os.path.join(attempts_dir, name)
        if os.path.isfile(os.path.join(folder, "record.json")):
            out.append(folder)
        elif os.path.isdir(folder) and (name == "pilot" or os.path.isfile(os.path.join(folder, "pilot.json"))):
            out.extend(
                os.path.join(folder, n)
                for n in sorted(os.listdir(folder))
                if os.path.isfile(os.path.join(folder, n, "record.json"))
            )
    return out


def records_in(attempts_dir) -> list:
    """Every attempt folder's record (pilot attempts included), verified (and bound to the folder's project ledger
    when it holds one): [(record, transcript)] sorted by attempt id."""
    from ._project import LEDGER_NAME, ProjectLedger

    out = []
    if not os.path.isdir(attempts_dir):
        return out
    book = ProjectLedger(attempts_dir) if os.path.exists(os.path.join(attempts_dir, LEDGER_NAME)) else None
    for folder in attempt_folders(attempts_dir):
        path = os.path.join(folder, "record.json")
        if is_inspect_record(path):  # `fundbook inspect verify` checks it; no calls or ledger rows to tabulate
            continue
        record = verify_attempt(path)["record"]
        c = record["content"]
        if book is not None and (c["label"] == "model" or book.authorised(c["claim"]["id"]) is not None):
            bind(record, path, attempts_dir)  # a paid attempt, or one this project issued: as settled
        out.append((record, read_json(os.path.join(folder, record["content"]["transcript"]["path"]), "transcript")))
    return sorted(out, key=lambda pair: pair[0]["content"]["attempt_id"])


def write_tables(attempts_dir, out_dir, counts=None) -> dict:
    """{name: (path, rows)}; `counts` (a dict), if given, gets the number of pilot attempts exported ("pilot")."""
    if not os.path.isdir(out_dir):
        raise InputError(f"--out-dir {out_dir}: no such directory")
    pairs = records_in(attempts_dir)
    attempts, calls = [], []
    for r, t in pairs:
        try:
            attempts.append(attempt_row(r))
            calls.extend(call_rows(r, t))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise InputError(
                f"{r['content'].get('attempt_id')}: transcript.json: malformed ({type(exc).__name__}: {exc})"
            )
    if counts is not None:
        counts["pilot"] = sum(1 for row in attempts if row["role"] == "pilot")
    paths, tmps = {}, []
    try:  # both tables to temporary files, then both renamed: never one new table beside an old one
        for name, rows, schema in (("attempts.parquet", attempts, ATTEMPTS), ("calls.parquet", calls, CALLS)):
            path = os.path.join(out_dir, name)
            tmps.append((path + ".tmp", path))
            pq.write_table(
                pa.Table.from_pylist(rows, schema=schema), path + ".tmp", compression="zstd", write_statistics=False
            )
            paths[name] = (path, len(rows))
    except (OSError, pa.ArrowException) as exc:
        for tmp, _ in tmps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise InputError(f"--out-dir {out_dir}: cannot write the tables ({exc})")
    for tmp, path in tmps:
        os.replace(tmp, path)
    return paths


def check_tables(attempts_dir, out_dir, counts=None) -> dict:
    """Export into a scratch folder and require out_dir's tables to be those bytes (records verified on the way)."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        made = write_tables(attempts_dir, scratch, counts)
        out = {}
        for name, (path, rows) in sorted(made.items()):
            published = os.path.join(out_dir, name)
            try:
                with open(published, "rb") as fh, open(path, "rb") as fresh:
                    same = fh.read() == fresh.read()
            except OSError as exc:
                raise InputError(f"{published}: cannot read the published table ({exc.strerror or exc})")
            if not same:
                raise InputError(
                    f"{published}: not the export of the verified records in {attempts_dir} "
                    f"({rows} rows; `fundbook-launch export` rewrites it)"
                )
            out[name] = (published, rows)
        return out
