"""Greedy decoding under a grammar, the best token checked first.

llama-cpp-python's chain for a greedy call (temperature 0) applies the grammar to every token of the
vocabulary before it picks the best one: each generated token costs a grammar check of 49,152 candidates for
SmolLM2 and 262,144 for Gemma 3, which is most of a call's decoding time. The answer of that chain is the
first token (lowest id) of highest logit among those the grammar allows. So is this one's: take the first
token of highest logit; if the grammar allows it, no other token can be chosen before it (any allowed token
with a higher logit, or the same logit and a lower id, would have been found first); only when it refuses it
is the grammar applied to the whole vocabulary, and the chain's own rule picks among what is left. llama.cpp's
own server samples this way (common/sampling.cpp, `grammar_first` false).

What must stay true, and is tested: the token chosen is the chain's for any logits and any grammar
(tests/launchers/test_llama_grammar_first.py, by property over a grammar given as a set of allowed tokens),
and on the real library and both packaged models the answers are byte-identical with and without it
(the same file's long test, `make test-long`); `make bench-local` prints old beside new.

Only the greedy call is decoded this way: a retry samples at a temperature, where checking the sampled token
first would change the distribution the grammar-filtered chain draws from.
"""

import ctypes

import numpy as np

NEG_INF = float("-inf")


def choose(scores, allows, apply_all, accept):
    """The greedy token under the grammar, with the grammar checked on the best token first.

    `scores`: the logits (float32, index = token id), edited in place when the grammar must filter them all;
    `allows(token, logit)`: whether the grammar allows the token now; `apply_all(scores)`: sets the logit of
    every token the grammar refuses to -inf; `accept(token)`: advances the grammar by the chosen token.
    Returns (token, whether the whole vocabulary was checked)."""
    best = int(np.argmax(scores))
    if np.isnan(scores[best]):  # argmax stops at a NaN, llama.cpp's greedy skips it: they would disagree
        raise RuntimeError("the model's logits hold NaN")
    if allows(best, float(scores[best])):
        accept(best)
        return best, False
    apply_all(scores)
    best = int(np.argmax(scores))
    if scores[best] == NEG_INF:
        raise RuntimeError("the grammar allows no token here")
    accept(best)
    return best, True


class GrammarFirst:
    """A logits processor for `Llama.create_completion(grammar=None, temperature=0, ...)` that decodes under
    `grammar` (a LlamaGrammar) by `choose`: it leaves the chosen token the only first-highest logit, so the
    chain's own greedy sampler picks it. One per call (it holds the grammar's state for that answer)."""

    def __init__(self, lib, llm, grammar):
        self.lib = lib
        self.grammar = grammar  # the fake library reads the grammar from here (tests/launchers/fake_llama.py)
        self.sampler = lib.llama_sampler_init_grammar(
            llm._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self.sampler:
            raise ValueError("llama.cpp refused the grammar")
        self.n_vocab = llm.n_vocab()
        self.one = (lib.llama_token_data * 1)()
        self.all = self._view = None  # the whole vocabulary as llama_token_data (and its numpy view), made on
        # the first full check
        self.full_checks = 0
        self.tokens = 0
        self.failed = None

    def close(self):
        if self.sampler:
            self.lib.llama_sampler_free(self.sampler)
            self.sampler = None

    def _apply(self, data, size):
        pointer = ctypes.cast(data, ctypes.POINTER(self.lib.llama_token_data))
        array = self.lib.llama_token_data_array(pointer, size, -1, False)
        self.lib.llama_sampler_apply(self.sampler, ctypes.byref(array))

    def _allows(self, token, logit):
        self.one[0].id, self.one[0].logit, self.one[0].p = token, logit, 0.0
        self._apply(self.one, 1)
        return self.one[0].logit != NEG_INF

    def _apply_all(self, scores):
        if self.all is None:
            self.all = (self.lib.llama_token_data * self.n_vocab)()
            view = np.ctypeslib.as_array(self.all).view(np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")]))
            view["id"] = np.arange(self.n_vocab, dtype=np.int32)
            self._view = view
        self._view["logit"] = scores
        self._view["p"] = 0.0
        self._apply(self.all, self.n_vocab)
        scores[:] = self._view["logit"]

    def _accept(self, token):
        self.lib.llama_sampler_accept(self.sampler, token)

    def __call__(self, input_ids, scores):
        # called from llama.cpp through ctypes, which prints and swallows an exception: keep it for `check`
        try:
            if self.failed is not None:
                raise RuntimeError("an earlier token failed")
            if len(scores) != self.n_vocab:
                raise RuntimeError(f"expected {self.n_vocab} logits, got {len(scores)}")
            scores = np.array(scores, dtype=np.float32)  # what the chain reads back
            _, full = choose(scores, self._allows, self._apply_all, self._accept)
            self.tokens += 1
            self.full_checks += full
            return scores
        except Exception as exc:  # noqa: BLE001 -- re-raised by `check` once the library has returned
            self.failed = self.failed or exc
            return np.full(len(scores), NEG_INF, dtype=np.float32)

    def check(self):
        """Raises what went wrong while decoding (the answer is then never used)."""
        if self.failed is not None:
            raise RuntimeError(f"grammar-first decoding failed: {self.failed}")
