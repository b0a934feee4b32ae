"""Choosing adapters by name. A factory checks, when it is made, everything that
can fail without spending (the decision cache can be opened, the service
environment is complete, the SDK imports); the adapter itself is built only
after the claim is consumed. Each factory carries the settings the config
hash and the freeze see (`sampling`, `config`)."""

from ._errors import InputError
from ._sampler_cache import CacheSampler, open_store
from ._sampler_mock import MockSampler

SAMPLERS = ("mock", "cache", "tinker")  # every sampler a factory below can build (the CLI's choices)
PAID_SAMPLERS = ("tinker",)             # samplers that spend money: a freeze, the modal sandbox, a clean tree


def _import(name):
    try:
        return __import__(name)
    except ImportError as exc:
        raise InputError(f"the {name} SDK is not installed ({exc}): `make venv`")


def make_sampler_factory(name, cache_path, call_deadline, temperature_milli=700, sampling_seed=0,
                         replay_sampling=None, environ=None):
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
