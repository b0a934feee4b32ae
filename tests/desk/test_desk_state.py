"""What must leave the session exactly as it was, and what must survive a reload."""

import json
import zipfile

import pytest

import engine
from tests.desk import helpers as d

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def snapshot(page):
    return {
        "stored": d.stored(page),
        "head": d.head(page),
        "day": d.open_day(page),
        "cash": page.locator("section.fb-packet dl dd").first.inner_text(),
    }


def test_rejected_batch_refused_action_and_malformed_import_leave_the_session(page, site, tmp_path):
    instance = engine.load_episode("W1")
    gold = engine.gold_candidate(instance)["batches"]
    d.open_desk(page, site)
    d.start(page, episode="W1")
    d.submit_json(page, gold[0])
    d.wait_day(page, 2)
    before = snapshot(page)

    # a rejected batch (the wrong day) through the JSON view: plain error, nothing changes
    wrong_day = json.loads(json.dumps(gold[1]))
    d.open_json(page)
    page.get_by_label("Batch JSON").fill(json.dumps(dict(wrong_day, day=7)))
    page.get_by_role("button", name="Load JSON into the forms").click()
    assert "batch.day: expected the open day 2" in d.error_text(page)
    assert snapshot(page) == before
    # a batch the desk rejects (an unknown trade) after the forms accept it
    bad = json.loads(json.dumps(gold[1]))
    bad["actions"] = [{"id": "x", "type": "REPAY", "trade": "FT999"}]
    page.get_by_label("Batch JSON").fill(json.dumps(bad))
    page.get_by_role("button", name="Load JSON into the forms").click()
    d.submit(page)
    d.wait_error(page, "Batch rejected")
    assert "FT999" in d.error_text(page)
    assert snapshot(page) == before
    # the same through "Submit the JSON as it is", and JSON that does not parse
    d.clear_error(page)
    page.get_by_label("Batch JSON").fill(json.dumps(bad))
    page.get_by_role("button", name="Submit the JSON as it is").click()
    d.wait_error(page, "FT999")
    assert snapshot(page) == before
    d.clear_error(page)
    page.get_by_label("Batch JSON").fill('{"day": 2,')
    page.get_by_role("button", name="Submit the JSON as it is").click()
    d.wait_error(page, "not valid")
    assert snapshot(page) == before
    # an incomplete report is refused by the form before it reaches the desk
    page.locator("form.fb-report-form").get_by_label("Cash", exact=True).fill("lots")
    d.submit(page)
    assert 'Report cash: "lots" is not an amount' in d.error_text(page)
    assert snapshot(page) == before

    # malformed imports: not JSON, not a batch, a batch the engine rejects
    for name, text in (
        ("broken.json", "{not json"),
        ("odd.json", json.dumps({"hello": 1})),
        ("day-01.json", json.dumps(dict(gold[0], actions=[{"id": "a", "type": "REPAY", "trade": "FT404"}]))),
    ):
        path = tmp_path / name
        path.write_text(text)
        d.clear_error(page)
        page.get_by_label("Import batches", exact=False).set_input_files(str(path))
        d.wait_error(page, "Import refused")
        assert name in d.error_text(page) or "rejects" in d.error_text(page)
        assert snapshot(page) == before

    # a refused action: shown with its reason; the book is what it would be without it
    host = engine.Run(instance)
    host.submit(gold[0])
    batch = json.loads(json.dumps(gold[1]))
    packet = host.packet()
    batch["actions"] = [
        {
            "id": "too-big",
            "type": "FUND",
            "asset": packet["assets"][0]["id"],
            "quote": packet["quotes"][0]["id"] if packet["quotes"] else "Q1",
            "notional": 10**14,
        }
    ]
    decisions, _ = host.submit(batch)
    assert decisions[0]["decision"] == "REFUSED"
    d.submit_json(page, batch)
    d.wait_day(page, 3)
    row = page.locator("table.fb-decisions tbody tr").first
    assert row.locator("[data-decision]").inner_text() == "REFUSED"
    assert decisions[0]["reason"] in row.inner_text()
    without = engine.Run(instance)
    without.submit(gold[0])
    without.submit(dict(batch, actions=[]))
    close = [r for r in host.receipts if r["kind"] == "CLOSE"][-1]["payload"]
    close_without = [r for r in without.receipts if r["kind"] == "CLOSE"][-1]["payload"]
    assert close["state_hash"] == close_without["state_hash"]
    assert d.head(page) == host.head
    assert not page.errors


def test_reload_keeps_the_session_and_reset_clears_it(page, site):
    gold = engine.gold_candidate(engine.load_episode("W2"))["batches"]
    d.open_desk(page, site)
    d.start(page, episode="W2")
    for batch in gold[:2]:
        d.submit_json(page, batch)
        d.wait_day(page, batch["day"] + 1)
    before = d.head(page)
    page.reload()
    page.wait_for_selector("#fb-desk[data-ready=true]", state="attached", timeout=90_000)
    assert d.open_day(page) == 3
    assert d.head(page) == before
    assert page.locator("table.fb-decisions").count() == 0  # the page shows state, not stale answers
    assert page.locator(".fb-days tbody tr").count() == 2
    # Reset asks first (two days would be lost): the first press changes nothing
    stored = d.stored(page)
    page.get_by_role("button", name="Reset session").click()
    confirm = page.locator("section.fb-session button.fb-confirm")
    assert confirm.inner_text() == "Confirm: discard episode W2: 2 day(s) played"
    assert "Reset discards episode W2: 2 day(s) played" in page.locator(".fb-status").inner_text()
    assert d.stored(page) == stored and d.open_day(page) == 3 and d.head(page) == before
    confirm.click()
    d.wait_day(page, 1)
    assert d.stored(page)["moves"] == [] and d.stored(page)["source"] == {"episode": "W2"}
    assert d.head(page)["size"] < before["size"]
    page.reload()
    page.wait_for_selector("#fb-desk[data-ready=true]", state="attached", timeout=90_000)
    assert d.open_day(page) == 1
    assert not page.errors


def test_export_then_import_round_trips_and_a_candidate_file_imports(page, site, tmp_path):
    instance = engine.load_episode("W2")
    gold = engine.gold_candidate(instance)
    d.open_desk(page, site)
    d.start(page, episode="W2")
    for batch in gold["batches"][:2]:
        d.submit_json(page, batch)
        d.wait_day(page, batch["day"] + 1)
    page.get_by_role("button", name="Close the day without a batch").click()
    d.wait_day(page, 4)
    played = {"head": d.head(page), "moves": d.stored(page)["moves"]}
    files = d.export(page)
    assert json.loads(files["session.json"])["moves"][-1] == {"skip": 3}
    assert "fundbook desk advance" in files["README.txt"]
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, text in files.items():
            zf.writestr(f"fundbook-desk-W2/{name}", text)

    d.reset(page)
    d.wait_day(page, 1)
    page.get_by_label("Import batches", exact=False).set_input_files(str(archive))
    d.wait_day(page, 4)
    assert {"head": d.head(page), "moves": d.stored(page)["moves"]} == played

    # a candidate for another fixture is refused; the gold candidate for this one plays to 100/100
    other = tmp_path / "w1.json"
    other.write_text(json.dumps(engine.gold_candidate(engine.load_episode("W1"))))
    d.clear_error(page)
    page.get_by_label("Import batches", exact=False).set_input_files(str(other))
    d.wait_error(page, "Import refused")
    assert "is not this session's" in d.error_text(page)
    assert d.head(page) == played["head"]
    mine = tmp_path / "w2.json"
    mine.write_text(json.dumps(gold))
    page.get_by_label("Import batches", exact=False).set_input_files(str(mine))
    d.wait_for(page, "p.fb-closed")
    assert d.finalize(page) == {"status": "SCORED", "verdict": "QUALIFIED", "score": "100/100"}
    assert not page.errors
