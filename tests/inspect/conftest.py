import os

import pytest

from launchers.inspect._version import task_version


@pytest.fixture(scope="session")
def bundle():
    """The built engine bundle (make build-engine, a TEST_DEPS of make test)."""
    return task_version("build/engine")


@pytest.fixture(autouse=True)
def _inspect_home(tmp_path, monkeypatch):
    """Inspect's own state (its data dir, logs) under the test's tmp dir, never the user's."""
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    os.makedirs(tmp_path / "logs", exist_ok=True)
