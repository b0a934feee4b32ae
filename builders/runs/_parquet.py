"""Parquet exports for people who analyse rather than browse: the register
(one row per run) and the per-day outcomes (one row per run and checkpoint).
Only hashed content goes in, so the files are identical across rebuilds."""

import json

import pyarrow as pa
import pyarrow.parquet as pq

REGISTER = pa.schema([
    ("run_id", pa.string()), ("kind", pa.string()), ("instance_id", pa.string()),
    ("episode", pa.string()), ("mutation", pa.string()), ("family", pa.string()), ("seed", pa.int64()),
    ("policy", pa.string()), ("status", pa.string()), ("verdict", pa.string()), ("points", pa.int64()),
    ("denominator", pa.int64()), ("passed", pa.bool_()), ("interest_cents", pa.int64()),
    ("all_in_cost_cents", pa.int64()), ("realized_tail_cents", pa.int64()), ("receipts_size", pa.int64()),
    ("receipts_hash", pa.string()), ("fixture_sha256", pa.string()), ("input_sha256", pa.string()),
    ("result_sha256", pa.string()), ("bundle_sha256", pa.string()), ("content_sha256", pa.string()),
])
DAYS = pa.schema([
    ("run_id", pa.string()), ("day", pa.int64()), ("batch", pa.string()), ("accepted", pa.int64()),
    ("refused", pa.int64()), ("cash_cents", pa.int64()), ("breaches", pa.int64()),
    ("report_matched", pa.int64()), ("report_fields", pa.int64()), ("decisions_json", pa.string()),
])


def register_rows(records):
    rows = []
    for rec in records:
        c = rec["content"]
        fixture, score, econ = c["fixture"], c["score"] or {}, c["economics"] or {}
        rows.append({
            "run_id": c["run_id"], "kind": c["kind"], "instance_id": c["instance_id"],
            "episode": fixture.get("episode"), "mutation": fixture.get("mutation"), "family": fixture.get("family"),
            "seed": fixture.get("seed"), "policy": fixture.get("policy"), "status": c["status"],
            "verdict": c["verdict"], "points": score.get("points"), "denominator": score.get("denominator"),
            "passed": c["passed"], "interest_cents": econ.get("interest"), "all_in_cost_cents": econ.get("all_in_cost"),
            "realized_tail_cents": econ.get("realized_tail"), "receipts_size": c["receipts_head"]["size"],
            "receipts_hash": c["receipts_head"]["hash"], "fixture_sha256": c["fixture_sha256"],
            "input_sha256": c["input_sha256"], "result_sha256": c["result_sha256"],
            "bundle_sha256": c["engine"]["bundle_sha256"], "content_sha256": rec["content_sha256"],
        })
    return rows


def day_rows(records):
    rows = []
    for rec in records:
        for day in rec["content"]["days"]:
            rows.append({
                "run_id": rec["content"]["run_id"], "day": day["day"], "batch": day["batch"],
                "accepted": day["accepted"], "refused": day["refused"], "cash_cents": day["cash"],
                "breaches": len(day["breaches"]), "report_matched": day["report_matched"],
                "report_fields": day["report_fields"],
                "decisions_json": json.dumps(day["decisions"], sort_keys=True, separators=(",", ":")),
            })
    return rows


def write_exports(records, register_path, days_path):
    for rows, schema, path in ((register_rows(records), REGISTER, register_path),
                               (day_rows(records), DAYS, days_path)):
        table = pa.Table.from_pylist(rows, schema=schema)
        pq.write_table(table, path, compression="zstd", write_statistics=False)
