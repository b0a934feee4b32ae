"""The three HTTP API samplers at the HTTP seam: the real `openai` and `anthropic` SDK clients over a mock
transport that answers recorded responses (openai 3.x runs on httpx2, so httpx2.MockTransport; anthropic 0.x on
httpx, so httpx.MockTransport). No key, no network: every request the SDK would send is
captured and compared, every answer comes from the handler. Covered: the exact request bodies, a normal answer,
a refusal, a truncated answer, 429 then success, 529 overloaded to capacity_block, an auth error (one line,
nothing consumed), cached-token accounting, answers of another shape (a failed call, the reservation a liability), a replay at zero cost, and the record (provider, reported model,
base URL without credentials, SDK version; no key anywhere)."""

import json
import os

import httpx
import httpx2
import jsonschema
import pytest

import engine
from tests.launchers.specs import api_factory
from tests.launchers.specs import execute_kw as execute
from launchers._budget import Planned, attempt_plan
from launchers._claims import Grant, authorise
from launchers._controller import BACKOFF_MS, Limits
from launchers._errors import CallTimeout, CapacityError, InputError, SamplerError
from launchers._prices import call_cost, load_prices, model_price
from launchers._sampler_api import portable_schema, recorded_url, reserve_tokens
from launchers._sandbox_local import LocalSandbox
from launchers._verify import verify_attempt
from launchers.worker import prompt

from .conftest import schema_valid

OPENAI_KEY = "sk-test-" + "k" * 40
ANTHROPIC_KEY = "sk-ant-test-" + "a" * 40
SERVER_KEY = "local-secret-" + "s" * 20
KEYS = {"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
WORLD = {"family": "FUND_03", "seed": 1, "horizon": 2}


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch):
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "FUNDBOOK_OPENAI_BASE_URL",
        "FUNDBOOK_OPENAI_COMPATIBLE_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


# -- recorded responses ---------------------------------------------------------------------------------------


def conversation(body):
    """The conversation a request carries, as the worker wrote it (system first)."""
    if "input" in body:
        return body["input"]
    if "system" in body:
        return [{"role": "system", "content": body["system"][0]["text"]}] + body["messages"]
    return body["messages"]


def no_action_answer(body):
    """Today's batch with no action and the truthful report (what the `project` tool said): always accepted."""
    view = prompt.view_in(conversation(body))
    return json.dumps({"day": view["day"], "actions": [], "report": view["report_if_no_action"]})


def openai_response(text, model="gpt-5.4-mini-2026-03-17", tokens=(1500, 1024, 200), status="completed", refusal=None):
    content = (
        [{"type": "refusal", "refusal": refusal}]
        if refusal
        else [{"type": "output_text", "text": text, "annotations": []}]
    )
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": model,
        "status": status,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": status, "content": content},
        ],
        "usage": {
            "input_tokens": tokens[0],
            "input_tokens_details": {"cached_tokens": tokens[1]},
            "output_tokens": tokens[2],
            "output_tokens_details": {"reasoning_tokens": 64},
            "total_tokens": tokens[0] + tokens[2],
        },
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
    }


def anthropic_response(text, model="claude-haiku-4-5-20251001", stop="end_turn", usage=(300, 1200, 0, 150)):
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage[0],
            "cache_read_input_tokens": usage[1],
            "cache_creation_input_tokens": usage[2],
            "output_tokens": usage[3],
        },
    }


def chat_response(text, model="SmolLM2-135M-Instruct.Q4_1", finish="stop", usage=(900, 120, 0)):
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
            "prompt_tokens_details": {"cached_tokens": usage[2]},
        },
    }


def http_module(kind):
    """The HTTP library the kind's SDK sends through: anthropic 0.x httpx, openai 3.x httpx2."""
    return httpx if kind == "anthropic" else httpx2


class Provider:
    """A recorded provider: the model endpoint answers, each generation request is answered by the next item of
    `script` (a status code, or a function of the request body returning a JSON answer), the last one repeating."""

    def __init__(self, kind, script=None, model="m", models_status=200):
        self.kind, self.model, self.models_status = kind, model, models_status
        self.http = http_module(kind)
        self.script = list(script or ["ok"])
        self.requests = []  # (method, path, headers, body) of every request seen

    def answer(self, body):
        if self.kind == "openai":
            return openai_response(no_action_answer(body))
        if self.kind == "anthropic":
            return anthropic_response(no_action_answer(body))
        return chat_response(no_action_answer(body), model=body["model"])

    def __call__(self, request):
        body = json.loads(request.content) if request.content else None
        self.requests.append((request.method, request.url.path, dict(request.headers), body, str(request.url)))
        if request.method == "GET":
            if self.models_status != 200:
                return self.http.Response(
                    self.models_status, json={"error": {"type": "authentication_error", "message": "invalid x-api-key"}}
                )
            if request.url.path.endswith("/models"):
                return self.http.Response(
                    200,
                    json={
                        "object": "list",
                        "data": [{"id": self.model, "object": "model", "created": 1, "owned_by": "me"}],
                    },
                )
            return self.http.Response(
                200,
                json={
                    "id": request.url.path.rsplit("/", 1)[1],
                    "object": "model",
                    "type": "model",
                    "created": 1,
                    "owned_by": "openai",
                    "display_name": "m",
                    "created_at": "2026-01-01T00:00:00Z",
                },
            )
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, int):
            kind = {529: "overloaded_error", 429: "rate_limit_error"}.get(step, "api_error")  # as the APIs type them
            return self.http.Response(step, json={"type": "error", "error": {"type": kind, "message": "busy"}})
        if step == "ok":
            return self.http.Response(200, json=self.answer(body))
        answer = step(body)
        return answer if isinstance(answer, self.http.Response) else self.http.Response(200, json=answer)

    def generations(self):
        return [r for r in self.requests if r[0] == "POST"]


def factory(name, provider, model, environ=None, **kw):
    http = http_module(name)
    client = http.Client(transport=http.MockTransport(provider))
    return api_factory(
        name, None, 120, environ=dict(KEYS) if environ is None else environ, model=model, http_client=client, **kw
    )


def run(
    tmp_path, name, provider, model, prices=None, local=False, environ=None, sleep=None, label="a", limits=None, **kw
):
    """Authorise and run one attempt through the sampler (local sandbox, a private state and project)."""
    prices = prices or load_prices()
    state, project = str(tmp_path / "state"), str(tmp_path / "project")
    claim = str(tmp_path / f"claim-{label}.json")
    plan = (
        None
        if local
        else attempt_plan(
            prices, model, Planned(sandbox="local", max_tokens=1024, max_calls=60, checkpoints=WORLD["horizon"])
        )
    )
    authorise(
        claim,
        WORLD["family"],
        "public-practice",
        model,
        10**12,
        10**9,
        1,
        grant=Grant(state=state, plan=plan, local=local, project=project),
    )
    build = factory(name, provider, model, environ=environ, **kw)
    out = str(tmp_path / label)
    record = execute(
        claim_path=claim,
        out=out,
        family=WORLD["family"],
        seed=WORLD["seed"],
        split="public-practice",
        model=model,
        sampler_name=name,
        sandbox_name="local",
        make_sampler=build,
        make_sandbox=LocalSandbox,
        prices=prices,
        limits=limits or Limits(3600, 120, 1024, 60),
        horizon=WORLD["horizon"],
        state=state,
        project=project,
        sampling=build.sampling,
        sandbox_config={"name": "local"},
        environ=dict(KEYS) if environ is None else environ,
        sleep=sleep or (lambda s: None),
    )
    return record, out, claim, state, project


def model_steps(out):
    with open(os.path.join(out, "transcript.json"), encoding="utf-8") as fh:
        return [s for s in json.load(fh)["steps"] if s["role"] == "model"]


def tree_text(out):
    text = ""
    for folder, _, files in os.walk(out):
        for f in files:
            with open(os.path.join(folder, f), "rb") as fh:
                text += fh.read().decode("utf-8", "replace")
    return text


# -- OpenAI: the Responses API ------------------------------------------------------------------------------------


def test_openai_request_body_is_exactly_the_protocols(tmp_path):
    provider = Provider("openai")
    record, out, *_ = run(tmp_path, "openai", provider, "gpt-5.4-mini")
    assert record["content"]["termination"]["status"] == "completed"
    method, path, headers, body, _ = provider.generations()[0]
    assert (method, path) == ("POST", "/v1/responses")
    assert headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert sorted(body) == ["input", "max_output_tokens", "model", "prompt_cache_key", "reasoning", "store", "text"]
    assert body["model"] == "gpt-5.4-mini" and body["store"] is False and body["max_output_tokens"] == 1024
    assert body["reasoning"] == {"effort": "low"} and "temperature" not in body
    fmt = body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["strict"] is True and fmt["name"].startswith("fundbook_batch_")
    assert [m["role"] for m in body["input"]] == ["system", "user"] and body["input"][0]["content"] == prompt.SYSTEM
    import hashlib

    assert body["prompt_cache_key"] == "fundbook-" + hashlib.sha256(prompt.SYSTEM.encode()).hexdigest()[:24]
    # the schema is the day's grammar in its portable form, and today's no-action batch is valid under it
    view = prompt.view_in(body["input"])
    from launchers._grammar import batch_schema

    assert fmt["schema"] == portable_schema(batch_schema(view))
    jsonschema.validate(json.loads(no_action_answer(body)), fmt["schema"])
    # every call a checkpoint went out once: two checkpoints, two requests, each the same cache key
    assert len(provider.generations()) == 2
    assert len({r[3]["prompt_cache_key"] for r in provider.generations()}) == 1


def test_openai_usage_settles_the_ledger_with_cached_input_at_the_cached_rate(tmp_path):
    record, out, *_ = run(tmp_path, "openai", Provider("openai"), "gpt-5.4-mini")
    c = record["content"]
    price = model_price(load_prices(), "gpt-5.4-mini")
    charges = [e for e in c["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"]
    assert [(e["tokens_in"], e["cached_tokens_in"], e["tokens_out"]) for e in charges] == [(1500, 1024, 200)] * 2
    # 476 x 750,000 + 1,024 x 75,000 + 200 x 4,500,000 = 1,333,800,000 micro-USD per Mtok: 1,334 a call (rounded up)
    assert [e["micro_usd"] for e in charges] == [call_cost(price, 1500, 200, 1024)] * 2 == [1334, 1334]
    assert c["cost"]["micro_usd"] == 2668 and c["prices"]["model"] == price
    # reserved before each call: the prompt's bytes (an upper bound on its tokens) plus max_tokens
    reserves = [e for e in c["ledger"]["entries"] if e["kind"] == "reserve" and e["account"] == "inference"]
    assert all(e["tokens_out"] == 1024 and e["tokens_in"] > 1500 for e in reserves)
    steps = model_steps(out)
    assert [s["call"]["prompt_cache_hit_tokens"] for s in steps] == [1024, 1024]


def test_the_record_names_provider_reported_model_base_url_and_sdk_and_never_the_key(tmp_path):
    import openai

    record, out, *_ = run(tmp_path, "openai", Provider("openai"), "gpt-5.4-mini")
    c = record["content"]
    assert c["model"] == {"id": "gpt-5.4-mini", "provider": "openai"} and c["label"] == "model"
    assert openai.__version__.startswith("3.")  # the one openai of the venv, the samplers' and Inspect's alike
    assert c["service"] == {
        "base_url": "https://api.openai.com/v1",
        "key_variable": "OPENAI_API_KEY",
        "sdk": f"openai {openai.__version__}",
        "model_preflight": "gpt-5.4-mini",
        "provider": "openai",
        "model_reported": ["gpt-5.4-mini-2026-03-17"],
    }
    assert c["sampling"]["store"] == "false" and c["sampling"]["reasoning_effort"] == "low"
    assert OPENAI_KEY not in tree_text(out) and "sk-test" not in tree_text(out)
    verify_attempt(os.path.join(out, "record.json"), project=str(tmp_path / "project"))
    schema_valid(out)


def test_an_attempt_replays_from_its_own_cache_at_zero_cost_with_no_provider(tmp_path):
    from launchers._rederive import rederive

    record, out, *_ = run(tmp_path, "openai", Provider("openai"), "gpt-5.4-mini")
    assert record["content"]["outputs"]["cache"]["path"] == "cache.jsonl"
    done = rederive(os.path.join(out, "record.json"))  # a cache-only replay: no client, no key
    assert done["answers"] == 2 and done["receipts_head"] == record["content"]["receipts_head"]


def test_a_refusal_is_recorded_refused_and_retried(tmp_path):
    refused = lambda body: openai_response("", refusal="I can't help with that.", tokens=(1500, 0, 12))  # noqa: E731
    provider = Provider("openai", [refused, "ok"])
    record, out, *_ = run(tmp_path, "openai", provider, "gpt-5.4-mini")
    steps = model_steps(out)
    assert steps[0]["call"]["stop_reason"] == "refusal" and steps[0]["text"] == "I can't help with that."
    assert record["content"]["invalid_artefacts"] == 1 and record["content"]["termination"]["status"] == "completed"
    retry = provider.generations()[1][3]["input"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[3]["content"].startswith("Refused: ")


def test_a_truncated_answer_says_length_and_is_charged_whole(tmp_path):
    cut = lambda body: openai_response('{"day": 1, "act', status="incomplete", tokens=(1500, 0, 1024))  # noqa: E731
    record, out, *_ = run(tmp_path, "openai", Provider("openai", [cut, "ok"]), "gpt-5.4-mini")
    first = model_steps(out)[0]["call"]
    assert first["stop_reason"] == "length" and first["tokens_out"] == 1024
    assert first["micro_usd"] == call_cost(model_price(load_prices(), "gpt-5.4-mini"), 1500, 1024, 0)


def test_a_429_is_backed_off_on_the_recorded_schedule_then_answered(tmp_path):
    waits = []
    record, out, *_ = run(tmp_path, "openai", Provider("openai", [429, "ok"]), "gpt-5.4-mini", sleep=waits.append)
    assert record["content"]["termination"]["status"] == "completed"
    assert waits == [BACKOFF_MS[0] / 1000]
    first = model_steps(out)[0]["call"]
    assert first["backoff_ms"][0]["wait_ms"] == 1000 and "HTTP 429" in first["backoff_ms"][0]["error"]


def test_anthropic_529_overloaded_ends_capacity_block_after_the_schedule(tmp_path):
    waits = []
    record, out, *_ = run(tmp_path, "anthropic", Provider("anthropic", [529]), "claude-haiku-4-5", sleep=waits.append)
    t = record["content"]["termination"]
    assert t["status"] == "capacity_block" and t["limit"] == "capacity"
    assert [w["wait_ms"] for w in t["capacity_block"]["backoff_ms"]] == list(BACKOFF_MS)
    assert waits == [w / 1000 for w in BACKOFF_MS]
    assert "overloaded_error" in t["capacity_block"]["error"]
    assert record["content"]["cost"]["unresolved_calls"] == [1]  # its reservation stays a liability


def test_a_timeout_is_a_call_timeout_and_a_server_error_a_failed_call():
    build = factory(
        "openai", Provider("openai", [lambda b: (_ for _ in ()).throw(httpx2.ReadTimeout("slow"))]), "gpt-5.4-mini"
    )
    sampler = build("gpt-5.4-mini").inner
    messages = prompt_messages()
    with pytest.raises(CallTimeout):
        sampler.sample(sampler.prepare(messages, 64), 5)
    sampler = factory("openai", Provider("openai", [500]), "gpt-5.4-mini")("gpt-5.4-mini").inner
    with pytest.raises(SamplerError) as err:
        sampler.sample(sampler.prepare(messages, 64), 5)
    assert not isinstance(err.value, CapacityError) and "HTTP 500" in err.value.format_message()


def prompt_messages():
    return prompt_messages_for("FUND_03")


# -- a server that answers 200 with another shape ------------------------------------------------------------------


def _html(kind):
    return lambda body: http_module(kind).Response(
        200, content=b"<html><body>502 Bad Gateway</body></html>", headers={"content-type": "text/html"}
    )


def _with(make, **changes):
    """A recorded answer of `make` with top-level fields replaced (None: removed)."""

    def answer(body):
        out = make(body)
        for key, value in changes.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
        return out

    return answer


def _chat(body):
    return chat_response(no_action_answer(body), model=body["model"])


def _resp(body):
    return openai_response(no_action_answer(body))


def _msg(body):
    return anthropic_response(no_action_answer(body))


HOSTILE_ANSWERS = {
    "openai-compatible": {
        "no choices": _with(_chat, choices=[]),
        "no usage": _with(_chat, usage=None),
        "negative usage": _with(_chat, usage={"prompt_tokens": -900, "completion_tokens": 5}),
        "usage not a number": _with(_chat, usage={"prompt_tokens": "lots", "completion_tokens": 5}),
        "usage beyond any count": _with(_chat, usage={"prompt_tokens": 10**12, "completion_tokens": 5}),
        "text a number": lambda body: dict(
            _chat(body), choices=[{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": 7}}]
        ),
        "an html page": _html("openai-compatible"),
        "a JSON list": lambda body: [1, 2, 3],
        "a text past any answer": lambda body: dict(
            _chat(body),
            choices=[
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "x" * (1 << 20 | 1)}}
            ],
        ),
    },
    "openai": {
        "no usage": _with(_resp, usage=None),
        "negative output": _with(_resp, usage={"input_tokens": 10, "output_tokens": -1}),
        "an html page": _html("openai"),
    },
    "anthropic": {
        "no usage": _with(_msg, usage=None),
        "text a list": _with(_msg, content=[{"type": "text", "text": ["a"]}]),
        "an html page": _html("anthropic"),
    },
}
HOSTILE_CASES = [(kind, case) for kind, cases in HOSTILE_ANSWERS.items() for case in cases]
MODELS = {"openai": "gpt-5.4-mini", "anthropic": "claude-haiku-4-5", "openai-compatible": "m"}


@pytest.mark.parametrize("kind,case", HOSTILE_CASES)
def test_an_answer_of_another_shape_is_a_failed_call_in_one_line(kind, case):
    """The SDKs do not validate answers: the sampler does, so the ledger never books a count that is not one."""
    provider = Provider(kind, [HOSTILE_ANSWERS[kind][case]], model=MODELS[kind])
    sampler = factory(kind, provider, MODELS[kind], base_url="http://127.0.0.1:9/v1")(MODELS[kind]).inner
    with pytest.raises(SamplerError) as err:
        sampler.sample(sampler.prepare(prompt_messages(), 64), 5)
    message = err.value.format_message()
    assert not isinstance(err.value, (CapacityError, CallTimeout)) and message.startswith(f"{kind}: ")
    assert "\n" not in message and len(message) < 400


def test_a_server_that_answers_another_shape_leaves_the_reservation_a_liability_and_the_record_verifies(tmp_path):
    provider = Provider("openai-compatible", [_with(_chat, usage={"prompt_tokens": -5, "completion_tokens": 1}), "ok"])
    record, out, *_ = run(
        tmp_path, "openai-compatible", provider, "m", local=True, base_url="http://127.0.0.1:9/v1", local_server=True
    )
    c = record["content"]
    assert c["termination"]["status"] == "completed"
    unresolved = [e for e in c["ledger"]["entries"] if e["kind"] == "unresolved"]
    assert [e["call"] for e in unresolved] == [1]
    assert "the answer's usage tokens_in is '-5', not a count" in unresolved[0]["note"]
    with open(os.path.join(out, "transcript.json"), encoding="utf-8") as fh:
        failed = [s for s in json.load(fh)["steps"] if s.get("call", {}).get("outcome") == "call_failed"]
    assert [s["call"]["index"] for s in failed] == [1]
    assert c["cost"]["unresolved_calls"] == [1]  # what a malformed answer cost is not known: its reservation stands
    charges = [e for e in c["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"]
    assert all(e["tokens_in"] >= 0 and e["tokens_out"] >= 0 for e in charges)
    verify_attempt(os.path.join(out, "record.json"), project=str(tmp_path / "project"))


def _echo(kind, status, key):
    """An error answer whose message echoes the key, as OpenAI's 401 does (partly masked) and a server may whole."""
    return lambda body: http_module(kind).Response(
        status,
        json={
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"Incorrect API key provided: {key}. Also sk-proj-abcdef123456",
            },
        },
    )


@pytest.mark.parametrize(
    "kind,key_var,key",
    [
        ("openai", "OPENAI_API_KEY", OPENAI_KEY),
        ("anthropic", "ANTHROPIC_API_KEY", ANTHROPIC_KEY),
        ("openai-compatible", "FUNDBOOK_OPENAI_COMPATIBLE_API_KEY", SERVER_KEY),
    ],
)
@pytest.mark.parametrize("status", [401, 500, 429])
def test_an_error_that_echoes_the_key_is_redacted(kind, key_var, key, status):
    environ = dict(KEYS, **{key_var: key})
    provider = Provider(kind, [_echo(kind, status, key)], model=MODELS[kind])
    sampler = factory(kind, provider, MODELS[kind], environ=environ, base_url="http://127.0.0.1:9/v1")(
        MODELS[kind]
    ).inner
    with pytest.raises(SamplerError) as err:
        sampler.sample(sampler.prepare(prompt_messages(), 64), 5)
    message = err.value.format_message()
    assert key not in message and "sk-proj-abcdef123456" not in message
    assert "Incorrect API key provided: [key]" in message
    assert isinstance(err.value, CapacityError) == (status == 429)


@pytest.mark.parametrize("kind", ["openai", "anthropic", "openai-compatible"])
def test_an_error_type_with_newlines_and_markup_is_one_line(kind):
    hostile = lambda body: http_module(kind).Response(
        500,
        json={
            "type": "error",
            "error": {  # noqa: E731
                "type": "bad\n<script>alert(1)</script>\r\n" + "x" * 500,
                "message": "line one\nline two",
            },
        },
    )
    sampler = factory(
        kind, Provider(kind, [hostile], model=MODELS[kind]), MODELS[kind], base_url="http://127.0.0.1:9/v1"
    )(MODELS[kind]).inner
    with pytest.raises(SamplerError) as err:
        sampler.sample(sampler.prepare(prompt_messages(), 64), 5)
    message = err.value.format_message()
    assert "\n" not in message and "\r" not in message and len(message) < 400
    # every SDK's error type is read (anthropic keeps the JSON whole, openai unwraps it): flattened and cut
    assert message.startswith(f"{kind}: HTTP 500 bad <script>alert(1)</script> xxx")


def test_a_preflight_error_that_echoes_the_key_is_redacted():
    http = httpx2

    def handler(request):
        return http.Response(400, json={"error": {"type": "invalid_request_error", "message": f"bad key {SERVER_KEY}"}})

    environ = dict(KEYS, FUNDBOOK_OPENAI_COMPATIBLE_API_KEY=SERVER_KEY)
    with pytest.raises(InputError) as err:
        api_factory(
            "openai-compatible",
            None,
            120,
            environ=environ,
            model="m",
            http_client=http.Client(transport=http.MockTransport(handler)),
            base_url="http://127.0.0.1:9/v1",
        )
    assert SERVER_KEY not in err.value.format_message() and "bad key [key]" in err.value.format_message()


def test_a_server_that_echoes_the_key_as_its_answer_never_puts_it_in_the_record(tmp_path):
    environ = dict(KEYS, FUNDBOOK_OPENAI_COMPATIBLE_API_KEY=SERVER_KEY)
    echo = _with(
        _chat,
        choices=[
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": f"my key is {SERVER_KEY}"},
            }
        ],
    )
    provider = Provider("openai-compatible", [echo, "ok"])
    record, out, *_ = run(
        tmp_path,
        "openai-compatible",
        provider,
        "m",
        local=True,
        environ=environ,
        base_url="http://127.0.0.1:9/v1",
        local_server=True,
    )
    assert record["content"]["termination"]["status"] == "completed"
    assert model_steps(out)[0]["text"] == "my key is [key]"
    assert SERVER_KEY not in tree_text(out)
    verify_attempt(os.path.join(out, "record.json"), project=str(tmp_path / "project"))


@pytest.mark.parametrize(
    "kind,answer",
    [
        ("openai-compatible", {"object": "list", "data": [{"object": "model"}]}),  # a model without an id
        ("openai-compatible", {"object": "list", "data": 5}),
        ("openai", {"id": {"a": 1}, "object": "model"}),  # an id that is not a string
    ],
)
def test_a_preflight_answer_of_another_shape_is_one_line_and_nothing_is_consumed(kind, answer):
    http = http_module(kind)

    def handler(request):
        return http.Response(200, json=answer)

    client = http.Client(transport=http.MockTransport(handler))
    try:
        build = api_factory(
            kind,
            None,
            120,
            environ=dict(KEYS),
            model=MODELS[kind],
            http_client=client,
            base_url="http://127.0.0.1:9/v1" if kind != "openai" else None,
        )
    except InputError as err:
        message = err.format_message()
        assert "nothing was consumed" in message and "\n" not in message and len(message) < 400
    else:  # an id that is not a string is not recorded as the model the provider confirmed
        assert kind == "openai" and build.config["model_preflight"] is None


# -- keys and refusals before anything is consumed -----------------------------------------------------------------


@pytest.mark.parametrize(
    "name,var,value,expected",
    [
        ("openai", "OPENAI_API_KEY", None, "OPENAI_API_KEY: not set"),
        ("openai", "OPENAI_API_KEY", "pk-live-123", "OPENAI_API_KEY: not an OpenAI key"),
        ("openai", "OPENAI_API_KEY", "sk-" + "x" * 20 + " \n", "OPENAI_API_KEY: malformed"),
        ("anthropic", "ANTHROPIC_API_KEY", None, "ANTHROPIC_API_KEY: not set"),
        ("anthropic", "ANTHROPIC_API_KEY", "sk-" + "x" * 30, "ANTHROPIC_API_KEY: not an Anthropic key"),
        (
            "openai-compatible",
            "FUNDBOOK_OPENAI_COMPATIBLE_API_KEY",
            "two words",
            "FUNDBOOK_OPENAI_COMPATIBLE_API_KEY: malformed",
        ),
    ],
)
def test_a_missing_or_malformed_key_is_one_line_naming_the_variable_before_any_request(name, var, value, expected):
    provider = Provider(name)
    environ = {k: v for k, v in KEYS.items() if k != var}
    if value is not None:
        environ[var] = value
    for _ in range(2):  # the same refusal twice
        with pytest.raises(InputError) as err:
            factory(name, provider, "m", environ=environ, base_url="http://127.0.0.1:9/v1")
        assert err.value.format_message().startswith(expected) and "\n" not in err.value.format_message()
        assert (value or "sk-none") not in err.value.format_message()
    assert provider.requests == []


@pytest.mark.parametrize(
    "name,model,var",
    [("openai", "gpt-5.4-mini", "OPENAI_API_KEY"), ("anthropic", "claude-haiku-4-5", "ANTHROPIC_API_KEY")],
)
def test_an_auth_error_at_the_preflight_is_one_line_and_the_claim_stays_usable(tmp_path, name, model, var):
    refused = Provider(name, models_status=401)
    with pytest.raises(InputError) as err:
        run(tmp_path, name, refused, model, label="refused")
    assert err.value.format_message() == (
        f"{var}: the key was refused by "
        f"{'https://api.openai.com/v1' if name == 'openai' else 'https://api.anthropic.com'}"
        f" (HTTP 401); nothing was consumed"
    )
    assert refused.generations() == [] and not os.path.exists(tmp_path / "refused")
    # the claim was never consumed: the same claim runs once the key is accepted
    state, project = str(tmp_path / "state"), str(tmp_path / "project")
    build = factory(name, Provider(name), model)
    record = execute(
        claim_path=str(tmp_path / "claim-refused.json"),
        out=str(tmp_path / "ok"),
        split="public-practice",
        family=WORLD["family"],
        seed=WORLD["seed"],
        model=model,
        sampler_name=name,
        sandbox_name="local",
        make_sampler=build,
        make_sandbox=LocalSandbox,
        prices=load_prices(),
        limits=Limits(3600, 120, 1024, 60),
        horizon=2,
        state=state,
        project=project,
        sampling=build.sampling,
        sandbox_config={"name": "local"},
        environ=dict(KEYS),
    )
    assert record["content"]["termination"]["status"] == "completed"


def test_cli_refuses_a_missing_key_in_one_line_twice_before_the_claim(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from fundbook.cli.launch import cli

    monkeypatch.setenv("FUNDBOOK_LAUNCH_STATE", str(tmp_path / "state"))
    claim = str(tmp_path / "claim.json")
    authorise(
        claim,
        "FUND_01",
        "public-practice",
        "gpt-5.4-mini",
        10**12,
        10**9,
        1,
        grant=Grant(state=str(tmp_path / "state"), cap_sandbox_micro_usd=10**9),
    )
    outputs = []
    for _ in range(2):
        res = CliRunner().invoke(
            cli,
            [
                "execute",
                "--claim",
                claim,
                "--out",
                str(tmp_path / "a"),
                "--family",
                "FUND_01",
                "--seed",
                "1",
                "--sampler",
                "openai",
                "--model",
                "gpt-5.4-mini",
            ],
        )
        outputs.append((res.exit_code, res.output))
    assert outputs[0] == outputs[1] and outputs[0][0] == 1
    assert outputs[0][1].strip().splitlines() == [
        "error: OPENAI_API_KEY: not set: the openai sampler has no key (checked before the claim is spent)"
    ]
    with open(claim, encoding="utf-8") as fh:
        assert json.load(fh)["claim"]["scope"]["model"] == "gpt-5.4-mini"
    assert not os.path.exists(tmp_path / "a")


# -- Anthropic: the Messages API ------------------------------------------------------------------------------------


def test_anthropic_request_body_marks_the_system_prompt_for_caching_and_sets_the_output_format(tmp_path):
    provider = Provider("anthropic")
    record, out, *_ = run(tmp_path, "anthropic", provider, "claude-haiku-4-5")
    assert record["content"]["termination"]["status"] == "completed"
    method, path, headers, body, _ = provider.generations()[0]
    assert (method, path) == ("POST", "/v1/messages") and headers["x-api-key"] == ANTHROPIC_KEY
    assert sorted(body) == ["max_tokens", "messages", "model", "output_config", "system", "temperature"]
    assert body["model"] == "claude-haiku-4-5" and body["max_tokens"] == 1024 and body["temperature"] == 0
    assert body["system"] == [{"type": "text", "text": prompt.SYSTEM, "cache_control": {"type": "ephemeral"}}]
    assert [m["role"] for m in body["messages"]] == ["user"]
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    jsonschema.validate(json.loads(no_action_answer(body)), fmt["schema"])
    c = record["content"]
    assert c["model"]["provider"] == "anthropic" and c["service"]["model_reported"] == ["claude-haiku-4-5-20251001"]
    assert c["service"]["base_url"] == "https://api.anthropic.com" and c["service"]["sdk"].startswith("anthropic 0.")
    assert ANTHROPIC_KEY not in tree_text(out)


def test_anthropic_cache_reads_are_charged_at_the_cached_rate_and_writes_never_understated(tmp_path):
    usage = iter([(300, 0, 1200, 150), (300, 1200, 0, 150)])  # the first call writes the cache, the second reads it
    provider = Provider("anthropic", [lambda b: anthropic_response(no_action_answer(b), usage=next(usage))])
    record, out, *_ = run(tmp_path, "anthropic", provider, "claude-haiku-4-5")
    price = model_price(load_prices(), "claude-haiku-4-5")
    calls = [s["call"] for s in model_steps(out)]
    # a write: 300 + 1,200 + 300 (a quarter of the write, its 1.25x surcharge) input tokens; a read: 1,500, 1,200 cached
    assert [(c["tokens_in"], c["prompt_cache_hit_tokens"]) for c in calls] == [(1800, 0), (1500, 1200)]
    assert [c["micro_usd"] for c in calls] == [call_cost(price, 1800, 150, 0), call_cost(price, 1500, 150, 1200)]
    assert call_cost(price, 1800, 150, 0) >= -(-(300 * 1_000_000 + 1200 * 1_250_000 + 150 * 5_000_000) // 10**6)


# -- OpenAI-compatible: Chat Completions -----------------------------------------------------------------------------


def test_openai_compatible_sends_a_json_schema_response_format_and_records_the_url_without_credentials(tmp_path):
    provider = Provider("openai-compatible", model="my-model")
    environ = dict(KEYS, FUNDBOOK_OPENAI_COMPATIBLE_API_KEY=SERVER_KEY)
    prices = dict(
        load_prices(), models={"my-model": {"input_micro_usd_per_mtok": 100_000, "output_micro_usd_per_mtok": 200_000}}
    )
    record, out, *_ = run(
        tmp_path,
        "openai-compatible",
        provider,
        "my-model",
        prices=prices,
        environ=environ,
        base_url="http://user:pw@127.0.0.1:8080/v1",
    )
    c = record["content"]
    assert c["termination"]["status"] == "completed" and c["model"]["provider"] == "openai-compatible"
    method, path, headers, body, url = provider.generations()[0]
    assert path == "/v1/chat/completions"
    assert sorted(body) == ["max_tokens", "messages", "model", "response_format", "seed", "temperature"]
    assert body["temperature"] == 0 and body["seed"] == 0 and body["max_tokens"] == 1024
    assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"]
    assert (
        c["service"]["base_url"] == "http://127.0.0.1:8080/v1"
        and c["service"]["key_variable"] == "FUNDBOOK_OPENAI_COMPATIBLE_API_KEY"
    )
    assert c["sampling"]["local_server"] == 0 and c["cost"]["micro_usd"] == 2 * call_cost(
        prices["models"]["my-model"], 900, 120
    )
    text = tree_text(out)
    assert SERVER_KEY not in text and "pw@" not in text


def test_openai_compatible_sends_the_servers_key_from_its_own_variable():
    provider = Provider("openai-compatible", model="my-model")
    sampler = factory(
        "openai-compatible",
        provider,
        "my-model",
        base_url="http://127.0.0.1:8080/v1",
        environ=dict(KEYS, FUNDBOOK_OPENAI_COMPATIBLE_API_KEY=SERVER_KEY),
    )("my-model").inner
    sampler.sample(sampler.prepare(prompt_messages(), 64), 5)
    assert {r[2]["authorization"] for r in provider.requests} == {f"Bearer {SERVER_KEY}"}


def test_openai_compatible_never_sends_the_users_openai_key(tmp_path):
    provider = Provider("openai-compatible", model="my-model")
    run(
        tmp_path,
        "openai-compatible",
        provider,
        "my-model",
        local=True,
        local_server=True,
        base_url="http://127.0.0.1:8080/v1",
    )
    assert {r[2]["authorization"] for r in provider.requests} == {"Bearer no-key"}


def test_the_llama_cpp_python_dialect_sends_the_grammar_and_the_in_process_decoding(tmp_path):
    from launchers._grammar import batch_schema
    from launchers._sampler_llama import SETTINGS

    provider = Provider("openai-compatible", model="SmolLM2-135M-Instruct.Q4_1")
    record, out, *_ = run(
        tmp_path,
        "openai-compatible",
        provider,
        "SmolLM2-135M-Instruct.Q4_1",
        local=True,
        local_server=True,
        dialect="llama-cpp-python",
        base_url="http://127.0.0.1:8080/v1",
    )
    body = provider.generations()[0][3]
    assert body["response_format"] == {"type": "json_object", "schema": batch_schema(prompt.view_in(body["messages"]))}
    assert (body["top_k"], body["top_p"], body["min_p"], body["repeat_penalty"]) == (SETTINGS["top_k"], 0.95, 0.05, 1.0)
    c = record["content"]
    assert c["cost"]["micro_usd"] == 0 and c["prices"]["model"] == {
        "input_micro_usd_per_mtok": 0,
        "output_micro_usd_per_mtok": 0,
        "cached_input_micro_usd_per_mtok": 0,
    }
    assert c["sampling"]["local_server"] == 1 and c["sampling"]["dialect"] == "llama-cpp-python"
    verify_attempt(os.path.join(out, "record.json"), project=str(tmp_path / "project"))


def test_a_model_the_server_does_not_list_is_refused_before_the_claim():
    with pytest.raises(InputError) as err:
        factory(
            "openai-compatible",
            Provider("openai-compatible", model="other"),
            "mine",
            base_url="http://127.0.0.1:8080/v1",
        )
    assert err.value.format_message() == (
        "--model mine: http://127.0.0.1:8080/v1 does not list this model (it serves: other); nothing was consumed"
    )


@pytest.mark.parametrize(
    "url,recorded",
    [
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
        ("https://user:secret@api.example.com/openai/v1?key=abc#frag", "https://api.example.com/openai/v1"),
        ("http://[::1]:9/v1", "http://[::1]:9/v1"),
    ],
)
def test_a_base_url_is_recorded_without_credentials_query_or_fragment(url, recorded):
    assert recorded_url(url, "--base-url") == recorded


@pytest.mark.parametrize(
    "url", ["ftp://h/v1", "http:///v1", "127.0.0.1:8080", "http://h:99999/v1", "http://h/\n", "http://a b/v1", ""]
)
def test_a_bad_base_url_is_one_line(url):
    with pytest.raises(InputError) as err:
        recorded_url(url, "--base-url")
    assert err.value.format_message().startswith("--base-url: ") and "\n" not in err.value.format_message()


# -- the portable schema -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["FUND_01", "FUND_02", "FUND_03", "FUND_04"])
def test_the_portable_schema_has_only_what_strict_modes_take_and_accepts_the_no_action_batch(family):
    from launchers._grammar import batch_schema

    messages = prompt_messages_for(family)
    view = prompt.view_in(messages)
    schema = portable_schema(batch_schema(view))

    def walk(node):
        assert not {"prefixItems", "const", "minimum", "$schema", "minItems"} & set(node)
        assert "type" in node or "anyOf" in node, node
        for branch in node.get("anyOf", []):
            walk(branch)
        if node.get("type") == "object":
            assert node["additionalProperties"] is False and node["required"] == list(node["properties"])
            for v in node["properties"].values():
                walk(v)
        if node.get("type") == "array":
            walk(node["items"])

    walk(schema)
    answer = {"day": view["day"], "actions": [], "report": view["report_if_no_action"]}
    jsonschema.validate(answer, schema)
    jsonschema.validate(answer, batch_schema(view))
    assert portable_schema(batch_schema(view)) == schema  # pure
    assert reserve_tokens(messages) >= sum(len(m["content"]) for m in messages)


def prompt_messages_for(family, seed=1):
    """The opening conversation of day 1, as the worker writes it (the no-action projection included)."""
    from engine import _tools
    from launchers import _desk
    import tempfile

    instance = engine.generate(family, seed)
    history = engine.History(os.path.join(tempfile.mkdtemp(prefix="fundbook-view-"), "desk.sqlite"))
    _desk.init_history(history, instance, instance["horizon"], _desk.new_salt())
    packet = history.packet()
    return prompt.messages(packet, _tools.project(packet, [])["report"])


from hypothesis import given, settings, strategies as st  # noqa: E402

URL_PARTS = st.tuples(
    st.sampled_from(["http", "https", "ftp", ""]),
    st.text(max_size=12),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
    st.one_of(st.none(), st.integers(-5, 70000)),
    st.text(max_size=20),
    st.text(max_size=10),
    st.text(max_size=10),
)


@settings(max_examples=300, deadline=None)
@given(URL_PARTS)
def test_a_recorded_url_never_holds_credentials_query_or_fragment_and_is_stable(parts):
    scheme, user, host, port, path, query, fragment = parts
    url = (
        f"{scheme}://{user + ':pw@' if user else ''}{host}{f':{port}' if port is not None else ''}/{path}"
        f"{'?' + query if query else ''}{'#' + fragment if fragment else ''}"
    )
    try:
        out = recorded_url(url, "--base-url")
    except InputError as exc:
        assert exc.format_message().startswith("--base-url: ") and "\n" not in exc.format_message()
        return
    import urllib.parse

    split = urllib.parse.urlsplit(out)
    assert split.username is None and split.password is None and not split.query and not split.fragment
    assert "?" not in out and "#" not in out
    assert out.startswith(("http://", "https://")) and recorded_url(out, "x") == out


def test_cli_verify_of_a_local_server_attempt_with_no_project_says_it_is_bound_by_its_answers(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from fundbook.cli.launch import cli

    provider = Provider("openai-compatible", model="SmolLM2-135M-Instruct.Q4_1")
    record, out, *_ = run(
        tmp_path,
        "openai-compatible",
        provider,
        "SmolLM2-135M-Instruct.Q4_1",
        local=True,
        local_server=True,
        dialect="llama-cpp-python",
        base_url="http://127.0.0.1:8080/v1",
    )
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(tmp_path / "no-project"))
    moved = tmp_path / "published" / "attempt"
    os.makedirs(moved.parent)
    os.rename(out, moved)
    res = CliRunner().invoke(cli, ["verify", str(moved / "record.json")])
    assert res.exit_code == 0 and "bound by its answers" in res.output
    # a paid openai-compatible attempt (priced from a row) is not: it needs its project ledger
    prices = dict(load_prices(), models={"m2": {"input_micro_usd_per_mtok": 1, "output_micro_usd_per_mtok": 1}})
    os.makedirs(tmp_path / "paid")
    record, out, *_ = run(
        tmp_path / "paid",
        "openai-compatible",
        Provider("openai-compatible", model="m2"),
        "m2",
        prices=prices,
        base_url="http://127.0.0.1:8080/v1",
    )
    paid = tmp_path / "published" / "paid"
    os.rename(out, paid)
    res = CliRunner().invoke(cli, ["verify", str(paid / "record.json")])
    assert res.exit_code == 1 and "a paid attempt is verified against its project ledger" in res.output


# -- caps hold whatever a provider says (issue 40 item 1) ----------------------------------------------------------


def _inflated(kind, output_tokens=999_999_999):
    """A provider that answers well but reports more output tokens than the call's max_tokens allowed."""

    def answer(body):
        text = no_action_answer(body)
        if kind == "openai":
            return openai_response(text, tokens=(1500, 1024, output_tokens))
        if kind == "anthropic":
            return anthropic_response(text, usage=(300, 1200, 0, output_tokens))
        return chat_response(text, model=body["model"], usage=(900, output_tokens, 0))

    return answer


@pytest.mark.parametrize(
    "kind,model",
    [
        ("openai", "gpt-5.4-mini"),
        ("anthropic", "claude-haiku-4-5"),
        ("openai-compatible", "SmolLM2-135M-Instruct.Q4_1"),
    ],
)
def test_a_usage_report_over_the_reservation_is_booked_ends_the_attempt_and_never_verifies(tmp_path, kind, model):
    from launchers._project import ProjectLedger, reconcile
    from launchers._verify import verify_attempt

    provider = Provider(kind, [_inflated(kind)], model=model)
    prices = load_prices()
    if kind == "openai-compatible":  # priced with a row of its own, as a hosted server would be
        prices = dict(prices, models=dict(prices["models"], **{model: model_price(prices, "gpt-5.4-mini")}))
    record, out, _, _, project = run(
        tmp_path,
        kind,
        provider,
        model,
        prices=prices,
        **({"base_url": "https://example.org/v1"} if kind == "openai-compatible" else {}),
    )
    c = record["content"]
    assert c["termination"]["status"] == "budget_halt" and c["termination"]["limit"] == "tokens"
    assert (
        "the provider reported 999999999 output tokens, over the 1024 the call reserved (overrun 999998975)"
        in c["termination"]["reason"]
    )
    charges = [e for e in c["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"]
    assert len(charges) == 1 and charges[0]["tokens_out"] == 999_999_999  # the bill is the bill: booked as reported
    assert len(provider.generations()) == 1  # ended at once: no second call
    with pytest.raises(InputError) as err:
        verify_attempt(os.path.join(out, "record.json"))
    assert (
        "ledger.jsonl: usage overrun: call 1: the provider reported 999999999 output tokens, over the 1024 the "
        "call reserved (overrun 999998975)" in err.value.format_message()
    )
    problems = reconcile(ProjectLedger(project), [record])
    assert any("usage overrun: call 1: the provider reported 999999999 output tokens" in p for p in problems)


def test_a_report_within_the_reservation_but_past_the_claims_cap_is_an_overrun_too():
    from launchers import _ledger

    free = {"input_micro_usd_per_mtok": 0, "output_micro_usd_per_mtok": 0}
    assert _ledger.Ledger(None, 10, 10, free).overruns() == []  # an empty ledger overruns nothing
    at_cap = _ledger.Ledger(None, 10**9, 3000, free)
    at_cap.reserve(1, 1000, 2000)  # a reservation exactly at the cap
    at_cap.settle(1, 1000, 2000)  # reported as reserved: no overrun
    assert at_cap.overruns() == []
    book = _ledger.Ledger(None, 10**9, 3000, free)
    book.reserve(1, 1000, 2000)
    with pytest.raises(
        _ledger.UsageOverrun,
        match=r"call 1: the provider reported 2010 output tokens, over the 2000 "
        r"the call reserved \(overrun 10\)",
    ):
        book.settle(1, 1000, 2010)
    assert book.overruns() == [
        "call 1: the provider reported 2010 output tokens, over the 2000 the call reserved (overrun 10)",
        "the claim's cap of 3000 tokens is passed: 3010 committed (overrun 10)",
    ]


# -- errors classified from what each provider sends (issue 40 item 2) --------------------------------------------

ERROR_SHAPES = {  # what each provider's API documents for an overloaded server, as the wire carries it
    "openai": {
        "error": {"type": "overloaded_error", "message": "The server is overloaded", "param": None, "code": None}
    },
    "anthropic": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    "openai-compatible": {"error": {"type": "overloaded_error", "message": "busy", "code": 500}},
}


@pytest.mark.parametrize(
    "kind,model",
    [
        ("openai", "gpt-5.4-mini"),
        ("anthropic", "claude-haiku-4-5"),
        ("openai-compatible", "SmolLM2-135M-Instruct.Q4_1"),
    ],
)
def test_an_overloaded_error_behind_http_500_is_a_capacity_refusal_retried_for_every_sdk(tmp_path, kind, model):
    http = http_module(kind)
    provider = Provider(kind, [lambda body, k=kind: http.Response(500, json=ERROR_SHAPES[k]), "ok"], model=model)
    record, out, *_ = run(
        tmp_path,
        kind,
        provider,
        model,
        local=kind == "openai-compatible",
        **({"base_url": "http://127.0.0.1:9/v1", "local_server": True} if kind == "openai-compatible" else {}),
    )
    c = record["content"]
    assert c["termination"]["status"] == "completed"
    first = model_steps(out)[0]["call"]
    assert [b["wait_ms"] for b in first["backoff_ms"]] == [BACKOFF_MS[0]]  # refused once for capacity, waited
    assert "HTTP 500 overloaded_error" in first["backoff_ms"][0]["error"]
    assert c["cost"]["unresolved_calls"] == []


@pytest.mark.parametrize("kind", ["openai", "anthropic", "openai-compatible"])
def test_the_error_type_is_read_from_each_sdks_own_exception(kind):
    from launchers._sampler_api import classify, error_type

    http = http_module(kind)
    sdk = __import__("anthropic" if kind == "anthropic" else "openai")
    response = http.Response(500, json=ERROR_SHAPES[kind], request=http.Request("POST", "https://example.org/v1/x"))
    client = (
        sdk.Anthropic(api_key="k", base_url="https://example.org", max_retries=0)
        if kind == "anthropic"
        else sdk.OpenAI(api_key="k", base_url="https://example.org/v1", max_retries=0)
    )
    exc = client._make_status_error_from_response(response)
    assert error_type(exc) == "overloaded_error"
    assert isinstance(classify(kind, exc), CapacityError)
    assert "HTTP 500 overloaded_error" in classify(kind, exc).format_message()
