import json

import pytest

import engine
from launchers._errors import CacheMiss, CallTimeout, InputError
from launchers._sampler_cache import CacheSampler, open_store
from launchers._sampler_mock import MockSampler
from launchers._sampler_tinker import TinkerSampler
from launchers.worker import protocol
from launchers.worker.agent import SYSTEM

from .fakes import FakeRetryConfig, FakeTinker


def _messages(day=3, extra=""):
    inst = engine.generate("FUND_01", 1)
    run = engine.Run(inst)
    while run.open_day < day:
        run.skip()
    packet = run.packet()
    text = (
        f"{protocol.CHECKPOINT_MARK} day {day}{extra}\n{protocol.PACKET_OPEN}\n"
        f"{json.dumps(protocol.prompt_packet(packet))}\n{protocol.FENCE_CLOSE}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}], packet


def test_mock_is_deterministic_and_scripted():
    messages, packet = _messages()
    a = MockSampler(invalid_per_mille=0)
    first = a.sample(a.prepare(messages, 2048), 10)
    again = MockSampler(invalid_per_mille=0).sample(MockSampler(invalid_per_mille=0).prepare(messages, 2048), 10)
    assert first == again
    call = json.loads(first.text)
    assert call["tool"] == "project" and call["arguments"]["actions"]  # day 3: A1 needs funding
    assert first.tokens_in == a.prepare(messages, 2048).prompt_tokens and first.tokens_out > 0


def test_mock_answers_the_project_result_with_the_truthful_batch():
    messages, packet = _messages()
    m = MockSampler(invalid_per_mille=0)
    call = m.sample(m.prepare(messages, 2048), 10).text
    actions = json.loads(call)["arguments"]["actions"]
    output = engine.project(packet, actions)
    messages += [
        {"role": "assistant", "content": call},
        {"role": "user", "content": "TOOL RESULT project (exit 0): " + json.dumps(output)},
    ]
    batch = json.loads(m.sample(m.prepare(messages, 2048), 10).text)["batch"]
    assert batch == {"day": 3, "report": output["report"], "actions": actions}


def test_mock_injects_about_five_percent_invalid_answers():
    messages, _ = _messages()
    m = MockSampler()
    invalid = 0
    for i in range(2000):
        prepared = m.prepare(messages[:1] + [{"role": "user", "content": messages[1]["content"] + f" #{i}"}], 2048)
        text = m.sample(prepared, 10).text
        try:
            obj = json.loads(text)
            ok = ("tool" in obj) != ("batch" in obj) and ("batch" not in obj or "report" in obj["batch"])
        except ValueError:
            ok = False
        invalid += not ok
    assert 70 <= invalid <= 130  # 5 % of 2000 is 100


def test_mock_truncates_at_max_tokens():
    messages, _ = _messages()
    m = MockSampler(invalid_per_mille=0)
    c = m.sample(m.prepare(messages, 5), 10)
    assert c.tokens_out == 5 and c.stop_reason == "length" and len(c.text) == 20


def test_cache_records_then_replays_for_free(tmp_path):
    messages, _ = _messages()
    db = str(tmp_path / "cache.sqlite")
    recording = CacheSampler(db, "mock", inner=MockSampler(invalid_per_mille=0))
    p = recording.prepare(messages, 2048)
    assert not p.cached
    live = recording.sample(p, 10)
    replay = CacheSampler(db, "mock", sampling={})
    p2 = replay.prepare(messages, 2048)
    assert p2.cached and p2.request_sha256 == p.request_sha256
    hit = replay.sample(p2, 10)
    assert hit.cached and hit.text == live.text and replay.hits == 1


def test_cache_only_replay_never_calls_out_on_a_miss(tmp_path):
    messages, _ = _messages()
    with pytest.raises(InputError, match="no such file"):  # a replay reads a recording, it never makes one
        CacheSampler(str(tmp_path / "c.sqlite"), "mock")
    open_store(str(tmp_path / "c.sqlite"))
    replay = CacheSampler(str(tmp_path / "c.sqlite"), "mock")
    with pytest.raises(CacheMiss, match="never makes a paid call"):  # at prepare: before anything is reserved
        replay.prepare(messages, 2048)


def test_tinker_adapter_renders_bounds_and_counts():
    fake = FakeTinker()
    sampler = TinkerSampler("Qwen/Qwen3-8B", deadline_s=30, temperature_milli=700, seed=7, sdk=(fake, FakeRetryConfig))
    assert fake.created == [("service",), ("sampling", "Qwen/Qwen3-8B", 30)]  # SDK retries bounded by the deadline
    messages, _ = _messages()
    prepared = sampler.prepare(messages, 256)
    assert prepared.prompt_tokens == len(prepared.payload) > 100
    completion = sampler.sample(prepared, 12)
    prompt, n, params = fake.client.requests[0]
    assert prompt.to_ints() == prepared.payload and n == 1
    assert params.max_tokens == 256 and params.seed == 7 and params.temperature == 0.7
    assert fake.client.futures[0].timeouts == [12]
    assert completion.text == '{"tool": "headroom", "arguments": {}}'
    assert completion.tokens_in == prepared.prompt_tokens and completion.tokens_out == len(completion.text)
    assert sampler.sampling == {"temperature_milli": 700, "seed": 7}  # integers only in hashed content


def test_tinker_call_past_its_deadline_is_cancelled():
    fake = FakeTinker(delay_s=5)
    sampler = TinkerSampler("Qwen/Qwen3-8B", deadline_s=30, sdk=(fake, FakeRetryConfig))
    prepared = sampler.prepare(_messages()[0], 64)
    with pytest.raises(CallTimeout):
        sampler.sample(prepared, 0.2)
    assert fake.client.futures[0].inner.cancelled


def test_tinker_session_setup_that_blocks_is_bounded():
    """The SDK's session setup waits on the network inside create_sampling_client, past its own timeouts."""
    import threading
    import time

    fake = FakeTinker()
    release = threading.Event()

    def stuck(self, base_model, retry_config):
        release.wait(30)

    fake.ServiceClient.create_sampling_client = stuck
    t0 = time.monotonic()
    with pytest.raises(CallTimeout, match="no sampling client for Qwen/Qwen3-8B within 0.5 s"):
        TinkerSampler("Qwen/Qwen3-8B", deadline_s=0.5, sdk=(fake, FakeRetryConfig))
    assert time.monotonic() - t0 < 5
    release.set()


def test_prompt_cache_hits_from_the_response_are_charged_at_the_cached_rate():
    from launchers._ledger import Ledger

    fake = FakeTinker(cache_hit_tokens=150)
    sampler = TinkerSampler("Qwen/Qwen3-8B", deadline_s=30, sdk=(fake, FakeRetryConfig))
    prepared = sampler.prepare(_messages()[0], 256)
    completion = sampler.sample(prepared, 12)
    assert completion.cache_hit_tokens == 150
    price = {
        "input_micro_usd_per_mtok": 130000,
        "output_micro_usd_per_mtok": 400000,
        "cached_input_micro_usd_per_mtok": 13000,
    }
    ledger = Ledger("a" * 64, 10**9, 10**9, price)
    ledger.reserve(1, prepared.prompt_tokens, 256)
    charge = ledger.settle(1, completion.tokens_in, completion.tokens_out, cached_in=completion.cache_hit_tokens)
    full = -(-(completion.tokens_in * 130000 + completion.tokens_out * 400000) // 10**6)
    cached = -(-((completion.tokens_in - 150) * 130000 + 150 * 13000 + completion.tokens_out * 400000) // 10**6)
    assert charge["micro_usd"] == cached < full and charge["cached_tokens_in"] == 150


@pytest.mark.parametrize(
    "env, kwargs, config",
    [
        ({}, {}, {"base_url": None, "proxy_auth": False}),
        (
            {"TINKER_BASE_URL": "http://127.0.0.1:4010/"},
            {"base_url": "http://127.0.0.1:4010/"},
            {"base_url": "http://127.0.0.1:4010", "proxy_auth": False},
        ),
        (
            {"TINKER_BASE_URL": "https://a--b.modal.run", "TINKER_MODAL_KEY": "wk-k", "TINKER_MODAL_SECRET": "ws-s"},
            {
                "base_url": "https://a--b.modal.run",
                "default_headers_overrides": {"Modal-Key": "wk-k", "Modal-Secret": "ws-s"},
            },
            {"base_url": "https://a--b.modal.run", "proxy_auth": True},
        ),
    ],
)
def test_the_service_is_named_by_the_environment(env, kwargs, config):
    from launchers._sampler_tinker import service_config

    fake = FakeTinker()
    sampler = TinkerSampler("Qwen/Qwen3-8B", deadline_s=30, sdk=(fake, FakeRetryConfig), environ=env)
    assert fake.service_kwargs == [kwargs] and service_config(env) == config == {
        k: v for k, v in sampler.service_info().items() if k != "session_closed"
    }


@pytest.mark.parametrize(
    "env, message",
    [
        ({"TINKER_BASE_URL": "https://x.modal.run", "TINKER_MODAL_SECRET": "s"}, "TINKER_MODAL_SECRET: set both"),
        ({"TINKER_MODAL_KEY": "k", "TINKER_MODAL_SECRET": "s"}, "need TINKER_BASE_URL"),
        ({"TINKER_BASE_URL": "ftp://x"}, r"expected an http\(s\) URL"),
    ],
)
def test_an_incomplete_service_environment_is_refused(env, message):
    from launchers._sampler_tinker import service_config

    with pytest.raises(InputError, match=message):
        service_config(env)


def test_the_service_session_is_closed_once_and_a_stuck_close_is_bounded():
    fake = FakeTinker(close_delay_s=5)
    sampler = TinkerSampler("Qwen/Qwen3-8B", deadline_s=0.3, sdk=(fake, FakeRetryConfig))
    assert sampler.close("interrupted", "stopped by the operator (SIGTERM)") is False  # recorded, never fatal
    assert sampler.close("success") is False and fake.closed == [("interrupted", "stopped by the operator (SIGTERM)")]
    ok = FakeTinker()
    sampler = TinkerSampler("Qwen/Qwen3-8B", deadline_s=5, sdk=(ok, FakeRetryConfig))
    assert sampler.close("errored", "budget") is True and ok.closed == [("errored", "budget")]


def test_a_sampling_client_that_never_comes_still_closes_the_session():
    import threading

    fake = FakeTinker()
    release = threading.Event()

    def stuck(self, base_model, retry_config):
        release.wait(30)

    fake.ServiceClient.create_sampling_client = stuck
    with pytest.raises(CallTimeout):
        TinkerSampler("Qwen/Qwen3-8B", deadline_s=0.5, sdk=(fake, FakeRetryConfig))
    release.set()
    assert [status for status, _ in fake.closed] == ["errored"]


class HolderSeam:
    """The tinker SDK's own network seam (its tests patch InternalClientHolder the same way): records what the real
    ServiceClient hands it and the requests the real client code posts through it."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.posts = []
        self._session_id = "sess-1"

    def get_session_id(self):
        return self._session_id

    def aclient(self, pool):
        import contextlib

        seam = self

        class Client:
            async def post(self, path, body, cast_to):
                seam.posts.append((path, body))

        return contextlib.nullcontext(Client())

    async def execute_with_retries(self, fn):
        return await fn()

    def run_coroutine_threadsafe(self, coro):
        """The SDK runs its coroutines on a loop thread of its own: so does the seam (never the caller's loop)."""
        import asyncio
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coro)

    async def aclose(self):
        self.closed = True


def test_the_real_service_client_gets_the_hosted_settings_and_finishes_its_session(monkeypatch):
    """The real tinker.ServiceClient, only its network holder replaced: the base URL and the proxy headers reach the
    holder (no argument silently ignored: warnings are errors here), and close() posts the session's finish."""
    import tinker
    from tinker.lib.public_interfaces import service_client as module
    from launchers._sampler_tinker import service_kwargs

    holders = []
    monkeypatch.setattr(module, "InternalClientHolder", lambda **kw: holders.append(HolderSeam(**kw)) or holders[-1])
    env = {"TINKER_BASE_URL": "https://a--tinker.modal.run", "TINKER_MODAL_KEY": "wk-1", "TINKER_MODAL_SECRET": "ws-2"}
    service = tinker.ServiceClient(**service_kwargs(env))
    holder = service.holder  # created lazily, as the sampling client's creation would
    assert holder.kwargs["base_url"] == "https://a--tinker.modal.run"
    assert holder.kwargs["default_headers_overrides"] == {"Modal-Key": "wk-1", "Modal-Secret": "ws-2"}
    assert service.close("interrupted", "stopped by the operator (SIGTERM)").result(timeout=5) is None
    assert holder.posts == [
        (
            "/api/v1/sessions/sess-1/finish",
            {"reason": {"type": "interrupted"}, "detail": "stopped by the operator (SIGTERM)"},
        )
    ]
    assert holder.closed is True
