"""The gates catch what they name, and report accuracy weighs an error by its size.

no_false_full_protection: any understatement of an existing gap or tail, and
any exposed position left out, fails (not only a literal zero).
no_material_misstatement: cash or funding off by more than 1 % of its base.
Accuracy: integer credit by relative-error bands; a material misstatement voids
the day; a larger error never scores more than a smaller one.
"""

import copy
import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine._grade import GATES, RESULT_FORMAT
from engine._report import FIELD_UNITS, MATERIALITY_BPS, field_base, field_credit
from tests.engine.helpers import play


@functools.lru_cache(maxsize=None)
def _world(episode):
    instance = engine.load_episode(episode)
    gold = engine.gold_candidate(instance)
    run = play(instance)
    return instance, gold, {d["day"]: d["gold_report"] for d in run.days}


def _grade(episode, edit):
    instance, gold, reports = _world(episode)
    candidate = copy.deepcopy(gold)
    edit(candidate["batches"], reports)
    return engine.grade_candidate(candidate, instance)


def _failed(result):
    return [g["gate"] for g in result["gates"] if not g["passed"]]


def _tail_day(episode):
    """(index of the batch, asset) of the first reported position with a tail."""
    _, gold, reports = _world(episode)
    for i, batch in enumerate(gold["batches"]):
        for aid, entry in sorted(reports[batch["day"]]["assets"].items()):
            if entry["tail_cent_days"] > 0:
                return i, aid
    raise AssertionError("no tail")


def test_result_format_is_2_and_gates_in_order():
    assert RESULT_FORMAT == 2
    assert GATES == (
        "no_settlement_failure",
        "no_false_full_protection",
        "no_material_misstatement",
        "checkpoint_coverage",
    )
    _, gold, _ = _world("W3")
    result = engine.grade_candidate(gold, _world("W3")[0])
    assert [g["gate"] for g in result["gates"]] == list(GATES) and result["format"] == 2


# -- no_false_full_protection ----------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"tail_cent_days": 1, "maturity_gap_days": 0},  # the case: tail 1, gap 0 (was QUALIFIED 99/100)
        {"tail_cent_days": "minus one"},  # one cent-day short
        {"maturity_gap_days": "minus one"},  # one day short, tail true
    ],
)
def test_any_understatement_fails(change):
    index, aid = _tail_day("W2")

    def edit(batches, reports):
        entry = batches[index]["report"]["assets"][aid]
        for field, value in change.items():
            entry[field] = entry[field] - 1 if value == "minus one" else value

    result = _grade("W2", edit)
    assert result["verdict"] == "NOT_QUALIFIED"
    assert _failed(result) == ["no_false_full_protection"]
    detail = result["gates"][1]["detail"]
    assert f"day {_world('W2')[1]['batches'][index]['day']} {aid}" in detail


def test_an_omitted_exposed_position_fails():
    index, aid = _tail_day("W5")

    def edit(batches, reports):
        del batches[index]["report"]["assets"][aid]

    result = _grade("W5", edit)
    assert _failed(result) == ["no_false_full_protection"]
    assert f"{aid} left out" in result["gates"][1]["detail"]


def test_overstating_and_omitting_a_protected_position_pass_the_gate():
    index, aid = _tail_day("W2")

    def overstate(batches, reports):
        entry = batches[index]["report"]["assets"][aid]
        entry["tail_cent_days"] *= 2
        entry["maturity_gap_days"] += 3

    result = _grade("W2", overstate)
    assert result["verdict"] == "QUALIFIED" and result["score"]["points"] < 100

    def omit_protected(batches, reports):
        # the last checkpoint: every listed position is funded to exit
        batch = batches[-1]
        gold = reports[batch["day"]]["assets"]
        safe = [a for a, e in sorted(gold.items()) if e["tail_cent_days"] == 0 and e["maturity_gap_days"] == 0]
        assert safe
        del batch["report"]["assets"][safe[0]]

    result = _grade("W2", omit_protected)
    assert result["verdict"] == "QUALIFIED"
    assert (
        result["score"]["components"]["report_accuracy"]["matched_fields"]
        == result["score"]["components"]["report_accuracy"]["fields"] - 4
    )


@pytest.mark.parametrize("episode", ["W2", "W3", "W5"])
def test_the_gate_names_what_it_counts(episode):
    found = []

    def halve_all(batches, reports):
        for batch in batches:
            for aid, entry in sorted(reports[batch["day"]]["assets"].items()):
                if entry["tail_cent_days"] > 0:
                    batch["report"]["assets"][aid]["maturity_gap_days"] = entry["maturity_gap_days"] - 1
                    batch["report"]["assets"][aid]["tail_cent_days"] = entry["tail_cent_days"] // 2
                    found.append(f"day {batch['day']} {aid} maturity_gap_days")
                    found.append(f"day {batch['day']} {aid} tail_cent_days")

    detail = _grade(episode, halve_all)["gates"][1]["detail"]
    assert detail.startswith("understated or omitted exposure: ")
    assert detail.count("; ") == min(len(found), 5) - 1
    assert all(f in detail for f in found[:5])
    assert detail.endswith(f"(and {len(found) - 5} more)") == (len(found) > 5)
    assert (episode, len(found)) in (("W2", 10), ("W3", 4), ("W5", 2))


# -- no_material_misstatement and materiality-aware accuracy ---------------------


def _cash_edit(day_index, delta):
    def edit(batches, reports):
        batches[day_index]["report"]["cash"] += delta

    return edit


def test_a_material_cash_misstatement_costs_far_more_than_a_cent():
    exact = _grade("W3", lambda b, r: None)
    cent = _grade("W3", _cash_edit(4, 1))
    big = _grade("W3", _cash_edit(4, 140_000_000))  # 1,400,000.00 on cash of 5,000,000.00
    assert (exact["verdict"], exact["score"]["points"]) == ("QUALIFIED", 100)
    assert (cent["verdict"], cent["score"]["points"]) == ("QUALIFIED", 100)
    assert (big["verdict"], big["score"]["points"]) == ("NOT_QUALIFIED", 97)
    assert _failed(big) == ["no_material_misstatement"]
    assert "day 5 cash 640000000 vs 500000000 (2800 bps)" in big["gates"][2]["detail"]
    accuracy = big["score"]["components"]["report_accuracy"]
    assert accuracy["materially_misstated_days"] == 1
    # the whole day's report is void: credit lost is that day's, not one field's
    day5 = big["days"][4]
    assert day5["report_credit"] == 0 and day5["material"] == ["cash"]
    assert accuracy["credit_max"] - accuracy["credit"] == day5["report_credit_max"]


def test_materiality_threshold_is_exact():
    instance, _, reports = _world("W3")
    cash = reports[5]["cash"]
    base = field_base("cash", cash, {"min_buffer": instance["desk"]["min_buffer"], "notionals": {}})
    at = base * MATERIALITY_BPS // 10_000
    assert at * 10_000 == base * MATERIALITY_BPS  # 1 % of 5,000,000.00 is a whole cent amount
    assert _grade("W3", _cash_edit(4, at))["verdict"] == "QUALIFIED"
    assert _failed(_grade("W3", _cash_edit(4, -(at + 1)))) == ["no_material_misstatement"]


def test_a_material_funding_misstatement_fails():
    _, gold, reports = _world("W1")

    def edit(batches, reports):
        batch = batches[-1]
        aid = sorted(batch["report"]["assets"])[0]
        entry = batch["report"]["assets"][aid]
        entry["funded"], entry["unfunded"] = entry["unfunded"], entry["funded"]

    result = _grade("W1", edit)
    assert _failed(result) == ["no_material_misstatement"]
    assert result["days"][-1]["material"] == ["assets.A2.funded", "assets.A2.unfunded"]
    assert "day 20 assets.A2.funded 0 vs 800000000 (10000 bps)" in result["gates"][2]["detail"]


def test_cash_near_zero_is_measured_against_the_buffer():
    scale = {"min_buffer": 200_000_000, "notionals": {"A1": 10**9}}
    assert field_base("cash", 5, scale) == 200_000_000
    assert field_base("cash", -7 * 10**9, scale) == 7 * 10**9
    assert field_base("assets.A1.unfunded", 0, scale) == 10**9
    assert field_base("assets.A1.tail_cent_days", 0, scale) == 1
    assert field_base("funding_cost_to_date", 12345, scale) == 12345
    assert field_base("breaches", [], scale) is None


@pytest.mark.parametrize(
    "true, got, base, units",
    [
        (10**9, 10**9, 10**9, 100),
        (10**9, 10**9 + 100_000, 10**9, 100),  # 1 bp
        (10**9, 10**9 + 100_001, 10**9, 75),
        (10**9, 10**9 - 1_000_000, 10**9, 75),  # 10 bps
        (10**9, 10**9 - 10_000_000, 10**9, 25),  # 100 bps: still immaterial
        (10**9, 10**9 - 10_000_001, 10**9, 0),
        (0, 1, 1, 0),  # claiming a gap where none exists
        ([], [{"day": 1, "code": "BUFFER_BREACH"}], None, 0),
        (["AP001"], ["AP001"], None, 100),
    ],
)
def test_credit_bands(true, got, base, units):
    assert field_credit(true, got, base) == units


@settings(max_examples=400, deadline=None)
@given(
    true=st.integers(-(10**13), 10**13),
    base_extra=st.integers(0, 10**12),
    e1=st.integers(-(10**13), 10**13),
    e2=st.integers(-(10**13), 10**13),
)
def test_a_larger_error_never_earns_more(true, base_extra, e1, e2):
    base = max(abs(true), 1) + base_extra
    small, large = sorted((e1, e2), key=abs)
    assert 0 <= field_credit(true, true + large, base) <= field_credit(true, true + small, base) <= FIELD_UNITS
    assert field_credit(true, true, base) == FIELD_UNITS


FIELDS = ("cash", "funding_cost_to_date", "funded", "unfunded", "maturity_gap_days", "tail_cent_days")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    day=st.integers(0, 19),
    field=st.sampled_from(FIELDS),
    sign=st.sampled_from((1, -1)),
    sizes=st.tuples(st.integers(0, 3 * 10**9), st.integers(0, 3 * 10**9)),
)
def test_a_larger_misstatement_never_scores_more(day, field, sign, sizes):
    """Grade the same misstatement at two sizes: the larger never scores more
    points, and never passes a gate the smaller fails."""
    small, large = sorted(sizes)

    def edit(delta):
        def apply(batches, reports):
            report = batches[day]["report"]
            if field in ("cash", "funding_cost_to_date"):
                report[field] += delta
            elif report["assets"]:
                aid = sorted(report["assets"])[0]
                report["assets"][aid][field] += delta

        return apply

    a, b = _grade("W3", edit(sign * small)), _grade("W3", edit(sign * large))
    assert b["score"]["points"] <= a["score"]["points"]
    assert set(_failed(a)) <= set(_failed(b))


# -- the new mutations --------------------------------------------------------------


@pytest.mark.parametrize("episode", engine.EPISODES)
def test_new_mutations_fail_exactly_their_gate(episode):
    instance, gold, _ = _world(episode)
    applied = []
    for name, gate in (
        ("M9_understated_tail", "no_false_full_protection"),
        ("M10_omitted_exposure", "no_false_full_protection"),
        ("M11_cash_misstatement", "no_material_misstatement"),
    ):
        try:
            candidate, expected = engine.mutate(name, instance, gold)
        except engine.NotApplicable:
            continue
        applied.append(name)
        assert expected == {"status": "SCORED", "verdict": "NOT_QUALIFIED", "failed_gates": [gate]}
        result = engine.grade_candidate(candidate, instance)
        assert engine.observe(result, expected) == expected, name
        assert result["score"]["points"] >= 97  # the report is otherwise gold: the verdict, not the score, catches it
    expect = (
        ["M11_cash_misstatement"]
        if episode in ("W1", "W4")
        else ["M9_understated_tail", "M10_omitted_exposure", "M11_cash_misstatement"]
    )
    assert applied == expect


def test_m9_keeps_a_nonzero_tail_and_the_true_gap():
    instance, gold, reports = _world("W2")
    candidate, _ = engine.mutate("M9_understated_tail", instance, gold)
    changed = [
        (b["day"], aid, entry)
        for b, g in zip(candidate["batches"], gold["batches"])
        for aid, entry in b["report"]["assets"].items()
        if entry != g["report"]["assets"][aid]
    ]
    assert len(changed) == 1
    day, aid, entry = changed[0]
    true = reports[day]["assets"][aid]
    assert (
        0 < entry["tail_cent_days"] < true["tail_cent_days"] and entry["maturity_gap_days"] == true["maturity_gap_days"]
    )


@pytest.mark.parametrize(
    "key",
    [("episode", e) for e in engine.EPISODES] + [(f, s) for f in engine.FAMILIES for s in (1, 2, 3)],
    ids=lambda k: f"{k[0]}-{k[1]}",
)
def test_every_flow_the_parent_acts_on_is_material(key):
    """The contract's reason for 1 %: in the reference plan every principal flow
    and margin call is at least 5 % of the cash base on its checkpoint."""
    instance = engine.load_episode(key[1]) if key[0] == "episode" else engine.generate(*key)
    run = play(instance)
    run.finalize()
    closes = {r["day"]: r["payload"]["cash"] for r in run.receipts if r["kind"] == "CLOSE"}
    scale = {"min_buffer": instance["desk"]["min_buffer"], "notionals": {}}
    flows = 0
    for r in run.receipts:
        if r["day"] > instance["horizon"]:
            continue
        amounts = []
        if r["kind"] == "FLOW" and r["payload"]["flow"] != "FUNDING_CANCEL":
            amounts.append(r["payload"]["amount"])
        if r["kind"] == "EVENT":
            amounts += [c["amount"] for c in r["payload"]["effects"].get("margin_calls", [])]
        for amount in amounts:
            flows += 1
            base = field_base("cash", closes[r["day"]], scale)
            assert abs(amount) * 10_000 >= 5 * MATERIALITY_BPS * base, (r["seq"], amount, base)
    assert flows >= 6


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    day=st.integers(0, 19),
    field=st.sampled_from(("cash", "funded")),
    sign=st.sampled_from((1, -1)),
    tiny=st.integers(0, 10**4),
    factor=st.integers(101, 10_000),
    data=st.data(),
)
def test_a_material_misstatement_scores_strictly_less_than_an_immaterial_one(day, field, sign, tiny, factor, data):
    """Old grading counted both as one mismatched field; now the material one
    costs the day's report and the gate, the one within 1 bp costs nothing."""
    instance, gold, reports = _world("W3")
    true = reports[day + 1]
    if field == "cash":
        base = field_base("cash", true["cash"], {"min_buffer": instance["desk"]["min_buffer"], "notionals": {}})
        path = ("cash",)
    else:
        assets = sorted(true["assets"])
        if not assets:
            return
        aid = data.draw(st.sampled_from(assets))
        base = next(a["notional"] for a in instance["assets"] if a["id"] == aid)
        path = ("assets", aid, "funded")
    small = min(tiny, base // 10_000)  # within 1 bp
    large = base * factor // 10_000 + 1  # over 1 %

    def edit(delta):
        def apply(batches, reports):
            target = batches[day]["report"]
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] += delta

        return apply

    a, b = _grade("W3", edit(sign * small)), _grade("W3", edit(sign * large))
    assert (a["verdict"], a["score"]["points"]) == ("QUALIFIED", 100)
    assert b["verdict"] == "NOT_QUALIFIED" and "no_material_misstatement" in _failed(b)
    assert b["score"]["points"] < a["score"]["points"]
