"""The desk grammar (launchers/_grammar.py) and the compact prompt (launchers/worker/prompt.py), without the
llama library: what the grammar allows is what the view shows, it never forbids a batch the reference plan
sends, and the compact view holds only what a desk may see."""

import json

import jsonschema
import pytest
from hypothesis import given, settings, strategies as st

import engine
from engine._baselines import policy_batch
from engine._tools import project
from launchers import _grammar
from launchers.worker import prompt

FORBIDDEN_VIEW_KEYS = (
    "receipts",
    "world_commitment",
    "calendar",
    "expired_quotes",
    "instance_id",
    "withdrawn_quotes",
    "quote_usage",
    "counters",
    "carry_end",
    "family",
)


def _days(family, seed=1):
    """(packet, no-action report, the reference batch) of every checkpoint of a reference run."""
    run = engine.Run(engine.generate(family, seed))
    out = []
    while run.open_day is not None:
        packet = run.packet()
        batch = policy_batch("reference", packet)
        out.append((packet, project(packet, [], trusted=True)["report"], batch))
        run.submit(batch)
    return run.instance, out


def _validator(schema):
    return jsonschema.Draft202012Validator(schema)


def _renamed(batch):
    """The batch with its action ids as the grammar names them (a1, a2, ... by position)."""
    return dict(batch, actions=[dict(a, id=f"a{i + 1}") for i, a in enumerate(batch["actions"])])


@pytest.mark.parametrize("family", engine.FAMILIES)
def test_the_grammar_allows_every_reference_batch_and_the_view_holds_only_the_desks_view(family):
    instance, days = _days(family)
    checked = 0
    for packet, report, batch in days:
        messages = prompt.messages(packet, report)
        view = prompt.view_in(messages)
        assert view == prompt.view(packet, report)  # what the host's grammar reads is what the model was shown
        assert not set(FORBIDDEN_VIEW_KEYS) & set(view)
        assert all(s["day"] <= packet["day"] for s in view["sources"])
        text = messages[1]["content"]
        future = [s["text"] for s in instance["sources"] if s["published_day"] > packet["day"]]
        assert not any(f[:80] in text for f in future)
        assert len(text) < 12_000, (packet["day"], len(text))  # bounded: never near the 8,192-token context
        schema = _grammar.batch_schema(view)
        if len(batch["actions"]) <= _grammar.MAX_ACTIONS and not any(
            a["type"] == "ESCALATE" and "note" in a for a in batch["actions"]
        ):
            errors = list(_validator(schema).iter_errors(_renamed(batch)))
            assert not errors, (packet["day"], errors[0].message)
            checked += 1
        # a batch naming an id the view does not show, or another day, is outside the grammar
        wrong_day = dict(_renamed(batch), day=packet["day"] + 1)
        assert not _validator(schema).is_valid(wrong_day)
        extra = dict(
            batch["report"],
            assets=dict(
                batch["report"]["assets"], Z9={"funded": 0, "unfunded": 0, "maturity_gap_days": 0, "tail_cent_days": 0}
            ),
        )
        assert not _validator(schema).is_valid(dict(_renamed(batch), report=extra))
    assert checked >= len(days) - 2


def test_the_schema_of_a_view_names_its_ids_and_nothing_else():
    _, days = _days("FUND_04")
    packet, report, _ = days[0]
    view = prompt.view(packet, report)
    schema = _grammar.batch_schema(view)
    jsonschema.Draft202012Validator.check_schema(schema)  # a JSON Schema 2020-12 document, as published
    assert schema["properties"]["day"] == {"const": packet["day"]}
    lengths = schema["properties"]["actions"]["anyOf"]
    assert lengths[0] == {"const": []} and len(lengths) == _grammar.MAX_ACTIONS + 1
    second = lengths[2]["prefixItems"]
    assert [v["properties"]["id"] for v in second[1]["anyOf"]] == [{"const": "a2"}] * len(second[1]["anyOf"])
    fund = next(v for v in second[0]["anyOf"] if v["properties"]["type"] == {"const": "FUND"})
    assert fund["properties"]["asset"] == {"enum": [a["id"] for a in view["assets"]]}
    assert fund["properties"]["quote"] == {"enum": [q["id"] for q in view["quotes"]]}
    kinds = {v["properties"]["type"]["const"] for v in second[0]["anyOf"]}
    assert kinds == {"FUND", "ESCALATE"}  # no trade to roll or repay, no approval to execute on day 1
    assets = schema["properties"]["report"]["properties"]["assets"]
    assert assets["required"] == sorted(report["assets"]) and assets["additionalProperties"] is False
    # the same view gives the same schema, byte for byte
    assert _grammar.schema_sha256(schema) == _grammar.schema_sha256(_grammar.batch_schema(json.loads(json.dumps(view))))


ids = st.text(st.characters(codec="utf-8"), min_size=0, max_size=70)


@settings(max_examples=40, deadline=None)
@given(
    assets=st.lists(ids, max_size=8),
    quotes=st.lists(ids, max_size=8),
    trades=st.lists(ids, max_size=4),
    day=st.integers(1, 40),
    junk=st.sampled_from([None, 5, "x", [1], {"id": 3}]),
)
def test_a_hostile_view_gives_a_valid_schema_of_the_ids_it_can_offer(assets, quotes, trades, day, junk):
    view = {
        "day": day,
        "assets": [{"id": a, "status": "held"} for a in assets] + [junk],
        "quotes": [{"id": q} for q in quotes],
        "trades": junk if junk is not None else [{"id": t} for t in trades],
        "counterparties": [{"id": "CP1"}],
        "approvals": [{"id": "AP1", "status": "approved"}],
        "breaches": junk,
    }
    schema = _grammar.batch_schema(view)
    json.dumps(schema, ensure_ascii=False).encode("utf-8")  # every id the schema names is text it can hold
    offered = [a for a in dict.fromkeys(assets) if 0 < len(a) <= _grammar.MAX_ID]
    assert list(schema["properties"]["report"]["properties"]["assets"]["properties"]) == offered
    empty = {
        "day": day,
        "actions": [],
        "report": {
            "cash": 0,
            "funding_cost_to_date": 0,
            "breaches": [],
            "open_approvals": [],
            "assets": {a: {k: 0 for k in _grammar.ASSET_REPORT_KEYS} for a in offered},
        },
    }
    assert jsonschema.Draft202012Validator(schema).is_valid(empty)


@pytest.mark.parametrize("view", [None, [], {"day": "1"}, {"day": True}, {}])
def test_a_view_without_an_integer_day_has_no_schema(view):
    with pytest.raises(ValueError, match="no integer day"):
        _grammar.batch_schema(view)


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"day": 1, "day": 2, "actions": [], "report": {}}', "duplicate key 'day'"),
        ('{"day": NaN}', "NaN is not a JSON number"),
        ('{"day": Infinity}', "Infinity is not a JSON number"),
        ('{"day": 1} and more', "text after the JSON object"),
        ("[1, 2]", "expected a JSON object"),
        ("not json", "not one JSON object"),
        ("[" * 100_000 + "]" * 100_000, "not one JSON object"),
        ('{"a": 1' + "0" * 5000 + "}", "not one JSON object"),
    ],
)
def test_the_compact_answer_is_read_strictly(text, message):
    with pytest.raises(ValueError, match=message):
        prompt.read_answer(text)


def test_a_retry_feeds_the_refusal_back_and_stays_bounded():
    opening = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    again = prompt.retry(opening, "x" * 100_000, "duplicate action id 'a1'" + "!" * 10_000, 2)
    assert again[:2] == opening and again[2] == {"role": "assistant", "content": "x" * prompt.ANSWER_CHARS}
    assert again[3]["role"] == "user" and again[3]["content"].startswith("Refused: duplicate action id 'a1'")
    assert len(again[3]["content"]) < prompt.REFUSAL_CHARS + 100 and again[3]["content"].endswith("(answer 2 of 3).")
    assert prompt.view_in(again) is None  # no desk view in these messages: the sampler refuses to guess one
