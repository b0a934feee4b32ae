"""Build the site once per session from the committed runs/ (or, before they
exist, host-engine records labelled as such) plus the hostile test attempt,
and serve it on 127.0.0.1 for the browser tests; and, as a second site, the
hostile publication (a payload in every string field of every record kind).

All tests that use the built site share the xdist group "site", so one worker
builds it once."""

import fcntl
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
CHROMIUM = Path(os.environ.get("FUNDBOOK_CHROMIUM", "/usr/bin/chromium"))
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


def _engine_dir(tmp: Path) -> Path:
    """build/engine when it holds a bundle of the current engine sources, else a fresh build in tmp."""
    from builders.bundle import build_engine, engine_sources

    built = REPO / "build" / "engine"
    try:
        manifest = json.loads((built / "manifest.json").read_text())
        listed = {f["path"]: f["sha256"] for f in manifest["files"] if not f["path"].endswith(".pyc")}
        if listed == {f["path"]: f["sha256"] for f in engine_sources(str(REPO))}:
            return built
    except (OSError, ValueError, KeyError):
        pass
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1788739200")
    build_engine(str(tmp / "engine"), root=str(REPO))
    return tmp / "engine"


def _main_runs(runs: Path):
    if (REPO / "runs" / "index.json").is_file():
        copy_runs(REPO / "runs", runs)
    else:
        write_host_runs(runs)
        if (REPO / "runs" / "attempts").is_dir():  # attempts can land before the published runs
            copy_runs(REPO / "runs" / "attempts", runs / "attempts")
    hostile.write(runs)


def _hostile_runs(runs: Path):
    """The hostile publication: a payload in every string field of every record kind."""
    src = REPO / "runs"
    if not (src / "index.json").is_file():
        src = write_host_runs(runs.parent / "host-runs")
    hostile.publication(src, runs)


def _build(base: Path, make_runs):
    runs = base / "runs"
    make_runs(runs)
    env = dict(
        os.environ,
        FUNDBOOK_RUNS_DIR=str(runs),
        FUNDBOOK_OG_DIR=str(base / "og"),
        FUNDBOOK_ENGINE_DIR=str(_engine_dir(base)),
        NO_MKDOCS_2_WARNING="1",
        SOURCE_DATE_EPOCH="1788739200",
    )
    env.pop("FUNDBOOK_SITE_URL", None)  # the tests check the default: a build that names no absolute address
    timings = {}
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "builders.og", "--out", str(base / "og"), "--runs", str(runs)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    timings["build-og"] = time.monotonic() - started
    started = time.monotonic()
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "--quiet", "-d", str(base / "public")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    timings["mkdocs"] = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (base / "timings.json").write_text(json.dumps(timings))


def _shared_build(tmp_path_factory, name, make_runs):
    """(public dir, runs dir, timings), built once per test session: xdist workers
    share the base temp folder, the first to take the lock builds and the others
    reuse its output (the xdist_group marks alone do not keep these tests on one
    worker)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    base = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (base / "timings.json").is_file():
            if base.exists():
                shutil.rmtree(base)  # a build that failed half way
            base.mkdir()
            _build(base, make_runs)
    timings = json.loads((base / "timings.json").read_text())
    print(f"\n{name} build: build-og {timings['build-og']:.1f}s, mkdocs {timings['mkdocs']:.1f}s")
    return base / "public", base / "runs", timings


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The whole site, strictly built from the published runs (plus one hostile attempt)."""
    return _shared_build(tmp_path_factory, "fundbook-site", _main_runs)


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory):
    """The hostile publication (tests/site/hostile.py), strictly built."""
    return _shared_build(tmp_path_factory, "fundbook-hostile-site", _hostile_runs)


@pytest.fixture(scope="session")
def hostile_server(hostile_site):
    from builders.site.serve import serve

    srv = serve(hostile_site[0])
    yield f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()
    srv.server_close()


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


# `browser` (one Playwright + Chromium per process) comes from tests/conftest.py.


@pytest.fixture
def page(browser):
    context = browser.new_context()
    pg = context.new_page()
    yield pg
    context.close()
