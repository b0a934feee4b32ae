"""Greedy decoding with the grammar checked on the best token first chooses the token the library's chain
chooses (the grammar applied to the whole vocabulary, then the first token of highest logit), for any logits
and any grammar; what fails inside the library's callback fails the call instead of being swallowed.
The real library and model give byte-identical answers both ways: tests/launchers/test_llama_real.py."""

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launchers import _llama_grammar_first as gf
from launchers import _sampler_llama
from launchers._errors import SamplerError

from . import fake_llama

NEG_INF = float("-inf")

# logits drawn from a few values so that ties (the same logit at several ids) are common, -inf included
LOGIT = st.sampled_from([NEG_INF, -3.5, -1.0, 0.0, 0.25, 2.0, 7.0])


def chain(scores, allowed):
    """The library's chain at temperature 0: the grammar sets every refused token to -inf, then greedy takes
    the first token of highest logit."""
    filtered = [s if i in allowed else NEG_INF for i, s in enumerate(scores)]
    best = max(filtered)
    return filtered.index(best)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(LOGIT, min_size=1, max_size=40).flatmap(
        lambda xs: st.tuples(st.just(xs), st.sets(st.integers(0, len(xs) - 1), min_size=1))
    )
)
def test_the_chosen_token_is_the_chains_for_any_logits_and_grammar(case):
    logits, allowed = case
    if all(logits[i] == NEG_INF for i in allowed):
        return  # the chain itself has nothing to choose (a grammar never leaves that state)
    scores = np.array(logits, dtype=np.float32)
    accepted, checks = [], []

    def allows(token, logit):
        checks.append(token)
        return token in allowed

    def apply_all(s):
        checks.append("all")
        s[[i for i in range(len(s)) if i not in allowed]] = NEG_INF

    token, full = gf.choose(scores, allows, apply_all, accepted.append)
    assert token == chain(logits, allowed)
    assert accepted == [token]  # the grammar advances by exactly the chosen token
    assert int(np.argmax(scores)) == token  # what the chain's own greedy sampler then picks
    first_best = int(np.argmax(np.array(logits, dtype=np.float32)))
    assert full == (first_best not in allowed)  # the whole vocabulary is checked only when the best is refused
    assert checks == ([first_best, "all"] if full else [first_best])


def test_logits_holding_nan_fail_the_token_rather_than_pick_one_the_chain_would_not():
    scores = np.array([0.0, float("nan"), 1.0], np.float32)
    with pytest.raises(RuntimeError, match="logits hold NaN"):
        gf.choose(scores, lambda t, x: True, lambda s: None, lambda t: None)


def test_a_grammar_that_allows_nothing_raises():
    with pytest.raises(RuntimeError, match="allows no token"):
        gf.choose(np.zeros(4, np.float32), lambda t, x: False, lambda s: s.fill(NEG_INF), lambda t: None)


class _Lib:
    """The grammar sampler's C surface over a Python set of allowed tokens (apply sets refused logits to -inf)."""

    llama_token_data = fake_llama.llama_token_data
    llama_token_data_array = fake_llama.llama_token_data_array

    def __init__(self, allowed, fail=False):
        self.allowed, self.fail, self.accepted, self.freed = allowed, fail, [], 0

    def llama_sampler_init_grammar(self, vocab, grammar, root):
        return 7

    def llama_sampler_apply(self, sampler, ref):
        if self.fail:
            raise OSError("exception: access violation")
        array = ctypes.cast(ref, ctypes.POINTER(fake_llama.llama_token_data_array)).contents
        for i in range(array.size):
            if array.data[i].id not in self.allowed:
                array.data[i].logit = NEG_INF

    def llama_sampler_accept(self, sampler, token):
        self.accepted.append(token)

    def llama_sampler_free(self, sampler):
        self.freed += 1


class _Llm:
    _model = type("M", (), {"vocab": None})()

    def n_vocab(self):
        return 6


def test_the_processor_passes_the_best_token_through_and_filters_only_when_it_is_refused():
    lib = _Lib(allowed={1, 4})
    first = gf.GrammarFirst(lib, _Llm(), fake_llama.LlamaGrammar({}))
    out = first(None, np.array([0, 5, 1, 0, 2, 0], np.float32))  # best (1) allowed: unchanged
    assert out.tolist() == [0, 5, 1, 0, 2, 0] and lib.accepted == [1] and first.full_checks == 0
    out = first(None, np.array([9, 5, 1, 0, 6, 0], np.float32))  # best (0) refused: the whole vocabulary
    assert out.tolist() == [NEG_INF, 5, NEG_INF, NEG_INF, 6, NEG_INF] and lib.accepted == [1, 4]
    assert (first.tokens, first.full_checks) == (2, 1)
    first.check()
    first.close()
    first.close()
    assert lib.freed == 1


def test_what_fails_inside_the_callback_is_kept_and_raised_after_the_library_returns():
    # ctypes prints and swallows an exception raised in a callback: the chain would then pick a token the
    # grammar never saw; the processor returns no allowed token instead and `check` raises
    first = gf.GrammarFirst(_Lib(allowed={0}, fail=True), _Llm(), fake_llama.LlamaGrammar({}))
    out = first(None, np.zeros(6, np.float32))
    assert np.all(out == NEG_INF)
    assert np.all(first(None, np.array([0, 1, 2, 3, 4, 5], np.float32)) == NEG_INF)  # and every token after
    with pytest.raises(RuntimeError, match="grammar-first decoding failed: exception: access violation"):
        first.check()
    wrong = gf.GrammarFirst(_Lib(allowed={0}), _Llm(), fake_llama.LlamaGrammar({}))
    wrong(None, np.zeros(5, np.float32))
    with pytest.raises(RuntimeError, match="expected 6 logits, got 5"):
        wrong.check()


def test_a_grammar_the_library_refuses_fails_the_call_in_one_line(tmp_path, monkeypatch):
    lib = fake_llama.install(monkeypatch)
    monkeypatch.setattr(lib, "llama_sampler_init_grammar", lambda vocab, grammar, root: None)
    sampler = _greedy_sampler(tmp_path)
    with pytest.raises(
        SamplerError, match=r"^llama-cpp: the call failed \(ValueError: llama.cpp refused the grammar\)$"
    ):
        sampler.sample(sampler.prepare(_day_one(), 512), 60)


def test_only_a_greedy_call_is_decoded_grammar_first(tmp_path, monkeypatch):
    fake_llama.install(monkeypatch)
    sampler = _greedy_sampler(tmp_path)
    messages = _day_one()
    sampler.sample(sampler.prepare(messages, 512), 60)
    assert sampler.llm.last_call == {"temperature": 0.0, "grammar_first": True}
    retry = messages + [{"role": "assistant", "content": "{}"}, {"role": "user", "content": "again"}]
    sampler.sample(sampler.prepare(retry, 512), 60)  # a retry samples at a temperature: the library's chain
    assert sampler.llm.last_call == {"temperature": 0.7, "grammar_first": False}
    monkeypatch.setattr(_sampler_llama, "GRAMMAR_FIRST", False)
    sampler.sample(sampler.prepare(messages, 512), 60)
    assert sampler.llm.last_call == {"temperature": 0.0, "grammar_first": False}


def _day_one():
    from launchers import bench_local

    return bench_local.day_one("FUND_03", 1)


def _greedy_sampler(tmp_path):
    model = tmp_path / "m.gguf"
    fake_llama.write_model(model)
    provider = _sampler_llama.LlamaCpp(_options(str(model)))
    return _sampler_llama.LlamaSampler("fake", provider.identity, provider.sampling)


def _options(model_file):
    from launchers._provider import SamplerOptions

    return SamplerOptions(own={"model_file": model_file})


@pytest.mark.long
@pytest.mark.xdist_group("llama")
@pytest.mark.parametrize("packaged", ["packaged", "packaged:gemma3-270m"])
def test_the_real_models_answer_byte_identically_with_and_without_grammar_first(packaged, monkeypatch):
    from .test_llama_real import _model_file

    _model_file()  # the library and SmolLM2 are installed (or the test skips, or fails under make test-long)
    made = []

    class Counted(gf.GrammarFirst):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(gf, "GrammarFirst", Counted)
    provider = _sampler_llama.LlamaCpp(_options(packaged))
    answers = {}
    for flag in (True, False):
        monkeypatch.setattr(_sampler_llama, "GRAMMAR_FIRST", flag)
        sampler = _sampler_llama.LlamaSampler("bench", provider.identity, provider.sampling)
        c = sampler.sample(sampler.prepare(_day_one(), 1024), 3600)
        answers[flag] = (c.text, c.tokens_in, c.tokens_out, c.stop_reason)
    assert answers[True] == answers[False]
    assert answers[True][3] == "stop" and json_ok(answers[True][0])
    (first,) = made
    assert first.tokens == answers[True][2] + 1  # every answer token and the end of the answer
    assert 0 < first.full_checks < first.tokens  # the whole vocabulary was checked only where the best was refused


def json_ok(text):
    import json

    return isinstance(json.loads(text), dict)


def test_bench_local_prints_grammar_first_beside_the_old_path_and_says_when_answers_differ(monkeypatch):
    from types import SimpleNamespace

    from launchers import bench_local

    cpu = {True: iter([4.0, 3.0]), False: iter([10.0, 12.0])}
    text = {True: "{}", False: "{}"}

    def one_call(model_file):
        flag = _sampler_llama.GRAMMAR_FIRST
        return SimpleNamespace(text=text[flag], tokens_out=2), 0.0, next(cpu[flag]), 0.0

    monkeypatch.setattr(bench_local, "one_call", one_call)
    lines = [" ".join(line.split()) for line in bench_local.grammar_first_lines("m.gguf")]
    assert lines == [
        "grammar first, day-1 call: old path 10000 ms CPU (best of 2: the grammar checks every token of the vocabulary)",
        "new path (the best token checked first) 3000 ms CPU (0.30x of old); answers identical",
    ]
    assert _sampler_llama.GRAMMAR_FIRST is True  # the module's default again
    cpu = {True: iter([4.0, 3.0]), False: iter([10.0, 12.0])}
    text[True] = '{"a": 1}'
    assert bench_local.grammar_first_lines("m.gguf")[1].endswith("answers DIFFER")
