"""Driving the practice desk like a person: forms, buttons, what the page shows."""

import io
import json
import zipfile

from builders.site.fmt import money
from tests.desk.conftest import LOAD_TIMEOUT_MS

DESK = "#fb-desk"


def open_desk(page, site):
    page.goto(site.url + "desk/")
    page.wait_for_selector(f"{DESK}[data-ready=true]", state="attached", timeout=LOAD_TIMEOUT_MS)
    return page


def start(page, episode=None, family=None, seed=None):
    """Start a session from the form (opening its panel; confirming when the desk asks, there being a session to lose)."""
    more = page.locator("details.fb-more")
    if more.get_attribute("open") is None:
        more.locator("summary").click()
    form = page.locator("form.fb-session-form")
    if episode:
        form.get_by_label("Source").select_option("episode")
        form.get_by_label("Episode").select_option(episode)
    else:
        form.get_by_label("Source").select_option("family")
        form.get_by_label("Family").select_option(family)
        form.get_by_label("Seed").fill(str(seed))
    form.get_by_role("button", name="Start new session").click()
    confirm = form.locator("button.fb-confirm")
    if confirm.count():
        assert confirm.inner_text().startswith("Confirm: discard ")
        confirm.click()
    label = f"episode {episode}" if episode else f"{family} seed {seed}"
    page.wait_for_function(
        """(label) => {
        const where = document.querySelector('.fb-where');
        return where && where.textContent.startsWith(label + ' ') && document.querySelector('section.fb-packet[data-day="1"]');
    }""",
        arg=label,
    )


def open_day(page):
    section = page.locator("section.fb-packet")
    return int(section.get_attribute("data-day")) if section.count() else None


ERRORS = "#fb-desk > .fb-error, #fb-desk .fb-submit-errors"


def wait_for(page, selector):
    """Wait until `selector` is there or the desk shows an error; fail with the error's text."""
    page.wait_for_function(
        """([sel, errors]) => document.querySelector(sel)
        || [...document.querySelectorAll(errors)].map((e) => e.textContent).join('')""",
        arg=[selector, ERRORS],
    )
    error = error_text(page)
    assert not error, error


def wait_day(page, day):
    wait_for(page, f'section.fb-packet[data-day="{day}"]')


def head(page):
    size, digest = page.locator(".fb-where").get_attribute("data-head").split(":")
    return {"size": int(size), "hash": digest}


def stored(page):
    return json.loads(page.evaluate("localStorage.getItem('fundbook.desk/1')") or "null")


def add_action(page, action):
    form = page.locator("form.fb-action-form")
    form.get_by_label("Action type", exact=True).select_option(action["type"])
    form.get_by_label("Action id", exact=True).fill(action["id"])
    _fill_fields(form, action)
    form.get_by_role("button", name="Add action").click()
    error = form.locator(".fb-error").inner_text()
    assert not error, error


def _fill_fields(form, action, nested=False):
    t = action["type"]
    if t == "FUND":
        form.get_by_label("Asset", exact=True).select_option(action["asset"])
        form.get_by_label("Quote", exact=True).select_option(action["quote"])
        form.get_by_label("Notional", exact=True).fill(money(action["notional"]))  # typed as money
    elif t == "ROLL":
        form.get_by_label("Funding trade", exact=True).select_option(action["trade"])
        form.get_by_label("New quote", exact=True).select_option(action["quote"])
    elif t == "REPAY":
        form.get_by_label("Funding trade", exact=True).select_option(action["trade"])
    elif t == "ESCALATE":
        form.get_by_label("Authority kind", exact=True).select_option(action["kind"])
        if action["kind"] == "tenor":
            form.get_by_label("Amount (days)", exact=True).fill(str(action["amount"]))
        else:
            form.get_by_label("Amount", exact=True).fill(money(action["amount"]))
        form.get_by_label("Counterparty", exact=True).select_option(action.get("counterparty", ""))
        form.get_by_label("Note", exact=True).fill(action.get("note", ""))
    else:
        form.get_by_label("Approval", exact=True).select_option(action["approval"])
        form.get_by_label("Action under the approval", exact=True).select_option(action["action"]["type"])
        _fill_fields(form, action["action"], nested=True)


REPORT_LABELS = {
    "funded": "funded",
    "unfunded": "unfunded",
    "maturity_gap_days": "maturity gap (days)",
    "tail_cent_days": "tail (money-days)",
}


def fill_report(page, report):
    """Type a report as a person would: money (and money-days) formatted, days as whole numbers."""
    form = page.locator("form.fb-report-form")
    form.get_by_label("Cash", exact=True).fill(money(report["cash"]))
    form.get_by_label("Funding cost to date", exact=True).fill(money(report["funding_cost_to_date"]))
    for box in form.locator("input[type=checkbox]").all():
        asset = box.get_attribute("name").split(".", 1)[1]
        box.set_checked(asset in report["assets"])
    for asset, entry in report["assets"].items():
        for key, value in entry.items():
            text = str(value) if key == "maturity_gap_days" else money(value)
            form.get_by_label(f"{asset} {REPORT_LABELS[key]}", exact=True).fill(text)
    form.get_by_label("Breaches", exact=True).fill(", ".join(f"{b['day']}:{b['code']}" for b in report["breaches"]))
    form.get_by_label("Open approvals", exact=True).fill(", ".join(report["open_approvals"]))


def submit(page):
    page.get_by_role("button", name="Submit batch").click()


def clear_error(page):
    """Blank the error lines, so a wait for the next error cannot match the previous one."""
    page.evaluate("(errors) => document.querySelectorAll(errors).forEach((e) => { e.textContent = ''; })", ERRORS)


def error_text(page):
    """The desk's error line and the problems listed next to Submit."""
    return " ".join(t for t in page.eval_on_selector_all(ERRORS, "els => els.map((e) => e.textContent)") if t)


def wait_error(page, text):
    page.wait_for_function(
        "([errors, text]) => [...document.querySelectorAll(errors)].some((e) => e.textContent.includes(text))",
        arg=[ERRORS, text],
    )


def open_json(page):
    if page.locator("details.fb-json").get_attribute("open") is None:
        page.locator("details.fb-json > summary").click()


def submit_json(page, batch):
    """Enter a batch through the JSON view, load it into the forms and submit."""
    open_json(page)
    page.get_by_label("Batch JSON").fill(json.dumps(batch))
    page.get_by_role("button", name="Load JSON into the forms").click()
    submit(page)


def finalize(page):
    button = page.locator("section.fb-session button", has_text="Finalise the run")
    button.click()
    if page.locator("section.fb-packet").count():  # days still open: a second press confirms
        page.locator("section.fb-session button", has_text="Confirm: close the").click()
    page.wait_for_selector("section.fb-result", state="attached")
    return {
        "status": page.locator("[data-status]").get_attribute("data-status"),
        "verdict": page.locator("[data-verdict]").get_attribute("data-verdict")
        if page.locator("[data-verdict]").count()
        else None,
        "score": page.locator("[data-score]").get_attribute("data-score")
        if page.locator("[data-score]").count()
        else None,
    }


def export(page):
    """Click Export; return the zip's files {name-without-folder: text}."""
    with page.expect_download() as info:
        page.get_by_role("button", name="Export batches (.zip)").click()
    data = info.value.path().read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        return {n.split("/", 1)[1]: zf.read(n).decode() for n in zf.namelist()}


def reset(page):
    """Reset the session: the desk asks first when there is something to lose; confirm."""
    page.get_by_role("button", name="Reset session").click()
    confirm = page.locator("section.fb-session button.fb-confirm")
    if confirm.count():
        assert confirm.inner_text().startswith("Confirm: discard ")
        confirm.click()
