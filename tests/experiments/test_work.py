"""The work unit: one world, every arm, integer metrics; failures stay rows."""

import pytest
from hypothesis import given, settings, strategies as st

import engine
from engine._candidate import reference_economics
from experiments import work

ITEM = {"kind": "family", "family": "FUND_02", "seed": 7}
POLICIES = ("reference", "shortest-cheapest", "do-nothing")


def values_of(result, arm):
    return {m: v for a, s, m, v in result["values"] if a == arm}


def test_baseline_rows_match_the_engine_result_field_for_field():
    arms = [{"name": f"baseline:{p}", "kind": "policy", "policy": p} for p in POLICIES]
    result = work.run_task({"item": ITEM, "arms": arms})
    instance = engine.generate("FUND_02", 7)
    assert result["item_id"] == "FUND_02/seed-7" and result["fixture_sha256"] == engine.fixture_sha256(instance)
    for p in POLICIES:
        graded = engine.grade_candidate(engine.policy_candidate(instance, p), instance)
        got = values_of(result, f"baseline:{p}")
        assert got["scored"] == 1 and got["score"] == graded["score"]["points"]
        assert got["qualified"] == int(graded["verdict"] == "QUALIFIED")
        assert got["funding_cost"] == graded["economics"]["all_in_cost"]
        for gate in graded["gates"]:
            assert got[f"gate:{gate['gate']}"] == int(gate["passed"])
        assert all(isinstance(v, int) and not isinstance(v, bool) for v in got.values())
    assert [m for a, s, m, v in result["values"] if a == "baseline:reference"][:4] == [
        "scored",
        "qualified",
        "score",
        "funding_cost",
    ]
    assert {s for _, s, _, _ in result["values"]} == {0}


def test_malformed_and_missing_candidates_are_rows_of_zeros():
    arms = [
        {"name": "broken", "kind": "candidate", "candidate": "FUND everything"},
        {"name": "absent", "kind": "candidate", "candidate": None},
    ]
    result = work.run_task({"item": ITEM, "arms": arms})
    for arm in ("broken", "absent"):
        got = values_of(result, arm)
        assert got["scored"] == got["qualified"] == got["score"] == 0
        assert got["funding_cost"] is None
        assert all(got[f"gate:{g}"] == 0 for g in work.METRICS["gate"]["names"])


def test_gold_and_mutations_give_expected_met_or_null_when_not_applicable():
    arms = [{"name": "gold", "kind": "gold"}] + [
        {"name": m, "kind": "mutation", "mutation": m} for m in engine.MUTATIONS
    ]
    result = work.run_task({"item": {"kind": "family", "family": "FUND_01", "seed": 3}, "arms": arms})
    got = {a: v for a, s, m, v in result["values"]}
    assert got["gold"] == 1
    instance = engine.generate("FUND_01", 3)
    for m in engine.MUTATIONS:
        try:
            engine.mutate(m, instance)
        except engine.NotApplicable:
            assert got[m] is None
        else:
            assert got[m] == 1


def test_episodes_and_horizons_are_items():
    assert work.item_id({"kind": "episode", "episode": "W3"}) == "W3"
    assert work.item_id({"kind": "family", "family": "FUND_01", "seed": 2, "horizon": 6}) == "FUND_01/seed-2@h6"
    assert work.instance_for({"kind": "family", "family": "FUND_01", "seed": 2, "horizon": 6})["horizon"] == 6


def test_a_fixture_that_is_not_the_manifest_s_is_a_task_error():
    with pytest.raises(work.WorkError, match="fixture sha256 expected"):
        work.run_task({"item": ITEM, "fixture_sha256": "0" * 64, "arms": []})
    with pytest.raises(work.WorkError, match="unknown kind"):
        work.run_task({"item": ITEM, "arms": [{"name": "x", "kind": "nope"}]})


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(engine.FAMILIES), st.integers(1, 10**12), st.sampled_from(POLICIES))
def test_a_precomputed_reference_grades_exactly_like_computing_it(family, seed, policy):
    """grade_with_run(candidate, instance, reference): the optional argument changes nothing but the work."""
    instance = engine.generate(family, seed)
    candidate = engine.policy_candidate(instance, policy)
    assert engine.grade_candidate(candidate, instance, reference_economics(instance)) == engine.grade_candidate(
        candidate, instance
    )


def test_json_entry_point_round_trips():
    import json

    text = work.run_task_json(json.dumps({"item": ITEM, "arms": [{"name": "g", "kind": "gold"}]}))
    assert json.loads(text)["values"] == [["g", 0, "expected_met", 1]]


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(engine.FAMILIES), st.integers(1, 10**9))
def test_one_play_of_the_reference_gives_the_gold_candidate_and_the_economics(family, seed):
    from engine._candidate import played_candidate

    instance = engine.generate(family, seed)
    gold, run = played_candidate(instance, "reference", "gold")
    assert gold == engine.gold_candidate(instance)
    run.finalize()
    assert reference_economics(instance, run) == reference_economics(instance)
