"""An attempt's configuration as one frozen value, built once (by the command line, the pilot or a study's model
arm) and passed whole through the attempt, its checks and its record.

The sampler and the sandbox are providers (`_providers`), already built from their own options: what they
check costs nothing, so it is done before the value exists. The runtime seams (host probes, the environment
credentials are read from, a sleep for tests) are not configuration and stay outside it.
"""

from dataclasses import dataclass, field

from ._controller import Limits


@dataclass(frozen=True)
class Task:
    """The world: a family's seed at a horizon, on a split."""

    family: str
    seed: int
    split: str = "public-practice"
    horizon: int = 20


@dataclass(frozen=True)
class Sources:
    """What else the attempt is bound to: an interrupted attempt it continues (`resume`), a recorded one a
    cached replay reproduces (`replay`), the freeze it must match and the passing pilot a confirmatory attempt
    needs (default: beside the freeze)."""

    resume: str = None
    replay: str = None
    freeze: str = None
    pilot: str = None


@dataclass(frozen=True)
class Places:
    """Where the claim registry (`state`) and the project ledger (`project`) are (defaults: the environment's)."""

    state: str = None
    project: str = None


@dataclass(frozen=True)
class AttemptSpec:
    """One attempt: the claim it spends, the folder it writes, the world, the model, the sampler and sandbox
    providers, the limits and the price table, where it comes from and where its ledgers are."""

    claim: str
    out: str
    task: Task
    model: str
    sampler: object  # a sampler provider (`_provider.Provider`, or `Given`)
    sandbox: object  # a sandbox provider (`_provider.SandboxProvider`, or `GivenSandbox`)
    prices: dict
    limits: Limits = field(default_factory=Limits)
    sources: Sources = Sources()
    places: Places = Places()
    attempt_id: str = None  # default: <label>-<family>-seed-<seed>-<claim id>
    role: str = None  # "pilot" for an attempt of `fundbook-launch pilot`
    command_line: tuple = ()

    @property
    def paid(self) -> bool:
        return self.sampler.paid

    @property
    def sandbox_name(self) -> str:
        return self.sandbox.name
