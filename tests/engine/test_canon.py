import json

import pytest

import engine
from engine._canon import canonical_json, content_sha256


def test_canonical_bytes_sorted_compact_utf8():
    assert canonical_json({"b": 1, "a": [True, None, "é"]}) == '{"a":[true,null,"é"],"b":1}'.encode("utf-8")


@pytest.mark.parametrize(
    "bad",
    [
        {"x": 1.5},
        {"x": float("nan")},
        {"x": 2**53},
        {"x": -(2**53)},
        {"x": 10**40},
        {"x": [1, 2.0]},
        {"x": {1, 2}},
        {"x": object()},
    ],
)
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


# -- RFC 8785 (JCS) -------------------------------------------------------------------
# Float-free vectors from the published JCS test data (cyberphone/json-canonicalization,
# testdata/input and output: weird, french, unicode) and the RFC's own sorting example.

JCS_VECTORS = [  # (input JSON text, expected canonical text as a Python string)
    (
        '{"\\u20ac": "Euro Sign", "1": "One", "\\u0080": "Control\\u007f", "\\ud83d\\ude02": "Smiley", '
        '"\\u00f6": "Latin Small Letter O With Diaeresis", "\\ufb33": "Hebrew Letter Dalet With Dagesh", '
        '"</script>": "Browser Challenge"}',
        '{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With '
        'Diaeresis","\u20ac":"Euro Sign","\U0001f602":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    ),
    (
        '{"peach": "This sorting order", "p\\u00e9ch\\u00e9": "is wrong according to French", '
        '"p\\u00eache": "but canonicalization MUST", "sin": "ingnore locale"}',
        '{"peach":"This sorting order","p\u00e9ch\u00e9":"is wrong according to French",'
        '"p\u00eache":"but canonicalization MUST","sin":"ingnore locale"}',
    ),
    ('{"Unnormalized Unicode": "\\u1e0d\\u0307"}', '{"Unnormalized Unicode":"\u1e0d\u0307"}'),
    # RFC 8785 section 3.2.3: members sorted by UTF-16 code units
    (
        '{"\\u20ac": 1, "\\r": 2, "\\ufb33": 3, "1": 4, "\\ud83d\\ude00": 5, "\\u0080": 6, "\\u00f6": 7}',
        '{"\\r":2,"1":4,"\u0080":6,"\u00f6":7,"\u20ac":1,"\U0001f600":5,"\ufb33":3}',
    ),
    # control characters: short escapes where JSON.stringify has them, lowercase \\u00xx otherwise; DEL as is
    (
        '["\\u0000\\b\\t\\n\\f\\r\\u000f\\u001f\\u007f\\"\\\\/"]',
        '["\\u0000\\b\\t\\n\\f\\r\\u000f\\u001f\u007f\\"\\\\/"]',
    ),
    (
        '{"a": [true, false, null, -9007199254740991, 9007199254740991, 0, -1, {}], "": []}',
        '{"":[],"a":[true,false,null,-9007199254740991,9007199254740991,0,-1,{}]}',
    ),
]


@pytest.mark.parametrize("source,expected", JCS_VECTORS)
def test_rfc8785_vectors(source, expected):
    assert canonical_json(json.loads(source)) == expected.encode("utf-8")


def test_the_issue_case_u_e000_and_u_1f600():
    """Code-point order puts U+E000 first; UTF-16 order (D83D DE00 < E000) puts the emoji first."""
    assert canonical_json({"\ue000": 1, "\U0001f600": 2}) == '{"\U0001f600":2,"\ue000":1}'.encode("utf-8")


def _independent_jcs(value):
    """A second, deliberately simple RFC 8785 writer for float-free data."""
    if isinstance(value, dict):
        keys = sorted(
            value,
            key=lambda k: [
                int.from_bytes(k.encode("utf-16-be")[i : i + 2], "big") for i in range(0, len(k.encode("utf-16-be")), 2)
            ],
        )
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _independent_jcs(value[k]) for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_independent_jcs(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


from hypothesis import given, settings, strategies as st  # noqa: E402

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53 - 1), 2**53 - 1) | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_json)
def test_canonical_json_agrees_with_an_independent_rfc8785_writer(value):
    assert canonical_json(value) == _independent_jcs(value).encode("utf-8")


def _deep(n):
    value = []
    for _ in range(n):
        value = [value]
    return value


@pytest.mark.parametrize("bad", [{"x": "\ud800"}, {"\udc00": 1}, _deep(100_000)])
def test_values_without_a_canonical_form(bad):
    with pytest.raises(engine._canon.NotCanonical):
        canonical_json(bad)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_engine_hash_is_the_canonical_hash(value):
    """The engine's fast hash of its own (float-free, in-range) data is sha256 of the canonical bytes."""
    assert engine._canon.engine_sha256(value) == engine.sha256_hex(canonical_json(value))
