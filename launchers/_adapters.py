"""Choosing adapters by name (built only after the claim is consumed)."""

from ._sampler_cache import CacheSampler
from ._sampler_mock import MockSampler


def make_sampler_factory(name, cache_path, call_deadline):
    def build(model):
        if name == "mock":
            inner = MockSampler(model)
            return CacheSampler(cache_path, model, inner=inner) if cache_path else inner
        if name == "cache":
            return CacheSampler(cache_path, model)
        from ._sampler_tinker import TinkerSampler
        inner = TinkerSampler(model, call_deadline)
        return CacheSampler(cache_path, model, inner=inner) if cache_path else inner
    return build


def make_sandbox_factory(name):
    def build():
        if name == "local":
            from ._sandbox_local import LocalSandbox
            return LocalSandbox()
        from ._sandbox_modal import ModalSandbox
        return ModalSandbox()
    return build
