"""Shared test fixtures. Paid tests (tinker, modal) run only with --run-paid."""

import os

import pytest

# The OpenMP wait policy llama.cpp's runtime reads once, when llama_cpp is first imported in a process. The
# sampler sets it before its own import and records what the library loaded under; in a test worker another
# test (the lock check, the local server, an importorskip) may import llama_cpp first, so the whole suite runs
# under the sampler's policy and every record states it truthfully whichever test loaded the library.
os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


def pytest_addoption(parser):
    parser.addoption(
        "--run-paid",
        action="store_true",
        default=False,
        help="run tests that call tinker or modal for real (costs money; needs keys)",
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-paid"):
        return
    skip = pytest.mark.skip(reason="paid test: pass --run-paid to run it")
    for item in items:
        if "paid" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


CHROMIUM = os.environ.get("FUNDBOOK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    """One Playwright and one Debian Chromium per test process, shared by the site
    and desk tests (two sync Playwright instances cannot live in one process).
    Without Chromium: skip, naming the install command -- but fail under CI=true."""
    if not os.path.exists(CHROMIUM):
        message = f"Chromium not found at {CHROMIUM}: install it with `apt-get install chromium`"
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(message + " (CI=true: browser tests must run)")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def pyodide_runtime():
    """One pinned Pyodide runtime (builders/runner/session.mjs) per test process, shared by every test that runs
    stages through a session (`session=pyodide_runtime`): Pyodide loads once a worker, not once a module. Each
    op resets what it loaded (the runner's own reset: the bundle's modules are forgotten between requests); a
    request that did not reach its end event (an error mid-op: events may be left unread) stops the runtime, and
    the next request starts a fresh one. Tests of the session itself keep their own (tests/builders/
    test_session.py)."""
    from builders._session import PyodideSession

    class Shared(PyodideSession):
        def request(self, op, on_event=None, **params):
            try:
                return super().request(op, on_event, **params)
            except BaseException:
                self.stop()
                raise

        def stop(self):
            if self.proc is not None:
                self.proc.kill()
                self.proc.wait()
                self._cleanup()

        def close(self):  # a stage given this session never ends it; the session's end does
            pass

    runtime = Shared()
    yield runtime
    runtime.stop()
