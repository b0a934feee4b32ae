"""fundbook's paid model-worker path (host side).

budget estimate -> single-use authorisation -> isolated worker (local
subprocess or a Modal sandbox with its network blocked) -> every model call made
by the host controller under a ledger kept outside the worker -> the evaluator
accepts or refuses each typed proposal -> an attempt record, complete or not.

Never part of `make build`. The CLI is `fundbook-launch` (fundbook/cli/launch.py).

This module is the package's front door: every name another package uses is
listed in `__all__` and loaded from its private module on first use (the
launcher's modules import the SDKs, modal and jsonschema lazily; so does this
door, and `fundbook-launch --help` imports none of them).
"""

ATTEMPT_SCHEMA = "fundbook.attempt/1"
ATTEMPT_SCHEMA_VERSION = (
    3  # bump when a record content field changes meaning (3: claim plan, role, projection, new statuses)
)
TRANSCRIPT_SCHEMA = "fundbook.transcript/1"

from ._errors import (  # noqa: E402  (the errors are cheap: click only)
    AttemptLive,
    BudgetHalt,
    CacheMiss,
    CallTimeout,
    CapacityError,
    ClaimRefused,
    FreezeRefused,
    FundbookError,
    InputError,
    LaunchError,
    NotInstalled,
    OutputExists,
    SamplerError,
    SandboxError,
    UsageOverrun,
    UsageRefused,
)

# The public API: name -> "module" (the same name there) or "module:name", imported on first use.
_PUBLIC = {
    # an attempt as one value, and running it
    "AttemptSpec": "_spec",
    "Task": "_spec",
    "Sources": "_spec",
    "Places": "_spec",
    "Limits": "_controller",
    "execute": "_attempt",
    "recover": "_recover",
    "command_line": "_attempt",
    "load_source": "_attempt",
    "pricing": "_attempt",
    "PilotSpec": "_pilot_run",
    "run_pilot": "_pilot_run:run",
    "default_pilot_path": "_pilot:default_path",
    "pilot_terms": "_pilot:terms",
    # the providers
    "SamplerOptions": "_provider",
    "SandboxOptions": "_provider",
    "Provider": "_provider",
    "Given": "_providers",
    "GivenSandbox": "_providers",
    "OptionRefused": "_provider",
    "SAMPLERS": "_providers",
    "SANDBOXES": "_providers",
    "sampler": "_providers",
    "sandbox": "_providers",
    "sampler_class": "_providers",
    "sampler_names": "_providers",
    "check_options": "_providers",
    "default_sandbox": "_providers",
    "local_model_id": "_llama_model",
    "check_model_id": "_llama_model",
    "CHOICES": "_providers",
    "check_credentials": "_credentials:check",
    "recorded_url": "_sampler_api",
    "read_env_file": "_envfile",
    "env_file_environment": "_envfile:environment",
    # the pieces a study's scripted arm assembles an attempt from (experiments/arms.py)
    "Controller": "_controller",
    "Desk": "_controller",
    "Timing": "_controller",
    "Journal": "_journal",
    "Ledger": "_ledger",
    "MockSampler": "_sampler_mock",
    "LocalSandbox": "_sandbox_local",
    "worker_identity": "_staging",
    # claims, prices, budget, tiers
    "authorise": "_claims",
    "Grant": "_claims",
    "plan_text": "_claims",
    "state_dir": "_claims",
    "SPLITS": "_claims",
    "MAX_HOURS": "_claims",
    "load_prices": "_prices",
    "format_usd": "_prices",
    "sandbox_rate": "_prices",
    "table_sha256": "_prices",
    "MAX_SAFE": "_prices",
    "estimate": "_budget",
    "attempt_plan": "_budget",
    "Planned": "_budget",
    "projection": "_budget",
    "authorise_args": "_budget",
    "planned_tokens_in": "_budget",
    "render_budget": "_budget:render",
    "FREE_PRICE": "_budget",
    "DEFAULT_HORIZON": "_budget",
    "DEFAULT_TOKENS_IN": "_budget",
    "DEFAULT_WORKER_SECONDS": "_budget",
    "run_self_check": "_selfcheck",
    "check_plan": "_tiers",
    "tier_budgets": "_tiers:budgets",
    "admit": "_tiers",
    "spent_from_records": "_tiers",
    "reconcile_tiers": "_tiers:reconcile",
    # the freeze and its deviations
    "freeze_content": "_freeze:content",
    "FreezeWorlds": "_freeze:Worlds",
    "write_freeze": "_freeze",
    "load_freeze": "_freeze:load",
    "project_caps": "_freeze",
    "deviate": "_freeze",
    "deviations_path": "_freeze",
    # records, the project ledger, exports
    "verify_attempt": "_verify",
    "project_of": "_verify",
    "is_local_model": "_verify",
    "read_record": "_record",
    "records_in": "_export",
    "check_tables": "_export",
    "write_tables": "_export",
    "rederive_all": "_rederive",
    "ProjectLedger": "_project",
    "project_dir": "_project",
    "reconcile": "_project",
    "is_inspect_record": "inspect._kind",
    "read_json": "_jsonfile",
    "loads": "_jsonfile",
    # the sandbox's own verbs (`fundbook-launch sandbox ...`)
    "transport": "_transport:",
}


def __getattr__(name):
    """A public name, loaded from its module on first use; `launchers.grammar_erratum` (launchers/_erratum.py)
    needs jsonschema, which a plain install of the launcher does not."""
    import importlib

    if name == "grammar_erratum":
        return importlib.import_module("._erratum", __name__)
    if name not in _PUBLIC:
        raise AttributeError(f"module 'launchers' has no attribute {name!r}")
    module, _, attr = _PUBLIC[name].partition(":")
    loaded = importlib.import_module(f".{module}", __name__)
    if _PUBLIC[name].endswith(":"):  # a module as a namespace of verbs
        return loaded
    return getattr(loaded, attr or name)


__all__ = [
    "ATTEMPT_SCHEMA",
    "ATTEMPT_SCHEMA_VERSION",
    "TRANSCRIPT_SCHEMA",
    "AttemptLive",
    "BudgetHalt",
    "CacheMiss",
    "CallTimeout",
    "CapacityError",
    "ClaimRefused",
    "FreezeRefused",
    "FundbookError",
    "InputError",
    "LaunchError",
    "NotInstalled",
    "OutputExists",
    "SamplerError",
    "SandboxError",
    "UsageOverrun",
    "UsageRefused",
    "grammar_erratum",
    *_PUBLIC,
]
