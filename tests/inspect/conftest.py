import asyncio.events
import contextlib
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


# A worker that ran a browser test keeps Playwright's sync API alive for the session (one Chromium per worker), and
# that API leaves its event loop marked running in this thread while its greenlet is switched out. Inspect runs its
# own loop (asyncio.run) and refuses to start under a running one ("Runner.run() cannot be called from a running
# event loop"), so every test here, its fixtures included, runs with that mark set aside and put back after.
@contextlib.contextmanager
def _foreign_loop_set_aside():
    held = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        yield
    finally:
        asyncio.events._set_running_loop(held)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _foreign_loop_set_aside():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with _foreign_loop_set_aside():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    with _foreign_loop_set_aside():
        return (yield)
