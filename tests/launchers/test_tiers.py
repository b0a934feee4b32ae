"""Tiers and the order of sacrifice (launchers/_tiers.py, seed 002 5.2-5.3): the plan checked field by field,
spend reconciled after each tier from the records, seeds cut in the frozen order (last seed first, never
below a cell's floor, never in a tier already run) when cumulative spend runs over plan by more than 10 %,
and nothing added: as records arrive the cuts only grow."""

import copy

import pytest
from hypothesis import given, settings, strategies as st

from launchers import _tiers
from launchers._errors import InputError

M = "model-a"


def cell(name, family, seeds, cost, floor=0):
    return {
        "name": name,
        "model": M,
        "family": family,
        "seeds": seeds,
        "micro_usd_per_seed": cost,
        "keep_at_least": floor,
    }


def plan():
    return _tiers.check_plan(
        {
            "schema": _tiers.SCHEMA,
            "overrun_bps": 1000,
            "tiers": [
                {"name": "T1", "cells": [cell("primary", "FUND_01", [101, 102, 103, 104], 100, floor=2)]},
                {"name": "T2", "cells": [cell("diverse", "FUND_02", [101, 102, 103], 100, floor=1)]},
                {"name": "T3", "cells": [cell("extra", "FUND_03", [101, 102, 103], 100)]},
            ],
            "sacrifice": [{"tier": "T3", "cell": "extra"}, {"tier": "T2", "cell": "diverse"}],
            "sd_table": {"score": "11.5"},
        }
    )


def spend(family, seeds, each):
    return {(M, family, s): each for s in seeds}


def test_the_budget_per_tier_and_no_cut_within_ten_percent():
    p = plan()
    assert _tiers.budgets(p) == {"T1": 400, "T2": 300, "T3": 300}
    state = _tiers.reconcile(p, spend("FUND_01", [101, 102, 103, 104], 110))  # 440 of 400: exactly 10 % over
    t1 = state["tiers"][0]
    assert (t1["complete"], t1["cumulative_spent"], t1["over_bps"], t1["action"], state["cut"]) == (
        True,
        440,
        1000,
        None,
        {},
    )


def test_over_plan_by_more_than_ten_percent_cuts_in_the_frozen_order():
    p = plan()
    state = _tiers.reconcile(p, spend("FUND_01", [101, 102, 103, 104], 150))  # 600 of 400: 50 % over
    # projected = 600 + remaining planned x 1.5 must fit 1000: T3's three seeds go, then T2 down to 1 seed left?
    # 600 + 600*1.5 = 1500 -> cut T3 103,102,101 -> 600 + 300*1.5 = 1050 -> cut T2 103 -> 600 + 300 = 900
    assert state["cut"] == {("T3", "extra"): [101, 102, 103], ("T2", "diverse"): [103]}
    assert state["tiers"][0]["action"] == (
        "cut 4 seeds: T3/extra seed 103, T3/extra seed 102, T3/extra seed 101, T2/diverse seed 103"
    )
    assert [r["cut"] for r in state["tiers"]] == [{}, {"diverse": [103]}, {"extra": [101, 102, 103]}]
    assert _tiers.admit(p, spend("FUND_01", [101, 102, 103, 104], 150), M, "FUND_02", 102) == ("T2", "diverse")
    with pytest.raises(
        InputError,
        match=r"^T: T2/diverse seed 103 was cut in the order of sacrifice after tier T1 "
        r"\(cumulative spend over plan by more than 1000 bps\)$",
    ):
        _tiers.admit(p, spend("FUND_01", [101, 102, 103, 104], 150), M, "FUND_02", 103, "T")


def test_floors_hold_and_a_seed_never_planned_is_refused():
    p = plan()
    state = _tiers.reconcile(p, spend("FUND_01", [101, 102, 103, 104], 10_000))
    assert state["cut"] == {("T3", "extra"): [101, 102, 103], ("T2", "diverse"): [102, 103]}  # T2 keeps its floor 1
    assert "T1" not in {k[0] for k in state["cut"]}  # a tier that ran is never cut
    with pytest.raises(InputError, match="FUND_01 seed 999 is not in the frozen tier plan"):
        _tiers.admit(p, {}, M, "FUND_01", 999)


def test_a_tier_is_reconciled_only_once_every_seed_it_holds_has_a_record():
    p = plan()
    state = _tiers.reconcile(p, spend("FUND_01", [101, 102, 103], 1000))
    assert (state["tiers"][0]["complete"], state["cut"]) == (False, {})
    with pytest.raises(InputError, match="T2/diverse seed 101 waits for tier T1: tiers run in order"):
        _tiers.admit(p, spend("FUND_01", [101, 102, 103], 1000), M, "FUND_02", 101)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(overrun_bps=-1), "overrun_bps: expected an integer >= 0"),
        (lambda d: d["tiers"][0]["cells"][0].update(seeds=[1, 1]), "seeds: expected a non-empty list of distinct"),
        (lambda d: d["tiers"][0]["cells"][0].update(keep_at_least=9), "keep_at_least: 9 is more than its 4 seeds"),
        (lambda d: d["tiers"][0]["cells"][0].update(micro_usd_per_seed=1.5), "micro_usd_per_seed: expected an integer"),
        (
            lambda d: d["sacrifice"].append({"tier": "T9", "cell": "x"}),
            "sacrifice[2]: expected a {tier, cell} of the plan",
        ),
        (lambda d: d["sacrifice"].append({"tier": "T3", "cell": "extra"}), "sacrifice[2]: expected"),
        (lambda d: d["tiers"][1]["cells"][0].update(family="FUND_01"), "FUND_01 seed 101 is planned twice"),
        (lambda d: d.update(sd_table={"score": 11.5}), "sd_table: expected"),
        (lambda d: d.pop("sd_table"), "expected fundbook.tier-plan/1 with exactly"),
        (lambda d: d.update(budgets={"T1": 1}), "budgets: {'T1': 1} are not the tiers' planned costs"),
    ],
)
def test_a_malformed_plan_is_refused_naming_the_field(change, message):
    doc = copy.deepcopy(plan())
    change(doc)
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("{", r"\{").replace("(", r"\(")):
        _tiers.check_plan(doc, "plan.json")


@settings(max_examples=60, deadline=None)
@given(costs=st.lists(st.integers(0, 400), min_size=10, max_size=10), order=st.permutations(range(10)))
def test_cuts_only_grow_as_records_arrive_and_only_remove_planned_seeds(costs, order):
    """Run the plan as the paid path would -- each admitted seed recorded at a drawn cost, tier by tier --
    and check after every record: the cuts of before are still cut (nothing is restored or added), cut seeds
    are the tail of their cell's list above its floor, and no seed of a complete tier is cut."""
    p = plan()
    spent, before = {}, {}
    queue = [(t["name"], c, s) for t in p["tiers"] for c in t["cells"] for s in c["seeds"]]
    for i, (tier, c, seed) in enumerate(queue):
        try:
            _tiers.admit(p, spent, M, c["family"], seed)
        except InputError:
            continue
        spent[(M, c["family"], seed)] = costs[order[i % 10]]
        state = _tiers.reconcile(p, spent)
        for key, seeds in before.items():
            assert set(seeds) <= set(state["cut"].get(key, []))
        for (t, name), seeds in state["cut"].items():
            planned = next(x for x in next(y for y in p["tiers"] if y["name"] == t)["cells"] if x["name"] == name)
            assert seeds == planned["seeds"][len(planned["seeds"]) - len(seeds) :]
            assert len(planned["seeds"]) - len(seeds) >= planned["keep_at_least"]
            assert not any((M, planned["family"], s) in spent for s in seeds)
        before = state["cut"]
