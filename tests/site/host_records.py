"""Run records from the host engine, in the published shape, for site tests.

Production builds the site from the committed runs/ (executed through the
Pyodide bundle). When runs/index.json is absent (a checkout before the
bundle-and-runs stage has landed) the tests build from these instead; they are
labelled "host reference" so they can never pass for published runs.
"""

import hashlib
import json
import shutil
from pathlib import Path

import engine
from builders.run_index import entry_hash, genesis

FAKE_ENGINE = {
    "bundle_sha256": "0" * 64,
    "manifest_sha256": "1" * 64,
    "engine_version": engine.ENGINE_VERSION,
    "pyodide_version": "314.0.7",
    "python_version": "3.14.0",
}


def _write(path: Path, obj) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = engine.pretty_json(obj) if hasattr(engine, "pretty_json") else json.dumps(obj, indent=2, sort_keys=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def write_host_runs(runs_dir: Path, run_ids=None) -> Path:
    entries, durations = [], {}
    prev = genesis(
        "fundbook.index/2",
        {"bundle_sha256": FAKE_ENGINE["bundle_sha256"], "manifest_sha256": FAKE_ENGINE["manifest_sha256"]},
    )
    for spec in engine.fixture_specs():
        if run_ids and spec["run_id"] not in run_ids:
            continue
        execution = engine.execute_fixture(spec)
        rid = spec["run_id"]
        outputs = {
            "receipts": {
                "path": f"runs/receipts/{rid}.json",
                "sha256": _write(
                    runs_dir / "receipts" / f"{rid}.json",
                    {
                        "schema": "fundbook.receipts/1",
                        "run_id": rid,
                        "receipts_head": execution["receipts_head"],
                        "receipts": execution["receipts"],
                    },
                ),
            },
            "trace": {
                "path": f"runs/traces/{rid}.json",
                "sha256": _write(
                    runs_dir / "traces" / f"{rid}.json",
                    {"run_id": rid, "events": [{"step": "execute_fixture", "ok": True}]},
                ),
            },
            "input": {
                "path": f"runs/inputs/{rid}.json",
                "sha256": _write(runs_dir / "inputs" / f"{rid}.json", engine.fixture_input(spec)),
            },
        }
        content = dict(engine.engine_fields(execution))
        content.update(
            {
                "schema_version": 1,
                "engine": FAKE_ENGINE,
                "execution_path": "host reference",
                "command": {
                    "argv": ["python", "-m", "tests.site.host_records", rid],
                    "env": {"PYTHONHASHSEED": "0", "SOURCE_DATE_EPOCH": "1788739200"},
                },
                "outputs": outputs,
            }
        )
        record = {
            "schema": "fundbook.run/1",
            "content": content,
            "content_sha256": engine.content_sha256(content),
            "volatile": {
                "started": "2026-11-29T09:00:00Z",
                "finished": "2026-11-29T09:00:00Z",
                "duration_ms": 21,
                "host": "test",
            },
        }
        file_sha = _write(runs_dir / f"{rid}.json", record)
        entry = {
            "run_id": rid,
            "kind": spec["kind"],
            "fixture_id": execution["instance_id"],
            "fixture_sha256": execution["fixture_sha256"],
            "record": f"runs/{rid}.json",
            "content_sha256": record["content_sha256"],
            "file_sha256": file_sha,
            "prev_hash": prev,
        }
        entry["hash"] = entry_hash(entry)  # the formula build-runs chains with
        prev = entry["hash"]
        entries.append(entry)
        durations[rid] = 21
    index = {
        "schema": "fundbook.index/2",
        "head": {"size": len(entries), "hash": prev},
        "engine": {"bundle_sha256": FAKE_ENGINE["bundle_sha256"], "manifest_sha256": FAKE_ENGINE["manifest_sha256"]},
        "entries": entries,
        "volatile": {"durations_ms": durations, "built": "2026-11-29T09:00:00Z"},
    }
    _write(runs_dir / "index.json", index)
    return runs_dir


def copy_runs(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".*"))
    return dst
