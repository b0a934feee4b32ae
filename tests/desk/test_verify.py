"""Verify means verified: the in-browser check of a run page and of the whole
register, on the built site and on tampered copies of it.

Each tamper edits a COPY of the strictly built site the way a forger would --
the figures a page shows, a record's execution path or bundle hash with its
content hash recomputed (and the index resealed), an index entry, the index
chain, its head -- and expects the named mismatch with the published value
beside the computed one. None may show match. Also here: the bundle integrity
check and working with every non-local request aborted."""

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest

import engine
from builders.site.serve import Serving
from tests.desk import helpers as d
from tests.desk.conftest import LOAD_TIMEOUT_MS
from tests.site import hostile
from tests.site.conftest import built_site  # noqa: F401  (the shared strict site build)

# Its own xdist group: these share the site build (a file lock) but not a worker with tests/site.
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("verify")]
RUN = "reference-W1"
ONE_OF_EACH = ("reference-W1", "adversarial-W2-M1_stale_quote", "baseline-FUND_01-seed-1-do-nothing")


class Site:
    def __init__(self, url):
        self.url = url


@pytest.fixture
def vcontext(browser):
    """A fresh profile in which every non-local request is aborted and recorded."""
    ctx = browser.new_context(accept_downloads=True)
    ctx.aborted = []

    def route(r):
        if urlparse(r.request.url).hostname == "127.0.0.1":
            r.continue_()
        else:
            ctx.aborted.append(r.request.url)
            r.abort()

    ctx.route(re.compile(r".*"), route)
    ctx.set_default_timeout(30_000)
    yield ctx
    ctx.close()


@pytest.fixture
def vpage(vcontext):
    pg = vcontext.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    return pg


@pytest.fixture
def served(built_site):  # noqa: F811
    with Serving(built_site[0]) as url:
        yield url


def verify(page, url, run_id):
    page.goto(f"{url}runs/{run_id}/")
    box = page.locator(".fb-verify")
    box.get_by_role("button", name="Verify this run in your browser").click()
    box.locator("[data-result]").wait_for(state="attached", timeout=LOAD_TIMEOUT_MS)
    return box


def check(box, name):
    """(ok, [(field, published, computed)]) of one check line."""
    line = box.locator(f'li[data-check="{name}"]')
    rows = [
        (r.get_attribute("data-field"), *[c.text_content() for c in r.locator("td").all()[1:]])
        for r in line.locator("tr[data-field]").all()
    ]
    return line.get_attribute("data-ok") == "true", rows


def test_verify_matches_one_run_of_each_kind_on_every_check(vpage, served):
    for run_id in ONE_OF_EACH:
        box = verify(vpage, served, run_id)
        assert box.locator("[data-result]").get_attribute("data-result") == "match", box.inner_text()
        for name in ("reexecution", "engine", "index", "page"):
            assert check(box, name) == (True, []), (run_id, name)
        figures = int(re.search(r"all (\d+) marked figures", box.inner_text()).group(1))
        assert figures > 50, run_id
    assert not vpage.errors


# ---- tampered copies of the built site ----


def _copy(public: Path, dst: Path) -> Path:
    """A copy of the built site sharing the bytes of unchanged files (hard links)."""
    shutil.copytree(public, dst, copy_function=os.link)
    return dst


def _rewrite(path: Path, text: str):
    path.unlink()  # break the hard link: the original site stays as built
    path.write_text(text, encoding="utf-8")


def _edit_page(site, run_id, old, new, count=1):
    path = site / "runs" / run_id / "index.html"
    html = path.read_text(encoding="utf-8")
    assert html.count(old) >= 1, old
    _rewrite(path, html.replace(old, new, count))


def _record(site, run_id):
    return json.loads((site / "runs" / f"{run_id}.json").read_text())


def _index(site):
    return json.loads((site / "runs" / "index.json").read_text())


def _write_index(site, index):
    _rewrite(site / "runs" / "index.json", engine.pretty_json(index))


def _write_record(site, run_id, record, rehash=True, reindex=True):
    """Rewrite a record; with `rehash` its content hash follows the edit, with `reindex` its index
    entry and the whole chain and head follow too (a forger's complete reseal)."""
    if rehash:
        record["content_sha256"] = engine.content_sha256(record["content"])
    path = site / "runs" / f"{run_id}.json"
    _rewrite(path, engine.pretty_json(record))
    if reindex:
        index = _index(site)
        entry = next(e for e in index["entries"] if e["run_id"] == run_id)
        entry["content_sha256"] = record["content_sha256"]
        entry["file_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        _write_index(site, hostile.reseal_index(index))


def _cash(site):
    return _record(site, RUN)["content"]["days"][3]["cash"]


def page_score_text(site):
    _edit_page(site, RUN, 'class="fb-score">100/100<', 'class="fb-score">99/100<')


def page_cash_text(site):
    from builders.site.fmt import money

    cash = _cash(site)
    _edit_page(
        site,
        RUN,
        f'data-fb-path="content/days/3/cash" data-fb-format="money" class="fb-num" data-label="Cash">{money(cash)}<',
        f'data-fb-path="content/days/3/cash" data-fb-format="money" class="fb-num" data-label="Cash">'
        f"{money(cash + 100)}<",
    )


def page_score_unmarked(site):
    _edit_page(
        site,
        RUN,
        '<span data-fb-path="content/score" data-fb-format="score" class="fb-score">100/100<',
        '<span class="fb-score">99/100<',
    )


def page_gate_text(site):
    _edit_page(
        site,
        RUN,
        'data-fb-path="content/gates/0/passed" data-fb-format="passed">passed<',
        'data-fb-path="content/gates/0/passed" data-fb-format="passed">did not pass<',
    )


def page_chart_data(site):
    _edit_page(site, RUN, '"values":[{"cash":6000000.0', '"values":[{"cash":6000100.0')


def page_receipt_hash(site):
    path = site / "runs" / RUN / "index.html"
    html = path.read_text(encoding="utf-8")
    new = re.sub(
        r'(data-fb-path="receipts/5/hash" data-fb-format="short" title="[0-9a-f]+">)([0-9a-f]{12})<',
        lambda m: m.group(1) + "0" * 12 + "<",
        html,
        count=1,
    )
    assert new != html
    _rewrite(path, new)


def record_execution_path_resealed(site):
    record = _record(site, RUN)
    record["content"]["execution_path"] = "host reference"
    _write_record(site, RUN, record)


def record_execution_path_rehashed(site):
    record = _record(site, RUN)
    record["content"]["execution_path"] = "host reference"
    _write_record(site, RUN, record, reindex=False)


def record_bundle_resealed(site):
    record = _record(site, RUN)
    record["content"]["engine"]["bundle_sha256"] = "f" * 64
    _write_record(site, RUN, record)


def record_cash_resealed(site):
    record = _record(site, RUN)
    record["content"]["days"][3]["cash"] += 1
    _write_record(site, RUN, record)


def record_volatile_edited(site):
    record = _record(site, RUN)
    record["volatile"]["duration_ms"] = 1
    _write_record(site, RUN, record, rehash=False, reindex=False)


def index_entry_edited(site):
    index = _index(site)
    next(e for e in index["entries"] if e["run_id"] == RUN)["fixture_sha256"] = "0" * 64
    _write_index(site, index)


def index_entry_edited_resealed(site):
    index = _index(site)
    next(e for e in index["entries"] if e["run_id"] == RUN)["content_sha256"] = "0" * 64
    _write_index(site, hostile.reseal_index(index))


def index_chain_broken(site):
    index = _index(site)
    index["entries"][5]["prev_hash"] = "0" * 64
    _write_index(site, index)


def index_head_rewritten(site):
    index = _index(site)
    index["head"]["hash"] = "e" * 64
    _write_index(site, index)


TAMPERS = [
    # (tamper, failing check, field, published, computed): published/computed None = not compared
    (page_score_text, "page", "page: content.score", "99/100", "100/100"),
    (page_cash_text, "page", "page: content.days[3].cash", None, None),
    (page_score_unmarked, "page", "page: content.score", "(not shown)", None),
    (page_gate_text, "page", "page: content.gates[0].passed", "did not pass", "passed"),
    (page_chart_data, "page", "page: chart cash data", None, None),
    (page_receipt_hash, "page", "page: receipts[5].hash", "000000000000", None),
    (
        record_execution_path_resealed,
        "engine",
        "content.execution_path",
        "host reference",
        "compiled bundle in Pyodide",
    ),
    (
        record_execution_path_rehashed,
        "engine",
        "content.execution_path",
        "host reference",
        "compiled bundle in Pyodide",
    ),
    (record_bundle_resealed, "engine", "content.engine.bundle_sha256", "f" * 64, None),
    (record_cash_resealed, "reexecution", "content.days[3].cash", None, None),
    (record_volatile_edited, "index", "index entry.file_sha256", None, None),
    (index_entry_edited, "index", "index entry.fixture_sha256", "0" * 64, None),
    (index_entry_edited_resealed, "index", "index entry.content_sha256", "0" * 64, None),
    (index_chain_broken, "index", "index entries[5].prev_hash", "0" * 64, None),
    (index_head_rewritten, "index", "index head.hash", "e" * 64, None),
]


@pytest.mark.parametrize("tamper, failing, field, published, computed", TAMPERS, ids=[t[0].__name__ for t in TAMPERS])
def test_a_tampered_site_shows_the_named_mismatch(
    vpage,
    built_site,
    tmp_path,
    tamper,
    failing,  # noqa: F811
    field,
    published,
    computed,
):
    site = _copy(built_site[0], tmp_path / "public")
    cash = _cash(site)
    tamper(site)
    with Serving(site) as url:
        box = verify(vpage, url, RUN)
        result = box.locator("[data-result]")
        assert result.get_attribute("data-result") == "mismatch", box.inner_text()
        ok, rows = check(box, failing)
        assert not ok and rows, box.inner_text()
        fields = {row[0]: list(row[1:]) for row in rows}
        assert field in fields, (field, list(fields))
        if published is not None:
            assert fields[field][0] == published, fields[field]
        if computed is not None:
            assert fields[field][1] == computed, fields[field]
        if tamper is record_cash_resealed:
            assert fields[field] == [str(cash + 1), str(cash)]
        if tamper is page_cash_text:
            from builders.site.fmt import money

            assert fields[field] == [money(cash + 100), money(cash)]
    assert not vpage.errors


# ---- the whole register ----


def verify_register(page, url):
    page.goto(f"{url}runs/")
    box = page.locator(".fb-verify-register")
    box.get_by_role("button", name="Verify the whole register").click()
    result = box.locator("[data-result]")
    result.wait_for(state="attached", timeout=10 * LOAD_TIMEOUT_MS)
    return box, result


def test_verify_the_whole_register(vpage, served, built_site):  # noqa: F811
    runs = len(json.loads((built_site[1] / "index.json").read_text())["entries"])
    box, result = verify_register(vpage, served)
    assert result.get_attribute("data-result") == "match", box.inner_text()[:3000]
    assert result.get_attribute("data-matched") == result.get_attribute("data-total") == str(runs)
    assert box.locator("progress").get_attribute("value") == str(runs)
    print(f"\nverify the whole register: {runs} runs in {result.get_attribute('data-seconds')} s (Chromium)")
    assert not vpage.errors


def test_the_whole_register_names_each_run_that_does_not_match(vpage, built_site, tmp_path):  # noqa: F811
    site = _copy(built_site[0], tmp_path / "public")
    page_score_text(site)  # RUN's page shows a score its record does not
    other = "baseline-FUND_01-seed-1-do-nothing"
    register = site / "runs" / "index.html"
    html = register.read_text()
    row = html.index(f'data-run-id="{other}"')
    score = html.index('data-fb-format="score">', row)
    end = html.index("</span>", score)
    _rewrite(register, html[:score] + 'data-fb-format="score">100/100' + html[end:])
    runs = len(_index(site)["entries"])
    with Serving(site) as url:
        box, result = verify_register(vpage, url)
        assert result.get_attribute("data-result") == "mismatch"
        assert result.get_attribute("data-matched") == str(runs - 2)
        failures = box.locator("ul.fb-verify-failures > li")
        assert sorted(failures.evaluate_all("items => items.map(i => i.dataset.runId)")) == sorted([RUN, other])
        for run_id in (RUN, other):
            item = box.locator(f'ul.fb-verify-failures > li[data-run-id="{run_id}"]')
            assert item.locator('tr[data-field="page: content.score"]').count() == 1, item.inner_text()


# ---- the bundle check, and no network ----


def test_a_bundle_that_does_not_match_its_manifest_runs_nothing(vpage, served):
    def corrupt(route):
        body = bytearray(route.fetch().body())
        body[len(body) // 2] ^= 0xFF
        route.fulfill(status=200, content_type="application/zip", body=bytes(body))

    vpage.route(lambda url: url.endswith(".zip") and "/engine/" in url, corrupt)
    vpage.goto(served + "desk/")
    vpage.wait_for_selector("#fb-desk[data-ready=error]", state="attached", timeout=LOAD_TIMEOUT_MS)
    error = d.error_text(vpage)
    assert "does not match the manifest" in error and "nothing was run" in error
    assert vpage.locator("section.fb-packet").count() == 0
    assert vpage.locator("form.fb-action-form").count() == 0
    box = verify(vpage, served, RUN)  # and verify refuses to vouch for anything
    assert box.locator("[data-result]").get_attribute("data-result") == "error"


def test_desk_and_verify_work_with_every_non_local_request_aborted(vcontext, vpage, served):
    gold = engine.gold_candidate(engine.load_episode("W1"))["batches"]
    d.open_desk(vpage, Site(served))
    d.start(vpage, episode="W1")
    d.submit_json(vpage, gold[0])
    d.wait_day(vpage, 2)
    box = verify(vpage, served, ONE_OF_EACH[2])
    assert box.locator("[data-result]").get_attribute("data-result") == "match", box.inner_text()
    assert vcontext.aborted == []
    assert not vpage.errors
