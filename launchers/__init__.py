"""fundbook's paid model-worker path (host side).

budget estimate -> single-use authorisation -> isolated worker (local
subprocess or a Modal sandbox with its network blocked) -> every model call made
by the host controller under a ledger kept outside the worker -> the evaluator
accepts or refuses each typed proposal -> an attempt record, complete or not.

Never part of `make build`. The CLI is `fundbook-launch` (fundbook/cli/launch.py).
"""

ATTEMPT_SCHEMA = "fundbook.attempt/1"
ATTEMPT_SCHEMA_VERSION = 3  # bump when a record content field changes meaning (3: claim plan, role, projection, new statuses)
TRANSCRIPT_SCHEMA = "fundbook.transcript/1"

from ._errors import LaunchError  # noqa: E402

# The public API: name -> the private module that defines it, imported on first use (the launcher's modules
# import the SDKs and jsonschema lazily; so does this door).
_PUBLIC = {
    # an attempt as one value, and running it
    "AttemptSpec": "_spec", "Task": "_spec", "Sources": "_spec", "Places": "_spec", "Limits": "_controller",
    "execute": "_attempt", "recover": "_recover", "command_line": "_attempt", "load_source": "_attempt",
    "pricing": "_attempt",
    # the providers
    "SamplerOptions": "_provider", "SandboxOptions": "_provider", "Provider": "_provider", "Given": "_provider",
    "GivenSandbox": "_provider", "OptionRefused": "_provider", "SAMPLERS": "_providers", "SANDBOXES": "_providers",
    "sampler": "_providers", "sandbox": "_providers", "sampler_class": "_providers", "sampler_names": "_providers",
    "check_options": "_providers", "default_sandbox": "_providers",
    # claims, prices, budget
    "authorise": "_claims", "SPLITS": "_claims", "MAX_HOURS": "_claims", "load_prices": "_prices",
    "format_usd": "_prices", "MAX_SAFE": "_prices",
    # errors
    "InputError": "_errors", "NotInstalled": "_errors", "ClaimRefused": "_errors", "BudgetHalt": "_errors",
    "FreezeRefused": "_errors", "UsageRefused": "_errors", "OutputExists": "_errors", "SamplerError": "_errors",
    # records
    "verify_attempt": "_verify", "read_record": "_record", "records_in": "_export",
}


def __getattr__(name):
    """A public name, loaded from its module on first use; `launchers.grammar_erratum` (launchers/_erratum.py)
    needs jsonschema, which a plain install of the launcher does not."""
    import importlib
    if name == "grammar_erratum":
        return importlib.import_module("._erratum", __name__)
    if name in _PUBLIC:
        return getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    raise AttributeError(f"module 'launchers' has no attribute {name!r}")


__all__ = ["ATTEMPT_SCHEMA", "ATTEMPT_SCHEMA_VERSION", "TRANSCRIPT_SCHEMA", "LaunchError", "grammar_erratum",
           *_PUBLIC]
