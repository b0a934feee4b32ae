"""The OpenAI-compatible sampler (`--sampler openai-compatible --model <id>
--base-url URL`): Chat Completions through the `openai` SDK (3.x on httpx2), for any server that
speaks it -- vLLM, llama.cpp's server, Ollama, LM Studio, hosted
OpenAI-compatible APIs -- and llama-cpp-python's own `python -m llama_cpp.server`.

The base URL is `--base-url` or `FUNDBOOK_OPENAI_BASE_URL` (recorded without
credentials, query or fragment). The key, if the server wants one, is
`FUNDBOOK_OPENAI_COMPATIBLE_API_KEY`, never recorded; `OPENAI_API_KEY` is never
sent to such a server (the SDK would fall back to it: a placeholder is passed
instead when no key is set).

Two dialects of the answer's schema (`--server-dialect`, recorded):
- `openai` (default): `response_format: {"type": "json_schema", "json_schema":
  {"name", "schema", "strict": true}}` with the portable schema, and only the
  standard parameters (temperature, seed, max_tokens);
- `llama-cpp-python`: that server only knows `{"type": "json_object",
  "schema": ...}`; it gets the grammar schema itself (the one the in-process
  sampler hands llama.cpp) and the in-process sampler's top_k, top_p, min_p and
  repeat_penalty, so the two paths run the same decoding.
A checkpoint's first answer is sampled at `temperature_milli` (0: greedy); a
retry at `retry_temperature_milli` with the in-process sampler's per-request
seed (`_llama_settings.call_seed`). Usage: `prompt_tokens`, `completion_tokens`
and, when the server reports it, `prompt_tokens_details.cached_tokens`.

Pricing: a row the user passes with `--prices FILE`, or zero with
`--local-server` (a server on this host; the claim says so: `authorise --local`).
"""

import os

from . import _grammar
from . import _sampler_api as api
from ._errors import InputError
from ._providers import CHOICES
from ._llama_settings import SETTINGS as LLAMA, call_seed
from ._sampling import Completion
from .worker import prompt

PROVIDER = "openai-compatible"
KEY_VARIABLE = "FUNDBOOK_OPENAI_COMPATIBLE_API_KEY"
BASE_URL_VARIABLE = "FUNDBOOK_OPENAI_BASE_URL"
DIALECTS = CHOICES["server_dialect"]
NO_KEY = "no-key"  # sent when no key is set: never the user's OPENAI_API_KEY
LLAMA_KEYS = ("top_k", "top_p_milli", "min_p_milli", "repeat_penalty_milli")


def settings(temperature_milli=0, seed=0, dialect="openai", local_server=False) -> dict:
    if dialect not in DIALECTS:
        raise InputError(f"--server-dialect {dialect!r}: expected one of {', '.join(DIALECTS)}")
    out = {
        "api": "chat.completions",
        "dialect": dialect,
        "temperature_milli": temperature_milli,
        "retry_temperature_milli": LLAMA["retry_temperature_milli"],
        "seed": seed,
        "local_server": 1 if local_server else 0,
        "prompt": prompt.PROMPT_VERSION,
        "grammar": _grammar.GRAMMAR_VERSION if dialect == "llama-cpp-python" else api.SCHEMA_VERSION,
    }
    if dialect == "llama-cpp-python":
        out.update({k: LLAMA[k] for k in LLAMA_KEYS})
    return out


def base_url(given=None, environ=None) -> str:
    environ = os.environ if environ is None else environ
    url = given or environ.get(BASE_URL_VARIABLE)
    if not url:
        raise InputError(
            f"--base-url: the openai-compatible sampler needs the server's URL (--base-url URL or {BASE_URL_VARIABLE})"
        )
    api.recorded_url(url, "--base-url" if given else BASE_URL_VARIABLE)
    return url


def config(url, environ=None) -> dict:
    environ = os.environ if environ is None else environ
    api.check_key(environ, KEY_VARIABLE, PROVIDER, required=False)
    return {
        "base_url": api.recorded_url(url, "--base-url"),
        "key_variable": KEY_VARIABLE if environ.get(KEY_VARIABLE) else None,
        "sdk": f"openai {api.sdk_version('openai')}",
    }


def client(url, environ=None, http_client=None, deadline_s=120):
    environ = os.environ if environ is None else environ
    openai = api.sdk("openai")
    return openai.OpenAI(
        api_key=environ.get(KEY_VARIABLE) or NO_KEY,
        base_url=url,
        max_retries=0,
        timeout=deadline_s,
        http_client=http_client,
    )


def request_body(model_id, sampling, prepared) -> dict:
    """The keyword arguments of chat.completions.create for one prepared call."""
    seed, retry = call_seed(sampling, prepared.request_sha256, prepared.payload["retry"])
    temperature = sampling["retry_temperature_milli" if retry else "temperature_milli"]
    body = {
        "model": model_id,
        "messages": [{"role": m["role"], "content": m["content"]} for m in prepared.messages],
        "max_tokens": prepared.max_tokens,
        "temperature": temperature / 1000,
        "seed": seed,
    }
    if sampling["dialect"] == "llama-cpp-python":
        body["response_format"] = {"type": "json_object", "schema": prepared.payload["schema"]}
        body["extra_body"] = {
            "top_k": sampling["top_k"],
            "top_p": sampling["top_p_milli"] / 1000,
            "min_p": sampling["min_p_milli"] / 1000,
            "repeat_penalty": sampling["repeat_penalty_milli"] / 1000,
        }
    else:
        schema = prepared.payload["portable"]
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": api.schema_name(schema), "schema": schema, "strict": True},
        }
    return body


class OpenAICompatibleSampler(api.ApiSampler):
    provider = PROVIDER

    def __init__(self, model_id, sampling, client, config):
        super().__init__(model_id, sampling, client, config)
        self.sdk = api.sdk("openai")

    def request(self, prepared, deadline_s) -> Completion:
        resp = self.client.chat.completions.create(
            **request_body(self.model_id, self.sampling, prepared), timeout=deadline_s
        )
        self._note_model(resp.model)
        choice = resp.choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if refusal and not message.content:
            text, stop = refusal, "refusal"
        else:
            text, stop = message.content or "", str(choice.finish_reason or "stop")
        usage = resp.usage
        details = getattr(usage, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", None) or 0)
        return Completion(
            text,
            int(usage.prompt_tokens),
            int(usage.completion_tokens),
            stop,
            cache_hit_tokens=min(cached, int(usage.prompt_tokens)),
        )


def preflight(model_id, client, url):
    """GET /models: the server answers, accepts the key (if any) and serves the model. Free."""
    openai = api.sdk("openai")
    recorded = api.recorded_url(url, "--base-url")
    try:
        ids = [m.id for m in client.models.list()]
    except openai.APIError as exc:
        raise api.preflight_error(
            PROVIDER, exc, openai, KEY_VARIABLE, model_id, recorded, secret=api.client_key(client)
        ) from None
    if model_id not in ids:
        shown = ", ".join(str(i)[:80] for i in ids[:5]) or "none"
        raise InputError(
            f"--model {model_id}: {recorded} does not list this model (it serves: {shown}); nothing was consumed"
        )
    return model_id


class OpenAICompatible(api.ApiProvider):
    """`--sampler openai-compatible`: any server speaking Chat Completions; free when it runs on this host
    (`--local-server`, which its settings record)."""

    name = PROVIDER
    OPTIONS = {"base_url": None, "dialect": "openai", "local_server": False}
    FLAGS = "--base-url, --local-server and --server-dialect"
    REFUSED_ELSEWHERE = ("base_url", "dialect", "local_server")
    ADAPTER = OpenAICompatibleSampler

    @classmethod
    def free_for(cls, sampling) -> bool:
        return (sampling or {}).get("local_server") == 1

    def settings(self):
        return settings(self.temperature_milli, self.options.seed, self.own["dialect"], self.own["local_server"])

    def base_url(self):
        given = self.own["base_url"]
        if self.options.offline and not (given or self.environ.get(BASE_URL_VARIABLE)):
            return None
        return base_url(given, self.environ)

    def service_config(self):
        return config(self.url, self.environ)

    def make_client(self, **kwargs):
        return client(self.url, **kwargs)

    def preflight(self, model, where):
        return preflight(model, self.client, self.url)
