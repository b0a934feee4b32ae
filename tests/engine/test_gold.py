"""Gold candidates score SCORED, QUALIFIED, 100/100; every mutation gives exactly its expected outcome."""

import pytest

import engine
from engine._mutations import NotApplicable

INSTANCES = [("episode", e) for e in engine.EPISODES] + [(f, s) for f in engine.FAMILIES for s in range(1, 31)]


def _instance(key):
    return engine.load_episode(key[1]) if key[0] == "episode" else engine.generate(*key)


@pytest.mark.parametrize("key", INSTANCES, ids=lambda k: f"{k[0]}-{k[1]}")
def test_gold_is_qualified_100(key):
    instance = _instance(key)
    gold = engine.gold_candidate(instance)
    result = engine.grade_candidate(gold, instance)
    assert (result["status"], result["verdict"], result["score"]["points"]) == ("SCORED", "QUALIFIED", 100), result[
        "gates"
    ]
    assert all(d["batch"] == "accepted" and d["refused"] == 0 for d in result["days"])
    assert engine.score_text(result) == "100/100"


@pytest.mark.parametrize(
    "key", INSTANCES[:5] + [("FUND_03", 1), ("FUND_02", 4), ("FUND_04", 9)], ids=lambda k: f"{k[0]}-{k[1]}"
)
def test_every_mutation_gives_its_expected_outcome(key):
    instance = _instance(key)
    gold = engine.gold_candidate(instance)
    applied = 0
    for name in engine.MUTATIONS:
        try:
            candidate, expected = engine.mutate(name, instance, gold)
        except NotApplicable:
            continue
        applied += 1
        result = engine.grade_candidate(candidate, instance)
        assert engine.observe(result, expected) == expected, name
        if expected["status"] != "SCORED":
            assert result["score"] is None and result["verdict"] is None
    assert applied >= 5


def test_w3_has_every_mutation_and_m4_fails_only_its_gate():
    instance = engine.load_episode("W3")
    gold = engine.gold_candidate(instance)
    for name in engine.MUTATIONS:
        engine.mutate(name, instance, gold)  # none raises NotApplicable
    candidate, _ = engine.mutate("M4_fully_hedged_tail", instance, gold)
    result = engine.grade_candidate(candidate, instance)
    assert [g["gate"] for g in result["gates"] if not g["passed"]] == ["no_false_full_protection"]
    assert engine.exit_code_for(result) == 0


def test_episodes_exercise_their_topics():
    def kinds(episode):
        gold = engine.gold_candidate(engine.load_episode(episode))
        return {a["type"] for b in gold["batches"] for a in b["actions"]}

    assert kinds("W1") == {"FUND"}
    assert "ROLL" in kinds("W2")
    assert {"ESCALATE", "EXECUTE"} <= kinds("W3")
    assert "ROLL" in kinds("W5")
    run = engine.Run(engine.load_episode("W4"))
    from tests.engine.helpers import play

    run = play(engine.load_episode("W4"))
    calls = [r for r in run.receipts if r["kind"] == "EVENT" and r["payload"]["kind"] == "haircut_change"]
    assert calls and calls[0]["payload"]["effects"]["margin_calls"]


def test_baselines_are_below_the_reference():
    for episode in engine.EPISODES:
        instance = engine.load_episode(episode)
        nothing = engine.grade_candidate(engine.policy_candidate(instance, "do-nothing"), instance)
        short = engine.grade_candidate(engine.policy_candidate(instance, "shortest-cheapest"), instance)
        assert nothing["verdict"] == "NOT_QUALIFIED"
        assert nothing["score"]["components"]["maturity_protection"]["points"] == 0
        assert nothing["score"]["points"] < short["score"]["points"] < 100


def test_missing_days_score_zero_and_fail_coverage():
    instance = engine.load_episode("W1")
    gold = engine.gold_candidate(instance)
    gold["batches"] = [b for b in gold["batches"] if b["day"] not in (18, 19, 20)]
    result = engine.grade_candidate(gold, instance)
    assert result["verdict"] == "NOT_QUALIFIED"
    assert [g["gate"] for g in result["gates"] if not g["passed"]] == ["checkpoint_coverage"]
    comp = result["score"]["components"]["report_accuracy"]
    assert comp["matched_fields"] < comp["fields"] and comp["points"] == 40 * comp["matched_fields"] // comp["fields"]


def test_newer_formats_are_refused():
    instance = engine.load_episode("W1")
    gold = engine.gold_candidate(instance)
    gold["format"] = 2
    assert engine.grade_candidate(gold, instance)["status"] == "MALFORMED"
    newer = dict(instance, format=2)
    with pytest.raises(engine.InputError, match="newer formats are refused"):
        engine.validate_instance(newer)
