"""The desk as a working surface (issue 19): measured from the DOM in Chromium.

At 1366x900 the packet sits beside the batch and the tools, and the batch
starts on the first screen; every problem with a batch is listed next to
Submit with each field at fault marked; after a day the desk says how many
report fields matched, as the grade counts them; the projection's fill is an
assisted mode, recorded in the session and its export; the result links to
the same world's published runs; a reload after the last checkpoint never
says "day null"; on a phone the layout is one column and the report's
"Per asset" caption reads as a line. axe finds nothing serious at either size."""

import json
import re
from pathlib import Path

import pytest

import engine
from builders.site.fmt import money
from tests.desk import helpers as d
from tests.desk.conftest import LOAD_TIMEOUT_MS

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
RUN_AXE = """async () => (await axe.run(document.querySelector('#fb-desk'), { resultTypes: ["violations"] })).violations
  .filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes[0].target}`)"""
BOX = "(sel) => { const b = document.querySelector(sel).getBoundingClientRect(); return {left: b.left, right: b.right, top: b.top + scrollY, bottom: b.bottom + scrollY, width: b.width, height: b.height}; }"


def box(page, selector):
    return page.evaluate(BOX, selector)


def test_the_desk_is_a_working_surface(page, site, tmp_path):
    gold = engine.gold_candidate(engine.load_episode("W1"))["batches"]
    page.set_viewport_size({"width": 1366, "height": 900})
    d.open_desk(page, site)
    d.start(page, episode="W1")

    # two columns: the packet on the left, the batch and the tools beside it, the batch on the first screen
    packet, batch, tools = (
        box(page, "section.fb-packet"),
        box(page, "section.fb-compose"),
        box(page, "section.fb-tools"),
    )
    assert batch["left"] >= packet["right"] and tools["left"] == batch["left"], (packet, batch, tools)
    assert batch["top"] < 900 and abs(batch["top"] - packet["top"]) < 5, (packet, batch)
    assert packet["width"] > 450 and batch["width"] > 450
    page.evaluate(AXE.read_text(encoding="utf-8"))
    assert page.evaluate(RUN_AXE) == []

    # the haircut that applies to each position on each quote (the larger of the quote's and the position's
    # minimum), rates in bps, amounts in the sources as money
    packet = engine.Run(engine.load_episode("W1")).packet()
    rows = page.locator("table.fb-quotes tbody tr")
    for i, q in enumerate(packet["quotes"]):
        want = "; ".join(
            f"{a['id']} {max(q['haircut_bps'], a['haircut_floor_bps']):,} bps"
            + (" (its minimum)" if a["haircut_floor_bps"] > q["haircut_bps"] else "")
            for a in packet["assets"]
            if a["status"] != "exited" and a["kind"] in q["eligible_kinds"]
        )
        assert rows.nth(i).locator(".fb-applied").inner_text() == (want or "—")
        assert rows.nth(i).locator("td").nth(2).inner_text() == f"{q['rate_bps']:,} bps"
    assert re.findall(r"[\d.]+\s?%", page.locator("section.fb-packet").inner_text()) == ["1 %"]  # (100 bps = 1 %)
    term_sheet = next(x for x in packet["sources"] if " cents" in x["text"])
    source = page.locator("details.fb-source", has_text=term_sheet["id"])
    source.locator("summary").click()
    shown = source.locator("p").inner_text()
    assert (
        shown == re.sub(r"\b(\d+) cents\b", lambda m: money(int(m.group(1))), term_sheet["text"])
        and " cents" not in shown
    )

    # every problem with the batch next to Submit, every field at fault marked, the first one focused
    report = page.locator("form.fb-report-form")
    report.get_by_label("Cash", exact=True).fill("lots")
    report.get_by_label("Breaches", exact=True).fill("four")
    d.submit(page)
    problems = page.locator(".fb-submit-errors li")
    assert problems.count() >= 4  # cash, funding cost, every figure of the included asset, breaches
    texts = problems.all_inner_texts()
    assert texts[0].startswith('Report cash: "lots" is not an amount') and any(
        t.startswith("Report breaches:") for t in texts
    )
    marked = report.locator("[aria-invalid=true]")
    assert marked.count() == problems.count()
    assert page.evaluate("document.activeElement.name") == "cash"
    submit_button, errors = box(page, "button.fb-primary"), box(page, ".fb-submit-errors")
    assert 0 <= errors["top"] - submit_button["bottom"] < 80, (submit_button, errors)  # right under Submit
    assert page.locator("#fb-desk > .fb-error").inner_text() == ""  # not at the top of the page
    # a typed-in fix clears its mark; a batch the engine rejects is said there too
    d.fill_report(page, gold[0]["report"])
    for action in gold[0]["actions"]:
        d.add_action(page, action)
    bad = json.loads(json.dumps(gold[0]))
    bad["report"]["cash"] += 1  # one cent off: within 1 bp of the cash, so it counts as matched, as the grade counts it
    bad["report"]["funding_cost_to_date"] += 10_000  # 100.00 off a cost of 0: does not
    d.fill_report(page, bad["report"])
    assert report.locator("[aria-invalid=true]").count() == 0
    d.submit(page)
    d.wait_day(page, 2)
    # the positions say which trades fund them
    funded = dict(
        zip(
            page.locator("table.fb-positions tbody tr td:first-child").all_inner_texts(),
            page.locator("table.fb-positions .fb-funded-by").all_inner_texts(),
        )
    )
    host = engine.Run(engine.load_episode("W1"))
    host.submit(bad)
    for trade in host.packet()["trades"]:
        assert (
            funded[trade["asset"]].startswith(f"{trade['id']} {trade['counterparty']} ")
            and f"({trade['status']})" in funded[trade["asset"]]
        )
    # how many report fields matched, as the grade counts them
    shown = page.locator(".fb-matched").get_attribute("data-matched")
    graded = engine.grade_candidate(
        {"format": 1, "fixture_sha256": engine.fixture_sha256(engine.load_episode("W1")), "batches": [bad]},
        engine.load_episode("W1"),
    )["days"][0]
    assert shown == f"{graded['report_matched']}/{graded['report_fields']}" == "11/12"
    assert "(not: funding cost to date)" in page.locator(".fb-matched").inner_text()

    # the projection's fill is an assisted mode: labelled, recorded in the session and in the export
    for action in gold[1]["actions"]:
        d.add_action(page, action)
    page.get_by_role("button", name="Fill the report from the projection (assisted mode)").click()
    page.wait_for_function("() => document.querySelector('form.fb-report-form [name=cash]').value !== ''")
    assert d.stored(page)["assisted_days"] == [2]
    d.submit(page)
    d.wait_day(page, 3)
    assert page.locator(".fb-assisted-note").get_attribute("data-assisted") == "2"
    files = d.export(page)
    assert json.loads(files["session.json"])["assisted_days"] == [2]
    assert "Assisted mode: the projection tool filled the report on day 2." in files["README.txt"]

    # finalised: the result links to the same world's published runs (the reference run of W1 among them)
    d.finalize(page)
    page.wait_for_selector(".fb-same-world-box[data-loaded]")
    linked = page.locator(".fb-same-world li[data-run]")
    runs = {r.get_attribute("data-run") for r in linked.all()}
    index = json.loads((ROOT / "runs" / "index.json").read_text())
    same = {
        e["run_id"] for e in index["entries"] if e["fixture_sha256"] == engine.fixture_sha256(engine.load_episode("W1"))
    }
    assert "reference-W1" in runs and runs == same
    assert linked.first.locator("a").get_attribute("href").endswith(f"runs/{sorted(same)[0]}/")

    # every checkpoint closed, not finalised, then a reload: no "day null"
    closed = {
        "format": 1,
        "source": {"episode": "W1"},
        "moves": [{"skip": day} for day in range(1, 21)],
        "finalized": False,
    }
    page.evaluate("(s) => localStorage.setItem('fundbook.desk/1', JSON.stringify(s))", closed)
    page.reload()
    page.wait_for_selector("#fb-desk[data-ready=true]", state="attached", timeout=LOAD_TIMEOUT_MS)
    status = page.locator(".fb-status").inner_text()
    assert (
        status == "episode W1: Every checkpoint is closed: finalise the run."
        and "null" not in page.locator("#fb-desk").inner_text()
    )

    # a phone: one column, the Per asset caption one readable line, nothing serious for axe
    page.set_viewport_size({"width": 390, "height": 844})
    d.reset(page)
    d.wait_day(page, 1)
    packet, batch = box(page, "section.fb-packet"), box(page, "section.fb-compose")
    assert batch["top"] >= packet["bottom"]
    caption = box(page, "table.fb-report-assets caption")
    assert caption["width"] > 200 and caption["height"] < 40, caption
    page.evaluate(AXE.read_text(encoding="utf-8"))
    assert page.evaluate(RUN_AXE) == []
    assert not page.errors
