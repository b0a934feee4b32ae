"""The built site in Debian's Chromium: register behaviour, run pages and
charts, OG meta, zero non-local requests, and an inert hostile transcript."""

import json
import re
import time
from urllib.parse import urlsplit

import pytest

from tests.site import hostile
from tests.site.audit import AUDIT, RECORD_VIOLATIONS

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]


def _visible_rows(page):
    return page.eval_on_selector_all(
        "section[data-fb-view-section]:not([hidden]) table[data-fb-register] tbody tr:not([hidden])",
        "rows => rows.map(r => r.dataset)",
    )


GRADER = ("reference", "adversarial")


def _column(page, key):
    """The data-sort values of a column of the visible view, in row order."""
    return page.evaluate(
        """(key) => {
        const t = document.querySelector('section[data-fb-view-section]:not([hidden]) table[data-fb-register]');
        const i = [...t.tHead.rows[0].cells].findIndex(th => th.dataset.fbKey === key);
        return [...t.tBodies[0].rows].filter(r => !r.hidden).map(r => r.cells[i].dataset.sort); }""",
        key,
    )


def test_register_has_one_row_per_indexed_run_results_first(page, server, run_index):
    entries = run_index["entries"]
    page.goto(server + "runs/")
    results = [e["run_id"] for e in entries if e["kind"] not in GRADER]
    assert [r["runId"] for r in _visible_rows(page)] == results
    assert page.inner_text("[data-fb-count]") == f"{len(results)} of {len(results)} results"
    page.click("[data-fb-view-link=grader]")
    grader = [e["run_id"] for e in entries if e["kind"] in GRADER]
    assert [r["runId"] for r in _visible_rows(page)] == grader
    assert page.inner_text("[data-fb-count]") == f"{len(grader)} of {len(grader)} grader tests"
    assert page.locator("tr[data-run-id]").count() == len(entries)  # every row stays in the page (verify reads them)


def test_register_sorts(page, server, run_index):
    page.goto(server + "runs/")
    score = page.locator("section#results th[data-fb-key=score] button")
    score.click()
    points = [int(p) for p in _column(page, "score")]
    assert points == sorted(points) and len(points) == sum(e["kind"] == "baseline" for e in run_index["entries"])
    score.click()
    assert [int(p) for p in _column(page, "score")] == sorted(points, reverse=True)
    page.locator("section#results th[data-fb-key=world] button").click()
    ids = [r["runId"] for r in _visible_rows(page)]
    assert ids == sorted(ids)


def test_sorting_by_score_puts_unscored_rows_last_both_ways(page, server, run_index):
    """A MALFORMED or UNSCORABLE grader test has no score: it sorts after every scored row, ascending and
    descending (it sorted first ascending, as if it scored below zero)."""
    page.goto(server + "runs/?view=grader")
    score = page.locator("section#grader th[data-fb-key=score] button")
    unscored = sum(1 for e in run_index["entries"] if e["kind"] in GRADER) - sum(
        1 for p in _column(page, "score") if p != ""
    )
    assert unscored > 0
    for direction in (sorted, lambda xs: sorted(xs, reverse=True)):
        score.click()
        column = _column(page, "score")
        scored = [int(p) for p in column if p != ""]
        assert column == [str(p) for p in direction(scored)] + [""] * unscored, column


def test_register_filters_and_searches(page, server, run_index):
    entries = run_index["entries"]
    page.goto(server + "runs/?view=grader")
    page.select_option("[data-fb-filter=kind][data-fb-view=grader]", "adversarial")
    rows = _visible_rows(page)
    assert rows and {r["kind"] for r in rows} == {"adversarial"}
    assert len(rows) == sum(e["kind"] == "adversarial" for e in entries)
    page.select_option("[data-fb-filter=status][data-fb-view=grader]", "MALFORMED")
    assert {r["status"] for r in _visible_rows(page)} == {"MALFORMED"}
    page.select_option("[data-fb-filter=kind][data-fb-view=grader]", "")
    page.select_option("[data-fb-filter=status][data-fb-view=grader]", "")
    page.select_option("[data-fb-filter=verdict][data-fb-view=grader]", "QUALIFIED")
    assert {r["verdict"] for r in _visible_rows(page)} == {"QUALIFIED"}
    page.select_option("[data-fb-filter=verdict][data-fb-view=grader]", "")
    page.fill("[data-fb-search]", "W3-M4")
    assert [r["runId"] for r in _visible_rows(page)] == [e["run_id"] for e in entries if "W3-M4" in e["run_id"]]
    grader = [e for e in entries if e["kind"] in GRADER]
    page.fill("[data-fb-search]", grader[0]["fixture_sha256"][:12])
    assert grader[0]["run_id"] in [r["runId"] for r in _visible_rows(page)]


def test_register_is_a_plain_table_without_javascript(browser, server, run_index):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(server + "runs/")
    assert page.locator("table[data-fb-register] tbody tr").count() == len(run_index["entries"])
    assert page.locator("table[data-fb-register] tbody tr:visible").count() == len(run_index["entries"])  # both views
    assert not page.locator(".fb-controls").is_visible()
    context.close()


def _remote_recorder(context, server, remote):
    origin = urlsplit(server).netloc
    context.on(
        "request",
        lambda r: (
            remote.append(r.url)
            if urlsplit(r.url).scheme not in ("data", "blob") and urlsplit(r.url).netloc != origin
            else None
        ),
    )


def sample_run_pages(run_index, built_site):
    """One run page per shape: every (kind, status, verdict, receipts or none) the index holds.
    Run pages share one template, so the pages of one shape differ only in their numbers,
    which test_build.py and test_money_pages.py read in every page without a browser."""
    seen, out = set(), []
    for entry in run_index["entries"]:
        content = json.loads((built_site[1] / entry["record"].split("/", 1)[1]).read_text())["content"]
        shape = (content["kind"], content["status"], content.get("verdict"), bool(content.get("days")))
        if shape not in seen:
            seen.add(shape)
            out.append(entry)
    return out


def test_run_pages_load_cleanly_with_their_charts(browser, server, run_index, built_site):
    """Also part of the crawl: no run page makes a non-local request, and the
    policy computed from the theme's source blocks nothing the pages run."""
    context = browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    remote = []
    _remote_recorder(context, server, remote)
    page = context.new_page()
    errors = []
    page.on("console", lambda m: errors.append((page.url, m.text)) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append((page.url, str(e))))
    started = time.monotonic()
    sample = sample_run_pages(run_index, built_site)
    assert len(sample) >= 6
    for entry in sample:
        page.goto(f"{server}runs/{entry['run_id']}/")
        assert page.locator("h1").inner_text().startswith(f"Run {entry['run_id']}")
        charts = page.locator(".fb-chart")
        for i in range(charts.count()):
            chart = charts.nth(i)
            chart.locator("svg").first.wait_for(state="attached", timeout=10_000)
            assert chart.get_attribute("data-rendered") == "true"
        og = page.locator('meta[property="og:image"]').get_attribute("content")
        assert og == f"../../og/runs/{entry['run_id']}.png"
        audit = page.evaluate(AUDIT)
        assert not audit["bad"] and not audit["violations"], (entry["run_id"], audit)
    print(f"\n{len(sample)} of {len(run_index['entries'])} run pages in {time.monotonic() - started:.1f}s")
    context.close()
    assert not errors, errors[:10]
    assert not remote, remote[:10]


def test_a_reference_run_draws_both_charts(page, server, run_index):
    ref = next(e["run_id"] for e in run_index["entries"] if e["kind"] == "reference")
    page.goto(f"{server}runs/{ref}/")
    for chart in ("chart-cash", "chart-funding"):
        page.locator(f"#{chart} svg").first.wait_for(state="attached", timeout=10_000)
        assert page.locator(f"#{chart} svg .mark-line, #{chart} svg .mark-rect, #{chart} svg path").count() > 0


def _one_a_section(pages):
    """The first page of each top-level section (and the pages at the top): the crawl's fast sibling."""
    seen, out = set(), []
    for rel in pages:
        section = rel.split("/")[0] if rel.count("/") > 1 else rel
        if section not in seen:
            seen.add(section)
            out.append(rel)
    return out


@pytest.mark.parametrize("crawl", ["one-a-section", pytest.param("every-page", marks=pytest.mark.long)])
def test_crawl_makes_no_remote_request(browser, server, built_site, crawl):
    """Every page that is not a run page (a sample of those is loaded by the test above); under `make test`,
    the first page of each section (every page: `make test-long`)."""
    public = built_site[0]
    pages = sorted(
        p.relative_to(public).as_posix()
        for p in public.rglob("index.html")
        if not (p.parent.parent.name == "runs" and p.parent.parent.parent == public)
    )
    if crawl == "one-a-section":
        pages = _one_a_section(pages)
    pages.append("404.html")
    context = browser.new_context()
    context.add_init_script(RECORD_VIOLATIONS)
    remote, problems = [], []
    _remote_recorder(context, server, remote)
    page = context.new_page()
    for rel in pages:
        page.goto(server + (rel[: -len("index.html")] if rel.endswith("index.html") else rel), wait_until="load")
        for opener in page.locator("details").all()[:3]:
            opener.evaluate("d => d.open = true")
        audit = page.evaluate(AUDIT)
        if audit["bad"] or audit["violations"] or audit["pwned"] is not None:
            problems.append((rel, audit))
    context.close()
    assert not problems, problems[:3]
    assert len(pages) >= (5 if crawl == "one-a-section" else 10)
    assert not remote, remote[:10]


def test_hostile_transcript_is_inert(page, server):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{server}attempts/{hostile.ATTEMPT_ID}/")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None
    assert not dialogs
    article = page.locator("article")
    text = article.inner_text()
    for payload in (
        "<script>window.__pwned = 'script';</script>",
        "<img src=x onerror=",
        "**bold**",
        "[click me](javascript:",
        "THE LAST LINE <script>",
    ):
        assert payload in text, payload
    assert article.locator("img, iframe, b, strong:has-text('bold')").count() == 0
    assert article.locator("a[href^='javascript:']").count() == 0
    assert not [u for u in requests if "evil.example" in u or u.endswith("/x")]


def test_og_meta_on_articles(page, server):
    for rel in ("", "run-it/", "runs/", "attempts/", "faq/"):
        page.goto(server + rel)
        assert page.locator('meta[property="og:image"]').count() == 1
        assert re.search(r"og/pages/[\w-]+\.png$", page.locator('meta[property="og:image"]').get_attribute("content"))


def test_verify_button_works_under_the_site_csp(page, server, run_index):
    """The desk's verify.js, bound to a run page's placeholder, runs Pyodide in a
    worker under this site's CSP and reproduces the published content hash."""
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    ref = next(e["run_id"] for e in run_index["entries"] if e["kind"] == "reference")
    page.goto(f"{server}runs/{ref}/")
    page.get_by_role("button", name="Verify this run in your browser").click()
    result = page.locator(".fb-verify-result")
    result.wait_for(timeout=120_000)
    assert result.get_attribute("data-result") == "match", page.inner_text(".fb-verify")
    assert not errors, errors


def test_home_page_draws_the_leaderboard_chart(page, server):
    page.goto(server)
    page.locator("#chart-leaderboard svg").first.wait_for(state="attached", timeout=10_000)
    assert page.locator("#chart-leaderboard").get_attribute("data-rendered") == "true"
    labels = page.locator("#chart-leaderboard svg").first.text_content()
    # ranked model rows with the scripted baselines on their own worlds beside them; never the mock
    assert "do-nothing" in labels and "reference" in labels and "mock" not in labels


def test_register_shows_the_scale_and_one_badge_per_grader_test(page, server, run_index):
    page.goto(server + "runs/")
    row = page.locator('tr[data-run-id="baseline-FUND_01-seed-2-shortest-cheapest"]')
    scale = row.locator("td.fb-scale").inner_text()
    assert re.fullmatch(r"do-nothing \d+/100 · reference 100/100", scale), scale
    page.goto(server + "runs/?view=grader")
    badge = page.locator('tr[data-run-id="adversarial-W3-M2_double_pledge"] td[data-label="Grader test"] .fb-badge')
    assert badge.inner_text() == "✓ passed"
    assert (
        badge.locator("[data-fb-path]")
        .get_attribute("title")
        .startswith("expected refuses m2-double-pledge on day 1 (TITLE); status SCORED; observed ")
    )
    from builders.site import glossary

    assert page.locator("dl.fb-columns dt").count() == len(glossary.REGISTER)  # engine and path: stated above
