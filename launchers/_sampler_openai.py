"""The OpenAI sampler (`--sampler openai --model <id>`): the Responses API through
the `openai` SDK (3.x on httpx2, requirements.lock).

Each call is one `client.responses.create` with `store=False` (nothing kept at
OpenAI), the day's answer schema as a strict `json_schema` text format (the
grammar of launchers/_grammar.py in its portable form, _sampler_api), low
reasoning effort (`--reasoning-effort`, recorded), `max_output_tokens` (the
call's max_tokens: reasoning tokens count against it, as OpenAI bills them) and
a `prompt_cache_key` (the system prompt's sha256, so a prompt's calls share
OpenAI's prefix cache). No temperature is sent: the reasoning models refuse one.
The key is `OPENAI_API_KEY` (an `sk-` key), read from the environment only;
`OPENAI_BASE_URL` (recorded without credentials or query) names another
endpoint. Usage comes from the response: `input_tokens`, `output_tokens` and
`input_tokens_details.cached_tokens` (charged at the cached-input rate).
"""

import os
import re

from . import _sampler_api as api
from ._errors import InputError
from ._providers import CHOICES
from ._provider import OptionRefused
from ._sampling import Completion
from .worker import prompt

PROVIDER = "openai"
KEY_VARIABLE = "OPENAI_API_KEY"
KEY_SHAPE = (
    re.compile(r"sk-[A-Za-z0-9_\-]{16,4000}"),
    "an OpenAI key (expected 'sk-' followed by letters, digits, '-' and '_')",
)
DEFAULT_BASE_URL = "https://api.openai.com/v1"
EFFORTS = CHOICES["reasoning_effort"]  # "none": no reasoning parameter sent (a non-reasoning model)


def settings(reasoning_effort="low") -> dict:
    if reasoning_effort not in EFFORTS:
        raise InputError(f"--reasoning-effort {reasoning_effort!r}: expected one of {', '.join(EFFORTS)}")
    return {
        "api": "responses",
        "store": "false",
        "text_format": "json_schema strict",
        "reasoning_effort": reasoning_effort,
        "prompt_cache_key": "system prompt sha256",
        "prompt": prompt.PROMPT_VERSION,
        "grammar": api.SCHEMA_VERSION,
    }


def config(environ=None) -> dict:
    """The key (presence and shape) and the endpoint, checked before a claim is consumed; nothing recorded of
    the key but its variable's name."""
    environ = os.environ if environ is None else environ
    api.check_key(environ, KEY_VARIABLE, PROVIDER, KEY_SHAPE)
    base = environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    return {
        "base_url": api.recorded_url(base, "OPENAI_BASE_URL"),
        "key_variable": KEY_VARIABLE,
        "sdk": f"openai {api.sdk_version('openai')}",
    }


def client(environ=None, http_client=None, deadline_s=120):
    environ = os.environ if environ is None else environ
    openai = api.sdk("openai")
    return openai.OpenAI(
        api_key=environ[KEY_VARIABLE],
        base_url=environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
        max_retries=0,
        timeout=deadline_s,
        http_client=http_client,
    )


def request_body(model_id, sampling, prepared) -> dict:
    """The keyword arguments of responses.create for one prepared call (what the tests compare, byte for byte)."""
    schema = prepared.payload["portable"]
    body = {
        "model": model_id,
        "input": [{"role": m["role"], "content": m["content"]} for m in prepared.messages],
        "store": False,
        "max_output_tokens": prepared.max_tokens,
        "prompt_cache_key": api.prompt_cache_key(prepared.messages),
        "text": {"format": {"type": "json_schema", "name": api.schema_name(schema), "schema": schema, "strict": True}},
    }
    if sampling["reasoning_effort"] != "none":
        body["reasoning"] = {"effort": sampling["reasoning_effort"]}
    return body


def read_response(resp):
    """(text, stop_reason): the output text, or the refusal's text with stop_reason "refusal"; "length" when the
    answer was cut at max_output_tokens."""
    texts, refusal = [], None
    for item in resp.output or []:
        if getattr(item, "type", None) != "message":
            continue
        for part in item.content or []:
            if part.type == "output_text":
                texts.append(part.text)
            elif part.type == "refusal":
                refusal = part.refusal
    if refusal is not None and not texts:
        return refusal, "refusal"
    if resp.status == "incomplete":
        reason = getattr(resp.incomplete_details, "reason", None)
        return "".join(texts), "length" if reason == "max_output_tokens" else str(reason or "incomplete")
    return "".join(texts), "stop"


class OpenAISampler(api.ApiSampler):
    provider = PROVIDER

    def __init__(self, model_id, sampling, client, config):
        super().__init__(model_id, sampling, client, config)
        self.sdk = api.sdk("openai")

    def request(self, prepared, deadline_s) -> Completion:
        resp = self.client.responses.create(**request_body(self.model_id, self.sampling, prepared), timeout=deadline_s)
        self._note_model(resp.model)
        text, stop = read_response(resp)
        usage = resp.usage
        cached = getattr(getattr(usage, "input_tokens_details", None), "cached_tokens", 0) or 0
        reasoning = getattr(getattr(usage, "output_tokens_details", None), "reasoning_tokens", None)
        return Completion(
            text,
            int(usage.input_tokens),
            int(usage.output_tokens),
            stop,
            cache_hit_tokens=min(int(cached), int(usage.input_tokens)),
            reasoning_tokens=reasoning,
        )


def preflight(model_id, client, base_url):
    """GET /models/{model}: the key is accepted and the model served, before anything is consumed. Free."""
    openai = api.sdk("openai")
    try:
        found = client.models.retrieve(model_id)
    except openai.APIError as exc:
        raise api.preflight_error(
            PROVIDER, exc, openai, KEY_VARIABLE, model_id, base_url, secret=api.client_key(client)
        ) from None
    return getattr(found, "id", None)


class OpenAI(api.ApiProvider):
    """`--sampler openai`: the Responses API; it sends no temperature (reasoning models refuse one)."""

    name = PROVIDER
    OPTIONS = {"reasoning_effort": "low"}
    FLAGS = "--reasoning-effort"
    REFUSED_ELSEWHERE = ("reasoning_effort",)
    ADAPTER = OpenAISampler

    @classmethod
    def check_temperature(cls, temperature_milli):
        if temperature_milli is not None and temperature_milli != cls.DEFAULT_TEMPERATURE:
            raise OptionRefused(
                "--temperature-milli: the openai sampler sends no temperature (reasoning models "
                "refuse one); set --reasoning-effort"
            )

    def settings(self):
        return settings(self.own["reasoning_effort"])

    def service_config(self):
        return config(self.environ)

    def make_client(self, **kwargs):
        return client(**kwargs)

    def preflight(self, model, where):
        return preflight(model, self.client, where)
