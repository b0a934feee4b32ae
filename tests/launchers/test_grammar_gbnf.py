"""Grammar 2 through llama.cpp itself (make test-long: needs `make local`): the GBNF that
`LlamaGrammar.from_json_schema` makes of each day's schema accepts the day's truthful batch, token by token, as
the sampler would decode it, and refuses what grammar 1 refused. The JSON Schema side of the same property is
tests/launchers/test_grammar_truth.py (make test)."""

import ctypes
import json
import math
import os

import jsonschema
import pytest

import engine
from launchers import _grammar, _grammar_v1
from launchers.worker import prompt

pytestmark = pytest.mark.long
llama_cpp = (
    pytest.importorskip("llama_cpp")
    if os.environ.get("FUNDBOOK_LOCAL_TESTS") != "required"
    else __import__("llama_cpp")
)


@pytest.fixture(scope="module")
def vocab():
    from launchers._sampler_llama import packaged_model

    llm = llama_cpp.Llama(packaged_model(), vocab_only=True, verbose=False)
    yield llm
    llm.close()


def _ordered(value, schema):
    """The value with its keys in the schema's property order (llama.cpp's converter writes required properties
    in that order), choosing the anyOf branch that validates."""
    if "anyOf" in schema:
        branch = next(b for b in schema["anyOf"] if jsonschema.Draft202012Validator(b).is_valid(value))
        return _ordered(value, branch)
    if isinstance(value, dict) and "properties" in schema:
        return {k: _ordered(value[k], schema["properties"][k]) for k in schema["properties"] if k in value}
    if isinstance(value, list) and "prefixItems" in schema:
        return [_ordered(v, s) for v, s in zip(value, schema["prefixItems"])]
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_ordered(v, schema["items"]) for v in value]
    return value


def _accepts(llm, schema, value) -> bool:
    """Whether the schema's GBNF lets a sampler decode exactly this JSON text, then stop."""
    text = json.dumps(_ordered(value, schema), ensure_ascii=False)
    grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    smpl = llama_cpp.llama_sampler_init_grammar(vocab, grammar._grammar.encode(), grammar._root.encode())
    try:
        for token in llm.tokenize(text.encode("utf-8"), add_bos=False, special=False) + [llm.token_eos()]:
            cell = (llama_cpp.llama_token_data * 1)()
            cell[0].id, cell[0].logit = token, 0.0
            candidates = llama_cpp.llama_token_data_array(data=cell, size=1, selected=-1, sorted=False)
            llama_cpp.llama_sampler_apply(smpl, ctypes.byref(candidates))
            if math.isinf(cell[0].logit):
                return False
            if token != llm.token_eos():
                llama_cpp.llama_sampler_accept(smpl, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(smpl)


def _days(family, seed, policy):
    run = engine.Run(engine.generate(family, seed))
    while run.open_day is not None:
        packet = run.packet()
        projection = engine.project(packet, [])["report"]
        batch = engine.policy_batch(policy, packet)
        run.submit(dict(batch, report=engine.project(packet, batch["actions"])["report"]))
        truth = run.days[-1]["gold_report"]
        actions = [
            {**{k: v for k, v in a.items() if k != "note"}, "id": f"a{i + 1}"} for i, a in enumerate(batch["actions"])
        ]
        yield packet, projection, {"day": packet["day"], "actions": actions, "report": truth}


@pytest.mark.parametrize("policy", ["reference", "shortest-cheapest", "do-nothing"])
def test_the_gbnf_of_each_day_accepts_its_truthful_batch(vocab, policy):
    checked = 0
    for family in engine.FAMILIES:
        for seed in (1, 2, 3):
            for packet, projection, batch in _days(family, seed, policy):
                schema = _grammar.batch_schema(prompt.view(packet, projection))
                assert _accepts(vocab, schema, batch), (family, seed, packet["day"])
                checked += 1
    assert checked == 4 * 3 * 20


def test_the_gbnf_of_grammar_1_refused_a_settlement_failure_and_grammar_2_accepts_it(vocab):
    packet, projection, batch = next(_days("FUND_04", 1, "do-nothing"))
    assert [b["code"] for b in batch["report"]["breaches"]] == ["SETTLEMENT_FAIL"]
    v1 = _grammar_v1.batch_schema(prompt.view(packet, projection, version="compact/1"))
    assert not _accepts(vocab, v1, batch)
    assert _accepts(vocab, _grammar.batch_schema(prompt.view(packet, projection)), batch)
