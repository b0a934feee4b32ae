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

# mkdocs.yml's default site_url (FUNDBOOK_SITE_URL is not set for the tests):
# canonical links and og:image are absolute under it and must name files of the site.
SITE_URL = "http://127.0.0.1:8000/"


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
    rows = re.findall(r'<tr data-kind="[^"]*" data-status="[^"]*" data-verdict="[^"]*" data-run-id="([^"]+)"', register)
    assert rows == [e["run_id"] for e in run_index["entries"]]
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
        assert image.startswith(SITE_URL) and (built_site[0] / image[len(SITE_URL):]).is_file(), (path, image)


def test_links_resolve_and_nothing_is_remote(html_pages, built_site):
    public = built_site[0].resolve()
    broken = []
    for path, p in html_pages.items():
        for tag, ref in p.refs:
            parts = urlsplit(ref)
            if parts.scheme in ("data", "blob"):
                continue
            if ref.startswith(SITE_URL):  # the page's canonical address: a file of this site, not a load
                parts = urlsplit("/" + ref[len(SITE_URL):])
            elif parts.scheme or parts.netloc:
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
    for rel in ("vendor/pyodide/pyodide.mjs", "vendor/pyodide/pyodide.asm.wasm", "vendor/pyodide/python_stdlib.zip",
                "vendor/pyodide/pyodide-lock.json", "vendor/vega/vega.min.js", "vendor/vega/vega-lite.min.js",
                "vendor/vega/vega-embed.min.js", "engine/manifest.json"):
        assert (public / rel).is_file(), rel
    assert list((public / "engine").glob("*.zip"))


def test_parquet_exports_match_the_records(built_site, run_index):
    public = built_site[0]
    html = (public / "runs" / "index.html").read_text()
    # The register links the all-runs tables: build-runs' own when published, else the site's.
    tables = {name: public / "runs" / re.search(rf'href="([^"]*{name})"', html).group(1)
              for name in ("register.parquet", "days.parquet")}
    register = pq.read_table(tables["register.parquet"]).to_pylist()
    assert [r["run_id"] for r in register] == [e["run_id"] for e in run_index["entries"]]
    days = pq.read_table(tables["days.parquet"])
    first = run_index["entries"][0]["run_id"]
    record = json.loads((built_site[1] / f"{first}.json").read_text())
    per_run = pq.read_table(public / "runs" / "parquet" / f"{first}.parquet").to_pylist()
    assert [d["cash_cents"] for d in per_run] == [d["cash"] for d in record["content"]["days"]]
    assert days.num_rows == sum(len(json.loads((built_site[1] / f"{e['run_id']}.json").read_text())["content"]["days"])
                                for e in run_index["entries"])


def test_run_pages_carry_the_verify_placeholder(built_site, run_index):
    public = built_site[0]
    for entry in run_index["entries"]:
        html = (public / "runs" / entry["run_id"] / "index.html").read_text()
        m = re.search(r'<div class="fb-verify" data-run-id="([^"]+)" data-record-url="([^"]+)" '
                      r'data-index-url="([^"]+)"></div>', html)
        assert m and m.group(1) == entry["run_id"]
        assert (public / "runs" / entry["run_id"] / m.group(2)).resolve() == (public / entry["record"]).resolve()
        assert (public / "runs" / entry["run_id"] / m.group(3)).resolve() == (public / "runs" / "index.json").resolve()


def test_hostile_transcript_is_escaped_in_the_html(built_site):
    html = (built_site[0] / "attempts" / hostile.ATTEMPT_ID / "index.html").read_text()
    article = html[html.index("<article"):html.index("</article>")]
    assert "__pwned" in article
    assert not re.search(r"<script[^>]*>[^<]*__pwned", article)
    assert "<img src=x" not in article and "<iframe" not in article and 'href="javascript:' not in article
    attempts = (built_site[0] / "attempts" / "index.html").read_text()
    assert hostile.ATTEMPT_ID in attempts and "worker time limit" in attempts


def test_home_page_opens_with_the_overview_chart(built_site):
    html = (built_site[0] / "index.html").read_text()
    article = html[html.index("<article"):html.index("</article>")]
    h1 = article.index("</h1>") + len("</h1>")
    assert article[h1:].lstrip().startswith('<div class="fb-charts fb-overview"')  # the page opens with it
    for chart in ("overview-outcomes", "overview-scores"):
        spec = json.loads(re.search(rf'<script type="application/json" id="spec-{chart}">(.*?)</script>', article,
                                    re.S).group(1))
        groups = {row["group"] for row in spec["data"]["values"]}
        assert {"reference", "adversarial", "baseline · do-nothing"} <= groups, groups


def test_limitations_is_dated_and_states_runtime_and_attempts_from_the_records(built_site, run_index):
    html = (built_site[0] / "limitations" / "index.html").read_text()
    runs = built_site[1]
    dates = [run_index["volatile"]["built"][:10]]
    attempts = sorted(p for p in (runs / "attempts").iterdir() if p.is_dir())
    dates += [json.loads((p / "record.json").read_text())["volatile"]["started"][:10] for p in attempts]
    assert f"<strong>Status as of {max(dates)}</strong>" in html
    record = json.loads((runs / run_index["entries"][0]["record"].split("/", 1)[1]).read_text())["content"]
    eng = record["engine"]
    assert (f"published runs were executed by the {record['execution_path']}: engine {eng['engine_version']}, "
            f"bundle <code>{eng['bundle_sha256'][:12]}</code>, Pyodide {eng['pyodide_version']} "
            f"(Python {eng['python_version']})") in html
    assert f"{len(attempts)} model attempts retained" in html or f"{len(attempts)} model attempt retained" in html
    assert "No attempt by a real model has reached a result yet." in html  # every retained attempt is a mock
    assert "fundbook:" not in html  # every generated section was filled
