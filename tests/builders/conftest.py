"""Shared fixtures for the build stages: one engine bundle and one full set of
runs per test session, built through the real pinned Pyodide in Node.

Every test that needs Node is in the xdist group "pyodide-builders", so the
session fixtures are built once, on one worker."""

import json
import os
import shutil

import pytest

from builders.bundle import build_engine
from builders.runs import build_runs

PYODIDE_GROUP = "pyodide-builders"


def pyodide_test(fn):
    return pytest.mark.pyodide(pytest.mark.xdist_group(PYODIDE_GROUP)(fn))


@pytest.fixture(scope="session")
def bundle_dir(tmp_path_factory):
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1788739200")
    out = tmp_path_factory.mktemp("bundle") / "engine"
    build_engine(str(out))
    return str(out)


@pytest.fixture(scope="session")
def published(bundle_dir, tmp_path_factory):
    """Every published fixture through the bundle, parity with host CPython on."""
    out = tmp_path_factory.mktemp("published") / "runs"
    summary = build_runs(bundle_dir, str(out), parity=True)
    return {"dir": str(out), "summary": summary}


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
