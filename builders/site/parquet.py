"""Parquet exports for readers who analyse rather than browse: the register
(one row per run) and the per-day outcomes (one row per run and day), plus one
per-day file per run for its page's download link. Written to bytes so the
MkDocs hook can add them to the site without touching the source tree."""

import io

import pyarrow as pa
import pyarrow.parquet as pq

from . import fmt
from .records import SiteInputError

DAY_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("day", pa.int64()),
        ("batch", pa.string()),
        ("accepted", pa.int64()),
        ("refused", pa.int64()),
        ("cash_cents", pa.int64()),
        ("breaches", pa.string()),
        ("report_matched", pa.int64()),
        ("report_fields", pa.int64()),
    ]
)
REGISTER_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("kind", pa.string()),
        ("fixture", pa.string()),
        ("status", pa.string()),
        ("verdict", pa.string()),
        ("points", pa.int64()),
        ("denominator", pa.int64()),
        ("fixture_sha256", pa.string()),
        ("bundle_sha256", pa.string()),
        ("content_sha256", pa.string()),
        ("execution_path", pa.string()),
        ("duration_ms", pa.int64()),
    ]
)


def _bytes(table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def _day_rows(run):
    return [
        {
            "run_id": run.run_id,
            "day": d.get("day"),
            "batch": d.get("batch"),
            "accepted": d.get("accepted"),
            "refused": d.get("refused"),
            "cash_cents": d.get("cash"),
            "breaches": ",".join(d.get("breaches") or []),
            "report_matched": d.get("report_matched"),
            "report_fields": d.get("report_fields"),
        }
        for d in run.content.get("days") or []
    ]


def exports(pub) -> dict:
    """{site path: parquet bytes}; a record field of the wrong type is a one-line SiteInputError."""
    try:
        return _exports(pub)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, AttributeError, KeyError) as exc:
        raise SiteInputError(
            f"{pub.runs_dir.name}/: a record does not fit the Parquet export ({(str(exc).splitlines() or [type(exc).__name__])[0]})"
        ) from None


def _exports(pub) -> dict:
    out, all_days, register = {}, [], []
    for run in pub.runs:
        rows = _day_rows(run)
        all_days.extend(rows)
        out[f"runs/parquet/{run.run_id}.parquet"] = _bytes(pa.Table.from_pylist(rows, schema=DAY_SCHEMA))
        c, score = run.content, run.content.get("score") or {}
        register.append(
            {
                "run_id": run.run_id,
                "kind": c["kind"],
                "fixture": fmt.fixture_label(c.get("fixture")),
                "status": c["status"],
                "verdict": c.get("verdict"),
                "points": score.get("points"),
                "denominator": score.get("denominator"),
                "fixture_sha256": c.get("fixture_sha256"),
                "bundle_sha256": (c.get("engine") or {}).get("bundle_sha256"),
                "content_sha256": run.record["content_sha256"],
                "execution_path": c.get("execution_path"),
                "duration_ms": run.duration_ms,
            }
        )
    # build-runs publishes runs/register.parquet and runs/days.parquet; make them only when absent.
    if not (pub.runs_dir / "days.parquet").is_file():
        out["runs/parquet/days.parquet"] = _bytes(pa.Table.from_pylist(all_days, schema=DAY_SCHEMA))
    if not (pub.runs_dir / "register.parquet").is_file():
        out["runs/parquet/register.parquet"] = _bytes(pa.Table.from_pylist(register, schema=REGISTER_SCHEMA))
    return out


def table_links(pub) -> dict:
    """Links (relative to runs/) of the all-runs tables: the published ones when build-runs wrote them."""
    return {
        name: name if (pub.runs_dir / name).is_file() else f"parquet/{name}"
        for name in ("register.parquet", "days.parquet")
    }
