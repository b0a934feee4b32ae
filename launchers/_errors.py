"""Expected failures of the host's layers above the build (launchers, experiments, the CLI): one line each, with
the exit code they map to on the class (click's pattern), under one root, `FundbookError`.

Exit codes follow the evaluator's: 0 ok; 1 refused (claim, budget, input,
incomplete attempt); 64 usage error. 2 stays reserved for UNSCORABLE.

The engine keeps its own `DeskError` family (it is standard library only, and its bytes are pinned): the one
`InputError` here is also the engine's `InputError`, so a handler of either catches both.
"""

import click

import engine

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 64


class FundbookError(click.ClickException):
    """The root: printed as one line, never a traceback; the command line exits with the class's `exit_code`."""

    exit_code = EXIT_REFUSED

    def show(self, file=None):
        click.echo(f"error: {self.format_message()}", err=True, file=file)


class LaunchError(FundbookError):
    """A failure of the paid model-worker path."""


class InputError(LaunchError, engine.InputError):
    """A file or option value is missing, unreadable or of the wrong shape (the engine's InputError too)."""


class NotInstalled(InputError):
    """The local sampler's library or packaged model is not installed (`make local`)."""


class ClaimRefused(LaunchError):
    """The authorisation claim is missing, edited, expired, out of scope or already consumed."""


class BudgetHalt(LaunchError):
    """A reservation would pass the claim's cap (USD or tokens)."""

    def __init__(self, message, limit):
        super().__init__(message)
        self.limit = limit  # "cost" or "tokens"


class UsageOverrun(BudgetHalt):
    """A provider reported more usage than the call reserved, or past a cap: booked as reported (the bill is the
    bill), and the attempt ends at once."""


class OutputExists(LaunchError):
    """The output directory exists and is not empty."""


class SamplerError(LaunchError):
    """A model call failed (not a timeout)."""


class CapacityError(SamplerError):
    """The provider refused a call for capacity or a rate limit (HTTP 429/503): retried on a backoff schedule."""


class CallTimeout(LaunchError):
    """A model call passed the controller's per-call deadline."""


class CacheMiss(SamplerError):
    """A cache-only replay met a request it has no answer for."""


class SandboxError(LaunchError):
    """The worker's sandbox could not be created, reached or read."""


class UsageRefused(LaunchError):
    """A combination of options the paid path never allows (e.g. a paid sampler in the local sandbox)."""

    exit_code = EXIT_USAGE


class FreezeRefused(LaunchError):
    """A paid attempt without a freeze, or one that differs from it without a recorded deviation."""


class AttemptLive(LaunchError):
    """Another process holds the attempt's lock: it is still running."""
