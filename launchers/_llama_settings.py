"""The local sampler's sampling settings: every parameter as an integer, what an attempt records (and the
decision cache checks), and the seed of one call (greedy first, a seed that follows from the request on a retry).
"""

from . import _grammar
from ._errors import InputError
from .worker import prompt


SETTINGS = {  # every sampling parameter, as integers (thousandths for the real-valued ones)
    "temperature_milli": 0,
    "retry_temperature_milli": 700,
    "seed": 0,
    "top_k": 40,
    "top_p_milli": 950,
    "min_p_milli": 50,
    "repeat_penalty_milli": 1000,
    "n_ctx": 8192,
    "n_batch": 512,
    "n_threads": 1,
    "n_threads_batch": 2,
}


def settings_for(identity, temperature_milli=0, seed=0, **overrides) -> dict:
    """The sampling settings an attempt records (and the cache checks): parameters, prompt, grammar, model."""
    unknown = sorted(set(overrides) - set(SETTINGS))
    if unknown:
        raise InputError(f"llama-cpp: unknown setting {unknown[0]}")
    out = dict(SETTINGS, **overrides, temperature_milli=temperature_milli, seed=seed)
    for name, value in out.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InputError(f"llama-cpp: {name}: expected a non-negative integer, got {value!r}")
    if out["n_threads"] < 1 or out["n_threads_batch"] < 1 or out["n_ctx"] < 256 or out["n_batch"] < 1:
        raise InputError("llama-cpp: n_threads and n_threads_batch must be at least 1, n_ctx at least 256")
    return dict(
        out,
        prompt=prompt.PROMPT_VERSION,
        grammar=_grammar.GRAMMAR_VERSION,
        model_sha256=identity["sha256"],
        chat_template_sha256=identity["chat_template_sha256"],
    )


def call_seed(sampling, request_sha, retry) -> tuple:
    """(seed, retry) of one call. A checkpoint's first answer is greedy (the seed is unused); a retry (the
    conversation holds a refused answer) samples with `seed` plus the request's first 32 bits, so each retry's
    seed follows from what the record holds (the settings and the request sha256) and differs between retries."""
    if not retry:
        return sampling["seed"], False
    return (sampling["seed"] + int(request_sha[:8], 16)) % 2**32, True
