"""What every sampler and sandbox provider shares: one constructor, one way to say what it owns.

A sampler provider is a class registered by name in `_providers.SAMPLERS`. It is built once, from a
`SamplerOptions` value, before any claim is consumed: the constructor checks everything that can fail
without spending (its own options, the cache, the credentials' shape, the SDK, a free preflight) and fixes
the settings the config hash and the freeze see (`sampling`). Called with a model id, after the claim is
consumed, it builds the adapter the controller calls. A sandbox provider is the same, with no model.

Each provider owns some options (`OPTIONS`, with their defaults): another provider's option given with a
value other than its default is a usage error naming the owner, so the command line holds no provider rule.
"""

import click
from dataclasses import dataclass, field


class OptionRefused(click.UsageError):
    """An option that does not go with the chosen provider: a usage error (exit 64), like any other."""


@dataclass(frozen=True)
class SamplerOptions:
    """Everything a command line or a study arm may say of a sampler. `own` holds the options one provider owns
    (e.g. llama-cpp's model_file, openai-compatible's base_url); the rest every sampler reads alike."""

    cache_path: str = None  # the decision cache (SQLite, or an attempt's cache.jsonl to replay)
    call_deadline_s: int = 120
    temperature_milli: int = None  # None: the provider's own default
    seed: int = 0
    model: str = None  # the model a preflight asks the service for
    replay_sampling: object = None  # a cached replay: the recorded attempt's settings
    own: dict = field(default_factory=dict)  # {option: value} of the provider's own options
    offline: bool = False  # a freeze: the settings only, no service is asked
    environ: object = None  # where credentials are looked up (default os.environ)
    http_client: object = None  # the HTTP samplers' transport (tests)


def sdk_installed(name):
    """Import an SDK now, so a missing one is one line before anything is spent."""
    from ._errors import InputError

    try:
        return __import__(name)
    except ImportError as exc:
        raise InputError(f"the {name} SDK is not installed ({exc}): `make venv`")


class Provider:
    """A sampler provider: `Provider(options)` checks and fixes the settings; `provider(model)` builds the
    adapter. Subclasses set `name`, `OPTIONS` and `FLAGS`, and implement `_setup` and `build`."""

    name = None
    OPTIONS = {}  # {option: default}: what this provider owns
    FLAGS = None  # how a refusal names them ("--model-file")
    REFUSED_ELSEWHERE = ()  # those refused with another sampler (the others are ignored there)
    DEFAULT_TEMPERATURE = 700  # thousandths; 0 is greedy
    LABEL = "model"  # what the record calls an attempt of this sampler
    FREE = False  # nothing is paid (priced at zero)
    PROJECTED = False  # free, but priced as the model id it runs under (a projection)
    API = False  # an HTTP API (its preflight asks the service for the model)
    PLAN = {"calls_per_checkpoint": 3}  # what `budget --sampler` plans when given no figures

    def __init__(self, options: SamplerOptions):
        self.options = options
        self.own = {k: options.own.get(k, default) for k, default in self.OPTIONS.items()}
        self.temperature_milli = (
            self.DEFAULT_TEMPERATURE if options.temperature_milli is None else options.temperature_milli
        )
        self.config = None
        self.model_id = None  # the id a local file names, when the operator names none
        self.sampling = self._setup()

    @classmethod
    def check_own(cls, own):
        """A required option missing, before anything is read: a usage error (OptionRefused)."""

    @classmethod
    def check_temperature(cls, temperature_milli):
        """A temperature the provider cannot send: a usage error (OptionRefused)."""

    @classmethod
    def free_for(cls, sampling) -> bool:
        """Nothing is paid for an attempt with these settings (priced at zero)."""
        return cls.FREE

    @property
    def free(self) -> bool:
        return self.free_for(self.sampling)

    @property
    def paid(self) -> bool:
        """Spends money: needs a freeze, the modal sandbox, a clean tree."""
        return not self.free

    @property
    def label(self) -> str:
        return self.LABEL

    @property
    def projected(self) -> bool:
        return self.PROJECTED

    def _setup(self) -> dict:
        return {}

    def __call__(self, model):
        return self.build(model)

    def build(self, model):
        raise NotImplementedError


@dataclass(frozen=True)
class SandboxOptions:
    """What a command line may say of a sandbox; `modal` is the SDK (tests pass a fake)."""

    offline: bool = False  # a freeze: the configuration only
    modal: object = None


class SandboxProvider:
    """A sandbox provider: `SandboxProvider(options)` checks the SDK and fixes `config`; `provider()` builds one."""

    name = None
    ISOLATES = False  # an isolation boundary a paid sampler may run in

    def __init__(self, options: SandboxOptions = SandboxOptions()):
        self.options = options
        self.config = self._setup()

    def _setup(self) -> dict:
        return {"name": self.name}

    def __call__(self):
        return self.build()

    def build(self):
        raise NotImplementedError
