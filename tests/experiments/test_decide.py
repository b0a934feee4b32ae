"""The spec (versions 1 and 2) and its freeze: every field checked, a changed rule named; the
verdicts and confidence of decide(). The rules' arithmetic is tested in test_rules.py."""

import json
from decimal import Decimal

import pytest

from experiments.decide import INCONCLUSIVE, NOT_SUPPORTED, SUPPORTED, check_frozen, check_spec, decide, freeze_doc
from experiments.errors import ExperimentError

ITEMS = {"split": "practice", "families": ["FUND_01"], "seeds": "1..10"}


def spec(**over):
    s = {
        "version": 1,
        "name": "a-vs-b",
        "estimand": "score, a minus b",
        "unit": "items",
        "items": ITEMS,
        "arms": {"a": 1, "b": -1},
        "seeds": [0],
        "metric": "score",
        "bounds": [0, 100],
        "margin": "0",
        "alpha": "0.05",
        "method": "paired_hoeffding",
    }
    s.update(over)
    return s


def values_for(pairs):
    ids = [f"FUND_01/seed-{i + 1}" for i in range(len(pairs))]
    vals = {}
    for iid, (a, b) in zip(ids, pairs):
        vals[(iid, "a", 0)] = a
        vals[(iid, "b", 0)] = b
    return ids, vals


def test_verdicts_and_confidence():
    ids, vals = values_for([(0, 100)] * 2000)
    assert decide(spec(), ids, vals)["verdict"] == NOT_SUPPORTED
    ids, vals = values_for([(50, 48)] * 50)
    weak = decide(spec(), ids, vals)
    assert weak["verdict"] == INCONCLUSIVE and weak["confidence"] == "weak"
    ids, vals = values_for([(100, 0)] * 50)
    limited = decide(spec(), ids, vals, limits=["1 deviation(s) from the frozen spec"])
    assert limited["verdict"] == SUPPORTED and limited["confidence"] == "weak"


def test_weights_and_bounds_set_the_range():
    ids = ["FUND_01/seed-1", "FUND_01/seed-2"]
    vals = {(i, arm, 0): v for i in ids for arm, v in (("a", 1), ("b", 0), ("c", 1))}
    out = decide(spec(arms={"a": 2, "b": -1, "c": -1}, bounds=[0, 1], metric="qualified"), ids, vals)
    assert out["range"] == "4" and out["estimate"]["exact"] == "1/1"


def test_missing_null_and_out_of_bounds_values_are_refused():
    ids, vals = values_for([(1, 2), (3, 4)])
    del vals[(ids[1], "b", 0)]
    with pytest.raises(ExperimentError, match="no score row for item FUND_01/seed-2, arm b"):
        decide(spec(), ids, vals)
    ids, vals = values_for([(1, 2)])
    vals[(ids[0], "a", 0)] = None
    with pytest.raises(ExperimentError, match="was not measured"):
        decide(spec(), ids, vals)
    ids, vals = values_for([(101, 2)])
    with pytest.raises(ExperimentError, match="outside the spec's bounds"):
        decide(spec(), ids, vals)


@pytest.mark.parametrize(
    "change,needle",
    [
        ({"alpha": 0.05}, "$.alpha: floats are not allowed"),
        ({"margin": True}, "margin: expected an integer or a decimal string"),
        ({"alpha": "1.5"}, "0 < alpha < 1"),
        ({"margin": "zero"}, "margin: expected"),
        ({"arms": {"a": 1, "b": 1}}, "sum to 0"),
        ({"arms": {"a": 1}}, "at least two arms"),
        ({"metric": "happiness"}, "not a metric"),
        ({"metric": "gate:no_settlement_failure"}, None),
        ({"bounds": [100, 0]}, "a < b"),
        ({"method": "t_test"}, "paired_hoeffding"),
        ({"version": 3}, "version: expected 1 or 2"),
        ({"version": 2}, 'method: expected {"name"'),
        (
            {"version": 2, "method": {"name": "paired_hoeffding", "c": "1"}},
            "method.c: paired_hoeffding has no parameters",
        ),
        (
            {
                "version": 2,
                "method": {"name": "paired_empirical_bernstein"},
                "stopping": {"max_n": 5, "futility": None},
            },
            "stopping: paired_empirical_bernstein is a fixed-n rule",
        ),
        ({"version": 2, "method": {"name": "paired_betting", "bet": "kelly"}}, "method.bet: expected"),
        (
            {
                "version": 2,
                "method": {"name": "paired_betting", "bet": "agrapa", "truncation": "1"},
                "stopping": {"max_n": 5, "futility": None},
            },
            "method.truncation: expected 0 < truncation <= 0.99",
        ),
        (
            {"version": 2, "method": {"name": "paired_betting", "bet": "fixed", "truncation": "0.5"}},
            "a fixed bet names",
        ),
        (
            {"version": 2, "method": {"name": "paired_betting", "bet": "agrapa", "truncation": "0.5"}},
            "stopping: a betting",
        ),
        (
            {
                "version": 2,
                "method": {"name": "paired_betting", "bet": "agrapa", "truncation": "0.5"},
                "stopping": {"max_n": 11, "futility": None},
            },
            "max_n: 11 is more than the 10 planned worlds",
        ),
        (
            {
                "version": 2,
                "method": {"name": "paired_betting", "bet": "agrapa", "truncation": "0.5"},
                "stopping": {"max_n": 10, "futility": "1"},
            },
            "futility: expected null or a wealth between 0 and 1",
        ),
        (
            {
                "version": 2,
                "method": {"name": "paired_betting", "bet": "agrapa", "truncation": "0.5"},
                "stopping": {"max_n": 10, "futility": None},
                "margin": "100",
            },
            "margin strictly inside the range",
        ),
        (
            {
                "version": 2,
                "method": {"name": "paired_betting", "bet": "fixed", "lambda": "0.5"},
                "stopping": {"max_n": 10, "futility": "0.01"},
            },
            None,
        ),
        ({"stopping": {"max_n": 10, "futility": None}}, "stopping: unknown field"),
        ({"unit": "seeds"}, "unit"),
        ({"seeds": []}, "seeds"),
        ({"extra": 1}, "unknown field"),
        ({"name": "Has Spaces"}, "name"),
        ({"items": {"split": "heldout", "families": ["FUND_01"], "count": 5}}, "held-out split names exactly"),
        ({"items": {"split": "practice", "families": ["FUND_01"], "seeds": "x"}}, "not a seed"),
        ({"items": {"split": "mystery", "families": ["FUND_01"]}}, "split"),
    ],
)
def test_spec_errors_name_the_field(change, needle):
    if needle is None:
        check_spec(spec(**change))
        return
    with pytest.raises(ExperimentError) as err:
        check_spec(spec(**change))
    assert needle in err.value.message and err.value.message.startswith("spec.json")


def test_a_missing_field_is_named():
    s = spec()
    del s["margin"]
    with pytest.raises(ExperimentError, match="missing field 'margin'"):
        check_spec(s)


def test_freezing_hashes_the_bytes_and_a_changed_spec_is_refused():
    data = json.dumps(spec()).encode()
    doc = freeze_doc(data, "2026-02-03")
    assert check_frozen(data, doc, "dir")["name"] == "a-vs-b"
    changed = json.dumps(spec(margin="1")).encode()
    with pytest.raises(ExperimentError, match="changed after freezing .* a changed spec is a new spec"):
        check_frozen(changed, doc, "dir")
    whitespace = json.dumps(spec(), indent=1).encode()
    with pytest.raises(ExperimentError, match="changed after freezing"):
        check_frozen(whitespace, doc, "dir")


def test_a_changed_rule_is_named_against_the_freeze():
    bet = spec(
        version=2,
        method={"name": "paired_betting", "bet": "agrapa", "truncation": "0.75"},
        stopping={"max_n": 10, "futility": None},
    )
    doc = freeze_doc(json.dumps(bet).encode(), "2026-02-03")
    assert doc["method"] == bet["method"] and doc["stopping"] == bet["stopping"]
    changed = json.dumps(dict(bet, method=dict(bet["method"], truncation="0.9"))).encode()
    with pytest.raises(ExperimentError, match='its method.truncation was "0.75" when frozen, now "0.9"'):
        check_frozen(changed, doc, "dir")
    changed = json.dumps(dict(bet, stopping={"max_n": 5, "futility": None})).encode()
    with pytest.raises(ExperimentError, match="its stopping.max_n was 10 when frozen, now 5"):
        check_frozen(changed, doc, "dir")
    with pytest.raises(ExperimentError, match="method or stopping differ"):
        check_frozen(json.dumps(bet).encode(), dict(doc, method={"name": "paired_hoeffding"}), "dir")


def test_no_floats_in_the_decision():
    ids, vals = values_for([(80, 60), (90, 30), (70, 70)])
    out = decide(spec(), ids, vals)

    def walk(x):
        assert not isinstance(x, float)
        if isinstance(x, dict):
            [walk(v) for v in x.values()]
        elif isinstance(x, list):
            [walk(v) for v in x]

    walk(out)
    assert Decimal(out["lower_bound"]) < Decimal(out["estimate"]["decimal"]) < Decimal(out["upper_bound"])
