"""Fault injection: a damaged bundle, a manifest that disagrees, a fixture that
does not parse, a missing runtime. Each stops the stage with the file, the
expected and the actual hash, and leaves runs/ exactly as it was."""

import hashlib
import json
import os
import subprocess

import pytest

from builders import _node
from builders._errors import BuildError
from builders._files import ROOT
from builders.runs import _pyodide, build_runs

from .conftest import read_bytes, read_text, write_bytes, pyodide_test, snapshot  # noqa: F401

SUBSET = ["reference-W1", "adversarial-W3-M4_fully_hedged_tail"]


@pytest.fixture
def runs_dir(tmp_path):
    """A pre-existing runs/ with a launcher's attempt in it: nothing may change."""
    out = tmp_path / "runs"
    (out / "attempts" / "mock").mkdir(parents=True)
    (out / "attempts" / "mock" / "record.json").write_text('{"keep": true}\n')
    (out / "index.json").write_text('{"previous": true}\n')
    return out


def _untouched(runs_dir, before):
    assert snapshot(runs_dir) == before
    assert not [n for n in os.listdir(runs_dir.parent) if "staging" in n]


def _sha(path):
    return hashlib.sha256(read_bytes(path)).hexdigest()


def _flip(path, offset):
    data = bytearray(read_bytes(path))
    data[offset] ^= 0x01
    write_bytes(path, bytes(data))


@pyodide_test
def test_one_changed_byte_in_the_bundle_stops_the_stage(bundle_copy, runs_dir):
    before = snapshot(runs_dir)
    zip_path = bundle_copy / "fundbook-engine.zip"
    expected = _sha(zip_path)
    _flip(zip_path, 2000)
    with pytest.raises(BuildError) as err:
        build_runs(str(bundle_copy), str(runs_dir), run_ids=SUBSET)
    message = err.value.format_message()
    assert "fundbook-engine.zip" in message and expected in message and _sha(zip_path) in message
    _untouched(runs_dir, before)


@pyodide_test
def test_the_runner_itself_refuses_a_changed_byte(bundle_copy):
    """Even when told the damaged file's own hash, the runner checks every entry."""
    zip_path = bundle_copy / "fundbook-engine.zip"
    _flip(zip_path, 2000)
    proc = subprocess.run(
        [
            "node",
            "builders/runner/run_fixtures.mjs",
            "--bundle",
            str(zip_path),
            "--bundle-sha256",
            _sha(zip_path),
            "--fixture",
            '{"kind":"reference","episode":"W1"}',
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    line = proc.stderr.strip()
    assert "\n" not in line and "fundbook-engine.zip!engine/" in line and "sha256 expected" in line and "actual" in line


@pyodide_test
def test_a_manifest_that_disagrees_with_the_bundle_stops_the_stage(bundle_copy, runs_dir):
    before = snapshot(runs_dir)
    manifest = bundle_copy / "manifest.json"
    inner = _sha(manifest)
    doc = json.loads(manifest.read_text())
    doc["files"][0]["sha256"] = "0" * 64
    manifest.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    provenance = json.loads((bundle_copy / "provenance.json").read_text())
    for subject in provenance["subject"]:
        if subject["name"] == "manifest.json":  # the provenance agrees: only the zip can tell
            subject["digest"]["sha256"] = _sha(manifest)
    (bundle_copy / "provenance.json").write_text(json.dumps(provenance))
    with pytest.raises(BuildError) as err:
        build_runs(str(bundle_copy), str(runs_dir), run_ids=SUBSET)
    message = err.value.format_message()
    assert "manifest.json" in message and inner in message and _sha(manifest) in message
    _untouched(runs_dir, before)


@pyodide_test
def test_the_runner_refuses_a_manifest_beside_the_bundle_that_differs(bundle_copy):
    manifest = bundle_copy / "manifest.json"
    inner = _sha(manifest)
    manifest.write_text(manifest.read_text().replace('"fundbook-engine"', '"fundbook-engine-x"'))
    proc = subprocess.run(
        [
            "node",
            "builders/runner/run_fixtures.mjs",
            "--bundle",
            str(bundle_copy / "fundbook-engine.zip"),
            "--bundle-sha256",
            _sha(bundle_copy / "fundbook-engine.zip"),
            "--manifest",
            str(manifest),
            "--fixture",
            '{"kind":"reference","episode":"W1"}',
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert f"sha256 expected {inner}" in proc.stderr and f"actual {_sha(manifest)}" in proc.stderr


@pyodide_test
def test_a_fixture_that_does_not_parse_stops_the_stage(bundle_dir, runs_dir, monkeypatch):
    before = snapshot(runs_dir)
    real = _pyodide.plan_text

    def broken_plan(specs):
        lines = real(specs).splitlines()
        lines[1] = lines[1].replace('"kind":', '"kind": "nonsense", "was":')  # claimed sha no longer matches
        return "\n".join(lines) + "\n"

    monkeypatch.setattr(_pyodide, "plan_text", broken_plan)
    with pytest.raises(BuildError) as err:
        build_runs(bundle_dir, str(runs_dir), run_ids=SUBSET)
    message = err.value.format_message()
    assert message.startswith("fixture plan line 2 (") and "sha256 expected" in message and "actual" in message
    _untouched(runs_dir, before)


@pyodide_test
def test_a_fixture_argument_that_does_not_parse_is_one_line(bundle_dir):
    zip_path = os.path.join(bundle_dir, "fundbook-engine.zip")
    for fixture in ('{"kind": "reference", "episode"', '{"kind": "reference", "episode": "W9"}'):
        proc = subprocess.run(
            [
                "node",
                "builders/runner/run_fixtures.mjs",
                "--bundle",
                zip_path,
                "--bundle-sha256",
                _sha(zip_path),
                "--fixture",
                fixture,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.count("\n") == 1 and "does not parse" in proc.stderr and "sha256" in proc.stderr


@pyodide_test
def test_no_node_means_no_run_and_no_fallback(bundle_dir, runs_dir, monkeypatch):
    before = snapshot(runs_dir)
    monkeypatch.setenv("FUNDBOOK_NODE", "/nonexistent/node")
    with pytest.raises(BuildError, match=r"node not found.*npm ci"):
        build_runs(bundle_dir, str(runs_dir), run_ids=SUBSET)
    _untouched(runs_dir, before)


def test_no_pinned_runtime_names_the_install_command(tmp_path):
    (tmp_path / "package-lock.json").write_text(read_text(os.path.join(ROOT, "package-lock.json")))
    with pytest.raises(BuildError, match=r"pyodide 314\.0\.7\) is not installed: run `npm ci`"):
        _node.node_executable(str(tmp_path))


def test_a_missing_bundle_names_the_stage_to_run(tmp_path, runs_dir):
    before = snapshot(runs_dir)
    with pytest.raises(BuildError, match=r"fundbook-engine.zip: missing \(run `make build-engine`\)"):
        build_runs(str(tmp_path), str(runs_dir), run_ids=SUBSET)
    _untouched(runs_dir, before)


def test_an_unmet_expectation_fails_the_stage():
    from builders.runs._stage import _check_expectations

    record = {"content": {"expected": {"status": "MALFORMED"}, "observed": {"status": "SCORED"}, "passed": False}}
    with pytest.raises(BuildError, match=r'adversarial-W1-M7.json: expected \{"status": "MALFORMED"\}, observed'):
        _check_expectations({"adversarial-W1-M7": record})
