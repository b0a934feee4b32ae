"""build-runs: execute every published fixture through the engine bundle in
one pinned Pyodide runtime, check the outcomes, cross-check with host CPython,
and publish the records, traces, receipts, inputs, index and exports."""

import datetime
import json
import os
import sys

import click
import engine

from .._errors import BuildError
from .._files import ROOT, rel, write_bytes
from ..bundle import MANIFEST, PROVENANCE, verify_bundle
from . import _publish
from ..run_index import build_index
from ._keep import keep_committed_volatile, provenance_bytes
from ._parity import check_parity
from ._parquet import write_exports
from ._pyodide import bundle_paths, fixture_argv, run_plan
from ._records import PYODIDE_PATH, RUN_SCHEMA_VERSION, command, content, engine_block, file_bytes, paths, record, trace
from ._schemas import schema_files, validate

MANIFEST_FORMAT = 1


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, *args):
        pass


def _progress(total, shown):
    """Fixtures done and the current one, on stderr (click draws it only on a terminal)."""
    if not shown:
        return _Quiet()
    return click.progressbar(length=total, label="build-runs", file=sys.stderr,
                             item_show_func=lambda rid: rid or "", show_pos=True)


def select_specs(run_ids=None):
    specs = engine.fixture_specs()
    if not run_ids:
        return specs
    known = {s["run_id"] for s in specs}
    unknown = sorted(set(run_ids) - known)
    if unknown:
        raise BuildError(f"--run-id {unknown[0]}: not a published fixture (see engine.fixture_specs())")
    return [s for s in specs if s["run_id"] in set(run_ids)]


def _check_bundle(bundle_dir):
    verified = verify_bundle(bundle_dir)
    manifest = verified["manifest"]
    label = rel(os.path.join(bundle_dir, MANIFEST))
    if manifest.get("format_version") != MANIFEST_FORMAT:
        raise BuildError(f"{label}: format_version {manifest.get('format_version')} is not {MANIFEST_FORMAT} "
                         f"(a newer bundle needs a newer builder)")
    validate("manifest", manifest, label)
    with open(os.path.join(bundle_dir, PROVENANCE), encoding="utf-8") as fh:
        validate("provenance", json.load(fh), rel(os.path.join(bundle_dir, PROVENANCE)))
    return verified


def _check_expectations(records):
    for rid, rec in records.items():
        c = rec["content"]
        if c["expected"] is not None and c["passed"] is not True:
            raise BuildError(f"runs/{rid}.json: expected {json.dumps(c['expected'], sort_keys=True)}, "
                             f"observed {json.dumps(c['observed'], sort_keys=True)}")


def execute(bundle_dir, specs, progress=False, check_inputs=True, session=None):
    """Run the plan in Pyodide and assemble everything in memory.
    Returns (runtime event, {run_id: record}, {relpath under runs/: bytes}, the verified bundle)."""
    verified = _check_bundle(bundle_dir)
    bundle = bundle_paths(bundle_dir, verified)
    epoch = verified["manifest"]["source_date_epoch"]
    with _progress(len(specs), progress) as bar:
        def on_event(event):
            if event["event"] == "fixture":
                bar.update(1, event["run_id"])

        runtime, events, batch = run_plan(bundle, specs, on_event, session=session)
    if runtime["bundle_sha256"] != bundle["bundle_sha256"]:
        raise BuildError(f"{bundle['file']}: sha256 expected {bundle['bundle_sha256']}, runner saw {runtime['bundle_sha256']}")
    records, files = {}, {}
    for event in events:
        rid = event["run_id"]
        if engine.content_sha256(event["fields"]) != event["fields_sha256"]:
            raise BuildError(f"runs/{rid}.json: engine fields sha256 expected {event['fields_sha256']} (computed in "
                             f"Pyodide), actual {engine.content_sha256(event['fields'])} (after transport)")
        where = paths(rid)
        cmd = command(fixture_argv(bundle, event["spec"]), epoch)
        receipts_bytes = event["receipts_text"].encode("utf-8")
        input_bytes = event["input_text"].encode("utf-8")
        input_sha = engine.content_sha256(json.loads(input_bytes))
        if check_inputs and input_sha != event["fields"]["input_sha256"]:
            raise BuildError(f"{where['input']}: the input file (engine.fixture_input) has content sha256 "
                             f"{input_sha}, the graded input has {event['fields']['input_sha256']} (expected the same)")
        trace_doc = trace(event, bundle, runtime, cmd)
        trace_bytes = file_bytes(trace_doc)
        validate("trace", trace_doc, where["trace"])
        validate("receipts", json.loads(receipts_bytes), where["receipts"])
        validate("input", json.loads(input_bytes), where["input"])
        outputs = {key: {"path": where[key], "sha256": engine.sha256_hex(data)}
                   for key, data in (("receipts", receipts_bytes), ("trace", trace_bytes), ("input", input_bytes))}
        build = {"schema_version": RUN_SCHEMA_VERSION, "engine": engine_block(bundle, runtime),
                 "execution_path": PYODIDE_PATH, "command": cmd, "outputs": outputs}
        volatile = {"started": event["started"], "finished": event["finished"], "duration_ms": event["duration_ms"],
                    "host": f"{runtime['host']}, node {runtime['node_version']}",
                    "batch": dict(batch, index=event["index"], size=len(events)),
                    "timings_us": event["timings_us"]}
        rec = record(content(event["fields"], build), volatile)
        validate("run", rec, where["record"])
        records[rid] = rec
        for key, data in (("receipts", receipts_bytes), ("trace", trace_bytes), ("input", input_bytes)):
            files[where[key][len("runs/"):]] = data
    return runtime, records, files, verified


def build_runs(bundle_dir, out, run_ids=None, parity=True, progress=False, session=None, volatile="keep",
               timings=None) -> dict:
    """The stage. runs/ (or `out`) is replaced only after every check passed.

    volatile="keep" (make build, make build-runs): records whose content did
    not change keep the volatile part already in `out`, so an unchanged
    publication is rewritten byte for byte; "fresh" (make publish-runs): every
    record gets this build's. Measured times always go to `timings`."""
    if volatile not in ("keep", "fresh"):
        raise BuildError(f"volatile: expected keep or fresh, got {volatile!r}")
    started = _now()
    specs = select_specs(run_ids)
    staged = _publish.stage(out)
    try:
        runtime, records, files, verified = execute(bundle_dir, specs, progress, session=session)
        if not run_ids and runtime.get("published_run_ids") not in (None, [s["run_id"] for s in specs]):
            raise BuildError("fixtures: the bundle publishes a different fixture list than the sources "
                             f"({len(runtime['published_run_ids'])} vs {len(specs)}); rebuild the bundle")
        _check_expectations(records)
        host_us = {}
        if parity:
            host_us = check_parity(records, specs)
        measured = {rid: {k: r["volatile"][k] for k in ("duration_ms", "timings_us")} for rid, r in records.items()}
        kept = keep_committed_volatile(records, out) if volatile == "keep" else []
        rows = []
        for rid, rec in sorted(records.items()):
            data = file_bytes(rec)
            _publish.put(staged, f"{rid}.json", data)
            c = rec["content"]
            rows.append({"run_id": rid, "kind": c["kind"], "fixture_id": c["instance_id"],
                         "fixture_sha256": c["fixture_sha256"], "record": f"runs/{rid}.json",
                         "content_sha256": rec["content_sha256"], "file_sha256": engine.sha256_hex(data)})
        for relpath, data in files.items():
            _publish.put(staged, relpath, data)
        for name, data in schema_files().items():
            _publish.put(staged, f"schemas/{name}", data)
        with open(os.path.join(bundle_dir, MANIFEST), "rb") as fh:
            _publish.put(staged, f"engine/{MANIFEST}", fh.read())
        _publish.put(staged, f"engine/{PROVENANCE}", provenance_bytes(bundle_dir, out, volatile))
        engine_ids = {"bundle_sha256": verified["bundle_sha256"], "manifest_sha256": verified["manifest_sha256"]}
        index = build_index(rows, engine_ids, {rid: r["volatile"]["duration_ms"] for rid, r in records.items()})
        validate("index", index, "runs/index.json")
        ordered = [records[rid] for rid in sorted(records)]
        write_exports(ordered, os.path.join(staged, "register.parquet"), os.path.join(staged, "days.parquet"))
        _publish.put(staged, "index.json", file_bytes(index))
        _publish.swap_in(staged, out, list(records))
    except BaseException:
        _publish.discard(staged)
        raise
    summary = {"runs": len(records), "head": index["head"], "bundle_sha256": verified["bundle_sha256"],
               "load_ms": runtime["load_ms"], "parity": parity, "kept_volatile": len(kept),
               "shared_runtime": session is not None,
               "pyodide_us": {rid: m["timings_us"] for rid, m in measured.items()}, "host_us": host_us}
    if timings:
        write_bytes(timings, (json.dumps({"stage": "build-runs", "started": started, "finished": _now(),
                                          "volatile": volatile, "fixtures": measured, **summary},
                                         sort_keys=True, indent=2) + "\n").encode())
    return summary


def default_bundle_dir():
    return os.path.join(ROOT, "build", "engine")
