"""Checks over the strictly built site: every run has its page and row, every
page its OG card and CSP, every link resolves, nothing points off the site."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pyarrow.parquet as pq
import pytest

from tests.site import hostile

pytestmark = pytest.mark.xdist_group("site")

# FUNDBOOK_SITE_URL is not set for the tests: no page may name an absolute address
# (no canonical link, a relative og:image, no sitemap).
LOOPBACK = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\]|0\.0\.0\.0)(?::\d+)?", re.I)


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.ids, self.metas = [], set(), {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key) is not None and tag != "svg":
                self.refs.append((tag, a[key]))
        if tag == "meta" and (a.get("property") or a.get("http-equiv")):
            self.metas[a.get("property") or a.get("http-equiv")] = a.get("content")


def parse(path: Path) -> Links:
    p = Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


@pytest.fixture(scope="module")
def html_pages(built_site):
    public = built_site[0]
    return {p: parse(p) for p in sorted(public.rglob("*.html"))}


def test_every_indexed_run_has_a_row_and_a_page(built_site, run_index):
    public = built_site[0]
    register = (public / "runs" / "index.html").read_text()
    results = register[
        register.index('data-fb-view-section="results"') : register.index('data-fb-view-section="grader"')
    ]
    grader = register[register.index('data-fb-view-section="grader"') :]
    ids = lambda html: re.findall(r'<tr [^>]*data-run-id="([^"]+)"', html)  # noqa: E731
    entries = run_index["entries"]
    # results (the baselines) first, then the grader tests, each in index order; every run once
    assert ids(results) == [e["run_id"] for e in entries if e["kind"] not in ("reference", "adversarial")]
    assert ids(grader) == [e["run_id"] for e in entries if e["kind"] in ("reference", "adversarial")]
    for entry in run_index["entries"]:
        page = public / "runs" / entry["run_id"] / "index.html"
        assert page.is_file(), entry["run_id"]
        assert (public / entry["record"]).is_file()


def test_every_page_has_og_card_and_csp(html_pages, built_site):
    for path, p in html_pages.items():
        policy = p.metas.get("Content-Security-Policy")
        assert policy and "default-src 'self'" in policy and "http" not in policy, path
        if path.name == "404.html":
            continue
        image = p.metas.get("og:image")
        assert image and p.metas.get("og:title"), path
        assert not urlsplit(image).scheme and (path.parent / image).resolve().is_file(), (path, image)


def test_links_resolve_and_nothing_is_remote(html_pages, built_site):
    public = built_site[0].resolve()
    broken = []
    for path, p in html_pages.items():
        for tag, ref in p.refs:
            parts = urlsplit(ref)
            if parts.scheme in ("data", "blob"):
                continue
            if parts.scheme or parts.netloc:
                if tag == "a" and parts.scheme == "https":
                    continue  # a link a reader may follow is not a load; remote loads are what is forbidden
                broken.append((str(path.relative_to(public)), ref, "remote"))
                continue
            if not parts.path:
                target = path
            elif parts.path.startswith("/"):  # 404.html is served at any depth, so it links from the root
                target = (public / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or (public not in target.parents and target != public):
                broken.append((str(path.relative_to(public)), ref, "missing"))
            elif parts.fragment and target.suffix == ".html" and target in html_pages:
                if unquote(parts.fragment) not in html_pages[target].ids:
                    broken.append((str(path.relative_to(public)), ref, "anchor"))
    assert not broken, broken[:20]


def test_vendored_runtime_and_engine_are_local(built_site):
    public = built_site[0]
    for rel in (
        "vendor/pyodide/pyodide.mjs",
        "vendor/pyodide/pyodide.asm.wasm",
        "vendor/pyodide/python_stdlib.zip",
        "vendor/pyodide/pyodide-lock.json",
        "vendor/vega/vega.min.js",
        "vendor/vega/vega-lite.min.js",
        "vendor/vega/vega-embed.min.js",
        "engine/manifest.json",
    ):
        assert (public / rel).is_file(), rel
    assert list((public / "engine").glob("*.zip"))


def test_parquet_exports_match_the_records(built_site, run_index):
    public = built_site[0]
    html = (public / "runs" / "index.html").read_text()
    # The register links the all-runs tables: build-runs' own when published, else the site's.
    tables = {
        name: public / "runs" / re.search(rf'href="([^"]*{name})"', html).group(1)
        for name in ("register.parquet", "days.parquet")
    }
    register = pq.read_table(tables["register.parquet"]).to_pylist()
    assert [r["run_id"] for r in register] == [e["run_id"] for e in run_index["entries"]]
    days = pq.read_table(tables["days.parquet"])
    first = run_index["entries"][0]["run_id"]
    record = json.loads((built_site[1] / f"{first}.json").read_text())
    per_run = pq.read_table(public / "runs" / "parquet" / f"{first}.parquet").to_pylist()
    assert [d["cash_cents"] for d in per_run] == [d["cash"] for d in record["content"]["days"]]
    assert days.num_rows == sum(
        len(json.loads((built_site[1] / f"{e['run_id']}.json").read_text())["content"]["days"])
        for e in run_index["entries"]
    )


def test_run_pages_carry_the_verify_placeholder(built_site, run_index):
    public = built_site[0]
    for entry in run_index["entries"]:
        html = (public / "runs" / entry["run_id"] / "index.html").read_text()
        m = re.search(
            r'<div class="fb-verify" data-run-id="([^"]+)" data-record-url="([^"]+)" '
            r'data-index-url="([^"]+)"></div>',
            html,
        )
        assert m and m.group(1) == entry["run_id"]
        assert (public / "runs" / entry["run_id"] / m.group(2)).resolve() == (public / entry["record"]).resolve()
        assert (public / "runs" / entry["run_id"] / m.group(3)).resolve() == (public / "runs" / "index.json").resolve()


def test_hostile_transcript_is_escaped_in_the_html(built_site):
    html = (built_site[0] / "attempts" / hostile.ATTEMPT_ID / "index.html").read_text()
    article = html[html.index("<article") : html.index("</article>")]
    assert "__pwned" in article
    assert not re.search(r"<script[^>]*>[^<]*__pwned", article)
    assert "<img src=x" not in article and "<iframe" not in article and 'href="javascript:' not in article
    attempts = (built_site[0] / "attempts" / "index.html").read_text()
    assert hostile.ATTEMPT_ID in attempts and "worker time limit" in attempts


def test_home_page_opens_with_what_fundbook_is_the_status_and_the_leaderboard(built_site):
    html = (built_site[0] / "index.html").read_text()
    article = html[html.index("<article") : html.index("</article>")]
    after_h1 = article[article.index("</h1>") + len("</h1>") :].lstrip()
    assert after_h1.startswith('<p class="fb-lede">fundbook evaluates agents on a simulated structured-credit')
    assert (
        after_h1.index('<div class="fb-status-line"') < after_h1.index('<div class="fb-board"') < after_h1.index("<h2")
    )
    spec = json.loads(
        re.search(r'<script type="application/json" id="spec-leaderboard">(.*?)</script>', article, re.S).group(1)
    )
    agents = [row["row"] for row in spec["data"]["values"]]
    assert agents and not [a for a in agents if "mock" in a]  # the mock is a machinery test: never charted
    assert "Vega-Lite spec built with Altair" not in article
    machinery = article[article.index('<div class="fb-machinery">') :]
    assert "machinery tests, not agents" in machinery[: machinery.index("</div>")]


def test_no_page_names_a_loopback_address(built_site):
    """Without FUNDBOOK_SITE_URL the build names no absolute address: no canonical link,
    og:image relative, no sitemap; and nothing anywhere points at a loopback host."""
    public = built_site[0]
    assert not (public / "sitemap.xml").exists() and not (public / "sitemap.xml.gz").exists()
    found = []
    for path in sorted(public.rglob("*")):
        if path.suffix not in (".html", ".xml", ".txt") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in re.finditer(r'(?:href|src|content)="([^"]*)"', text):
            if LOOPBACK.search(m.group(1)):
                found.append((str(path.relative_to(public)), m.group(1)))
        if 'rel="canonical"' in text:
            found.append((str(path.relative_to(public)), "canonical link"))
    assert not found, found[:10]


def test_limitations_is_dated_and_states_runtime_and_attempts_from_the_records(built_site, run_index):
    html = (built_site[0] / "limitations" / "index.html").read_text()
    runs = built_site[1]
    dates = [
        json.loads((runs / e["record"].split("/", 1)[1]).read_text())["volatile"]["finished"][:10]
        for e in run_index["entries"]
    ]
    attempts = sorted(p for p in (runs / "attempts").iterdir() if p.is_dir())
    for p in attempts:  # a worker attempt's start; an Inspect attempt's eval creation, as Inspect logged it
        record = json.loads((p / "record.json").read_text())
        inspect = record["content"].get("harness") == "inspect"
        dates.append((record["content"]["inspect"]["created"] if inspect else record["volatile"]["started"])[:10])
    assert f"<strong>Status as of {max(dates)}</strong>" in html
    record = json.loads((runs / run_index["entries"][0]["record"].split("/", 1)[1]).read_text())["content"]
    eng = record["engine"]
    assert (
        f"published runs were executed by the {record['execution_path']}: engine {eng['engine_version']}, "
        f"bundle <code>{eng['bundle_sha256'][:12]}</code>, Pyodide {eng['pyodide_version']} "
        f"(Python {eng['python_version']})"
    ) in html
    assert f"{len(attempts)} model attempts retained" in html or f"{len(attempts)} model attempt retained" in html
    contents = [json.loads((p / "record.json").read_text())["content"] for p in attempts]
    real = [
        c for c in contents if c["model"]["provider"] not in ("mock", "cache") and isinstance(c.get("result"), dict)
    ]
    if real:  # what the sentence says follows the records: a real model's results, or none yet
        assert f"{len(real)} attempt{'s' if len(real) != 1 else ''} by a model reached a result." in html
        assert "No attempt by a real model" not in html
    else:
        assert "No attempt by a real model has reached a result yet." in html
    assert "fundbook:" not in html  # every generated section was filled


def test_search_indexes_what_a_reader_searches_for_not_tables_and_transcripts(built_site, run_index):
    # The index is fetched by every page, the desk's cold load included: run
    # pages index their lede, status, verdict and score; the per-day tables,
    # receipts, hashes and transcript steps (which grow with every run) stay out.
    docs = json.loads((built_site[0] / "search" / "search_index.json").read_text())["docs"]
    locations = {d["location"] for d in docs}
    run_id = run_index["entries"][0]["run_id"]
    assert f"runs/{run_id}/" in locations and f"runs/{run_id}/#status-verdict-and-score" in locations
    for section in ("days", "cash-and-funding", "receipts", "command-and-trace", "hashes", "downloads"):
        assert not any(loc.endswith("/#" + section) for loc in locations if loc.startswith("runs/")), section
    assert not any(loc.endswith("/#steps") for loc in locations if loc.startswith("attempts/"))
    status = next(d["text"] for d in docs if d["location"] == f"runs/{run_id}/#status-verdict-and-score")
    assert "Verdict" in status and "no_settlement_failure" not in status and "all in cost" not in status
    per_run = sum(len(json.dumps(d)) for d in docs if d["location"].startswith("runs/")) / len(run_index["entries"])
    assert per_run < 3000, per_run  # was 4,900 bytes a run with the tables in


def test_gate_details_show_money_not_cents(built_site):
    html = (built_site[0] / "runs" / "adversarial-W1-M11_cash_misstatement" / "index.html").read_text()
    assert "day 1 cash 7,400,000.00 vs 6,000,000.00 (2333 bps)" in html
    gates = html[html.index('<table class="fb-gates"') :]
    assert "740000000" not in gates[: gates.index("</table>")]
    html = (built_site[0] / "runs" / "adversarial-W2-M9_understated_tail" / "index.html").read_text()
    assert "day 1 A1 tail 142,500,000.00 &#60; 285,000,000.00 money-days" in html


def _visible_text(html: str) -> str:
    body = html[html.find("<article") : html.find("</article>")] if "<article" in html else html
    body = re.sub(r"<script\b.*?</script>", " ", body, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


def test_numbers_read_as_numbers(built_site):
    """No "$0.000000" anywhere (sub-cent digits only when there are any: "$0.001234"); no 7+ decimal places and no ungrouped 5+ digit count on the pages
    this area renders. The decision pages (comparisons/<name>/) print the decisions' own decimal
    strings: their template is the experiments' (fmt.decimal is there for it)."""
    public = built_site[0]
    problems = []
    for path in sorted(public.rglob("index.html")):
        rel = path.relative_to(public).as_posix()
        text = _visible_text(path.read_text(encoding="utf-8"))
        padded = re.search(r"\$\d[\d,]*\.\d\d0000\b", text)  # "$0.000000", "$50.000000": cents padded to micro-USD
        if padded:
            problems.append((rel, padded.group(0)))
        decision_page = (
            rel.startswith("comparisons/")
            and rel.count("/") == 2
            and rel.split("/")[1] not in ("scale", "method", "grader-certificate")
        )
        if not decision_page and re.search(r"(?<![\w.])\d+\.\d{7,}\b", text):
            problems.append((rel, re.search(r"(?<![\w.])\d+\.\d{7,}\b", text).group(0)))
    assert not problems, problems[:10]
    index = _visible_text((public / "comparisons" / "index.html").read_text())
    assert not re.search(r"\b\d{4,}\b(?![,.]\d)", re.sub(r"\b[0-9a-f]{12}\b|seed \d+|\d{4}-\d\d-\d\d", "", index)), (
        re.findall(r"\b\d{4,}\b", index)[:5]
    )


def test_the_bundle_zips_own_sha256_is_published_beside_its_manifest(built_site):
    """The manifest is inside the zip, so it cannot name the zip's sha256: the Run it and contract pages publish it
    beside the manifest's, and both are the sha256 of the files the site serves (issue 39, item 6)."""
    import hashlib
    import re

    public = built_site[0]
    zip_sha = hashlib.sha256((public / "engine" / "fundbook-engine.zip").read_bytes()).hexdigest()
    manifest_sha = hashlib.sha256((public / "engine" / "manifest.json").read_bytes()).hexdigest()
    assert zip_sha not in (public / "engine" / "manifest.json").read_text()
    for page in ("run-it", "contract"):
        html = (public / page / "index.html").read_text(encoding="utf-8")
        shown = dict(re.findall(r'data-fb-engine="(\w+)">([0-9a-f]{64})<', html))
        assert shown == {"bundle_sha256": zip_sha, "manifest_sha256": manifest_sha}, (page, shown)
        assert "The manifest cannot name the zip's own SHA-256" in html
