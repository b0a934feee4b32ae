"""The study mode end to end in Chromium: consent, the task clock (pause with a
reason, a reload that pauses it), a few checkpoints under exactly the model
worker's affordances, abandon, export; then `fundbook practitioner import`
(into a temporary runs folder) and the record's page verifies in the browser,
and a figure edited on it is named."""

import hashlib
import json
import re
from pathlib import Path

import pytest

import engine
from builders._session import PyodideSession
from builders.desk import devsite
from builders.practitioners import OFFERED, import_submissions
from builders.practitioners._protocol import CONSENT_DIR, desk_build
from builders.site.serve import Serving
from tests.desk.conftest import LOAD_TIMEOUT_MS
from tests.desk.practitioners import engine_block, runs_folder

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WORLD = ("FUND_02", 4242)
RUN_AXE = """async () => (await axe.run(document.querySelector('#fb-desk'), { resultTypes: ["violations"] })).violations
  .filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes[0].target}`)"""


def submit_json(page, batch):
    if page.locator("details.fb-json").get_attribute("open") is None:
        page.locator("details.fb-json > summary").click()
    page.get_by_label("Batch JSON").fill(json.dumps(batch))
    page.get_by_role("button", name="Load JSON into the forms").click()
    page.get_by_role("button", name="Submit batch").click()


def axe(page):
    page.evaluate(AXE.read_text(encoding="utf-8"))
    return page.evaluate(RUN_AXE)


def test_a_study_session_goes_from_consent_to_a_verified_practitioner_record(
    browser, context, site, bundle_dir, tmp_path
):
    family, seed = WORLD
    plan = engine.gold_candidate(engine.generate(family, seed))["batches"]
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(site.url + f"desk/study/?cohort=pilot-1&family={family}&seed={seed}")
    page.wait_for_selector("#fb-desk[data-ready=true]", state="attached", timeout=LOAD_TIMEOUT_MS)

    # consent: the versioned text, its sha256, accepted before anything else
    shown = page.locator("pre.fb-consent")
    text = (Path(CONSENT_DIR) / "v1.txt").read_bytes()
    assert shown.get_attribute("data-sha256") == hashlib.sha256(text).hexdigest()
    assert shown.inner_text().strip() == text.decode().strip()
    accept = page.get_by_role("button", name="Accept and continue")
    assert accept.is_disabled()
    page.get_by_label("I have read this text").check()
    accept.click()
    page.get_by_role("button", name="Begin this session").click()
    page.wait_for_selector(".fb-blocked")
    assert page.locator("section.fb-packet").count() == 0  # no packet before the clock runs
    participant = page.locator(".fb-where").get_attribute("data-participant")
    assert participant.startswith("p-") and len(participant) == 18
    page.get_by_role("button", name="Start the clock").click()
    page.wait_for_selector('section.fb-packet[data-day="1"]')

    # exactly the model worker's affordances: no fill, no matched count, no messages, no raw receipts, no import
    desk = page.locator("#fb-desk")
    assert desk.get_by_role("button", name="Fill the report from the projection (assisted mode)").count() == 0
    assert desk.locator("input[type=file], details.fb-receipts").count() == 0
    assert "Receipts so far: " in page.locator("section.fb-packet").inner_text()
    assert page.locator("section.fb-tools").count() == 1 and page.locator("section.fb-notes").count() == 1
    assert axe(page) == []
    page.set_viewport_size({"width": 390, "height": 844})
    assert axe(page) == []
    page.set_viewport_size({"width": 1366, "height": 900})

    # the open checkpoint's clock is beside Submit, on the same screen as the button
    submit = page.get_by_role("button", name="Submit batch")
    submit.scroll_into_view_if_needed()
    near = page.locator(".fb-submit-row .fb-clock-near")
    assert near.is_visible() and re.fullmatch(r"Clock \d+:\d\d(:\d\d)? on this checkpoint", near.inner_text()), (
        near.inner_text()
    )
    assert abs(near.bounding_box()["y"] - submit.bounding_box()["y"]) < 200

    submit_json(page, plan[0])
    page.wait_for_selector('section.fb-packet[data-day="2"]')
    decisions = page.locator("table.fb-decisions")
    assert decisions.locator("thead th").all_inner_texts() == ["action", "type", "decision", "reason"]  # no message
    assert page.locator(".fb-matched").count() == 0
    # a source opened and a tool run: used affordances
    page.locator("details.fb-source > summary").first.click()
    page.locator("section.fb-tools select[name=tool]").select_option("headroom")
    page.get_by_role("button", name="Run tool").click()
    page.wait_for_selector(".fb-tool-output dl")

    # pause with a reason: the work is hidden; a reload while running pauses it by itself
    page.get_by_label("Reason for the pause").select_option("interruption")
    page.get_by_role("button", name="Pause the clock").click()
    page.wait_for_selector(".fb-blocked")
    assert page.locator("section.fb-packet, section.fb-compose").count() == 0
    page.get_by_role("button", name="Resume the clock").click()
    page.wait_for_selector('section.fb-packet[data-day="2"]')
    page.reload()
    page.wait_for_selector("#fb-desk[data-ready=true]", state="attached", timeout=LOAD_TIMEOUT_MS)
    assert page.locator("section.fb-study").get_attribute("data-clock") == "paused"
    assert "the page was closed or reloaded" in page.locator(".fb-clock").inner_text()
    page.get_by_role("button", name="Resume the clock").click()
    submit_json(page, plan[1])
    page.wait_for_selector('section.fb-packet[data-day="3"]')
    page.get_by_role("button", name="Close the day without a batch").click()
    page.wait_for_selector('section.fb-packet[data-day="4"]')
    outcomes = page.locator("details.fb-days")
    outcomes.locator("summary").click()
    assert outcomes.locator("tbody tr").count() == 3

    # abandon (asked twice, with a reason the participant chose: none is preselected), then export
    reason = page.get_by_label("Why you stop here")
    assert reason.input_value() == ""
    page.get_by_role("button", name="Stop: abandon the session").click()
    assert page.get_by_role("button", name="Confirm: stop here and keep the session as abandoned").count() == 0
    reason.select_option("too-hard")
    page.get_by_role("button", name="Stop: abandon the session").click()
    assert page.locator("section.fb-study").get_attribute("data-clock") != "stopped"  # not yet: a second press confirms
    page.get_by_role("button", name="Confirm: stop here and keep the session as abandoned").click()
    page.wait_for_selector("[data-termination=abandoned]")
    with page.expect_download() as info:
        page.get_by_role("button", name="Export the practitioner submission (.json)").click()
    exported = tmp_path / "submission.json"
    info.value.save_as(exported)
    doc = json.loads(exported.read_text())
    assert doc["participant"] == participant and doc["cohort"] == "pilot-1"
    assert doc["source"] == {"family": family, "seed": seed} and [list(m) for m in doc["moves"]] == [
        ["batch"],
        ["batch"],
        ["skip"],
    ]
    assert doc["consent"] == {"version": "1", "sha256": hashlib.sha256(text).hexdigest()}
    assert doc["affordances"] == {
        "offered": list(OFFERED),
        "used": ["packet", "sources", "tool:headroom", "last-outcomes"],
    }
    assert doc["termination"] == {
        "status": "abandoned",
        "reason": "too-hard",
        "checkpoints_submitted": 2,
        "checkpoints_closed": 3,
    }
    assert [p["reason"] for p in doc["clock"]["pauses"]] == ["interruption", "page-reloaded"]
    assert [p["checkpoint"] for p in doc["clock"]["pauses"]] == [2, 2] and len(doc["clock"]["per_checkpoint_ms"]) == 3
    assert (
        doc["desk"]["build"] == desk_build()
        and doc["desk"]["bundle_sha256"] == engine_block(bundle_dir)["bundle_sha256"]
    )
    assert not errors

    # the import re-executes it through the bundle in Pyodide and writes the record
    runs = runs_folder(tmp_path, bundle_dir)
    with PyodideSession() as runtime:
        (done,) = import_submissions([str(exported)], str(runs), str(bundle_dir), runtime)
    assert done["status"] == "new" and done["receipts_head"] == doc["receipts_head"]
    served = devsite.build(tmp_path / "site", Path(bundle_dir))
    (record_page,) = devsite.practitioner_pages(served, runs)
    with Serving(served) as url:
        other = browser.new_context()
        other.route(re.compile(r".*"), lambda r: r.continue_() if r.request.url.startswith(url) else r.abort())
        view = other.new_page()
        view.goto(url + record_page)
        view.get_by_role("button", name="Verify this practitioner run in your browser").click()
        view.wait_for_selector(".fb-verify-practitioner [data-result]", timeout=LOAD_TIMEOUT_MS)
        assert view.locator(".fb-verify-practitioner [data-result]").get_attribute("data-result") == "match", (
            view.locator(".fb-verify-practitioner").inner_text()
        )
        assert [c.get_attribute("data-check") for c in view.locator("li[data-check]").all()] == [
            "files",
            "reexecution",
            "engine",
            "page",
        ]
        # a figure edited on the page is named, with the verified value beside it
        view.evaluate("""() => { const n = document.querySelector('[data-fb-path="content/termination/reason"]');
                                 n.textContent = 'finalised'; }""")
        view.get_by_role("button", name="Verify this practitioner run in your browser").click()
        view.wait_for_selector(".fb-verify-practitioner [data-result=mismatch]", timeout=LOAD_TIMEOUT_MS)
        row = view.locator("li[data-check=page] tr[data-field='page: content.termination.reason']")
        assert (
            row.locator(".fb-published").inner_text() == "finalised"
            and row.locator(".fb-computed").inner_text() == "too-hard"
        )
        other.close()
