"""Accessible: axe-core (pinned in package.json, injected by the tests only,
never shipped to readers) finds no critical and no serious violation on any
page type, at a laptop and a phone size, under the site's own CSP."""

from pathlib import Path

import pytest

from tests.site.test_layout import KINDS, SIZES, open_page, page_types

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"

RUN_AXE = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
}"""


@pytest.fixture(scope="module")
def axe_source():
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `npm ci` (axe-core is pinned in package.json)")
    return AXE.read_text(encoding="utf-8")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_no_critical_or_serious_violation(browser, server, run_index, built_site, axe_source, kind, size):
    path = page_types(run_index, built_site[0])[kind]
    context, page = open_page(browser, server, path, size)
    try:
        page.evaluate(axe_source)  # evaluated by the test harness, not loaded by the page: the CSP stays as published
        violations = page.evaluate(RUN_AXE)
    finally:
        context.close()
    grave = [v for v in violations if v["impact"] in ("critical", "serious")]
    others = sorted({f"{v['impact']} {v['id']}" for v in violations} - {f"{v['impact']} {v['id']}" for v in grave})
    print(f"\naxe /{path} {size}: {len(grave)} critical or serious; others: {', '.join(others) or 'none'}")
    assert not grave, [f"{v['impact']} {v['id']}: {v['help']} at {v['nodes']}" for v in grave]


def test_axe_is_not_shipped_to_readers(built_site):
    public = built_site[0]
    assert not list(public.rglob("axe*.js"))
    assert not [p for p in public.rglob("*.html") if "axe.min" in p.read_text(errors="replace")]


def test_the_search_dialog_has_a_name(browser, server):
    context, page = open_page(browser, server, "", "laptop")
    try:
        label = page.get_attribute(".md-search[role=dialog]", "aria-label")
    finally:
        context.close()
    assert label == "Search"
