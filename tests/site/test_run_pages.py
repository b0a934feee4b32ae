"""Run pages read the answer first: the grader test's outcome, the failing
gates as failures, a baseline's same-world scale, what a MALFORMED candidate
got wrong, receipts as money, charts that keep every day and mark zero."""

import json
import shutil
from pathlib import Path

import pytest

from builders.site import charts, fmt, pages, readable, records
from tests.site.host_records import write_host_runs
from tests.site.text import plain

RUN_IDS = [
    "adversarial-W3-M4_fully_hedged_tail",
    "adversarial-W1-M7_malformed",
    "adversarial-W3-M8_missing_reference",
    "baseline-FUND_01-seed-1-do-nothing",
    "baseline-FUND_01-seed-1-shortest-cheapest",
    "reference-W3",
]


@pytest.fixture(scope="module")
def pub(tmp_path_factory):
    return records.load_publication(write_host_runs(tmp_path_factory.mktemp("runs") / "runs", RUN_IDS))


def _page(pub, run_id):
    return pages.run_page(pages.environment(), pub, next(r for r in pub.runs if r.run_id == run_id))


def test_a_grader_test_page_says_first_whether_the_test_passed(pub):
    text = _page(pub, "adversarial-W3-M4_fully_hedged_tail")
    lede = text[text.index('<div class="fb-run-lede">') :]
    first = lede[: lede.index("</p>")]
    assert first.startswith(
        '<div class="fb-run-lede">\n<div data-fb-verified="lede">\n<p class="fb-test-line">'
        '<span class="fb-badge fb-passed-yes">'
    )
    assert (
        '<strong>The grader test <span data-fb-path="content/passed" data-fb-format="passed">passed</span>:</strong>'
    ) in first  # a mark: verify checks the word too
    assert "The NOT_QUALIFIED verdict below is that expected outcome, not a fault." in plain(first)
    assert plain(text).index("The grader test passed") < text.index('fb-label">Status')


def test_failing_gates_are_marked_as_failures(pub):
    text = _page(pub, "adversarial-W3-M4_fully_hedged_tail")
    gates = text[text.index('<table class="fb-gates"') :]
    gates = gates[: gates.index("</table>")]
    failed = [
        g
        for g in next(r for r in pub.runs if r.run_id == "adversarial-W3-M4_fully_hedged_tail").content["gates"]
        if not g["passed"]
    ]
    assert failed and gates.count('<tr class="fb-gate-failed">') == len(failed)
    assert (
        gates.count(
            '<span class="fb-badge fb-passed-no"><span aria-hidden="true">✗ </span>'
            '<span data-fb-path="content/gates/1/passed" data-fb-format="passed">did not pass</span>'
        )
        == 1
    )
    assert ">no<" not in gates and "<th>Result</th>" in gates


def test_a_baseline_page_gives_the_same_world_scale(pub):
    text = _page(pub, "baseline-FUND_01-seed-1-shortest-cheapest")
    line = text[text.index('<p class="fb-scale-line">') :]
    line = line[: line.index("</p>")]
    do_nothing = next(r for r in pub.runs if r.run_id == "baseline-FUND_01-seed-1-do-nothing").content["score"]
    assert (
        f'do-nothing <a href="../baseline-FUND_01-seed-1-do-nothing/"><span data-fb-path="content/score" '
        f'data-fb-format="score" data-fb-run="baseline-FUND_01-seed-1-do-nothing">{do_nothing["points"]}/100'
        f"</span></a>"
    ) in line
    assert 'reference <span title="the publication holds no such run of this world">—</span>' in line
    assert "this run <strong><span" in line and "on FUND_01 seed 1 are the two ends" in plain(line)
    own = _page(pub, "baseline-FUND_01-seed-1-do-nothing")
    assert "do-nothing (this run) <strong>" in own and "· this run" not in own[: own.index("## Status")]


@pytest.mark.parametrize(
    "run_id, label, message",
    [
        (
            "adversarial-W1-M7_malformed",
            "What was malformed",
            "candidate.batches&#91;0&#93;.actions: expected array, got str",
        ),
        ("adversarial-W3-M8_missing_reference", "Why unscorable", "no reference for fixture "),
    ],
)
def test_an_unscored_page_says_what_was_wrong(pub, run_id, label, message):
    text = _page(pub, run_id)
    assert f'<span class="fb-label">{label}</span> <code class="fb-reason">{message}' in text
    assert "hashes to this record's <code>result_sha256</code>" in text


def test_an_input_that_does_not_hash_to_the_record_gives_no_reason(pub, tmp_path):
    runs = Path(shutil.copytree(pub.runs_dir, tmp_path / "runs"))
    path = runs / "inputs" / "adversarial-W1-M7_malformed.json"
    doc = json.loads(path.read_text())
    doc["candidate"]["batches"][0]["actions"] = 7  # another malformation: another message
    path.write_text(json.dumps(doc))
    text = _page(records.load_publication(runs), "adversarial-W1-M7_malformed")
    assert "expected array" not in text and "could not be re-derived from the published input" in text


def test_receipts_read_as_money_one_figure_each(pub):
    run = next(r for r in pub.runs if r.run_id == "reference-W3")
    text = pages.run_page(pages.environment(), pub, run)
    receipts = pages._receipts(pub.runs_dir, run.content)
    i, asset = next((i, x) for i, x in enumerate(receipts) if x["kind"] == "ASSET")
    p = asset["payload"]
    assert (
        f'<span data-fb-path="receipts/{i}/payload" data-fb-format="payload">asset {p["asset"]}; exit_day '
        f"{p['exit_day']}; notional {fmt.money(p['notional'])}; settle_day {p['settle_day']}</span>"
    ) in text
    j, batch = next((i, x) for i, x in enumerate(receipts) if x["kind"] == "BATCH")
    report = batch["payload"]["batch"]["report"]
    assert f"batch.report: breaches none · cash {fmt.money(report['cash'])} · funding_cost_to_date " in text
    table = text[
        text.index('<table class="fb-receipts-table">') : text.index("</table>", text.index("fb-receipts-table"))
    ]
    assert str(p["notional"]) not in table  # no raw cents anywhere in the table
    assert table.count('data-fb-format="payload"') == len(receipts)


def test_the_payload_format_reads_money_and_shortens_hashes():
    payload = {
        "cash": 530000000,
        "day": 3,
        "report": {"assets": {"A1": {"tail_cent_days": 28500000000, "funded": 5}}, "open_approvals": []},
        "ids": ["Q1", "Q2"],
        "actions": [{"notional": 100, "quote": "Q1"}],
        "state_hash": "ab" * 32,
        "batch": True,
        "reason": None,
    }
    assert fmt.figure_text(payload, "payload") == (
        "actions[1]: notional 1.00 · quote Q1; batch yes; cash 5,300,000.00; day 3; ids Q1, Q2; reason —; "
        "report.assets.A1: funded 0.05 · tail_cent_days 285,000,000.00 money-days; report: open_approvals none; "
        "state_hash abababababab…"
    )
    assert fmt.figure_text({}, "payload") == "none" and fmt.figure_text("x", "payload") == "x"
    deep = {}
    node = deep
    for _ in range(5000):  # deeper than any recursion limit: walked with a stack
        node["a"] = {}
        node = node["a"]
    node["cash"] = 1
    assert fmt.figure_text(deep, "payload").endswith(".a: cash 0.01")


def test_pretty_json_formats_money_keys_only():
    text = readable.pretty({"cash": 530000000, "day": 3, "tail_cent_days": 28500000000, "id": "Q1"})
    assert (
        '"cash": 5,300,000.00' in text
        and '"day": 3' in text
        and '"tail_cent_days": 28,500,000,000 cent-days (285,000,000.00 money-days)' in text
    )  # the key's own unit first
    assert '"realized_tail": 0.05 money-days' in readable.pretty({"realized_tail": 5})
    deep = []
    for _ in range(3000):
        deep = [deep]
    assert readable.pretty(deep) is None  # too deep to walk: the page shows the text as written


def test_the_funding_chart_keeps_every_day_and_the_cash_chart_marks_zero():
    days = [
        {
            "day": d,
            "cash": 100 * (5 - d),
            "decisions": [{"type": "FUND", "decision": "ACCEPTED"}] if d in (1, 7) else [],
        }
        for d in range(1, 11)
    ]
    funding = charts.funding_chart(days)
    assert funding["encoding"]["x"]["scale"]["domain"] == list(range(1, 11))
    assert [r["day"] for r in funding["data"]["values"]] == [1, 7]  # the rows verify re-derives stay the same
    cash = charts.cash_chart(days)
    assert cash["data"]["values"] == [{"day": d["day"], "cash": d["cash"] / 100} for d in days]
    zero, line, points = cash["layer"]
    assert zero["mark"]["type"] == "rule" and zero["data"] == {"values": [{"zero": 0}]}  # one rule, at zero
    assert zero["encoding"]["y"]["field"] == "zero"
    assert points["encoding"]["color"]["condition"] == {"test": "datum.cash < 0", "value": charts.BELOW_ZERO}
    assert line["encoding"]["x"]["scale"]["domain"] == list(range(1, 11))
    assert charts.below_zero(days) == [6, 7, 8, 9, 10] and pages.day_ranges([6, 7, 8, 10]) == "days 6–8 and 10"
    assert pages.day_ranges([3]) == "day 3" and pages.day_ranges([]) == ""


def test_a_run_page_says_which_days_closed_below_zero(pub):
    text = _page(pub, "baseline-FUND_01-seed-1-do-nothing")
    low = charts.below_zero(
        next(r for r in pub.runs if r.run_id == "baseline-FUND_01-seed-1-do-nothing").content["days"]
    )
    assert low and f"Cash closed below zero on {pages.day_ranges(low)}" in plain(text)
    assert '<span data-fb-path="content/days/5/day">6</span>–' in text  # each day a mark verify checks
    assert text.count('<tr class="fb-below-zero">') == len(low)


def test_display_numbers_are_grouped_and_never_print_six_zero_decimals():
    assert fmt.usd(0) == "$0.00" and fmt.usd(50_000_000) == "$50.00" and fmt.usd(1234) == "$0.001234"
    assert fmt.micro_usd(0) == "$0.00" and fmt.usd(-1_500_000) == "-$1.50" and fmt.usd(None) == "—"
    assert fmt.count(38884) == "38,884" and fmt.count(True) == "True"
    assert fmt.decimal("22.955000000") == "22.96" and fmt.decimal("15.214544880", 2, "floor") == "15.21"
    assert fmt.decimal("30.695455120", 2, "ceiling") == "30.70" and fmt.decimal("1234567.5", 1) == "1,234,567.5"
    assert fmt.decimal("-0.001") == "0.00" and fmt.decimal("1e5") == "1e5" and fmt.decimal(None) == "—"
