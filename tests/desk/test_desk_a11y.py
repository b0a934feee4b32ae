"""Every control on the desk and the verify box has a name and can be reached and used from the keyboard."""

import pytest

import engine
from builders.site.fmt import money
from tests.desk import helpers as d
from tests.desk.conftest import VERIFY_RUNS

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

# Controls without an accessible name: a <label for>, aria-label(ledby) or, for buttons, their text.
UNNAMED = """(root) => [...document.querySelectorAll(root + ' input, ' + root + ' select, ' + root + ' textarea, ' + root + ' button, ' + root + ' summary')]
  .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby')
    && !((el.tagName === 'BUTTON' || el.tagName === 'SUMMARY') && el.textContent.trim()))
  .map((el) => el.outerHTML.slice(0, 120))"""

# Visible controls that the Tab key can never reach.
UNREACHABLE = """(root) => [...document.querySelectorAll(root + ' input, ' + root + ' select, ' + root + ' textarea, ' + root + ' button, ' + root + ' summary, ' + root + ' a[href]')]
  .filter((el) => el.offsetParent !== null && el.tabIndex < 0)
  .map((el) => el.outerHTML.slice(0, 120))"""


def tab_until(page, predicate_js, limit=400):
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(predicate_js):
            return
    raise AssertionError(f"Tab never reached: {predicate_js}")


def test_desk_controls_are_labelled_and_keyboard_usable(page, site):
    d.open_desk(page, site)
    d.start(page, episode="W1")
    page.locator("details.fb-json > summary").click()  # open the JSON view so its controls count too
    page.locator("details.fb-more > summary").click()  # and the session's other controls
    assert page.evaluate(UNNAMED, "#fb-desk") == []
    assert page.evaluate(UNREACHABLE, "#fb-desk") == []

    # keyboard only: add day 1's gold action, fill the report from the projection tool, submit
    gold = engine.gold_candidate(engine.load_episode("W1"))["batches"][0]
    action = gold["actions"][0]
    assert action["type"] == "FUND"
    page.locator("body").focus()
    tab_until(page, "document.activeElement.name === 'type' && !!document.activeElement.closest('.fb-action-form')")
    page.keyboard.press("Tab")  # action id: keep the suggested one
    page.keyboard.press("Tab")  # asset
    page.keyboard.type(action["asset"])  # type-ahead picks the option
    page.keyboard.press("Tab")  # quote
    page.keyboard.type(action["quote"])
    page.keyboard.press("Tab")
    page.keyboard.type(money(action["notional"]))  # typed as money
    page.keyboard.press("Enter")  # submits the add-action form
    page.wait_for_selector("ol.fb-actions li", state="attached")
    added = page.locator("ol.fb-actions li").inner_text()
    assert action["asset"] in added and action["quote"] in added
    tab_until(page, "document.activeElement.textContent === 'Fill the report from the projection (assisted mode)'")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('form.fb-report-form [name=cash]').value !== ''")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Submit batch"
    page.keyboard.press("Enter")
    d.wait_day(page, 2)
    assert page.locator("table.fb-decisions [data-decision]").inner_text() == "ACCEPTED"
    # focus moved to the new day's heading, so a keyboard user is not dropped at the top
    assert page.evaluate("document.activeElement.id") == "fb-day-h"
    assert page.locator(".fb-days tbody tr").count() == 1
    assert not page.errors


def test_verify_button_is_named_and_keyboard_usable(page, site):
    page.goto(site.run_page(VERIFY_RUNS[1]))
    assert page.evaluate(UNNAMED, ".fb-verify") == []
    page.locator("body").focus()
    tab_until(page, "document.activeElement.textContent === 'Verify this run in your browser'")
    page.keyboard.press("Enter")
    page.wait_for_selector(".fb-verify [data-result]", state="attached", timeout=90_000)
    assert page.locator(".fb-verify [data-result]").get_attribute("data-result") == "match"
