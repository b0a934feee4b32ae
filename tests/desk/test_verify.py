"""The verify button on run pages, the bundle integrity check, and working offline."""

import json

import pytest

import engine
from tests.desk import helpers as d
from tests.desk.conftest import LOAD_TIMEOUT_MS, VERIFY_RUNS

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def verify(page, site, run_id):
    page.goto(site.run_page(run_id))
    box = page.locator(f'.fb-verify[data-run-id="{run_id}"]')
    box.get_by_role("button", name="Verify this run in your browser").click()
    box.locator("[data-result]").wait_for(state="attached", timeout=LOAD_TIMEOUT_MS)
    return box


def test_verify_matches_one_run_of_each_kind(page, site):
    kinds = set()
    for run_id in VERIFY_RUNS:
        box = verify(page, site, run_id)
        result = box.locator("[data-result]")
        assert result.get_attribute("data-result") == "match", box.inner_text()
        values = box.locator("dd code").all_inner_texts()
        assert values[0] == values[1] and len(values[0]) == 64  # computed == published content_sha256
        kinds.add(run_id.split("-", 1)[0])
    assert kinds == {"reference", "adversarial", "baseline"}
    assert not page.errors


@pytest.mark.parametrize("rehash", [False, True], ids=["content-edited", "content-edited-and-rehashed"])
def test_a_tampered_record_shows_the_mismatch_and_its_first_field(page, site, rehash):
    run_id = VERIFY_RUNS[0]

    def tamper(route):
        record = json.loads(route.fetch().text())
        record["content"]["days"][3]["cash"] += 1  # one cent on day 4
        if rehash:  # a consistent forgery: the published hash follows the edit
            record["content_sha256"] = engine.content_sha256(record["content"])
        route.fulfill(status=200, content_type="application/json", body=json.dumps(record))

    page.route(lambda url: url.endswith(f"{run_id}.json"), tamper)
    box = verify(page, site, run_id)
    result = box.locator("[data-result]")
    assert result.get_attribute("data-result") == "mismatch", box.inner_text()
    assert result.locator("[data-field]").get_attribute("data-field") == "content.days[3].cash"
    computed, published = box.locator("dd code").all_inner_texts()[:2]
    assert (computed != published) == rehash


def test_a_bundle_that_does_not_match_its_manifest_runs_nothing(page, site):
    requested = []

    def corrupt(route):
        body = bytearray(route.fetch().body())
        body[len(body) // 2] ^= 0xFF
        route.fulfill(status=200, content_type="application/zip", body=bytes(body))

    page.route(lambda url: url.endswith(".zip") and "/engine/" in url, corrupt)
    page.on("request", lambda r: requested.append(r.url))
    page.goto(site.url + "desk/")
    page.wait_for_selector("#fb-desk[data-ready=error]", state="attached", timeout=LOAD_TIMEOUT_MS)
    error = d.error_text(page)
    assert "does not match the manifest" in error and "nothing was run" in error
    assert page.locator("section.fb-packet").count() == 0
    assert page.locator("form.fb-action-form").count() == 0


def test_desk_and_verify_work_with_every_non_local_request_aborted(context, page, site):
    # the context aborts (and records) anything not served by the local server
    gold = engine.gold_candidate(engine.load_episode("W1"))["batches"]
    d.open_desk(page, site)
    d.start(page, episode="W1")
    d.submit_json(page, gold[0])
    d.wait_day(page, 2)
    box = verify(page, site, VERIFY_RUNS[2])
    assert box.locator("[data-result]").get_attribute("data-result") == "match"
    # and the pages asked for nothing beyond the local server
    assert context.aborted == []
    assert not page.errors
