"""One Pyodide runtime per build: the engine compile, the fixture runs and the
desk's stdlib compile share one Node process, and what each writes is what it
writes alone."""

import json
import os
import re
import shutil
import subprocess

import pytest

from builders._errors import BuildError
from builders._files import ROOT
from builders._session import PyodideSession
from builders.bundle import build_engine
from builders.desk.stdlib_stage import build_stdlib
from builders.runs import build_runs

from .conftest import load, pyodide_test, read_bytes, snapshot

SUBSET = ["adversarial-W3-M4_fully_hedged_tail", "baseline-FUND_01-seed-2-reference", "reference-W4"]
DESK_STDLIB = os.path.join(ROOT, "site", "assets", "desk", "runtime", "python_stdlib.zip")


def _standalone_stdlib(tmp_path):
    """The desk's stdlib as `make build-desk` alone builds it (its own runtime)."""
    if os.path.isfile(DESK_STDLIB):
        return read_bytes(DESK_STDLIB)
    out = tmp_path / "standalone-stdlib.zip"
    subprocess.run(["node", "builders/desk/stdlib.mjs", "--out", str(out)], cwd=ROOT, check=True, capture_output=True)
    return out.read_bytes()


@pyodide_test
def test_one_runtime_builds_engine_runs_and_stdlib_as_each_does_alone(bundle_dir, published, tmp_path):
    with PyodideSession() as session:
        build_engine(str(tmp_path / "engine"), session=session)
        summary = build_runs(str(tmp_path / "engine"), str(tmp_path / "runs"), run_ids=SUBSET, session=session)
        stdlib = build_stdlib(str(tmp_path / "stdlib.zip"), session=session, force=True)
        assert session.loads == 1
    assert summary["shared_runtime"] is True and stdlib["skipped"] is False
    for name in ("fundbook-engine.zip", "manifest.json"):
        assert read_bytes(tmp_path / "engine" / name) == read_bytes(os.path.join(bundle_dir, name)), name
    # the runs after a compile in the same runtime: the same content as a runtime of their own
    for rid in SUBSET:
        mine, alone = load(tmp_path / "runs" / f"{rid}.json"), load(os.path.join(published["dir"], f"{rid}.json"))
        assert mine["content"] == alone["content"], rid
        assert mine["volatile"]["batch"]["shared_runtime"] is True
        for sub in ("receipts", "traces", "inputs"):
            assert read_bytes(tmp_path / "runs" / sub / f"{rid}.json") == read_bytes(
                os.path.join(published["dir"], sub, f"{rid}.json")
            )
    assert (tmp_path / "stdlib.zip").read_bytes() == _standalone_stdlib(tmp_path)


@pyodide_test
def test_a_current_stdlib_is_not_compiled_again(tmp_path):
    out = str(tmp_path / "stdlib.zip")
    first = build_stdlib(out, force=True)
    again = build_stdlib(out)
    assert first["skipped"] is False and again == {"skipped": True, "sha256": first["sha256"]}
    with open(out, "ab") as fh:  # an output that is not what was built is rebuilt
        fh.write(b"x")
    assert build_stdlib(out)["skipped"] is False


@pyodide_test
def test_a_second_bundle_in_one_runtime_is_imported_afresh(bundle_dir, tmp_path):
    """Same path inside the runtime, different bytes: nothing of the first
    bundle (zipimport's cached directory, its modules) may serve the second."""
    other = tmp_path / "checkout"
    shutil.copytree(os.path.join(ROOT, "engine"), other / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    init = other / "engine" / "__init__.py"
    text = init.read_text()
    init.write_text(re.sub(r'ENGINE_VERSION = "([^"]*)"', r'ENGINE_VERSION = "x-\1"', text, count=1))
    shutil.copy(os.path.join(ROOT, "package-lock.json"), other / "package-lock.json")
    for name in ("builders", "node_modules"):
        os.symlink(os.path.join(ROOT, name), other / name)
    with PyodideSession() as session:
        build_engine(str(tmp_path / "engine-b"), root=str(other), session=session)
        a = build_runs(bundle_dir, str(tmp_path / "runs-a"), run_ids=["reference-W1"], parity=False, session=session)
        b = build_runs(
            str(tmp_path / "engine-b"),
            str(tmp_path / "runs-b"),
            run_ids=["reference-W1"],
            parity=False,
            session=session,
        )
        assert session.loads == 1
    version_a = load(tmp_path / "runs-a" / "reference-W1.json")["content"]["engine"]["engine_version"]
    version_b = load(tmp_path / "runs-b" / "reference-W1.json")["content"]["engine"]["engine_version"]
    assert version_b == "x-" + version_a
    assert a["bundle_sha256"] != b["bundle_sha256"]


@pyodide_test
def test_a_bad_session_request_is_one_line_and_exit_64():
    proc = subprocess.run(
        ["node", "builders/runner/session.mjs"], cwd=ROOT, input='{"op": "fly"}\n', capture_output=True, text=True
    )
    assert proc.returncode == 64
    assert (
        proc.stderr
        == 'error: session request: unknown op "fly" (expected compile, run, stdlib, or an op with its module)\n'
    )
    assert json.loads(proc.stdout.splitlines()[0])["event"] == "ready"


@pyodide_test
@pytest.mark.parametrize(
    "request_line, message",
    [
        (
            '{"op": "sample", "module": "../etc/x.mjs"}',
            'module "../etc/x.mjs" is not a runner module (expected <layer>/runner/<name>.mjs)',
        ),
        ('{"op": "fly", "module": "experiments/runner/ops.mjs"}', 'experiments/runner/ops.mjs has no op "fly"'),
    ],
)
def test_an_op_of_a_layer_above_comes_only_from_its_runner_module(request_line, message):
    """builders names no layer above it: a later stage brings its op in its own runner module."""
    proc = subprocess.run(
        ["node", "builders/runner/session.mjs"], cwd=ROOT, input=request_line + "\n", capture_output=True, text=True
    )
    assert proc.returncode == 64
    assert proc.stderr == f"error: session request: {message}\n"


@pyodide_test
def test_a_runner_that_stops_mid_build_is_one_build_error(bundle_copy, tmp_path):
    """The runner's own one-line reason reaches the stage, and a shared session
    that failed is not reused silently."""
    before = snapshot(tmp_path)
    with PyodideSession() as session:
        from builders.runs._pyodide import run_plan
        from builders.runs._stage import select_specs

        bundle = {
            "file": str(bundle_copy / "fundbook-engine.zip"),
            "manifest_file": str(bundle_copy / "manifest.json"),
            "bundle_sha256": "0" * 64,
        }
        with pytest.raises(BuildError, match=r"fundbook-engine.zip: sha256 expected 0{64}, actual [0-9a-f]{64}$"):
            run_plan(bundle, select_specs(["reference-W1"]), session=session)
        assert session.proc is None
    assert snapshot(tmp_path) == before
