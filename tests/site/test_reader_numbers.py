"""Issue 31 in Chromium at a laptop (1366x900) and a phone (390x844): the home page says the result in one
sentence on its first screen; Attempts is a register (an outcome strip, filters and sort in the URL, cards
on the phone); a decision page's verify box is on the first screen; the Studies verdicts come first and
the worlds table fits."""

import json

import pytest

from tests.site.test_layout import SIZES

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("site")]
W20_LAST = "SmolLM2-135M-Instruct.Q4_1-9a55afd8-FUND_04-seed-2012208819090176.2"


@pytest.fixture(scope="module")
def context(browser):
    made = {}

    def get(size):
        if size not in made:
            width, height = SIZES[size]
            made[size] = browser.new_context(viewport={"width": width, "height": height})
        return made[size]

    yield get
    for c in made.values():
        c.close()


@pytest.fixture
def at(context, server):
    opened = []

    def open_(path, size="laptop"):
        page = context(size).new_page()
        opened.append(page)
        page.goto(server + path)
        page.wait_for_selector("html[data-fb-regions]", state="attached")
        return page

    yield open_
    for p in opened:
        p.close()


def _model_rows(built_site):
    doc = json.loads((built_site[0] / "leaderboard.json").read_text())
    return [r for r in doc["rows"] if r["kind"] == "model"], doc


@pytest.mark.parametrize("size", SIZES)
def test_the_headline_is_on_the_first_screen_before_any_table(at, size, built_site):
    page = at("", size)
    headline = page.locator("[data-fb-headline]")
    box = headline.bounding_box()
    assert box["y"] + box["height"] <= SIZES[size][1], f"the headline ends at {box['y'] + box['height']} px"
    assert box["y"] < page.locator(".fb-board-table").bounding_box()["y"]
    _, doc = _model_rows(built_site)
    assert headline.inner_text().startswith(doc["headline"])


def test_leaderboard_json_and_csv_are_published_with_every_counted_attempt(built_site):
    models, doc = _model_rows(built_site)
    assert doc["schema"] == "fundbook.leaderboard/2" and doc["rule_source"] == "builders/counting.py"
    lines = (built_site[0] / "leaderboard.csv").read_text().splitlines()
    counted = sum(len(r["counted"]) for r in doc["rows"])
    assert len(lines) == counted + 1
    for row in models:
        assert row["worlds"] == len(row["counted"]) == len({c["world"] for c in row["counted"]})
        for c in row["counted"]:
            assert (built_site[1] / "attempts" / c["attempt_id"] / "record.json").is_file()


def test_the_attempts_strip_has_one_square_per_world_linking_its_counted_attempt(at, built_site):
    page = at("attempts/")
    models, _ = _model_rows(built_site)
    squares = page.locator("[data-fb-strip] a.fb-outcome-square")
    assert squares.count() == sum(r["worlds"] for r in models)
    lost = page.locator('[data-fb-strip] a[data-fb-outcome="no-result"]')
    assert lost.count() == 1 and lost.get_attribute("href") == f"{W20_LAST}/"
    lost.click()
    page.wait_for_selector("[data-fb-counted-score]")
    assert page.inner_text("[data-fb-counted-score]") == "9/100"


def test_attempts_filters_and_sort_live_in_the_url(at, built_site):
    page = at("attempts/?outcome=no-result&model=llama-cpp:SmolLM2-135M-Instruct.Q4_1")
    visible = page.eval_on_selector_all("table[data-fb-register] tbody tr:not([hidden])", "rs => rs.map(r => r.id)")
    assert visible == [W20_LAST]  # the mock's hostile test attempt (no result either) is filtered out by model
    total = page.locator("table[data-fb-register] tbody tr").count()
    assert page.inner_text("[data-fb-count]") == f"1 of {total} attempts"
    page = at("attempts/?sort=score&dir=desc")
    scores = page.eval_on_selector_all(
        "table[data-fb-register] tbody tr:not([hidden]) td[data-label=Score]",
        "cs => cs.map(c => Number(c.dataset.sort))",
    )
    assert scores == sorted(scores, reverse=True) and scores[0] == 100  # the mock's reference replay
    page.select_option("[data-fb-filter=outcome]", "superseded")
    assert "outcome=superseded" in page.url and "sort=score" in page.url
    ids = page.eval_on_selector_all("table[data-fb-register] tbody tr:not([hidden])", "rs => rs.map(r => r.id)")
    assert W20_LAST[:-2] in ids and W20_LAST not in ids


def test_on_a_phone_attempts_are_cards_that_fit(at):
    page = at("attempts/", "phone")
    widths = page.eval_on_selector_all(
        "table[data-fb-register] tbody tr", "rs => rs.map(r => Math.round(r.getBoundingClientRect().right))"
    )
    assert widths and max(widths) <= 390, max(widths)
    display = page.eval_on_selector("table[data-fb-register] tbody tr", "r => getComputedStyle(r).display")
    assert display == "block"


@pytest.mark.parametrize("size", SIZES)
def test_the_decision_s_verify_box_and_both_bounds_are_on_the_first_screen(at, size):
    page = at("comparisons/smollm2-vs-do-nothing/", size)
    page.wait_for_selector(".fb-verify-decision button")
    button = page.locator(".fb-verify-decision button").first.bounding_box()
    bounds = page.locator(".fb-bounds").bounding_box()
    height = SIZES[size][1]
    assert bounds["y"] + bounds["height"] <= height
    assert button["y"] + button["height"] <= height, f"the verify button ends at {button['y'] + button['height']}"
    # what the decision counted and what it depended on follow the verify box (world 20's sensitivity)
    assert page.locator(".fb-verify-decision").bounding_box()["y"] < page.locator("[data-fb-lost]").bounding_box()["y"]
    assert page.inner_text(".fb-direction").startswith(
        "The model (SmolLM2-135M-Instruct.Q4_1) scored lower than doing nothing"
    )


@pytest.mark.parametrize("size", SIZES)
def test_the_studies_verdicts_come_first_and_the_worlds_table_fits(at, size):
    page = at("studies/", size)
    verdicts = page.locator("[data-fb-verdicts]").first.bounding_box()
    assert verdicts["y"] < SIZES[size][1] / 2
    table = page.locator(".fb-study-worlds-table")
    fits = page.evaluate("""() => { const t = document.querySelector('.fb-study-worlds-table');
        const box = t.closest('.fb-study-worlds'); return [t.scrollWidth, box.clientWidth]; }""")
    if size == "laptop":
        assert fits[0] <= fits[1], fits
    links = table.locator("a")
    right = page.evaluate("() => document.querySelector('.fb-study-worlds').getBoundingClientRect().right")
    assert all(links.nth(i).bounding_box()["x"] < right for i in range(links.count()))


def test_an_inspect_attempt_has_one_number_and_its_own_row_everywhere(at, built_site):
    """The Inspect-imported attempt (harness Inspect): its page, its Attempts row, its leaderboard row on the home
    page and in leaderboard.json and .csv show the same score, on a row of its own beside the worker's."""
    doc = json.loads((built_site[0] / "leaderboard.json").read_text())
    rows = [r for r in doc["rows"] if r["harness"] == "Inspect"]
    if not rows:
        pytest.skip("needs a published Inspect attempt")
    (row,) = rows
    (counted,) = row["counted"]  # one world
    record = json.loads((built_site[1] / "attempts" / counted["attempt_id"] / "record.json").read_text())["content"]
    score = record["result"]["score"]["points"]
    assert (counted["score"], counted["graded_by"], row["worlds"], row["mean"]["value"]) == (
        score,
        "record",
        1,
        f"{score}.0",
    )
    assert (row["provider"], row["name"], row["kind"]) == (
        record["model"]["provider"],
        f"{record['model']['provider']}:{record['model']['id']}",
        "model",
    )
    assert row["key"].endswith(":inspect") and [
        r for r in doc["rows"] if r["harness"] == "fundbook worker" and r["kind"] == "model"
    ], "the worker's model row stays its own"
    csv = [line.split(",") for line in (built_site[0] / "leaderboard.csv").read_text().splitlines()]
    assert [c[5] for c in csv if c[4] == counted["attempt_id"]] == [str(score)]
    page = at(f"attempts/{counted['attempt_id']}/")
    assert page.inner_text("[data-fb-counted-score]") == f"{score}/100"
    assert page.inner_text("[data-fb-harness]") == "harness Inspect"
    page = at("attempts/")
    attempt_row = page.locator(f'tr[id="{counted["attempt_id"]}"]')
    assert attempt_row.get_attribute("data-harness") == "Inspect"
    assert attempt_row.locator("td[data-label=Score] strong").inner_text() == f"{score}/100"
    assert attempt_row.locator("[data-fb-harness]").inner_text() == "harness Inspect"
    page = at("")
    board = page.locator(f'.fb-board-table tr[data-agent="{row["key"]}"]')
    assert board.locator("[data-fb-harness]").get_attribute("data-fb-harness") == "Inspect"
    assert board.locator('[data-label="Mean score"]').inner_text().startswith(f"{score}.0")
