"""Build the site once per session from the committed runs/ (or, before they
exist, host-engine records labelled as such) plus the hostile test attempt,
and serve it on 127.0.0.1 for the browser tests.

All tests that use the built site share the xdist group "site", so one worker
builds it once."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.site import hostile
from tests.site.host_records import copy_runs, write_host_runs

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _engine_dir() -> Path:
    engine_dir = REPO / "build" / "engine"
    if not (engine_dir / "manifest.json").is_file():
        # The site vendors the bundle; build it the way `make build` does.
        subprocess.run(["make", "--no-print-directory", "build-engine"], cwd=REPO, check=True)
    return engine_dir


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """(public dir, runs dir, timings) for a strict build of the whole site."""
    base = tmp_path_factory.mktemp("site")
    runs = base / "runs"
    if (REPO / "runs" / "index.json").is_file():
        copy_runs(REPO / "runs", runs)
    else:
        write_host_runs(runs)
    hostile.write(runs)
    env = dict(os.environ, FUNDBOOK_RUNS_DIR=str(runs), FUNDBOOK_OG_DIR=str(base / "og"),
               FUNDBOOK_ENGINE_DIR=str(_engine_dir()), NO_MKDOCS_2_WARNING="1", SOURCE_DATE_EPOCH="1788739200")
    timings = {}
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "builders.og", "--out", str(base / "og"), "--runs", str(runs)],
                   cwd=REPO, env=env, check=True, capture_output=True)
    timings["build-og"] = time.monotonic() - started
    started = time.monotonic()
    proc = subprocess.run([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--quiet",
                           "-d", str(base / "public")], cwd=REPO, env=env, capture_output=True, text=True)
    timings["mkdocs"] = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    print(f"\nsite build: build-og {timings['build-og']:.1f}s, mkdocs {timings['mkdocs']:.1f}s")
    return base / "public", runs, timings


@pytest.fixture(scope="session")
def run_index(built_site):
    return json.loads((built_site[1] / "index.json").read_text())


@pytest.fixture(scope="session")
def server(built_site):
    from builders.site.serve import serve
    srv = serve(built_site[0])
    yield f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        message = "Chromium not found at /usr/bin/chromium: install it with `apt-get install chromium`"
        if os.environ.get("CI"):
            pytest.fail(message + " (CI=true: browser tests must run)")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    pg = context.new_page()
    yield pg
    context.close()
