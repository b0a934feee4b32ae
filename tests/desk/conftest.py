"""Browser fixtures for the practice desk and the verify button.

The tests run against the built site (public/) when it is there, complete and
carries this checkout's desk code;
otherwise against a stand-in with the same layout (builders/desk/devsite.py)
around the real engine bundle: build/engine/ when it was built from these
sources, else a fresh `build-engine` into a temporary folder.
FUNDBOOK_DESK_SITE=dev|public forces one. Chromium is Debian's, driven by
Playwright; every request that is not to the local server is aborted and
recorded, so no test can lean on the network.
"""

import os
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from builders.desk import devsite
from builders.desk.devsite import verify_page
from builders.site.serve import Serving as Server

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "public"
CHROMIUM = os.environ.get("FUNDBOOK_CHROMIUM", "/usr/bin/chromium")
# One run of each kind for the verify tests.
VERIFY_RUNS = ("reference-W1", "adversarial-W2-M1_stale_quote", "baseline-FUND_01-seed-1-do-nothing")
LOAD_TIMEOUT_MS = 90_000


class Site:
    """Where the site is served and where each run's verify box lives."""

    def __init__(self, root: Path, url: str, kind: str):
        self.root, self.url, self.kind = root, url, kind

    def run_page(self, run_id: str) -> str:
        """URL of a page holding the run's `.fb-verify` box."""
        return self.url + verify_page(self.root, run_id)


@pytest.fixture(scope="session")
def bundle_dir(tmp_path_factory):
    """The real engine bundle directory (zip, manifest, provenance) for these sources."""
    return devsite.engine_bundle(tmp_path_factory.mktemp("desk-bundle"))


@pytest.fixture(scope="session")
def site(tmp_path_factory, bundle_dir):
    missing = [
        what
        for ok, what in (
            (Path(CHROMIUM).exists(), f"{CHROMIUM} (apt-get install chromium)"),
            ((ROOT / "node_modules" / "pyodide").exists(), "the pinned Pyodide runtime (npm ci)"),
        )
        if not ok
    ]
    if missing:
        # in CI the browser tests must run, never skip quietly
        (pytest.fail if os.environ.get("CI") else pytest.skip)(f"not installed: {', '.join(missing)}")
    choice = os.environ.get("FUNDBOOK_DESK_SITE") or ("public" if devsite.public_is_current(PUBLIC) else "dev")
    if choice == "public":
        root, kind = PUBLIC, "public"
    else:
        root, kind = devsite.build(tmp_path_factory.mktemp("desk-site"), bundle_dir, VERIFY_RUNS), "dev"
    with Server(root) as url:
        yield Site(root, url, kind)


# `browser` (one Playwright + Chromium per process) comes from tests/conftest.py.


@pytest.fixture
def context(browser, site):
    """A fresh profile (empty storage) in which every non-local request is aborted and recorded."""
    ctx = browser.new_context(accept_downloads=True)
    ctx.aborted = []
    local = urlparse(site.url).netloc

    def route(r):
        if urlparse(r.request.url).netloc == local:
            r.continue_()
        else:
            ctx.aborted.append(r.request.url)
            r.abort()

    ctx.route(re.compile(r".*"), route)
    ctx.set_default_timeout(30_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
