"""Nothing overflows: every page type, at a laptop (1366x900) and a phone
(390x844), is no wider than its window, and nothing in the content runs past
the content column (under the table of contents, or off the screen) unless it
sits in a region that scrolls on its own. The desk gets the whole width."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]

SIZES = {"laptop": (1366, 900), "phone": (390, 844)}
KINDS = ("home", "register", "reference", "adversarial", "baseline", "desk", "contract", "attempts", "transcript")
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
    assert got["page"] <= got["window"], f"/{path} at {size}: the page is {got['page']} px wide in a {got['window']} px window"
    assert not got["cut"], f"/{path} at {size}: content runs past the content column: {got['cut']}"


def test_the_desk_gets_the_whole_width(browser, server):
    context, page = open_page(browser, server, "desk/", "laptop")
    try:
        sidebars = page.evaluate("[...document.querySelectorAll('.md-sidebar')].filter(s => s.getBoundingClientRect().width > 0 && getComputedStyle(s).display !== 'none').length")
        width = page.evaluate("document.querySelector('.fb-desk').getBoundingClientRect().width")
    finally:
        context.close()
    assert sidebars == 0
    assert width >= 1200, f"the desk is {width} px wide in a 1366 px window"


def test_the_report_reflows_to_cards_on_a_phone(browser, server):
    context, page = open_page(browser, server, "desk/", "phone")
    try:
        rows = page.evaluate("""() => [...document.querySelectorAll('table.fb-report-assets tbody tr')].map(r => {
            const b = r.getBoundingClientRect(); return [getComputedStyle(r).display, Math.round(b.right)]; })""")
        label = page.evaluate("getComputedStyle(document.querySelector('table.fb-report-assets td'), '::before').content")
    finally:
        context.close()
    assert rows and all(display == "block" and right <= 390 for display, right in rows), rows
    assert label == '"in the report"'
