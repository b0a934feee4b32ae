"""Money on the desk, in Node: amounts typed as money become exact integer cents
(string arithmetic, no floats), wrong entries are refused with a reason, and
the engine's messages and answers read as money."""

import json
import re
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders.site.fmt import money as py_money

ROOT = Path(__file__).resolve().parents[2]
DESK = ROOT / "site" / "assets" / "desk"

SCRIPT = """
import { parseMoney, money, parseCount } from "%s";
import { moneyText, readable, basis, expected, gateDetail, sourceText } from "%s";
const cases = JSON.parse(process.argv[1]);
const out = cases.map(([fn, ...args]) => {
  try {
    const f = { parseMoney, money, parseCount, moneyText, readable, basis, expected, gateDetail, sourceText }[fn];
    return { ok: f(...args) };
  } catch (e) {
    return { error: e.message };
  }
});
console.log(JSON.stringify(out));
"""


def node(cases):
    exe = shutil.which("node")
    if exe is None:
        pytest.skip("node is not installed")
    script = SCRIPT % ((DESK / "money.js").as_uri(), (DESK / "readable.js").as_uri())
    proc = subprocess.run(
        [exe, "--input-type=module", "-e", script, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout)


def test_the_issue_examples_convert_exactly():
    got = node(
        [
            ["parseMoney", "8,000,000.00", "Notional"],
            ["parseMoney", "8000000", "Notional"],
            ["parseMoney", "8,000,000.5", "Notional"],
            ["parseMoney", " 0.01 ", "Notional"],
            ["parseMoney", "90071992547409.91", "Notional"],
            ["parseMoney", "-1,234.56", "Cash", "any"],
            ["parseMoney", "0", "Cost", "nonnegative"],
            ["parseMoney", "12.", "Notional"],
        ]
    )
    assert [g["ok"] for g in got] == [800000000, 800000000, 800000050, 1, 2**53 - 1, -123456, 0, 1200]


@pytest.mark.parametrize(
    "text, sign, reason",
    [
        ("-5", "positive", "Notional: -5 is negative; an amount must be more than zero"),
        ("-0.01", "nonnegative", "Notional: -0.01 is negative; an amount must be zero or more"),
        ("0", "positive", "Notional: must be more than zero (an action on a zero amount does nothing)"),
        ("0.00", "positive", "Notional: must be more than zero (an action on a zero amount does nothing)"),
        ("", "positive", "Notional: required (an amount such as 1,250,000.00)"),
        ("8.005", "positive", 'Notional: "8.005" has 3 decimals; amounts are in cents (two decimals at most)'),
        ("1,23", "positive", 'Notional: "1,23" is not an amount'),
        ("1,2345", "positive", 'Notional: "1,2345" is not an amount'),
        (".5", "positive", 'Notional: ".5" is not an amount'),
        ("1e6", "positive", 'Notional: "1e6" is not an amount'),
        ("8 000 000", "positive", 'Notional: "8 000 000" is not an amount'),
        ("0x10", "positive", 'Notional: "0x10" is not an amount'),
        ("90071992547409.92", "positive", "Notional: 90071992547409.92 is too large"),
    ],
)
def test_wrong_amounts_are_refused_with_a_reason(text, sign, reason):
    (got,) = node([["parseMoney", text, "Notional", sign]])
    assert "ok" not in got and got["error"].startswith(reason)


amounts = st.tuples(
    st.integers(0, 10**13), st.sampled_from(["", "0", "5", "05", "50", "99", "1", "10"]), st.booleans(), st.booleans()
)


def typed(whole, frac, grouped, point):
    text = f"{whole:,}" if grouped else str(whole)
    return text + ("." + frac if point or frac else "")


@settings(max_examples=20, deadline=None)
@given(st.lists(amounts, min_size=1, max_size=40))
def test_typed_money_equals_the_decimal_amount_in_cents(batch):
    cases, want = [], []
    for whole, frac, grouped, point in batch:
        text = typed(whole, frac, grouped, point)
        cases.append(["parseMoney", text, "X", "nonnegative"])
        want.append(int(Decimal(text.replace(",", "") or "0") * 100))
    assert [g.get("ok", g.get("error")) for g in node(cases)] == want


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-(2**53) + 1, 2**53 - 1), min_size=1, max_size=40))
def test_formatted_money_reads_back_to_the_same_cents(values):
    shown = node([["money", v] for v in values])
    assert [s["ok"] for s in shown] == [py_money(v) for v in values]  # same text as the site's pages
    back = node([["parseMoney", s["ok"], "X", "any"] for s in shown])
    assert [b["ok"] for b in back] == values


def published_messages():
    messages = set()
    for path in sorted((ROOT / "runs" / "receipts").glob("*.json")):
        doc = json.loads(path.read_text())
        for receipt in doc["receipts"] if isinstance(doc, dict) else doc:
            payload = receipt.get("payload") or {}
            if receipt["kind"] == "ACTION" and payload.get("reason"):
                messages.add(payload["message"])
    return sorted(messages)


# A bare integer of four digits or more that is not a day, a day range or part of an id.
RAW = re.compile(r"(?<![\w.,])(?<!day )(?<!days )-?\d{4,}(?![\w.,])")


def test_every_refusal_message_reads_as_money():
    synthetic = [
        "quote Q2 has 12345 left, 100000000 asked",
        "capacity authority of 50000000 is too small for 75000001 over capacity",
        "projected cash at the close of day 12 would be -5, under the zero floor",
        "tenor 45 days exceeds the desk limit of 30 without tenor authority",
        "quote Q6 is valid on days 3..6, not on day 1",
    ]
    messages = published_messages() + synthetic
    assert len(messages) > 10
    shown = [g["ok"] for g in node([["moneyText", m] for m in messages])]
    for message, text in zip(messages, shown):
        assert not RAW.search(text), f"raw amount left in {text!r} (from {message!r})"
    by = dict(zip(messages, shown))
    assert by[synthetic[0]] == "quote Q2 has 123.45 left, 1,000,000.00 asked"
    assert by[synthetic[1]] == "capacity authority of 500,000.00 is too small for 750,000.01 over capacity"
    assert by[synthetic[2]] == "projected cash at the close of day 12 would be -0.05, under the zero floor"
    assert by[synthetic[3]] == synthetic[3] and by[synthetic[4]] == synthetic[4]  # days stay days


def test_every_published_gate_detail_reads_as_money():
    details = sorted(
        {
            g["detail"]
            for path in sorted(ROOT.glob("runs/*.json"))
            if path.name != "index.json"
            for g in (json.loads(path.read_text())["content"].get("gates") or [])
        }
    )
    assert any("cash" in d and " vs " in d for d in details) and any("tail_cent_days" in d for d in details)
    shown = [g["ok"] for g in node([["gateDetail", d] for d in details])]
    for detail, text in zip(details, shown):
        assert not RAW.search(re.sub(r"\(\d+ bps\)", "", text)), f"raw amount left in {text!r} (from {detail!r})"
        assert "cent-days" not in text


def test_answers_read_as_money_and_no_reason_is_left_empty():
    got = node(
        [
            ["readable", "all_in_cost", 6408806],
            ["readable", "unfunded_tail", 54000000000],
            ["readable", "rate_bps", 450],
            ["readable", "maturity_gap_days", 12],
            ["readable", "matched_fields", 284],
            [
                "basis",
                {
                    "all_in_cost": 6408806,
                    "max": 30,
                    "points": 30,
                    "reference_all_in_cost": 6408806,
                    "treasury_charge": 0,
                },
            ],
            [
                "expected",
                [
                    {
                        "action": "d01-a1",
                        "decision": "REJECTED",
                        "reason": None,
                        "message": "actions[0].trade: unknown funding trade 'FT404'",
                    },
                    {
                        "action": "d01-a2",
                        "decision": "REFUSED",
                        "reason": "CAPACITY",
                        "message": "quote Q1 has 0 left, 100 asked",
                    },
                    {"action": "d01-a3", "decision": "ACCEPTED", "reason": None, "message": "accepted"},
                ],
            ],
            ["expected", [{"action": "a", "decision": "ACCEPTED", "reason": None}]],
            ["expected", [], "batch.actions[0].trade: unknown funding trade 'FT404'"],
        ]
    )
    assert [g["ok"] for g in got] == [
        "64,088.06",
        "540,000,000.00 money-days",
        "450 bps",
        "12",
        "284",
        "all in cost 64,088.06; reference all in cost 64,088.06; treasury charge 0.00",
        "It expects d01-a1 REJECTED (actions[0].trade: unknown funding trade 'FT404'); "
        "d01-a2 REFUSED CAPACITY (quote Q1 has 0.00 left, 1.00 asked).",
        "Every action would be accepted.",
        "The desk would reject this whole batch (nothing in it would count): "
        "batch.actions[0].trade: unknown funding trade 'FT404'.",
    ]
    assert "REJECTED ." not in got[6]["ok"]


def test_counts_are_whole_and_not_negative():
    got = node(
        [
            ["parseCount", "12", "Gap"],
            ["parseCount", "-1", "Gap"],
            ["parseCount", "1.5", "Gap"],
            ["parseCount", "0", "Days", "positive"],
        ]
    )
    assert got[0] == {"ok": 12}
    assert got[1]["error"] == "Gap: -1 is negative; expected zero or more"
    assert got[2]["error"] == 'Gap: expected a whole number, got "1.5"'
    assert got[3]["error"] == "Days: must be more than zero"


def test_sources_read_as_money_and_rates_stay_in_bps_everywhere():
    """Issue 19: one unit per kind of figure on the desk. Every source of every family and episode
    shows its amounts as money (no raw cents) and keeps its rates in bps, as the tables do."""
    import engine

    texts = []
    for family in engine.FAMILIES:
        for seed in (1, 2):
            texts += [s["text"] for s in engine.generate(family, seed)["sources"]]
    texts += [s["text"] for e in engine.EPISODES for s in engine.load_episode(e)["sources"]]
    assert any(" cents" in t for t in texts)
    shown = [g["ok"] for g in node([["sourceText", t] for t in texts])]
    for raw, text in zip(texts, shown):
        assert " cents" not in text and not re.search(r"(?<![\w.,:])\d{7,}(?![\w.,])", text), text
        assert re.findall(r"\d[\d,]* bps", raw) == re.findall(r"\d[\d,]* bps", text)
    (one,) = node([["sourceText", "A1, notional 800000000 cents, coupon 625 bps."]])
    assert one["ok"] == "A1, notional 8,000,000.00, coupon 625 bps."
    rates = node([["readable", "coupon_bps", 625], ["readable", "haircut_bps", 1200], ["readable", "rate_bps", -5]])
    assert [g["ok"] for g in rates] == ["625 bps", "1,200 bps", "-5 bps"]


def test_the_matched_count_the_desk_shows_is_the_grades():
    """After each day the desk counts the report fields that match the projection's exact report (outcome.js
    fieldsMatched); the count must be the grade's (engine _report.assess_report `matched`) for any report,
    errors within and beyond the 1 bp tolerance, missing figures and wrong lists included."""
    import random

    import engine
    from engine._report import assess_report

    exe = shutil.which("node")
    if exe is None:
        pytest.skip("node is not installed")
    rng = random.Random(19)
    cases = []
    for family, seed, policy in (
        ("FUND_01", 1, "reference"),
        ("FUND_03", 2, "shortest-cheapest"),
        ("FUND_04", 5, "reference"),
    ):
        instance = engine.generate(family, seed)
        run = engine.Run(instance)
        for batch in engine.policy_candidate(instance, policy)["batches"][:8]:
            packet = run.packet()
            run.submit(batch)
            gold = run.days[-1]["gold_report"]
            scale = {
                "min_buffer": packet["desk"]["min_buffer"],
                "notionals": {a["id"]: a["notional"] for a in packet["assets"]},
            }
            for _ in range(6):
                got = json.loads(json.dumps(gold))
                for name in rng.sample(
                    ["cash", "funding_cost_to_date", "breaches", "open_approvals"]
                    + [
                        f"{aid}.{k}"
                        for aid in got["assets"]
                        for k in ("funded", "unfunded", "maturity_gap_days", "tail_cent_days")
                    ],
                    k=rng.randint(0, 4),
                ):
                    where, key = (
                        (got, name) if "." not in name else (got["assets"][name.split(".")[0]], name.split(".")[1])
                    )
                    if key in ("breaches", "open_approvals"):
                        where[key] = where[key] + ["x"] if rng.random() < 0.5 else []
                    elif rng.random() < 0.15:
                        del where[key]
                    else:
                        base = abs(where[key]) or 1
                        where[key] += rng.choice([1, -1, base // 10_000, base // 9_999 + 1, base // 100, 10**6])
                cases.append(
                    {
                        "exact": gold,
                        "got": got,
                        "scale": scale,
                        "want": assess_report(
                            gold, got, {"min_buffer": scale["min_buffer"], "notionals": scale["notionals"]}
                        )["matched"],
                    }
                )
    script = f"""import {{ fieldsMatched }} from "{(DESK / "outcome.js").as_uri()}";
const cases = JSON.parse(process.argv[1]);
console.log(JSON.stringify(cases.map((c) => fieldsMatched(c.exact, c.got, c.scale).matched)));"""
    got = json.loads(
        subprocess.run(
            [exe, "--input-type=module", "-e", script, json.dumps(cases)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    )
    assert got == [c["want"] for c in cases]
    assert len({c["want"] for c in cases}) > 3  # the cases do reach different counts
