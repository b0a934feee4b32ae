"""Verify in the browser recomputes the decisions: on the strictly built site, a comparison page's
button fetches the evidence, runs the published rules.py in the engine worker's Pyodide and matches
every figure; a forger's decision.json (its evidence hash resealed) is named at the figure it forged."""

import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest

import engine
from builders.site.serve import Serving
from tests.desk.conftest import LOAD_TIMEOUT_MS
from tests.site.conftest import built_site  # noqa: F401  (the shared strict site build)
from tests.site.test_a11y import RUN_AXE

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("verify")]
PAGE = "comparisons/reference-vs-shortest-cheapest-betting/"


@pytest.fixture
def vpage(browser):
    ctx = browser.new_context()
    ctx.route(
        re.compile(r".*"), lambda r: r.continue_() if urlparse(r.request.url).hostname == "127.0.0.1" else r.abort()
    )
    ctx.set_default_timeout(30_000)
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    yield page
    ctx.close()


def verify(page, url, axe=None, path=PAGE):
    page.goto(url + path)
    if axe:  # the comparison page is accessible too (axe-core, injected by the test only)
        page.evaluate(axe)
        grave = [v for v in page.evaluate(RUN_AXE) if v["impact"] in ("critical", "serious")]
        assert not grave, grave
    box = page.locator(".fb-verify-decision")
    box.get_by_role("button", name="Verify this decision in your browser").click()
    box.locator("[data-result]").wait_for(state="attached", timeout=LOAD_TIMEOUT_MS)
    return box


def checks(box):
    return {
        li.get_attribute("data-check"): li.get_attribute("data-ok") == "true"
        for li in box.locator("li[data-check]").all()
    }


def test_a_decision_verifies_in_the_browser_and_a_forged_one_does_not(vpage, built_site, tmp_path):  # noqa: F811
    axe = (Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js").read_text()
    with Serving(built_site[0]) as url:
        box = verify(vpage, url, axe)
        assert box.locator("[data-result]").get_attribute("data-result") == "match", box.inner_text()
        assert checks(box) == {"evidence": True, "rules": True, "recomputation": True, "order": True, "page": True}
        assert int(re.search(r"all (\d+) marked figures", box.inner_text()).group(1)) >= 15
    assert not vpage.errors
    # A forger publishes a better lower bound and reseals the evidence list's hash of decision.json.
    site = tmp_path / "site"
    shutil.copytree(built_site[0], site, copy_function=os.link)
    folder = site / "runs" / PAGE
    decision = json.loads((folder / "decision.json").read_text())
    decision["lower_bound"] = "9.000000000"
    data = (json.dumps(decision, indent=2, sort_keys=True) + "\n").encode()
    (folder / "decision.json").unlink()
    (folder / "decision.json").write_bytes(data)
    evidence = json.loads((folder / "evidence.json").read_text())
    for f in evidence["files"]:
        if f["kind"] == "decision":
            f["sha256"] = engine.sha256_hex(data)
    (folder / "evidence.json").unlink()
    (folder / "evidence.json").write_text(json.dumps(evidence, indent=2, sort_keys=True) + "\n")
    with Serving(Path(site)) as url:
        box = verify(vpage, url)
        assert box.locator("[data-result]").get_attribute("data-result") == "mismatch"
        assert checks(box) == {"evidence": True, "rules": True, "recomputation": False, "order": True, "page": True}
        line = box.locator('li[data-check="recomputation"] tr[data-field="$.lower_bound"]')
        assert line.locator("td").nth(1).text_content() == "9.000000000"


def test_a_study_s_decision_verifies_in_the_browser_from_the_study_s_own_evidence(vpage, built_site):  # noqa: F811
    """The first real-model study's decision (runs/studies/.../smollm2-vs-do-nothing): its page fetches the
    study's evidence (the sweep's rows of the model's recorded attempts) and recomputes every figure."""
    with Serving(built_site[0]) as url:
        box = verify(vpage, url, path="comparisons/smollm2-vs-do-nothing/")
        assert box.locator("[data-result]").get_attribute("data-result") == "match", box.inner_text()
        assert checks(box) == {"evidence": True, "rules": True, "recomputation": True, "order": True, "page": True}
    assert not vpage.errors
