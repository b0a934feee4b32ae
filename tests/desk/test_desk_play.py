"""Playing the desk in Chromium: the gold plan through the forms, and parity with the CLI."""

import json
import re

import pytest
from click.testing import CliRunner

import engine
from fundbook.cli import cli
from tests.desk import helpers as d

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def replay_with_cli(tmp_path, files, source):
    """Replay an export's batches with the CLI desk runtime; return (result, head)."""
    runner = CliRunner()
    db = str(tmp_path / "desk.sqlite")
    where = []
    if "episode" in source:
        init = ["desk", "init", "--episode", source["episode"], "--db", db]
    else:
        out = tmp_path / "families"
        r = runner.invoke(
            cli, ["families", "--output", str(out), "--family", source["family"], "--seeds", str(source["seed"])]
        )
        assert r.exit_code == 0, r.output
        where = ["--family-root", str(out / source["family"] / f"seed-{source['seed']}")]
        init = ["desk", "init", *where, "--db", db]
    # the README's init names the practice desk's (public) salt, so the CLI reaches the browser's head
    salt = re.search(r"desk init .* --salt ([0-9a-f]{64})", files["README.txt"]).group(1)
    r = runner.invoke(cli, init + ["--salt", salt])
    assert r.exit_code == 0, r.output
    world = (
        engine.load_episode(source["episode"])
        if "episode" in source
        else engine.generate(source["family"], source["seed"])
    )
    from engine._commitment import public_salt

    assert salt == public_salt(engine.fixture_sha256(world))
    session = json.loads(files["session.json"])
    assert session["source"] == source
    for move in session["moves"]:
        if "batch" in move:
            name = f"batches/day-{move['batch']['day']:02d}.json"
            assert json.loads(files[name]) == move["batch"]
            path = tmp_path / name.replace("/", "-")
            path.write_text(files[name])
            r = runner.invoke(cli, ["desk", "submit", "--db", db, *where, "--input", str(path), "--json"])
        else:
            r = runner.invoke(cli, ["desk", "advance", "--db", db, *where, "--json"])
        assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["desk", "result", "--db", db, *where, "--finalize", "--json"])
    return r.exit_code, json.loads(r.output)


@pytest.mark.parametrize("episode", ["W1", "W2", "W3"])  # FUND; a ROLL; an ESCALATE and an EXECUTE
def test_gold_through_the_forms_scores_100_and_replays_with_the_cli(page, site, tmp_path, episode):
    gold = engine.gold_candidate(engine.load_episode(episode))
    d.open_desk(page, site)
    # the runtime started from the stdlib subset `make build-desk` compiled
    assert (
        "(the desk's subset of the standard library, restored from the snapshot of this bundle)"
        in page.locator(".fb-bundle").inner_text()
    )
    d.start(page, episode=episode)
    for batch in gold["batches"]:
        assert d.open_day(page) == batch["day"]
        for action in batch["actions"]:
            d.add_action(page, action)
        d.fill_report(page, batch["report"])
        d.submit(page)
        if batch["day"] < 20:
            d.wait_day(page, batch["day"] + 1)
        else:
            d.wait_for(page, "p.fb-closed")
            assert page.locator("section.fb-packet").count() == 0
    outcome = d.finalize(page)
    # status first, then verdict, then the score on its fixed denominator
    assert outcome == {"status": "SCORED", "verdict": "QUALIFIED", "score": "100/100"}
    text = page.locator("section.fb-result").inner_text()
    assert text.index("Status") < text.index("Verdict") < text.index("Score")
    browser_head = page.locator("section.fb-result dd").last.inner_text()

    files = d.export(page)
    assert sorted(n for n in files if n.startswith("batches/")) == [f"batches/day-{i:02d}.json" for i in range(1, 21)]
    code, result = replay_with_cli(tmp_path, files, {"episode": episode})
    assert code == 0
    assert (result["status"], result["verdict"], result["score"]["points"]) == ("SCORED", "QUALIFIED", 100)
    assert f"{result['receipts_head']['size']}:{result['receipts_head']['hash']}" == browser_head
    # and the gold candidate graded by the engine agrees with both
    graded = engine.grade_candidate(gold, engine.load_episode(episode))
    assert graded["receipts_head"] == result["receipts_head"]
    assert not page.errors


def test_a_practice_family_session_with_refusals_and_a_missed_day_replays_identically(page, site, tmp_path):
    """FUND_01 seed 1 (the default): batches through the JSON view, one refused action, one skipped day."""
    instance = engine.generate("FUND_01", 1)
    plan = engine.policy_candidate(instance, "shortest-cheapest")["batches"]
    d.open_desk(page, site)
    assert page.locator(".fb-where").inner_text().startswith("FUND_01 seed 1")
    host = engine.Run(instance)
    refused = False
    for batch in plan[:8]:
        day = batch["day"]
        packet = host.packet()
        if day == 3:
            page.get_by_role("button", name="Close the day without a batch").click()
            host.skip()
            d.wait_day(page, day + 1)
            assert d.head(page) == host.head
            continue
        if not refused and packet["quotes"] and packet["assets"]:
            # a FUND far beyond any quote's size: refused CAPACITY, and the day still settles
            batch = json.loads(json.dumps(batch))
            batch["actions"].append(
                {
                    "id": "too-big",
                    "type": "FUND",
                    "asset": packet["assets"][0]["id"],
                    "quote": packet["quotes"][0]["id"],
                    "notional": 10**14,
                }
            )
        d.submit_json(page, batch)
        decisions, _ = host.submit(batch)
        d.wait_day(page, day + 1)
        assert d.head(page) == host.head
        rows = page.locator("table.fb-decisions tbody tr")
        assert rows.count() == max(1, len(decisions))
        for i, dec in enumerate(decisions):
            assert rows.nth(i).locator("[data-decision]").inner_text() == dec["decision"]
            assert dec["reason"] is None or dec["reason"] in rows.nth(i).inner_text()
            refused = refused or dec["action"] == "too-big"
    assert refused and any(dec["reason"] for day in host.days for dec in day["decisions"])
    outcome = d.finalize(page)
    files = d.export(page)
    code, result = replay_with_cli(tmp_path, files, {"family": "FUND_01", "seed": 1})
    assert outcome["status"] == result["status"]
    assert outcome["verdict"] == result["verdict"]
    assert outcome["score"] == f"{result['score']['points']}/100"
    assert (
        page.locator("section.fb-result dd").last.inner_text()
        == f"{result['receipts_head']['size']}:{result['receipts_head']['hash']}"
    )
    assert not page.errors


def test_every_action_form_writes_the_batch_json_the_engine_takes(page, site):
    """REPAY, ROLL, ESCALATE and EXECUTE (with a ROLL inside) as the forms write them."""
    gold = engine.gold_candidate(engine.load_episode("W3"))["batches"]
    d.open_desk(page, site)
    d.start(page, episode="W3")
    for batch in gold[:3]:
        d.submit_json(page, batch)
        d.wait_day(page, batch["day"] + 1)
    wanted = [
        {"id": "r1", "type": "REPAY", "trade": "FT001"},
        {"id": "r2", "type": "ROLL", "trade": "FT001", "quote": "Q4"},
        {"id": "r3", "type": "ESCALATE", "kind": "tenor", "amount": 5, "note": "longer tenor for A2"},
        {
            "id": "r4",
            "type": "EXECUTE",
            "approval": "AP001",
            "action": {"type": "ROLL", "trade": "FT001", "quote": "Q3"},
        },
    ]
    for action in wanted:
        d.add_action(page, action)
    d.fill_report(page, gold[3]["report"])
    d.open_json(page)
    shown = json.loads(page.get_by_label("Batch JSON").input_value())
    assert shown == {"day": 4, "actions": wanted, "report": gold[3]["report"]}
    # removing an action by keyboard-reachable button updates the batch
    page.get_by_role("button", name="Remove action r2").click()
    shown = json.loads(page.get_by_label("Batch JSON").input_value())
    assert [a["id"] for a in shown["actions"]] == ["r1", "r3", "r4"]
    assert not page.errors
