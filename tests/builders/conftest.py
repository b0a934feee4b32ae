"""Shared fixtures for the build stages: one engine bundle and one full set of
runs per test run (shared by the xdist workers), built through the real
pinned Pyodide in Node. Tests that need Node are marked `pyodide`."""

import fcntl
import json
import os
import shutil

import pytest

from builders.bundle import build_engine
from builders.runs import build_runs

PYODIDE_GROUP = "pyodide-builders"


def pyodide_test(fn):
    return pytest.mark.pyodide(pytest.mark.xdist_group(PYODIDE_GROUP)(fn))


def _shared(tmp_path_factory, name, build):
    """Build once per test run, even across xdist workers: the first worker
    to take the lock builds, the others wait and reuse. (xdist_group alone is
    not enough: with the pinned pytest/xdist the group does not keep tests on
    one worker.)"""
    base = tmp_path_factory.getbasetemp()
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    root = base.parent / f"shared-{run}" if run else base / "shared"
    root.mkdir(parents=True, exist_ok=True)
    target = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / f"{name}.done").exists():
            shutil.rmtree(target, ignore_errors=True)
            result = build(target)
            (root / f"{name}.done").write_text(json.dumps(result))
        return target, json.loads((root / f"{name}.done").read_text())


def committed_bundle_is_current(built):
    """`built` (build/engine) holds the bundle of these engine sources whose manifest is the committed one
    (runs/engine/manifest.json: every file's sha256, the zip's included) byte for byte: the bundle `make build`
    would make, so no test recompiles it (its provenance differs only in its build times)."""
    from builders._files import ROOT
    from builders.desk.devsite import fresh_bundle

    committed = os.path.join(ROOT, "runs", "engine")
    try:
        return fresh_bundle(built) and read_bytes(os.path.join(built, "manifest.json")) == read_bytes(
            os.path.join(committed, "manifest.json")
        )
    except OSError:
        return False


def _engine(out):
    """A copy of build/engine when it is the committed bundle (TEST_DEPS builds it), else a fresh build."""
    from pathlib import Path
    from builders._files import ROOT

    built = Path(ROOT) / "build" / "engine"
    if committed_bundle_is_current(built):
        shutil.copytree(built, out)
        return {"copied": "build/engine"}
    return build_engine(str(out))


@pytest.fixture(scope="session")
def bundle_dir(tmp_path_factory):
    """The engine bundle of these sources, once per test run: the committed one when current."""
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1788739200")
    target, _ = _shared(tmp_path_factory, "engine", _engine)
    return str(target)


@pytest.fixture(scope="session")
def published(bundle_dir, tmp_path_factory, pyodide_runtime):
    """Every published fixture through the bundle, parity with host CPython on (in the worker's runtime)."""
    target, summary = _shared(
        tmp_path_factory, "runs", lambda out: build_runs(bundle_dir, str(out), parity=True, session=pyodide_runtime)
    )
    return {"dir": str(target), "summary": summary}


@pytest.fixture
def bundle_copy(bundle_dir, tmp_path):
    """A private copy of the bundle directory a test may damage."""
    target = tmp_path / "engine"
    shutil.copytree(bundle_dir, target)
    return target


def load(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def snapshot(directory):
    """{relative path: bytes} of everything under a directory."""
    out = {}
    for dirpath, _dirs, files in os.walk(directory):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, directory)] = fh.read()
    return out


def read_bytes(path):
    with open(path, "rb") as fh:
        return fh.read()


def read_text(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def write_bytes(path, data):
    with open(path, "wb") as fh:
        fh.write(data)
