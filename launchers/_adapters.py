"""Choosing adapters by name. A factory checks, when it is made, everything that
can fail without spending (the decision cache can be opened, the service
environment is complete, the SDK imports); the adapter itself is built only
after the claim is consumed. Each factory carries the settings the config
hash and the freeze see (`sampling`, `config`)."""

from ._errors import InputError
from ._sampler_cache import CacheSampler, open_store
from ._sampler_mock import MockSampler

SAMPLERS = ("mock", "cache", "tinker", "llama-cpp", "openai", "anthropic", "openai-compatible")  # the CLI's choices
PAID_SAMPLERS = ("tinker", "openai", "anthropic")  # samplers that spend money: a freeze, the modal sandbox, a clean tree
API_SAMPLERS = ("openai", "anthropic", "openai-compatible")  # HTTP APIs (launchers/_sampler_api.py)


def is_paid(name, local_server=False) -> bool:
    """A paid sampler: openai-compatible is, unless its server runs on this host (--local-server, priced at 0)."""
    return name in PAID_SAMPLERS or (name == "openai-compatible" and not local_server)


def _import(name):
    try:
        return __import__(name)
    except ImportError as exc:
        raise InputError(f"the {name} SDK is not installed ({exc}): `make venv`")


def make_sampler_factory(name, cache_path, call_deadline, temperature_milli=700, sampling_seed=0,
                         replay_sampling=None, environ=None, local=None, api=None):
    if name in API_SAMPLERS:
        return api_factory(name, cache_path, call_deadline, temperature_milli, sampling_seed, environ, **(api or {}))
    if name == "llama-cpp":  # the local open-weights sampler (launchers/_sampler_llama.py); `local`: its options
        from ._sampler_llama import factory
        return factory(cache_path=cache_path, temperature_milli=temperature_milli, seed=sampling_seed, **(local or {}))
    if cache_path:
        open_store(cache_path, must_exist=name == "cache")
    if name == "tinker":
        from ._sampler_tinker import service_config
        service_config(environ)
        _import("tinker")
    sampling = {"temperature_milli": temperature_milli, "seed": sampling_seed} if name == "tinker" else (
        dict(replay_sampling) if name == "cache" and replay_sampling is not None else {})

    def build(model):
        if name == "mock":
            inner = MockSampler(model)
            return CacheSampler(cache_path, model, inner=inner) if cache_path else inner
        if name == "cache":
            return CacheSampler(cache_path, model, sampling=replay_sampling)
        from ._sampler_tinker import TinkerSampler
        inner = TinkerSampler(model, call_deadline, temperature_milli=temperature_milli, seed=sampling_seed,
                              environ=environ)
        return CacheSampler(cache_path, model, inner=inner) if cache_path else inner
    build.sampling = sampling
    return build


def api_factory(name, cache_path, call_deadline, temperature_milli=0, sampling_seed=0, environ=None, model=None,
                base_url=None, dialect="openai", local_server=False, reasoning_effort="low", offline=False,
                http_client=None):
    """An HTTP API sampler's factory. Checked now, before a claim is consumed: the settings, the cache, the key
    (present and well formed), the base URL, and -- unless `offline` (a freeze: settings only) -- a free
    preflight at the provider (the key accepted, the model served). Every call goes through the decision cache
    (`cache_path`, or a store in memory exported beside the record), so `--replay-of` reproduces the attempt."""
    import os
    from . import _sampler_anthropic, _sampler_openai, _sampler_openai_compatible
    from ._sampler_api import SHAPE_ERRORS, one_line
    environ = os.environ if environ is None else environ
    if cache_path:
        open_store(cache_path)
    if name == "openai":
        mod, sampling = _sampler_openai, _sampler_openai.settings(reasoning_effort)
        cls, url = _sampler_openai.OpenAISampler, None
    elif name == "anthropic":
        mod, sampling = _sampler_anthropic, _sampler_anthropic.settings(temperature_milli)
        cls, url = _sampler_anthropic.AnthropicSampler, None
    else:
        mod = _sampler_openai_compatible
        sampling = mod.settings(temperature_milli, sampling_seed, dialect, local_server)
        cls = mod.OpenAICompatibleSampler
        url = None if offline and not (base_url or environ.get(mod.BASE_URL_VARIABLE)) else mod.base_url(base_url,
                                                                                                        environ)
    built = {}
    if not offline:
        config = mod.config(environ) if url is None else mod.config(url, environ)
        kwargs = {"environ": environ, "http_client": http_client, "deadline_s": call_deadline}
        client = mod.client(**kwargs) if url is None else mod.client(url, **kwargs)
        if model is not None:
            where = config["base_url"]
            try:
                found = mod.preflight(model, client, url if url is not None else where)
            except SHAPE_ERRORS as exc:  # a server that answers 200 with another shape: one line, nothing spent
                raise InputError(f"{name}: the preflight's answer from {where} is not the API's shape "
                                 f"({type(exc).__name__}: {one_line(exc, 160)}); nothing was consumed") from None
            config["model_preflight"] = found[:200] if isinstance(found, str) else None
        built.update(client=client, config=config)

    def build(model):
        if offline:
            raise InputError(f"--sampler {name}: built for its settings only (a freeze makes no call)")
        inner = cls(model, sampling, built["client"], built["config"])
        return CacheSampler(cache_path or None, model, inner=inner)
    build.sampling = sampling
    build.config = built.get("config")
    return build


def make_sandbox_factory(name, modal=None):
    if name == "local":
        def build():
            from ._sandbox_local import LocalSandbox
            return LocalSandbox()
        build.config = {"name": "local"}
        return build
    from ._sandbox_modal import ModalSandbox, modal_config
    if modal is None:
        _import("modal")

    def build():
        return ModalSandbox(modal=modal)
    build.config = modal_config()
    return build
