"""The local sampler's prefix store (launchers/_llama_prefix.py): an attempt's first call starts from the stored
state of its system turn instead of evaluating it again, and answers exactly as it would without the store.
The attempt contract runs twice, as in test_llama_real.py: over the fake library under `make test` (where the
evaluated tokens are counted exactly) and with the real library and model under `make test-long` (where the
answers with and without the store are compared byte for byte on the installed build)."""

import os

import pytest

from launchers import _llama_prefix, _sampler_llama
from launchers._errors import SamplerError
from launchers.worker import prompt

from . import fake_llama
from .test_llama_real import _run, model_file  # noqa: F401 (the fixture: fake, and real under -m long)

pytestmark = pytest.mark.xdist_group("llama")


def _ledger_calls(record):
    return [e for e in record["content"]["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"]


def _cache_bytes(out):
    with open(os.path.join(out, "cache.jsonl"), "rb") as fh:
        return fh.read()


def test_an_attempts_first_call_loads_the_stored_system_turn_and_answers_as_without_it(
    tmp_path, model_file, monkeypatch
):
    """The same attempt without the store, then with the system turn stored beforehand (evaluated on its own,
    as an earlier attempt's first call stores it): the answers, tokens and cache hits are the same bytes."""
    monkeypatch.setattr(_sampler_llama, "_PREFIXES", {})
    is_fake = _sampler_llama.library().Llama is fake_llama.Llama
    runs, evals = {}, (lambda: fake_llama.Llama.loaded[-1].evals if fake_llama.Llama.loaded else [])
    for name in ("old", "loaded"):
        monkeypatch.setattr(_sampler_llama, "PREFIX_STORE", name != "old")
        if name == "loaded":  # what an earlier attempt's first call leaves in the store, at less cost
            sampler = _sampler_llama.LlamaSampler("m", *_configuration(model_file))
            opening = sampler.prepare(_opening(), 1024).payload
            assert (
                _sampler_llama.prefix_store(sampler.key).start(sampler.llm, opening["tokens"], opening["prefix"])
                == "made"
            )
        before = len(evals())
        record, out, _ = _run(str(tmp_path), model_file, name)
        assert record["content"]["termination"]["status"] == "completed", record["content"]["termination"]
        runs[name] = (record, out, evals()[before:])
    (store,) = _sampler_llama._PREFIXES.values()
    assert (store.made, store.loaded, len(store.states)) == (1, 1, 1)
    # byte-identical answers, tokens and recorded cache hits (counted within the attempt, as before the store)
    assert _cache_bytes(runs["old"][1]) == _cache_bytes(runs["loaded"][1])
    calls = {name: _ledger_calls(r) for name, (r, _, _) in runs.items()}
    assert [(c["tokens_in"], c["tokens_out"], c["cached_tokens_in"]) for c in calls["old"]] == [
        (c["tokens_in"], c["tokens_out"], c["cached_tokens_in"]) for c in calls["loaded"]
    ]
    assert calls["loaded"][0]["cached_tokens_in"] == 0 and len(calls["loaded"]) >= 2
    if not is_fake:
        return
    # the work, exactly: the old path evaluates the whole first prompt, the new loads the system turn and
    # evaluates the rest; later calls as before (each reuses what the attempt's previous call left)
    first = calls["old"][0]["tokens_in"]
    system = len(("<s><|system|>\n" + prompt.SYSTEM + "\n<|user|>\n").encode()) // 3
    assert runs["old"][2][0] == first and runs["loaded"][2][0] == first - system
    assert runs["loaded"][2][1:] == runs["old"][2][1:]


def _configuration(model_file):
    identity = _sampler_llama.inspect_model(model_file)
    return identity, _sampler_llama.settings_for(identity)


def _sampler(tmp_path, monkeypatch):
    fake_llama.install(monkeypatch)
    return _sampler_llama.LlamaSampler("m", *_configuration(fake_llama.write_model(tmp_path / "m.gguf")))


def _opening():
    from launchers.bench_local import day_one

    return day_one("FUND_03")


def test_the_system_turn_is_what_precedes_the_first_user_turns_text(tmp_path, monkeypatch):
    sampler = _sampler(tmp_path, monkeypatch)
    opening = _opening()
    head = ("<s><|system|>\n" + prompt.SYSTEM + "\n<|user|>\n").encode()
    first = sampler.prepare(opening, 1024).payload
    system = len(head) // 3  # three bytes a fake token; the token spanning the cut differs
    assert first["prefix"] == system == 449  # compact/2's system turn
    assert first["tokens"][:system] == fake_llama.encode(head)[:system]
    retry = sampler.prepare(prompt.retry(opening, "{}", "not a batch", 2), 1024).payload
    assert retry["prefix"] == system
    assert sampler.prepare(opening[1:], 1024).payload["prefix"] == 0  # no system turn: nothing to store


def test_each_attempts_first_call_evaluates_only_what_follows_the_stored_system_turn(tmp_path, monkeypatch):
    sampler = _sampler(tmp_path, monkeypatch)
    llm, opening = sampler.llm, sampler.prepare(_opening(), 1024)
    n = opening.prompt_tokens
    sampler.sample(opening, 60)  # the store is empty: the system turn on its own, then the rest
    sampler.sample(sampler.prepare(prompt.retry(_opening(), "{}", "not a batch", 2), 1024), 60)
    later = _sampler_llama.LlamaSampler("m", sampler.identity, sampler.sampling)  # the next attempt: reset
    first = later.sample(later.prepare(_opening(), 1024), 60)
    monkeypatch.setattr(_sampler_llama, "PREFIX_STORE", False)
    old = _sampler_llama.LlamaSampler("m", sampler.identity, sampler.sampling)
    old.sample(old.prepare(_opening(), 1024), 60)
    retry_reused = llm.evals[2]
    system = len(("<s><|system|>\n" + prompt.SYSTEM + "\n<|user|>\n").encode()) // 3
    assert llm.evals == [system, n - system, retry_reused, n - system, n] and retry_reused < n - system
    assert first.cache_hit_tokens == 0  # recorded as the attempt saw it: nothing evaluated before
    assert llm.resets == 4  # each attempt starts from reset, and so does the stored state


def test_a_state_is_keyed_by_its_exact_tokens_and_the_oldest_is_dropped(tmp_path, monkeypatch):
    llm = _sampler(tmp_path, monkeypatch).llm
    store = _llama_prefix.PrefixStore(capacity=2)
    a = list(range(10, 20))
    b = a[:5] + [99] + a[6:]  # differs in the sixth token only
    c = [7] * 10
    assert store.start(llm, a, 6) == "made" and llm._input_ids == a[:6]
    assert store.start(llm, a, 6) == "kept"  # held already: nothing evaluated, nothing loaded
    assert store.start(llm, b, 6) == "made" and llm._input_ids == b[:6]
    assert store.start(llm, a, 6) == "loaded" and llm._input_ids == a[:6]
    assert store.start(llm, c, 6) == "made"  # the third state: b, least recently used, is dropped
    assert list(store.states) == [_llama_prefix.key(a[:6]), _llama_prefix.key(c[:6])]
    assert store.start(llm, b, 6) == "made"
    assert (store.made, store.loaded) == (4, 1) and llm.evals == [6, 6, 6, 6]
    assert store.start(llm, a, 0) == "kept" and llm.evals == [6, 6, 6, 6]


def test_a_state_that_cannot_be_loaded_fails_the_call_in_one_line(tmp_path, monkeypatch):
    sampler = _sampler(tmp_path, monkeypatch)
    sampler.sample(sampler.prepare(_opening(), 1024), 60)  # the system turn is stored
    monkeypatch.setattr(
        fake_llama.Llama,
        "load_state",
        lambda self, state: (_ for _ in ()).throw(RuntimeError("Failed to set llama state data")),
    )
    again = _sampler_llama.LlamaSampler("m", sampler.identity, sampler.sampling)  # a new attempt: reset
    with pytest.raises(SamplerError) as err:
        again.sample(again.prepare(_opening(), 1024), 60)
    assert str(err.value) == "llama-cpp: the call failed (RuntimeError: Failed to set llama state data)"


def test_bench_local_prints_the_old_path_beside_the_new_and_says_when_answers_differ():
    from launchers import bench_local

    def run(calls, cache=b"same"):
        return {"calls": calls, "cache": cache}

    runs = {
        "old": [run([9000, 7000, 5000]), run([9400, 6000, 8000])],
        "new": [run([9100, 7100, 5100]), run([3000, 6100, 7900])],
    }
    lines = bench_local.store_lines(runs)
    assert [" ".join(line.split()) for line in lines[1:]] == [
        "first call of the first attempt (n=1) 9,000 / 9,000 9,100 / 9,100 1.01x",
        "first call of later attempts (n=1) 9,400 / 9,400 3,000 / 3,000 0.32x",
        "later calls (n=4) 5,000 / 7,000 5,100 / 7,100 1.01x",
        "answers, tokens, cache hits (cache.jsonl) identical (every attempt of both paths)",
    ]
    runs["new"][1]["cache"] = b"other"
    assert "DIFFER" in bench_local.store_lines(runs)[-1]
