"""Money on the desk page: amounts typed as money reach the engine as exact
cents, wrong ones are refused at entry with a reason, and what the engine
answers (projection, tools, refusals, score basis) reads as money."""

import json
import re

import pytest

import engine
from tests.desk import helpers as d

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

RAW = re.compile(r"(?<![\w.,:])\d{7,}(?![\w.,])")  # a bare amount in cents: seven digits or more


def draft(page):
    """The batch the JSON view shows (the report may still be incomplete)."""
    d.open_json(page)
    return json.loads(page.get_by_label("Batch JSON").input_value())


def test_amounts_typed_as_money_reach_the_engine_as_exact_cents(page, site):
    d.open_desk(page, site)
    d.start(page, episode="W1")
    form = page.locator("form.fb-action-form")
    notional = form.get_by_label("Notional", exact=True)
    for text, cents in (("8,000,000.00", 800000000), ("8000000", 800000000), ("8,000,000.5", 800000050)):
        notional.fill(text)
        hint = form.locator(f"#{notional.get_attribute('id')}-hint").inner_text()
        assert hint == f"{'8,000,000.50' if cents % 100 else '8,000,000.00'} ({cents} cents)"
        form.get_by_role("button", name="Add action").click()
        assert draft(page)["actions"][-1]["notional"] == cents
    assert len(draft(page)["actions"]) == 3
    # refused at entry, with the reason, and nothing is added
    for text, reason in (
        ("-5", "Notional: -5 is negative; an amount must be more than zero"),
        ("0", "Notional: must be more than zero"),
        ("8.005", 'Notional: "8.005" has 3 decimals'),
        ("eight", 'Notional: "eight" is not an amount'),
    ):
        notional.fill(text)
        assert notional.get_attribute("aria-invalid") == "true"
        assert form.locator(f"#{notional.get_attribute('id')}-hint").inner_text().startswith(reason)
        form.get_by_role("button", name="Add action").click()
        assert form.locator(".fb-error").inner_text().startswith(reason)
        assert len(draft(page)["actions"]) == 3
    assert not page.errors


def test_the_projection_and_the_tools_read_as_money(page, site):
    instance = engine.load_episode("W1")
    d.open_desk(page, site)
    d.start(page, episode="W1")
    packet = engine.Run(instance).packet()
    asset, quote = packet["assets"][0]["id"], packet["quotes"][0]["id"]
    # one action the engine rejects (no reason code, a message), one it refuses for capacity
    d.open_json(page)
    empty = {"cash": 0, "funding_cost_to_date": 0, "assets": {}, "breaches": [], "open_approvals": []}

    def project(actions):
        page.get_by_label("Batch JSON").fill(json.dumps({"day": 1, "report": empty, "actions": actions}))
        page.get_by_role("button", name="Load JSON into the forms").click()
        page.evaluate("() => { document.querySelector('#fb-desk > .fb-status').textContent = ''; }")
        page.get_by_role("button", name="Fill the report from the projection (assisted mode)").click()
        page.wait_for_function(
            "() => document.querySelector('#fb-desk > .fb-status').textContent.includes('projection')"
        )
        return page.locator("#fb-desk > .fb-status").inner_text()

    status = project([{"id": "ghost", "type": "REPAY", "trade": "FT404"}])
    assert "REJECTED ." not in status and "would reject this whole batch" in status and "FT404" in status, status
    status = project([{"id": "huge", "type": "FUND", "asset": asset, "quote": quote, "notional": 10**14}])
    assert "huge REFUSED" in status and not RAW.search(status), status
    # the report the projection filled in reads as money, and the engine gets the same cents back
    cash = page.locator("form.fb-report-form").get_by_label("Cash", exact=True).input_value()
    assert re.fullmatch(r"-?\d{1,3}(,\d{3})*\.\d\d", cash), cash
    gold_day1 = engine.Run(instance)
    assert draft(page)["report"]["cash"] == gold_day1.packet()["cash"]  # no action accepted: the cash as it stands

    # a tool's answer: formatted money first, the engine's integers one click away
    tools = page.locator("section.fb-tools")
    tools.get_by_label("Tool", exact=True).select_option("headroom")
    tools.get_by_role("button", name="Run tool").click()
    out = tools.locator(".fb-tool-output")
    out.locator("dl").first.wait_for()
    text = out.locator("dl").first.inner_text()
    capacity = packet["counterparties"][0]["capacity"]
    assert f"{capacity // 100:,}.{capacity % 100:02d}" in text and not RAW.search(text)
    assert str(capacity) in out.locator("details pre").text_content()
    assert out.get_attribute("role") == "region" and out.get_attribute("tabindex") == "0"
    # the JSON, which scrolls sideways on its own, is a region the keyboard reaches too (issue 39, item 6)
    pre = out.locator("details pre")
    assert (pre.get_attribute("tabindex"), pre.get_attribute("role"), pre.get_attribute("aria-label")) == (
        "0",
        "region",
        "Tool output as JSON",
    )
    assert not page.errors


def test_refusals_and_the_score_basis_read_as_money(page, site):
    instance = engine.load_episode("W1")
    gold = engine.gold_candidate(instance)["batches"]
    d.open_desk(page, site)
    d.start(page, episode="W1")
    d.submit_json(page, gold[0])
    d.wait_day(page, 2)
    host = engine.Run(instance)
    host.submit(gold[0])
    packet = host.packet()
    batch = json.loads(json.dumps(gold[1]))
    batch["actions"] = [
        {
            "id": "too-big",
            "type": "FUND",
            "asset": packet["assets"][0]["id"],
            "quote": packet["quotes"][0]["id"],
            "notional": 10**14,
        }
    ]
    d.submit_json(page, batch)
    d.wait_day(page, 3)
    message = page.locator("table.fb-decisions tbody tr").first.locator("td").last.inner_text()
    assert message and not RAW.search(message), message
    assert "," in message  # an amount, grouped
    outcome = d.finalize(page)
    assert outcome["status"] == "SCORED"
    components = page.locator("section.fb-result table").first.inner_text()
    assert "money-days" in components and "all in cost" in components
    assert not RAW.search(components), components
    assert "money-days (an amount unfunded times the days" in page.locator("section.fb-result").inner_text()
    assert not page.errors
