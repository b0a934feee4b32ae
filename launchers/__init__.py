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


def __getattr__(name):
    """`launchers.grammar_erratum` (launchers/_erratum.py), loaded on first use: it needs jsonschema, which a plain
    install of the launcher does not."""
    if name == "grammar_erratum":
        from . import _erratum
        return _erratum
    raise AttributeError(f"module 'launchers' has no attribute {name!r}")

__all__ = ["ATTEMPT_SCHEMA", "ATTEMPT_SCHEMA_VERSION", "TRANSCRIPT_SCHEMA", "LaunchError", "grammar_erratum"]
