import json

import pytest

import engine
from engine._canon import canonical_json, content_sha256


def test_canonical_bytes_sorted_compact_utf8():
    assert canonical_json({"b": 1, "a": [True, None, "é"]}) == '{"a":[true,null,"é"],"b":1}'.encode("utf-8")


@pytest.mark.parametrize("bad", [{"x": 1.5}, {"x": float("nan")}, {"x": 2**53}, {1: "k"}, {"x": {1, 2}}])
def test_canonical_refuses_what_rfc8785_profile_excludes(bad):
    with pytest.raises(ValueError):
        canonical_json(bad)


def test_golden_round_trip_of_a_result():
    instance = engine.load_episode("W2")
    result = engine.grade_candidate(engine.gold_candidate(instance), instance)
    text = engine.pretty_json(result)
    again = engine.pretty_json(json.loads(text))
    assert text == again
    assert content_sha256(json.loads(text)) == content_sha256(result)
