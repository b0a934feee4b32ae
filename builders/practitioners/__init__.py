"""Practitioner attempts: the desk's study-mode submissions, checked,
re-executed through the compiled bundle in Pyodide and published as records
under runs/practitioners/ (`fundbook practitioner import` and `verify`).

A practitioner run establishes what these batches did on this world under the
model worker's affordances; it is not a calibration or a certification of the
person (site/contract/index.md, "Practitioner runs").
"""

from ._protocol import (
    ABANDON_REASONS,
    KIND,
    OFFERED,
    PAUSE_REASONS,
    RECORD_SCHEMA,
    SPLIT,
    SUBMISSION_SCHEMA,
    consent_versions,
)
from ._published import check_engine_facts, check_published, published_records
from ._record import attempt_id
from ._stage import bundle_facts, import_submissions, verify_records
from ._submission import MAX_SUBMISSION_BYTES, check_submission, read_submission

__all__ = [
    "ABANDON_REASONS",
    "KIND",
    "OFFERED",
    "PAUSE_REASONS",
    "RECORD_SCHEMA",
    "SPLIT",
    "SUBMISSION_SCHEMA",
    "MAX_SUBMISSION_BYTES",
    "attempt_id",
    "bundle_facts",
    "check_engine_facts",
    "check_published",
    "check_submission",
    "consent_versions",
    "import_submissions",
    "published_records",
    "read_submission",
    "verify_records",
]
