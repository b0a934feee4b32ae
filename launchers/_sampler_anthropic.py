"""The Anthropic sampler (`--sampler anthropic --model <id>`): the Messages API
through the `anthropic` SDK (requirements.lock).

Structured output: the GA `output_config.format` (`{"type": "json_schema",
"schema": ...}`) of the Messages API, not a forced tool -- the pinned SDK
(0.125) has it on `messages.create`. The schema is the day's grammar in its
portable form (_sampler_api), passed through the SDK's own `transform_schema`
(what it cannot express goes into descriptions, as the SDK does). The system
prompt is a text block marked `cache_control: {"type": "ephemeral"}` (prompt
caching; Anthropic caches it only past the model's minimum prompt length).
The key is `ANTHROPIC_API_KEY` (an `sk-ant-` key), from the environment only;
`ANTHROPIC_BASE_URL` names another endpoint (recorded without credentials or
query). Usage: `input_tokens` (uncached), `cache_read_input_tokens` (charged
at the cached-input rate) and `cache_creation_input_tokens` (a cache write,
billed by Anthropic at 1.25 times the input rate: charged here as input plus a
quarter as many tokens again, rounded up, so the ledger never understates).
"""

import os
import re

from . import _sampler_api as api
from ._errors import InputError
from ._providers import CHOICES
from ._sampling import Completion
from .worker import prompt

PROVIDER = "anthropic"
KEY_VARIABLE = "ANTHROPIC_API_KEY"
KEY_SHAPE = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,4000}"),
    "an Anthropic key (expected 'sk-ant-' followed by letters, digits, '-' and '_')",
)
DEFAULT_BASE_URL = "https://api.anthropic.com"
STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "refusal": "refusal"}


EFFORTS = CHOICES["effort"]


def settings(temperature_milli=0, effort="none") -> dict:
    """The recorded settings; `effort` (the Messages API's output_config.effort, seed 002's "effort = low") is
    recorded only when sent, so the settings of an attempt without it keep their bytes and hash."""
    if not isinstance(temperature_milli, int) or not 0 <= temperature_milli <= 1000:
        raise InputError(f"--temperature-milli {temperature_milli}: Anthropic takes a temperature from 0 to 1000")
    if effort not in EFFORTS:
        raise InputError(f"--effort {effort!r}: expected one of {', '.join(EFFORTS)}")
    out = {
        "api": "messages",
        "output_format": "output_config json_schema",
        "system_cache": "ephemeral",
        "temperature_milli": temperature_milli,
        "prompt": prompt.PROMPT_VERSION,
        "grammar": api.SCHEMA_VERSION,
    }
    return dict(out, effort=effort) if effort != "none" else out


def config(environ=None) -> dict:
    environ = os.environ if environ is None else environ
    api.check_key(environ, KEY_VARIABLE, PROVIDER, KEY_SHAPE)
    base = environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
    return {
        "base_url": api.recorded_url(base, "ANTHROPIC_BASE_URL"),
        "key_variable": KEY_VARIABLE,
        "sdk": f"anthropic {api.sdk_version('anthropic')}",
    }


def client(environ=None, http_client=None, deadline_s=120):
    environ = os.environ if environ is None else environ
    anthropic = api.sdk("anthropic")
    return anthropic.Anthropic(
        api_key=environ[KEY_VARIABLE],
        base_url=environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL,
        max_retries=0,
        timeout=deadline_s,
        http_client=http_client,
    )


def output_schema(portable):
    from anthropic.lib._parse._transform import transform_schema

    return transform_schema(portable)


def request_body(model_id, sampling, prepared) -> dict:
    """The keyword arguments of messages.create for one prepared call."""
    system, rest = api.split_system(prepared.messages)
    output_config = {"format": {"type": "json_schema", "schema": output_schema(prepared.payload["portable"])}}
    if sampling.get("effort", "none") != "none":
        output_config["effort"] = sampling["effort"]
    return {
        "model": model_id,
        "max_tokens": prepared.max_tokens,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": rest,
        "temperature": sampling["temperature_milli"] / 1000,
        "output_config": output_config,
    }


def usage_tokens(usage):
    """(tokens_in, cached_in): every prompt token (uncached, read from cache, written to it, the write's
    surcharge as a quarter more tokens, rounded up) and those read from the cache."""
    read = int(getattr(usage, "cache_read_input_tokens", None) or 0)
    written = int(getattr(usage, "cache_creation_input_tokens", None) or 0)
    return int(usage.input_tokens) + read + written + -(-written // 4), read


class AnthropicSampler(api.ApiSampler):
    provider = PROVIDER

    def __init__(self, model_id, sampling, client, config):
        super().__init__(model_id, sampling, client, config)
        self.sdk = api.sdk("anthropic")

    def request(self, prepared, deadline_s) -> Completion:
        msg = self.client.messages.create(**request_body(self.model_id, self.sampling, prepared), timeout=deadline_s)
        self._note_model(msg.model)
        text = "".join(block.text for block in msg.content or [] if getattr(block, "type", None) == "text")
        tokens_in, cached = usage_tokens(msg.usage)
        thinking = getattr(getattr(msg.usage, "output_tokens_details", None), "thinking_tokens", None)
        return Completion(
            text,
            tokens_in,
            int(msg.usage.output_tokens),
            STOP.get(msg.stop_reason, str(msg.stop_reason)),
            cache_hit_tokens=cached,
            reasoning_tokens=thinking,
        )


def preflight(model_id, client, base_url):
    """GET /v1/models/{model}: the key is accepted and the model served, before anything is consumed. Free."""
    anthropic = api.sdk("anthropic")
    try:
        found = client.models.retrieve(model_id)
    except anthropic.APIError as exc:
        raise api.preflight_error(
            PROVIDER, exc, anthropic, KEY_VARIABLE, model_id, base_url, secret=api.client_key(client)
        ) from None
    return getattr(found, "id", None)


class Anthropic(api.ApiProvider):
    """`--sampler anthropic`: the Messages API."""

    name = PROVIDER
    OPTIONS = {"effort": "none"}
    FLAGS = "--effort"
    REFUSED_ELSEWHERE = ("effort",)
    ADAPTER = AnthropicSampler

    def settings(self):
        return settings(self.temperature_milli, self.own["effort"])

    def service_config(self):
        return config(self.environ)

    def make_client(self, **kwargs):
        return client(**kwargs)

    def preflight(self, model, where):
        return preflight(model, self.client, where)
