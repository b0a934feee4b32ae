"""The tinker sampler: ServiceClient -> SamplingClient, the model's own chat
template as its renderer, usage from the token counts.

Narrow on purpose: these are the only SDK surfaces called, and the tests fake
exactly these (with the real `tinker.types` and the real signatures). The SDK
retries a request for up to two hours by default; here its progress timeout is
bounded by the controller's per-call deadline, and every wait (client
creation, each sample, closing the session) has a timeout of its own. The API
key is read by the SDK from the host's environment; it never reaches the worker.

Hosted variants: `TINKER_BASE_URL` names a tinker-compatible service; when it
sits behind Modal's proxy auth, `TINKER_MODAL_KEY` and `TINKER_MODAL_SECRET`
are sent as the `Modal-Key` / `Modal-Secret` headers. Their values are never
recorded (the record says only that proxy auth was used), and the base URL is
recorded without credentials or query. The service session is closed at the
end of the attempt; prompt-cache hits reported by the response are charged at
the cached input price. A refusal for capacity (RateLimitError, HTTP 429/503/
529, once the SDK's own retries inside the call deadline are spent) is a
CapacityError: the controller backs off and retries on its recorded schedule.
"""

import concurrent.futures
import os
import urllib.parse

from ._deadline import call_with_deadline
from ._errors import CallTimeout, CapacityError, InputError, SamplerError
from ._provider import Provider
from ._sampling import Completion, Prepared, request_sha256

SERVICE_HEADERS = (("Modal-Key", "TINKER_MODAL_KEY"), ("Modal-Secret", "TINKER_MODAL_SECRET"))
CAPACITY_STATUS = (429, 503, 529)  # rate limited, service unavailable, overloaded


def is_capacity(tinker, exc) -> bool:
    """A refusal for capacity or rate: the SDK's RateLimitError, or an API status error with a capacity status."""
    rate_limit = getattr(tinker, "RateLimitError", None)
    if isinstance(rate_limit, type) and isinstance(exc, rate_limit):
        return True
    status_error = getattr(tinker, "APIStatusError", None)
    return (
        isinstance(status_error, type)
        and isinstance(exc, status_error)
        and getattr(exc, "status_code", None) in CAPACITY_STATUS
    )


def _default_sdk():
    import tinker
    from tinker.lib.retry_handler import RetryConfig

    return tinker, RetryConfig


def service_config(environ=None) -> dict:
    """What the service will be, checked before a claim is consumed: {base_url (as recorded), proxy_auth}."""
    environ = os.environ if environ is None else environ
    present = [env for _, env in SERVICE_HEADERS if environ.get(env)]
    if len(present) == 1:
        raise InputError(f"{present[0]}: set both {' and '.join(env for _, env in SERVICE_HEADERS)}, or neither")
    base = environ.get("TINKER_BASE_URL") or None
    recorded = None
    if base:
        parts = urllib.parse.urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InputError(f"TINKER_BASE_URL: expected an http(s) URL, got {parts.scheme or 'no scheme'}://…")
        port = f":{parts.port}" if parts.port else ""
        recorded = f"{parts.scheme}://{parts.hostname}{port}{parts.path.rstrip('/')}"
    if present and not base:
        raise InputError(
            "TINKER_MODAL_KEY/TINKER_MODAL_SECRET: the proxy headers need TINKER_BASE_URL (the hosted "
            "service they authenticate to)"
        )
    return {"base_url": recorded, "proxy_auth": bool(present)}


def service_kwargs(environ=None) -> dict:
    """ServiceClient keyword arguments for the service named by the environment (values never recorded)."""
    environ = os.environ if environ is None else environ
    kwargs = {}
    if environ.get("TINKER_BASE_URL"):
        kwargs["base_url"] = environ["TINKER_BASE_URL"]
    headers = {header: environ[env] for header, env in SERVICE_HEADERS if environ.get(env)}
    if len(headers) == len(SERVICE_HEADERS):
        kwargs["default_headers_overrides"] = headers
    return kwargs


class TinkerSampler:
    provider = "tinker"

    def __init__(self, model_id, deadline_s, temperature_milli=700, seed=0, sdk=None, environ=None):
        tinker, RetryConfig = sdk or _default_sdk()
        self.tinker = tinker
        self.model_id = model_id
        self.deadline_s = deadline_s
        self.sampling = {"temperature_milli": temperature_milli, "seed": seed}
        self.config = service_config(environ)
        self.service = None
        self.closed = None  # None until close(): then whether the session closed in time
        retry = RetryConfig(progress_timeout=deadline_s)
        kwargs = service_kwargs(environ)

        def setup():  # session setup blocks on the network inside the SDK: bounded as a whole
            self.service = tinker.ServiceClient(**kwargs)
            client = self.service.create_sampling_client(base_model=model_id, retry_config=retry).result(
                timeout=deadline_s
            )
            return client, client.get_tokenizer()

        try:
            self.client, self.tokenizer = call_with_deadline(setup, deadline_s, "tinker setup")
        except (CallTimeout, TimeoutError, concurrent.futures.TimeoutError):
            self.close("errored", "no sampling client in time")
            raise CallTimeout(f"tinker: no sampling client for {model_id} within {deadline_s} s")
        except Exception as exc:  # the SDK's own errors: report one line, keep the type
            self.close("errored", "sampling client setup failed")
            raise SamplerError(f"tinker: cannot create a sampling client for {model_id} ({type(exc).__name__}: {exc})")

    def render(self, messages):
        """Token ids of the conversation with the generation prompt, by the model's chat template."""
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
        if hasattr(ids, "get") and ids.get("input_ids") is not None:
            ids = ids["input_ids"]
        return [int(t) for t in ids]

    def prepare(self, messages, max_tokens) -> Prepared:
        tokens = self.render(messages)
        return Prepared(
            request_sha256(self.model_id, messages, max_tokens, self.sampling),
            len(tokens),
            max_tokens,
            messages,
            payload=tokens,
        )

    def sample(self, prepared: Prepared, deadline_s) -> Completion:
        types = self.tinker.types
        params = types.SamplingParams(
            max_tokens=prepared.max_tokens,
            temperature=self.sampling["temperature_milli"] / 1000,
            seed=self.sampling["seed"],
        )
        future = self.client.sample(
            prompt=types.ModelInput.from_ints(prepared.payload), num_samples=1, sampling_params=params
        )
        try:
            response = future.result(timeout=deadline_s)
        except (TimeoutError, concurrent.futures.TimeoutError):
            future.future().cancel()
            raise CallTimeout(f"tinker: no answer within {deadline_s} s")
        except Exception as exc:
            if is_capacity(self.tinker, exc):
                raise CapacityError(f"tinker: capacity ({type(exc).__name__}: {' '.join(str(exc).split())[:160]})")
            raise SamplerError(f"tinker: sample failed ({type(exc).__name__}: {exc})")
        sequence = response.sequences[0]
        tokens = list(sequence.tokens)
        hit = getattr(response, "prompt_cache_hit_tokens", 0)
        hit = hit if isinstance(hit, int) and not isinstance(hit, bool) and hit > 0 else 0
        return Completion(
            self.tokenizer.decode(tokens, skip_special_tokens=True),
            len(prepared.payload),
            len(tokens),
            str(getattr(sequence.stop_reason, "value", sequence.stop_reason)),
            cache_hit_tokens=min(hit, len(prepared.payload)),
        )

    def close(self, status, detail=None):
        """Finish the service session ("success", "errored" or "interrupted"), bounded by the call deadline."""
        if self.service is None or self.closed is not None:
            return self.closed
        try:
            call_with_deadline(
                lambda: self.service.close(status, detail).result(timeout=self.deadline_s),
                self.deadline_s,
                "tinker session close",
            )
            self.closed = True
        except Exception:  # the session could not be finished: recorded, never fatal here
            self.closed = False
        return self.closed

    def service_info(self) -> dict:
        return dict(self.config, session_closed=self.closed)


class Tinker(Provider):
    """`--sampler tinker`: paid; the service's environment and the SDK are checked before a claim is consumed."""

    name = "tinker"

    def _setup(self):
        from ._sampler_cache import open_store
        from ._provider import sdk_installed

        if self.options.cache_path:
            open_store(self.options.cache_path)
        service_config(self.options.environ)
        sdk_installed("tinker")
        return {"temperature_milli": self.temperature_milli, "seed": self.options.seed}

    def build(self, model):
        from ._sampler_cache import CacheSampler

        o = self.options
        inner = TinkerSampler(
            model, o.call_deadline_s, temperature_milli=self.temperature_milli, seed=o.seed, environ=o.environ
        )
        return CacheSampler(o.cache_path, model, inner=inner) if o.cache_path else inner
