"""The samplers and the sandboxes, by name: one row each, the class imported only when it is chosen.

Adding a provider is its module (a `_provider.Provider` or `SandboxProvider` subclass) and one row here. A row
also says where the command line offers it: `budget` plans only samplers with a price to plan (not the mock
or a cached replay), `freeze` freezes none that only replays.
"""

import importlib
from dataclasses import dataclass, field, replace

from ._provider import OptionRefused, Provider, SamplerOptions, SandboxOptions


@dataclass(frozen=True)
class Row:
    where: str  # "module:Class", imported on first use
    budget: bool = True  # offered by `fundbook-launch budget --sampler`
    freeze: bool = True  # offered by `fundbook-launch freeze --sampler`


SAMPLERS = {
    "mock": Row("launchers._sampler_mock:Mock", budget=False),
    "cache": Row("launchers._sampler_cache:Cache", budget=False, freeze=False),
    "tinker": Row("launchers._sampler_tinker:Tinker"),
    "llama-cpp": Row("launchers._sampler_llama:LlamaCpp"),
    "openai": Row("launchers._sampler_openai:OpenAI"),
    "anthropic": Row("launchers._sampler_anthropic:Anthropic"),
    "openai-compatible": Row("launchers._sampler_openai_compatible:OpenAICompatible"),
}

# The values an option of one provider may take, kept with the table so the command line offers them without
# importing the provider (and its SDK); the provider checks against the same tuple.
CHOICES = {
    "reasoning_effort": ("none", "minimal", "low", "medium", "high"),  # openai; "none": no reasoning parameter sent
    "server_dialect": ("openai", "llama-cpp-python"),  # openai-compatible
    "effort": ("none", "low", "medium", "high", "xhigh", "max"),  # anthropic output_config.effort; "none": not sent
}

SANDBOXES = {
    "local": Row("launchers._sandbox_local:Local"),
    "local-isolated": Row("launchers._sandbox_isolated:LocalIsolated"),
    "modal": Row("launchers._sandbox_modal:Modal"),
}


def _load(row):
    module, name = row.where.split(":")
    return getattr(importlib.import_module(module), name)


def sampler_class(name):
    return _load(SAMPLERS[name])


def sandbox_class(name):
    return _load(SANDBOXES[name])


def sampler_names(offered_by=None) -> list:
    """The registered samplers, in the table's order; `offered_by` "budget" or "freeze": those that command offers."""
    return [n for n, row in SAMPLERS.items() if offered_by is None or getattr(row, offered_by)]


def check_options(name, own) -> dict:
    """`own` as the sampler `name` takes it, checked before anything else is (no file read, no service asked): an
    option another provider owns, given a value of its own, is refused naming that provider; left at its
    default, it is dropped. Then the provider's own check (a required option missing)."""
    cls = sampler_class(name)
    taken = {}
    for option, value in own.items():
        if option in cls.OPTIONS:
            taken[option] = value
            continue
        owner = next((c for c in map(sampler_class, SAMPLERS) if option in c.OPTIONS), None)
        if owner is None:
            raise OptionRefused(f"{option}: no sampler takes this option")
        if option in owner.REFUSED_ELSEWHERE and value != owner.OPTIONS[option]:
            raise OptionRefused(
                f"{owner.FLAGS} {'go' if ' and ' in owner.FLAGS else 'goes'} with --sampler {owner.name}"
            )
    cls.check_own(taken)
    return taken


def sampler(name, options: SamplerOptions = SamplerOptions()):
    """The provider `name`, built from `options`: checked now, before a claim is consumed (nothing is spent)."""
    return sampler_class(name)(replace(options, own=check_options(name, options.own)))


def sandbox(name, options: SandboxOptions = SandboxOptions()):
    return sandbox_class(name)(options)


def default_sandbox(paid) -> str:
    """Modal for a paid sampler (an isolation boundary), local for the others."""
    return "modal" if paid else "local"


@dataclass(frozen=True)
class Given:
    """A sampler built elsewhere (a test's fake, a bench's prepared adapter), under the name its records carry:
    a registered name prices and labels it as that provider does; any other name is a billed model."""

    name: str
    build: object
    sampling: dict = field(default_factory=dict)
    paid: bool = False
    config: object = None
    model_id: str = None  # the id a local file names (as `Provider.model_id`)

    def _row(self):
        return sampler_class(self.name) if self.name in SAMPLERS else Provider

    @property
    def free(self) -> bool:
        return self._row().free_for(self.sampling)

    @property
    def label(self) -> str:
        return self._row().LABEL

    @property
    def projected(self) -> bool:
        return self._row().PROJECTED

    def __call__(self, model):
        return self.build(model)


@dataclass(frozen=True)
class GivenSandbox:
    """A sandbox built elsewhere (a test's fake), with the configuration its records carry."""

    name: str
    build: object
    config: object = None

    def __call__(self):
        return self.build()
