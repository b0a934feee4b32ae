"""fundbook's canonical desk engine.

Standard library only: the same sources run on host CPython and, compiled into
the engine bundle, in Pyodide (Node for the published runs, the browser for the
practice desk). This module is the public API; everything else is private.
"""

from ._baselines import POLICIES, policy_batch
from ._book import state_hash
from ._candidate import (CANDIDATE_FORMAT, gold_candidate, grade_candidate, grade_with_run, played_candidate,
                         policy_candidate, reference_economics)
from ._canon import MAX_DEPTH, MAX_SAFE_INTEGER, NotCanonical, canonical_json, content_sha256, pretty_json, sha256_hex
from ._commitment import public_salt
from ._diff import first_difference
from ._episodes import EPISODE_TOPICS, EPISODES, load_episode
from ._errors import (EXIT_OK, EXIT_REJECTED, EXIT_UNSCORABLE, EXIT_USAGE, BatchRejected, DeskError,
                      HistoryError, InputError, ReplayMismatch, RunClosed, Unscorable, shown)
from ._families import FAMILIES, generate
from ._fixtures import execute_fixture, fixture_input, fixture_specs, run_id
from ._grade import GATES, RESULT_FORMAT, exit_code_for, score_text
from ._jsonin import (MAX_ACTIONS_BYTES, MAX_BATCH_BYTES, MAX_CANDIDATE_BYTES, MAX_PACKET_BYTES, MAX_SESSION_BYTES,
                      depth_ok, parse_json, read_limited, unique_object)
from ._mutations import MUTATION_NOTES, MUTATIONS, NotApplicable, mutate, observe
from ._records import ENGINE_FIELDS, RUN_SCHEMA, RUN_SCHEMA_VERSION, engine_fields, verify_record
from ._replay import final_result, replay
from ._run import Run
from ._reference import reference_actions
from ._runtime import History, load_family_root, parse_head, write_family_root
from ._units import format_cents
from ._tools import TOOL_NAMES, exposure, headroom, interest, project
from ._vocabulary import (ACTION_TYPES, ASSET_REPORT_KEYS, AUTHORITY_KINDS, BREACH_CODES, REASON_CODES, REPORT_KEYS,
                          approval_id, vocabulary)
from ._world import fixture_sha256, validate_instance, with_horizon

ENGINE_VERSION = "0.1.0"

__all__ = [
    "vocabulary", "approval_id", "ACTION_TYPES", "AUTHORITY_KINDS", "BREACH_CODES", "REASON_CODES", "REPORT_KEYS",
    "ASSET_REPORT_KEYS", "CANDIDATE_FORMAT", "RESULT_FORMAT", "GATES", "POLICIES",
    "MAX_ACTIONS_BYTES", "MAX_BATCH_BYTES", "MAX_CANDIDATE_BYTES", "MAX_PACKET_BYTES", "MAX_SESSION_BYTES",
    "MAX_DEPTH", "MAX_SAFE_INTEGER", "NotCanonical", "shown", "parse_json", "read_limited", "depth_ok",
    "unique_object", "policy_batch", "reference_actions", "played_candidate", "reference_economics", "public_salt",
    "state_hash", "parse_head", "session",
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


def __getattr__(name):
    """`engine.session`, the practice desk's JSON session API (what the browser and the importers rebuild runs
    with), loaded on first use: most callers never need it."""
    if name == "session":
        from . import _session
        return _session
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
