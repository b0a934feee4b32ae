"""build-runs: every published fixture through the bundle in Pyodide; what the
records, traces, index and exports must hold."""

import hashlib
import json
import os

import engine
import jsonschema
import pyarrow.parquet as pq
import pytest

from builders.run_index import check_chain

from .conftest import load, pyodide_test

SCHEMAS = os.path.join(os.path.dirname(__file__), "..", "..", "builders", "schemas")


def _records(published):
    index = load(os.path.join(published["dir"], "index.json"))
    return index, {e["run_id"]: load(os.path.join(published["dir"], f"{e['run_id']}.json")) for e in index["entries"]}


def _file(published, path):
    with open(os.path.join(published["dir"], path[len("runs/") :]), "rb") as fh:
        return fh.read()


@pyodide_test
def test_every_published_fixture_is_executed_with_its_expected_outcome(published):
    index, records = _records(published)
    assert [e["run_id"] for e in index["entries"]] == [s["run_id"] for s in engine.fixture_specs()]
    kinds = [r["content"]["kind"] for r in records.values()]
    assert kinds.count("reference") == 5 and kinds.count("baseline") == 4 * 3 * 3
    for rid, rec in records.items():
        c = rec["content"]
        assert c["execution_path"] == "compiled bundle in Pyodide"
        if c["kind"] == "reference":
            assert (c["status"], c["verdict"], c["score"]["points"], c["score"]["denominator"]) == (
                "SCORED",
                "QUALIFIED",
                100,
                100,
            ), rid
        if c["kind"] == "adversarial":
            assert c["expected"] and c["passed"] is True, rid
        if c["kind"] == "baseline":
            assert c["expected"] is None and c["passed"] is None


@pyodide_test
def test_records_validate_hash_and_point_at_their_files(published):
    index, records = _records(published)
    schema = load(os.path.join(SCHEMAS, "run.schema.json"))
    engine_ids = index["engine"]
    for rid, rec in records.items():
        jsonschema.validate(rec, schema)
        assert rec["content_sha256"] == engine.content_sha256(rec["content"])
        assert {k: rec["content"]["engine"][k] for k in engine_ids} == engine_ids
        for key, out in rec["content"]["outputs"].items():
            assert hashlib.sha256(_file(published, out["path"])).hexdigest() == out["sha256"], (rid, key)
        inputs = json.loads(_file(published, rec["content"]["outputs"]["input"]["path"]))
        assert engine.content_sha256(inputs) == rec["content"]["input_sha256"]
        receipts = json.loads(_file(published, rec["content"]["outputs"]["receipts"]["path"]))
        assert len(receipts["receipts"]) == rec["content"]["receipts_head"]["size"]
        if receipts["receipts"]:
            assert receipts["receipts"][-1]["hash"] == rec["content"]["receipts_head"]["hash"]


@pyodide_test
def test_traces_show_bundle_bytecode_the_runtime_and_output_digests(published):
    _, records = _records(published)
    schema = load(os.path.join(SCHEMAS, "trace.schema.json"))
    empty = hashlib.sha256(b"").hexdigest()
    for rid, rec in records.items():
        trace = json.loads(_file(published, rec["content"]["outputs"]["trace"]["path"]))
        jsonschema.validate(trace, schema)
        assert trace["command"] == rec["content"]["command"]
        assert trace["runtime"]["hash_randomization"] == 0
        assert all(m["origin"].startswith("fundbook-engine.zip/engine/") for m in trace["modules"])
        assert trace["stdout"]["sha256"] == empty and trace["stderr"]["sha256"] == empty
        argv = rec["content"]["command"]["argv"]
        assert argv[:2] == ["node", "builders/runner/run_fixtures.mjs"]
        assert json.loads(argv[argv.index("--fixture") + 1]) == rec["content"]["fixture"]


@pyodide_test
def test_a_freshly_written_record_verifies_like_the_browser_checks_it(published):
    _, records = _records(published)
    for spec in engine.fixture_specs()[::9]:
        outcome = engine.verify_record(records[spec["run_id"]], engine.execute_fixture(spec))
        assert outcome["match"], outcome


@pyodide_test
def test_records_round_trip_byte_for_byte(published):
    index, _ = _records(published)
    for entry in index["entries"][::7] + [{"record": "runs/index.json", "run_id": "index"}]:
        data = _file(published, entry["record"])
        assert engine.pretty_json(json.loads(data)).encode() == data


@pyodide_test
def test_index_is_sorted_chained_and_detects_tampering(published):
    index, records = _records(published)
    jsonschema.validate(index, load(os.path.join(SCHEMAS, "index.schema.json")))
    assert check_chain(index) is None
    assert index["head"]["size"] == len(records)
    for entry in index["entries"]:
        assert entry["content_sha256"] == records[entry["run_id"]]["content_sha256"]
        assert entry["file_sha256"] == hashlib.sha256(_file(published, entry["record"])).hexdigest()
    victim = index["entries"][10]
    victim["content_sha256"] = "f" * 64
    assert check_chain(index) == victim["run_id"]
    index["entries"].pop()
    assert check_chain(index) is not None


@pyodide_test
def test_parquet_exports_mirror_the_records(published):
    _, records = _records(published)
    register = pq.read_table(os.path.join(published["dir"], "register.parquet")).to_pylist()
    days = pq.read_table(os.path.join(published["dir"], "days.parquet")).to_pylist()
    assert [r["run_id"] for r in register] == sorted(records)
    for row in register:
        c = records[row["run_id"]]["content"]
        assert row["status"] == c["status"] and row["content_sha256"] == records[row["run_id"]]["content_sha256"]
        assert row["points"] == (c["score"] or {}).get("points")
    assert len(days) == sum(len(r["content"]["days"]) for r in records.values())


@pyodide_test
def test_schemas_and_bundle_facts_are_published_beside_the_runs(published, bundle_dir):
    for name in ("run", "index", "trace", "receipts", "input", "manifest", "provenance"):
        assert os.path.isfile(os.path.join(published["dir"], "schemas", f"{name}.schema.json"))
    for name in ("manifest.json", "provenance.json"):
        with (
            open(os.path.join(bundle_dir, name), "rb") as a,
            open(os.path.join(published["dir"], "engine", name), "rb") as b,
        ):
            assert a.read() == b.read()


@pytest.mark.parametrize("change", [{"schema": "fundbook.run/2"}, {"content.schema_version": 2}])
def test_a_newer_record_version_is_refused(change):
    from builders._errors import BuildError
    from builders.runs._schemas import validate

    here = os.path.dirname(__file__)
    record = load(os.path.join(here, "fixtures", "run-record.json"))
    validate("run", record, "fixture")
    for key, value in change.items():
        if key.startswith("content."):
            record["content"][key.split(".", 1)[1]] = value
        else:
            record[key] = value
    with pytest.raises(BuildError, match="schema"):
        validate("run", record, "fixture")


@pyodide_test
def test_a_records_command_reproduces_it(published, bundle_dir):
    """command.argv, run as written from the repo root, executes exactly that
    fixture through the bundle and gives the same engine fields. The argv names
    the bundle where `make build-engine` writes it (build/engine/); this test's
    bundle lives elsewhere, so that one path is swapped, and the --bundle-sha256
    in the argv still pins the bytes."""
    import subprocess
    from builders._files import ROOT

    _, records = _records(published)
    rec = records["adversarial-W5-M4_fully_hedged_tail"]
    argv = list(rec["content"]["command"]["argv"])
    assert argv[argv.index("--bundle") + 1] == "build/engine/fundbook-engine.zip"
    assert argv[argv.index("--manifest") + 1] == "build/engine/manifest.json"
    argv[argv.index("--bundle") + 1] = os.path.join(bundle_dir, "fundbook-engine.zip")
    argv[argv.index("--manifest") + 1] = os.path.join(bundle_dir, "manifest.json")
    proc = subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, **rec["content"]["command"]["env"]),
    )
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    (fixture,) = [e for e in events if e["event"] == "fixture"]
    fields = {k: rec["content"][k] for k in engine.ENGINE_FIELDS}
    assert fixture["fields"] == fields
    assert fixture["fields_sha256"] == engine.content_sha256(fields)


@pyodide_test
def test_no_record_names_a_temporary_path(published):
    """Command provenance is normalised: no staging or scratch directory in any
    record, trace or the index, volatile parts included."""
    for dirpath, _dirs, files in os.walk(published["dir"]):
        for name in files:
            if name.endswith(".json"):
                with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                    text = fh.read()
                assert "staging" not in text and "/tmp" not in text and "pytest-" not in text, name
