"""fundbook's canonical desk engine.

Standard library only: the same sources run on host CPython and, compiled into
the engine bundle, in Pyodide (Node for the published runs, the browser for the
practice desk). This module is the public API; everything else is private.
"""

from ._candidate import gold_candidate, grade_candidate, grade_with_run, policy_candidate
from ._canon import canonical_json, content_sha256, pretty_json, sha256_hex
from ._diff import first_difference
from ._episodes import EPISODE_TOPICS, EPISODES, load_episode
from ._errors import (EXIT_OK, EXIT_REJECTED, EXIT_UNSCORABLE, EXIT_USAGE, BatchRejected, DeskError,
                      HistoryError, InputError, ReplayMismatch, RunClosed, Unscorable)
from ._families import FAMILIES, generate
from ._fixtures import execute_fixture, fixture_input, fixture_specs, run_id
from ._grade import exit_code_for, score_text
from ._mutations import MUTATION_NOTES, MUTATIONS, NotApplicable, mutate, observe
from ._records import ENGINE_FIELDS, RUN_SCHEMA, RUN_SCHEMA_VERSION, engine_fields, verify_record
from ._replay import final_result, replay
from ._run import Run
from ._runtime import History, load_family_root, write_family_root
from ._units import format_cents
from ._tools import TOOL_NAMES, exposure, headroom, interest, project
from ._world import fixture_sha256, validate_instance, with_horizon

ENGINE_VERSION = "0.1.0"

__all__ = [
    "ENGINE_VERSION", "EPISODES", "EPISODE_TOPICS", "FAMILIES", "MUTATIONS", "MUTATION_NOTES", "TOOL_NAMES",
    "EXIT_OK", "EXIT_REJECTED", "EXIT_UNSCORABLE", "EXIT_USAGE",
    "BatchRejected", "DeskError", "HistoryError", "InputError", "NotApplicable", "ReplayMismatch", "RunClosed",
    "Unscorable", "History", "Run",
    "canonical_json", "content_sha256", "format_cents", "pretty_json", "sha256_hex", "fixture_sha256",
    "load_episode", "generate", "validate_instance", "with_horizon", "load_family_root", "write_family_root",
    "gold_candidate", "policy_candidate", "grade_candidate", "grade_with_run", "exit_code_for", "score_text",
    "mutate", "observe", "replay", "execute_fixture", "fixture_input", "fixture_specs", "run_id",
    "interest", "project", "exposure", "headroom",
    "first_difference", "ENGINE_FIELDS", "RUN_SCHEMA", "RUN_SCHEMA_VERSION", "engine_fields", "verify_record", "final_result",
]
