"""Issue 19 in Chromium, measured from the DOM at a laptop (1366x900) and a
phone (390x844): the home page and the register open with the answer, run
pages read the outcome first and fit, transcripts are a day index with an
"errors only" filter, and the register's and transcript's state lives in
the query string."""

import json
import re

import pytest

from builders.site import glossary
from tests.site.test_layout import SIZES

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]


@pytest.fixture(scope="module")
def context(browser):
    """One context per size for this module (pages are cheap, contexts less so)."""
    made = {}

    def get(size):
        if size not in made:
            width, height = SIZES[size]
            made[size] = browser.new_context(viewport={"width": width, "height": height})
        return made[size]

    yield get
    for c in made.values():
        c.close()


@pytest.fixture
def at(context, server):
    opened = []

    def open_(path, size="laptop"):
        page = context(size).new_page()
        opened.append(page)
        page.goto(server + path)
        page.wait_for_selector("html[data-fb-regions]", state="attached")
        return page

    yield open_
    for p in opened:
        p.close()


def _record(built_site, entry):
    return json.loads((built_site[1] / entry["record"].split("/", 1)[1]).read_text())["content"]


# ---- home ----


@pytest.mark.parametrize("size", SIZES)
def test_the_home_page_says_what_fundbook_is_and_the_status_on_its_first_screen(at, size, built_site):
    page = at("", size)
    lede, status = (page.locator(sel).first for sel in (".fb-lede", ".fb-status-line"))
    height = SIZES[size][1]
    assert lede.inner_text().startswith("fundbook evaluates agents on a simulated structured-credit funding desk")
    assert lede.bounding_box()["y"] < 200
    box = status.bounding_box()
    # the result in one sentence comes first (data-fb-headline, tests/site/test_reader_numbers.py); the status
    # line follows it: whole on a laptop's first screen, begun on a phone's
    end = box["y"] + (box["height"] if size == "laptop" else 0)
    assert end <= height, f"the status line ends at {box['y'] + box['height']} px"
    real = [
        p
        for p in (built_site[1] / "attempts").glob("*/record.json")
        if json.loads(p.read_text())["content"]["model"]["provider"] != "mock"
        and json.loads(p.read_text())["content"].get("result")
    ]
    text = status.inner_text()
    assert text.startswith("Status on 20")
    assert ("no real model has a result yet." in text) == (not real)
    # the leaderboard starts on the first screen of a laptop
    if size == "laptop":
        assert page.locator(".fb-board-table").bounding_box()["y"] < height


def test_the_leaderboard_labels_every_row_and_draws_the_mock_apart(at):
    page = at("")
    rows = page.eval_on_selector_all(
        ".fb-board-table tbody tr[data-agent]",
        """rows => rows.map(r => ({
        key: r.dataset.agent, label: r.querySelector('.fb-badge').textContent,
        rate: r.querySelector('[data-label=Qualified]').innerText,
        mean: r.querySelector('[data-label="Mean score"]').innerText}))""",
    )
    assert {r["key"] for r in rows} >= {"baseline:do-nothing", "baseline:reference", "baseline:shortest-cheapest"}
    assert all(r["label"] in ("model", "practitioner cohort", "scripted baseline") for r in rows)
    assert not [r for r in rows if "mock" in r["key"]]
    for r in rows:  # a value, then its interval in brackets
        assert r["rate"].replace("\n", " ").split(" [")[0].endswith("%") and "[" in r["rate"], r
    assert "machinery tests, not agents" in page.inner_text(".fb-machinery")
    assert page.locator(".fb-machinery").bounding_box()["y"] > page.locator(".fb-board-table").bounding_box()["y"]
    tips = page.eval_on_selector_all(".fb-board-table thead th", "ths => ths.map(t => [t.textContent, t.title])")
    assert tips == [[name, text] for name, text in glossary.BOARD.values()]


# ---- the register ----


def _register_rows(page):
    return page.evaluate("""() => {
        const section = document.querySelector('section[data-fb-view-section]:not([hidden])');
        const area = section.closest('.md-content__inner') || section;
        const table = section.querySelector('table');
        const rows = [...table.tBodies[0].rows].filter(r => !r.hidden).map(r => r.getBoundingClientRect().height);
        const cell = getComputedStyle(table.tBodies[0].rows[0].cells[0]);
        return {table: table.getBoundingClientRect().width, scroll: table.scrollWidth,
                area: section.clientWidth, areaRight: area.getBoundingClientRect().right,
                tableRight: table.getBoundingClientRect().right, rows,
                line: parseFloat(cell.lineHeight) + parseFloat(cell.paddingTop) + parseFloat(cell.paddingBottom)};
    }""")


@pytest.mark.parametrize("view", ["results", "grader"])
def test_at_1366_the_register_fits_its_area_and_rows_stay_one_line(at, view):
    page = at(f"runs/?view={view}")
    got = _register_rows(page)
    assert got["scroll"] <= got["area"] + 1 and got["tableRight"] <= got["areaRight"] + 1, got
    one_line = min(got["rows"])
    assert one_line <= got["line"] + 8, f"the shortest row is {one_line} px: not one line ({got['line']} px)"
    assert max(got["rows"]) <= 2 * one_line, f"a row is {max(got['rows'])} px, a one-line row {one_line} px"


def test_the_register_keeps_view_filters_and_sort_in_the_query_string(at, run_index):
    page = at("runs/?view=grader&kind=adversarial&status=MALFORMED")
    assert page.locator("section#grader").is_visible() and not page.locator("section#results").is_visible()
    assert page.input_value("[data-fb-filter=kind][data-fb-view=grader]") == "adversarial"
    shown = page.eval_on_selector_all("section#grader tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.runId)")
    want = [e["run_id"] for e in run_index["entries"] if e["kind"] == "adversarial" and "M7_malformed" in e["run_id"]]
    assert shown == want
    page.select_option("[data-fb-filter=status][data-fb-view=grader]", "")
    page.locator("section#grader th[data-fb-key=score] button").click()
    page.locator("section#grader th[data-fb-key=score] button").click()
    assert page.url.endswith("runs/?view=grader&kind=adversarial&sort=score&dir=desc")
    order = page.eval_on_selector_all("section#grader tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.runId)")
    page.reload()
    assert (
        page.eval_on_selector_all("section#grader tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.runId)")
        == order
    )
    assert page.locator("section#grader th[data-fb-key=score]").get_attribute("aria-sort") == "descending"
    page.click("[data-fb-view-link=results]")
    assert page.url.endswith("/runs/") and page.locator("section#results").is_visible()
    page.fill("[data-fb-search]", "seed-2")
    page.select_option("[data-fb-sort-select]", "score desc")
    assert page.url.endswith("runs/?q=seed-2&sort=score&dir=desc")


def test_register_headers_carry_their_glossary_entry(at):
    page = at("runs/")
    tips = page.eval_on_selector_all("section#results thead th", "ths => ths.map(t => [t.dataset.fbKey, t.title])")
    assert tips and all(title == glossary.REGISTER[key][1] for key, title in tips)
    text = page.inner_text(".fb-constants")
    assert "Every run was executed by the engine bundle" in text and "compiled bundle in Pyodide" in text


def test_on_a_phone_the_register_rows_are_cards(at):
    page = at("runs/", "phone")
    cards = page.eval_on_selector_all(
        "section#results tbody tr",
        """rows => rows.map(r => {
        const b = r.getBoundingClientRect(); return [getComputedStyle(r).display, b.right, b.height]; })""",
    )
    assert cards and all(display == "block" and right <= 390 for display, right, _ in cards), cards[:3]
    assert max(h for *_, h in cards) < 200, max(h for *_, h in cards)
    label = page.evaluate(
        "getComputedStyle(document.querySelector('section#results td[data-label]'), '::before').content"
    )
    assert label == '"World "'


# ---- run pages ----


def _first(run_index, built_site, test):
    return next(e for e in run_index["entries"] if test(e, _record(built_site, e)))


@pytest.mark.parametrize("size", SIZES)
def test_run_page_headers_do_not_wrap_and_failing_gates_read_as_failures(at, run_index, built_site, size):
    entry = _first(run_index, built_site, lambda e, c: any(not g["passed"] for g in c.get("gates") or []))
    page = at(f"runs/{entry['run_id']}/", size)
    heights = page.eval_on_selector_all(
        ".fb-gates th, .fb-components th, .fb-gates .fb-badge",
        """els => els
        .filter(e => e.getBoundingClientRect().height > 1).map(e => {
          const s = getComputedStyle(e);
          return [e.textContent, e.getBoundingClientRect().height, parseFloat(s.lineHeight) + parseFloat(s.paddingTop)
                  + parseFloat(s.paddingBottom)]; })""",
    )
    for text, height, line in heights:
        assert height <= line * 1.5 + 2, f"{text!r} wraps: {height} px for a {line} px line at {size}"
    failed = [g["gate"] for g in _record(built_site, entry)["gates"] if not g["passed"]]
    rows = page.eval_on_selector_all("tr.fb-gate-failed", "rs => rs.map(r => r.innerText)")
    assert len(rows) == len(failed) and all("✗ did not pass" in r for r in rows)


def test_an_adversarial_page_first_says_whether_the_grader_test_passed(at, run_index):
    entry = next(e for e in run_index["entries"] if e["kind"] == "adversarial")
    page = at(f"runs/{entry['run_id']}/", "phone")
    first = page.locator("article .fb-run-lede p").first
    assert first.inner_text().startswith("✓ grader test passed The grader test passed:")
    assert first.bounding_box()["y"] < 400  # on the phone's first screen, before any status badge
    assert (
        first.bounding_box()["y"]
        < page.locator(".fb-status-scored, .fb-status-malformed, .fb-status-unscorable").first.bounding_box()["y"]
    )


def test_at_1366_the_days_table_fits(at, run_index, built_site):
    entry = _first(run_index, built_site, lambda e, c: sum(len(d["decisions"]) for d in c.get("days") or []) > 3)
    page = at(f"runs/{entry['run_id']}/")
    got = page.evaluate("""() => { const d = document.querySelector('.fb-days'), t = d.querySelector('table');
        return [t.scrollWidth, d.clientWidth, d.getBoundingClientRect().right,
                document.querySelector('.md-content').getBoundingClientRect().right]; }""")
    assert got[0] <= got[1] + 1 and got[2] <= got[3] + 1, got


def test_on_a_phone_receipts_read_as_money_in_sane_rows(at, run_index):
    page = at("runs/reference-W3/", "phone")
    page.evaluate("document.querySelector('.fb-receipts details').open = true")
    got = page.eval_on_selector_all(
        ".fb-receipts-table tbody tr",
        """rows => rows.map(r => {
        const b = r.getBoundingClientRect(); return [b.height, b.right, r.innerText]; })""",
    )
    assert got
    assert max(h for h, *_ in got) <= 400, max(h for h, *_ in got)
    assert all(right <= 390 for _, right, _ in got)
    text = " ".join(t for *_, t in got)
    assert "notional 14,000,000.00" in text and "1400000000" not in text


def test_a_baseline_page_shows_its_world_scale(at, run_index):
    entry = next(e for e in run_index["entries"] if e["run_id"].endswith("shortest-cheapest"))
    page = at(f"runs/{entry['run_id']}/")
    line = page.inner_text(".fb-scale-line")
    assert line.startswith("Same world") and "do-nothing " in line and "reference 100/100" in line
    assert (
        page.locator(".fb-scale-line").bounding_box()["y"]
        < page.locator("#status-verdict-and-score").bounding_box()["y"]
    )


def test_a_malformed_page_says_what_was_malformed(at):
    page = at("runs/adversarial-W1-M7_malformed/")
    assert page.inner_text(".fb-unscored").startswith(
        "What was malformed candidate.batches[0].actions: expected array, got str"
    )


# ---- transcripts ----


def _transcript_path(built_site):
    names = sorted(
        p.parent.name
        for p in (built_site[0] / "attempts").glob("*/index.html")
        if not p.parent.name.startswith("test-hostile")
    )
    # the mock's transcript: its worker calls tools, one of which exits 1 (a local model's compact prompt calls none)
    return f"attempts/{next((n for n in names if n.startswith('mock-')), names[0])}/"


def test_a_transcript_is_a_day_index_with_folded_checkpoints(at, built_site):
    page = at(_transcript_path(built_site))
    days = page.eval_on_selector_all("details[data-fb-day]", "ds => ds.map(d => [d.dataset.fbDay, d.open])")
    assert len(days) >= 20 and not any(open_ for _, open_ in days)
    toc = page.eval_on_selector_all(
        ".md-sidebar--secondary a[href^='#day-']", "as => as.map(a => a.textContent.trim())"
    )
    assert toc[:3] == ["Day 1", "Day 2", "Day 3"] or toc[0].startswith("Day 1")
    assert len(toc) == sum(1 for key, _ in days if key.startswith("day-"))
    title = page.inner_text("#day-1")
    assert title.startswith("Day 1: batch accepted · ") and " · cash " in title
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 9000, f"the transcript page is {height} px tall with every checkpoint folded"
    page.goto(page.url.split("#")[0] + "#day-9")
    assert page.evaluate("document.querySelector('details[data-fb-day=\"day-9\"]').open")


def test_the_errors_only_filter_shows_the_marked_steps_and_lives_in_the_url(at, built_site):
    page = at(_transcript_path(built_site))
    marked = page.locator("section.fb-step[data-fb-marked=yes]").count()
    assert marked >= 1
    error = page.locator("section.fb-step-error").first
    assert "✗ exit 1" in error.text_content() and "exit 0" not in error.locator(".fb-tool-head").text_content()
    page.check("[data-fb-errors-only]")
    assert page.url.endswith("?errors=1")
    visible = page.eval_on_selector_all(
        "section.fb-step", "ss => ss.filter(s => s.offsetParent).map(s => s.dataset.fbMarked)"
    )
    assert visible == ["yes"] * marked
    assert page.inner_text("[data-fb-errors-count]") == f"{marked} marked step{'s' if marked != 1 else ''} shown"
    page.reload()
    assert page.is_checked("[data-fb-errors-only]")
    assert page.locator("section.fb-step:visible").count() == marked
    page.uncheck("[data-fb-errors-only]")
    assert "errors=" not in page.url


# ---- comparisons and attempts ----


@pytest.mark.parametrize("size", SIZES)
def test_the_comparisons_table_is_not_clipped(at, size):
    page = at("comparisons/", size)
    got = page.evaluate("""() => { const t = document.querySelector('table.fb-comparisons-table');
        const box = t.parentElement, c = document.querySelector('.md-content__inner');
        return {scroll: box.scrollWidth, width: box.clientWidth, right: box.getBoundingClientRect().right,
                limit: c.getBoundingClientRect().right, region: box.hasAttribute('data-fb-region'),
                cells: [...t.tBodies[0].rows[0].cells].map(td => td.innerText)}; }""")
    assert got["right"] <= got["limit"] + 1, got  # never past the content column
    if size == "phone":  # wider than a phone: it scrolls in its own focusable region, nothing is cut
        assert got["scroll"] > got["width"] and got["region"], got
    else:
        assert got["scroll"] <= got["width"] + 1 and not got["region"], got
        # after comparison, rule, verdict, confidence: the estimate, both bounds, the margin, n
        estimate, lower, upper, n = got["cells"][4], got["cells"][5], got["cells"][6], got["cells"][8]
        assert all(re.fullmatch(r"-?[\d,]+\.\d\d", x) for x in (estimate, lower, upper)), got["cells"]
        assert re.fullmatch(r"\d{1,3}(,\d{3})*", n), n


def test_the_charts_keep_every_day_and_mark_cash_below_zero(at, run_index, built_site):
    entry = _first(run_index, built_site, lambda e, c: any(d["cash"] < 0 for d in c.get("days") or []))
    days = _record(built_site, entry)["days"]
    page = at(f"runs/{entry['run_id']}/")
    for chart in ("cash", "funding"):
        page.locator(f"#chart-{chart} svg").first.wait_for(state="attached", timeout=10_000)
    axes = page.eval_on_selector_all(
        ".fb-chart [aria-label^='X-axis']", "as => as.map(a => a.getAttribute('aria-label'))"
    )
    assert len(axes) == 2 and all(f"with {len(days)} values" in a for a in axes), axes  # quiet days are on the axis
    red = page.eval_on_selector_all(
        "#chart-cash .mark-symbol path",
        "ps => ps.filter(p => (p.getAttribute('fill') || '').toLowerCase() === '#b91c1c').length",
    )
    assert red == sum(1 for d in days if d["cash"] < 0)
    zero = page.eval_on_selector_all(
        "#chart-cash .mark-rule line",
        "ls => ls.filter(l => (l.getAttribute('stroke') || '').toLowerCase() === '#b91c1c').length",
    )
    assert zero == 1  # the zero line, once
    below = [d["day"] for d in days if d["cash"] < 0]
    assert f"Cash closed below zero on days {below[0]}" in page.inner_text(".fb-below-zero-note")


def test_a_leaderboard_row_links_to_its_runs_in_the_register(at, run_index, built_site):
    page = at("")
    href = page.get_attribute('tr[data-agent="baseline:do-nothing"] a:text-is("runs")', "href")
    assert href == "runs/?policy=do-nothing"
    page.click('tr[data-agent="baseline:do-nothing"] a:text-is("runs")')
    page.wait_for_selector("html[data-fb-regions]", state="attached")
    shown = page.eval_on_selector_all("section#results tbody tr:not([hidden])", "rs => rs.map(r => r.dataset.runId)")
    assert shown == [e["run_id"] for e in run_index["entries"] if e["run_id"].endswith("-do-nothing")]
    assert page.input_value("[data-fb-filter=policy][data-fb-view=results]") == "do-nothing"


# ---- item 6 of issue 39: the reader's edge on a phone ----

CHART_TEXT = """() => [...document.querySelectorAll('.fb-chart svg')].flatMap(svg => {
    const box = svg.getBoundingClientRect();
    return [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => {
        const b = t.getBoundingClientRect();
        return {text: t.textContent, cut: t.textContent.endsWith('…'),
                out: b.left < box.left - 1 || b.right > box.right + 1 || b.top < box.top - 1 || b.bottom > box.bottom + 1};
    }); })"""


@pytest.mark.parametrize("path", ["", "runs/baseline-FUND_01-seed-1-do-nothing/", "comparisons/smollm2-vs-do-nothing/"])
def test_on_a_phone_no_chart_title_or_label_is_clipped(at, path):
    """Every title, axis title and label of every chart lies inside its drawing and none is cut short with an
    ellipsis: at 390 px the home chart's title ran past both sides and its agents' names were cut, and a decision's
    title past the edge (charts.js wraps them; a run's y-axis title too)."""
    page = at(path, "phone")
    page.wait_for_selector(".fb-chart[data-rendered=true]", state="attached", timeout=20_000)
    page.wait_for_timeout(300)
    texts = page.evaluate(CHART_TEXT)
    assert texts
    bad = [t["text"] for t in texts if t["cut"] or t["out"]]
    assert not bad, bad


def test_on_a_phone_the_days_table_is_a_card_a_day(at, run_index):
    page = at("runs/reference-W3/", "phone")
    got = page.evaluate("""() => { const rows = [...document.querySelectorAll('.fb-days-table tbody tr')];
        const d = document.querySelector('.fb-days');
        return {display: getComputedStyle(rows[0]).display, scroll: d.scrollWidth, width: d.clientWidth,
                labels: [...rows[0].cells].map(c => getComputedStyle(c, '::before').content),
                right: Math.max(...rows.map(r => r.getBoundingClientRect().right))}; }""")
    assert got["display"] == "block" and got["scroll"] <= got["width"] + 1 and got["right"] <= 390, got
    assert got["labels"] == [
        '"Day "',
        '"Batch "',
        '"Accepted "',
        '"Refused "',
        '"Decisions "',
        '"Cash "',
        '"Breaches "',
        '"Report "',
    ], got["labels"]


def test_scrolling_code_blocks_can_be_reached_by_keyboard(at, run_index):
    """Every code block that scrolls sideways -- the <pre> itself or its <code> -- can take the keyboard's focus
    (the theme does <pre><code> at load; regions.js a <pre> that scrolls itself), on a page of each kind."""
    for path in ("run-it/", "runs/reference-W1/", "contract/"):
        page = at(path, "phone")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.wait_for_timeout(300)  # regions.js marks again when the article's size changes
        got = page.evaluate("""() => [...document.querySelectorAll('article pre')].map(p => {
            const c = p.querySelector(':scope > code'), el = p.scrollWidth > p.clientWidth + 1 ? p
                : c && c.scrollWidth > c.clientWidth + 1 ? c : null;
            return el ? [el.tagName, el.getAttribute('tabindex')] : null; }).filter(Boolean)""")
        assert got and all(t == "0" for _, t in got), (path, got)
