"""Nothing overflows: every page type, at a laptop (1366x900) and a phone
(390x844), is no wider than its window, and nothing in the content runs past
the content column (under the table of contents, or off the screen) unless it
sits in a region that scrolls on its own. The desk gets the whole width."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

SIZES = {"laptop": (1366, 900), "phone": (390, 844)}
KINDS = (
    "home",
    "register",
    "reference",
    "adversarial",
    "baseline",
    "desk",
    "contract",
    "attempts",
    "transcript",
    "inspect",
)
DESK_TIMEOUT_MS = 90_000

# Elements of the content column that end past its right edge (or the window's)
# without a scrolling ancestor to hold them: what a reader cannot see.
OVERFLOW = """() => {
  const W = window.innerWidth;
  const content = document.querySelector('.md-content');
  const limit = Math.min(W, content ? content.getBoundingClientRect().right : W) + 1;
  const scroller = (e) => {
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a).overflowX;
      if (s === 'auto' || s === 'scroll' || s === 'hidden' && a.matches('.md-content *')) return a;
    }
    return null;
  };
  const name = (e) => e.tagName.toLowerCase() + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '');
  const cut = [];
  for (const e of document.querySelectorAll('.md-content *')) {
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(e).visibility === 'hidden') continue;
    if ((r.right > limit || r.left < -1) && !scroller(e)) cut.push(`${name(e)} ends at ${Math.round(r.right)} px`);
  }
  return {page: document.documentElement.scrollWidth, window: W, cut: cut.slice(0, 5)};
}"""


def page_types(run_index, public):
    """{kind: site path} for each page type the site has."""
    entries = run_index["entries"]
    paths = {"home": "", "register": "runs/", "desk": "desk/", "contract": "contract/", "attempts": "attempts/"}
    for kind in ("reference", "adversarial", "baseline"):
        paths[kind] = f"runs/{next(e['run_id'] for e in entries if e['kind'] == kind)}/"
    transcripts = sorted(p.parent.name for p in (public / "attempts").glob("*/index.html"))
    paths["transcript"] = f"attempts/{transcripts[0]}/"
    # an Inspect-imported attempt's page (the log's messages); a worker's transcript until one is published
    paths["inspect"] = f"attempts/{next((n for n in transcripts if n.startswith('inspect-')), transcripts[0])}/"
    return paths


# The desk opens on a saved session of episode W3: day 1 has positions, so the
# report's per-asset table and every packet table are there to measure.
DESK_SESSION = '{"format": 1, "source": {"episode": "W3"}, "moves": [], "finalized": false}'


def open_page(browser, server, path, size, **options):
    """A fresh context at `size` with `path` loaded (the desk: until its first packet is shown)."""
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    context.add_init_script(f"try {{ localStorage.setItem('fundbook.desk/1', {DESK_SESSION!r}); }} catch (e) {{}}")
    page = context.new_page()
    page.goto(server + path)
    if path == "desk/":
        page.wait_for_selector("#fb-desk[data-ready]", state="attached", timeout=DESK_TIMEOUT_MS)
        assert page.get_attribute("#fb-desk", "data-ready") == "true", page.inner_text("#fb-desk")
    page.wait_for_selector("html[data-fb-regions]", state="attached")
    return context, page


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_no_page_is_wider_than_its_window(browser, server, run_index, built_site, kind, size):
    path = page_types(run_index, built_site[0])[kind]
    context, page = open_page(browser, server, path, size)
    try:
        got = page.evaluate(OVERFLOW)
    finally:
        context.close()
    assert got["page"] <= got["window"], (
        f"/{path} at {size}: the page is {got['page']} px wide in a {got['window']} px window"
    )
    assert not got["cut"], f"/{path} at {size}: content runs past the content column: {got['cut']}"


def test_the_desk_gets_the_whole_width(browser, server):
    """... and, at 1366 px, its per-asset report table fits its column (it was 1,770 px), and its cold load does not
    fetch the site's search index (1.9 MB the desk never uses)."""
    requests = []
    context, page = open_page(browser, server, "desk/", "laptop")
    try:
        context.on("request", lambda r: requests.append(r.url))
        sidebars = page.evaluate(
            "[...document.querySelectorAll('.md-sidebar')].filter(s => s.getBoundingClientRect().width > 0 && getComputedStyle(s).display !== 'none').length"
        )
        width = page.evaluate("document.querySelector('.fb-desk').getBoundingClientRect().width")
        report = page.evaluate("""() => { const t = document.querySelector('table.fb-report-assets');
            return [t.getBoundingClientRect().width, t.closest('.fb-table-wrap').getBoundingClientRect().width]; }""")
        search_form = page.evaluate("!!document.forms.namedItem('search')")
        page.wait_for_timeout(1000)
    finally:
        context.close()
    assert sidebars == 0
    assert width >= 1200, f"the desk is {width} px wide in a 1366 px window"
    assert report[0] <= report[1] + 1, f"the report table is {report[0]} px in a {report[1]} px column"
    # the theme requests search/search_index.json exactly when the page has a form named "search"
    assert not search_form and not [u for u in requests if "search_index" in u]


def test_the_home_chart_and_board_read_on_a_phone(browser, server):
    """At 390 px the chart's plot keeps most of the width (it was 47 px, beside the legend and the agents' names),
    and a board cell's parts are apart ("30 · 33 attempts", never "3033 attempts")."""
    context, page = open_page(browser, server, "", "phone")
    try:
        page.wait_for_selector(".fb-board-chart .fb-chart[data-rendered=true]", state="attached", timeout=60_000)
        plot = page.evaluate("""() => Math.max(...[...document.querySelectorAll('.fb-board-chart svg g[aria-label^="X-axis"]')]
            .map((g) => g.getBoundingClientRect().width))""")
        joins = page.evaluate("""() => [...document.querySelectorAll('.fb-board-table td.fb-num small')]
            .map((s) => getComputedStyle(s, '::before').content)""")
    finally:
        context.close()
    assert plot >= 200, f"the plot is {plot} px wide at 390 px"
    assert all(j == '" · "' for j in joins), joins


def test_the_back_to_top_pill_covers_no_table_header(browser, server):
    """Scrolled into the register and back up a little (the pill shows): it sits in the bottom corner, clear of
    every table header on the screen."""
    context, page = open_page(browser, server, "runs/", "laptop")
    try:
        page.mouse.wheel(0, 2500)
        page.wait_for_timeout(300)
        page.mouse.wheel(0, -400)
        page.wait_for_selector(".md-top:not([hidden])", timeout=5_000)
        pill, headers = page.evaluate("""() => { const r = (e) => { const b = e.getBoundingClientRect();
              return [b.left, b.top, b.right, b.bottom]; };
            return [r(document.querySelector('.md-top')), [...document.querySelectorAll('.md-content thead th')].map(r)
              .filter((b) => b[3] > 0 && b[1] < innerHeight)]; }""")
    finally:
        context.close()
    overlaps = [h for h in headers if h[0] < pill[2] and pill[0] < h[2] and h[1] < pill[3] and pill[1] < h[3]]
    assert pill[1] > 900 / 2 and not overlaps, (pill, overlaps[:3])


def test_the_report_reflows_to_cards_on_a_phone(browser, server):
    context, page = open_page(browser, server, "desk/", "phone")
    try:
        rows = page.evaluate("""() => [...document.querySelectorAll('table.fb-report-assets tbody tr')].map(r => {
            const b = r.getBoundingClientRect(); return [getComputedStyle(r).display, Math.round(b.right)]; })""")
        label = page.evaluate(
            "getComputedStyle(document.querySelector('table.fb-report-assets td'), '::before').content"
        )
    finally:
        context.close()
    assert rows and all(display == "block" and right <= 390 for display, right in rows), rows
    assert label == '"in the report"'


# What a reader sees of elements the page marked `hidden` (and of their siblings).
DISPLAYED = """(selector) => [...document.querySelectorAll(selector)].map((e) => {
  const r = e.getBoundingClientRect();
  return [e.hidden, r.width > 0 && r.height > 0 && getComputedStyle(e).display !== 'none'];
})"""


def test_hidden_hides_register_cards_and_transcript_checkpoints_on_a_phone(browser, server, built_site):
    """Issue 31: on a phone the register's rows are cards (`tr {display:block}`) and a transcript's checkpoints are
    the theme's `details {display:flow-root}`; a filtered-out card or checkpoint must not show, as an empty bar or
    otherwise. Counted at 390 px: the cards displayed are exactly the count the filter states."""
    import re

    context, page = open_page(browser, server, "runs/?view=grader&status=MALFORMED", "phone")
    try:
        stated = page.inner_text("[data-fb-count]")
        cards = page.evaluate(DISPLAYED, "[data-fb-view-section='grader'] tr[data-run-id]")
    finally:
        context.close()
    shown, total = map(int, re.match(r"(\d+) of (\d+) ", stated).groups())
    assert 0 < shown < total, stated
    displayed = sum(1 for _, visible in cards if visible)
    assert displayed == shown and all(not visible for hidden, visible in cards if hidden), (stated, displayed)

    public = built_site[0]
    marked = None
    for transcript in sorted((public / "attempts").glob("*/index.html")):
        html = transcript.read_text(encoding="utf-8")
        if 'data-fb-marked="no"' in html and 'data-fb-marked="yes"' in html and "data-fb-day=" in html:
            marked = transcript.parent.name
            break
    assert marked, "a transcript with marked and unmarked checkpoints"
    context, page = open_page(browser, server, f"attempts/{marked}/?errors=1", "phone")
    try:
        days = page.evaluate(DISPLAYED, "details[data-fb-day]")
        titles = page.evaluate(DISPLAYED, ".fb-day-title")
    finally:
        context.close()
    hidden_days = [visible for hidden, visible in days if hidden]
    assert hidden_days and not any(hidden_days), days
    assert any(visible for hidden, visible in days if not hidden)
    assert not any(visible for hidden, visible in titles if hidden)
