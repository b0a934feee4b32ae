"""Rebuilding an unchanged publication rewrites nothing: a record whose content
did not change keeps its published volatile part (and the index, Parquet and
provenance follow), a record whose content changed is rewritten with this
build's, and `--volatile fresh` (make publish-runs) rewrites them all."""

import json

import engine
import pytest

from builders.runs import build_runs

from .conftest import load, pyodide_test, snapshot

SUBSET = ["adversarial-W1-M3_cash_overdraw", "baseline-FUND_04-seed-3-do-nothing", "reference-W3"]


@pytest.fixture(scope="module")
def session(pyodide_runtime):
    return pyodide_runtime  # the worker's one runtime (tests/conftest.py)


def _build(bundle_dir, out, session, volatile="keep"):
    return build_runs(bundle_dir, str(out), run_ids=SUBSET, parity=False, session=session, volatile=volatile)


@pyodide_test
def test_an_unchanged_rebuild_is_byte_identical(bundle_dir, tmp_path, session):
    out = tmp_path / "runs"
    _build(bundle_dir, out, session)
    before = snapshot(out)
    summary = _build(bundle_dir, out, session)
    assert summary["kept_volatile"] == len(SUBSET)
    after = snapshot(out)
    assert sorted(after) == sorted(before)
    assert [name for name in sorted(before) if after[name] != before[name]] == []


@pyodide_test
def test_only_a_record_whose_content_changed_is_rewritten(bundle_dir, tmp_path, session):
    out = tmp_path / "runs"
    _build(bundle_dir, out, session)
    victim = out / "reference-W3.json"
    doc = load(victim)
    doc["content"]["status"] = "EDITED"
    doc["content_sha256"] = engine.content_sha256(doc["content"])
    doc["volatile"]["host"] = "the edited one"
    victim.write_text(engine.pretty_json(doc))
    before = snapshot(out)
    summary = _build(bundle_dir, out, session)
    after = snapshot(out)
    assert summary["kept_volatile"] == len(SUBSET) - 1
    changed = sorted(name for name in before if after[name] != before[name])
    assert changed == ["index.json", "reference-W3.json"]  # the index: that record's file_sha256 and duration
    rebuilt = json.loads(after["reference-W3.json"])
    assert rebuilt["content"]["status"] == "SCORED" and rebuilt["volatile"]["host"] != "the edited one"


@pyodide_test
def test_volatile_fresh_rewrites_every_record(bundle_dir, tmp_path, session):
    out = tmp_path / "runs"
    _build(bundle_dir, out, session)
    records = {rid: load(out / f"{rid}.json") for rid in SUBSET}
    for rid, doc in records.items():  # mark the published volatile parts
        doc["volatile"]["host"] = "published earlier"
        (out / f"{rid}.json").write_text(engine.pretty_json(doc))
    summary = _build(bundle_dir, out, session, volatile="fresh")
    assert summary["kept_volatile"] == 0
    for rid in SUBSET:
        assert load(out / f"{rid}.json")["volatile"]["host"] != "published earlier"
        assert load(out / f"{rid}.json")["content"] == records[rid]["content"]


@pyodide_test
def test_the_published_provenance_is_kept_only_for_the_same_build(bundle_dir, tmp_path, session):
    out = tmp_path / "runs"
    _build(bundle_dir, out, session)
    path = out / "engine" / "provenance.json"
    doc = load(path)
    doc["predicate"]["runDetails"]["metadata"]["startedOn"] = "2020-01-01T00:00:00Z"  # an earlier build's
    path.write_text(json.dumps(doc, sort_keys=True, indent=2) + "\n")
    kept = path.read_bytes()
    _build(bundle_dir, out, session)
    assert path.read_bytes() == kept
    doc["predicate"]["buildDefinition"]["externalParameters"]["source_date_epoch"] = 1  # another build
    path.write_text(json.dumps(doc, sort_keys=True, indent=2) + "\n")
    _build(bundle_dir, out, session)
    assert load(path)["predicate"]["buildDefinition"]["externalParameters"]["source_date_epoch"] == 1788739200
