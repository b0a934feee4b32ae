"""What a study session on the desk may contain: the names and bounds the
desk's study mode writes (site/assets/desk/study_protocol.js, kept equal by
tests/desk/test_practitioner_import.py) and the import checks.

Keep the two in step; a change of meaning is a new SUBMISSION_SCHEMA.
"""

import hashlib
import os

from .._files import ROOT

SUBMISSION_SCHEMA = "fundbook.practitioner-submission/1"
RECORD_SCHEMA = "fundbook.practitioner/1"
RECORD_SCHEMA_VERSION = 1  # bump when a content field of the record changes meaning
KIND = "practitioner-attempt"
SPLIT = "public-practice"  # as model attempts (launchers/_claims.py SPLITS): FUND_01..FUND_04, any seed

# Exactly the model worker's affordances (launchers/worker/agent.py): the
# packet, the published sources (read_source), the four calculation tools,
# notes kept across checkpoints (note), the outcomes of the last five
# checkpoints (the worker's "Your last outcomes").
OFFERED = (
    "packet",
    "sources",
    "tool:project",
    "tool:exposure",
    "tool:headroom",
    "tool:interest",
    "notes",
    "last-outcomes",
)
PAUSE_REASONS = ("break", "interruption", "technical-problem", "page-reloaded", "other")
ABANDON_REASONS = ("out-of-time", "too-hard", "technical-problem", "chose-to-stop", "other")
COMPLETED_REASON = "finalised"
STATUSES = ("completed", "abandoned")

MAX_MS = 7 * 24 * 3600 * 1000  # one checkpoint's clock or one pause: at most a week
MAX_PAUSES = 2000
PARTICIPANT = r"p-[0-9a-f]{16}"
COHORT = r"[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?"
HEX64 = r"[0-9a-f]{64}"

DESK_DIR = os.path.join(ROOT, "site", "assets", "desk")
CONSENT_DIR = os.path.join(DESK_DIR, "consent")


def desk_build(directory=DESK_DIR) -> str:
    """The desk build a session records (site/assets/desk/submission.js deskBuild): the sha256 of the
    canonical {"files": {name: sha256}} over the desk's .js and .css files."""
    import engine

    files = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith((".js", ".css")):
            with open(os.path.join(directory, name), "rb") as fh:
                files[name] = hashlib.sha256(fh.read()).hexdigest()
    return engine.content_sha256({"files": files})


def consent_versions(directory=CONSENT_DIR) -> dict:
    """{version: sha256 of its text}: every consent text the desk has shown (v<N>.txt; never edited, only added)."""
    out = {}
    for name in sorted(os.listdir(directory)):
        if name.startswith("v") and name.endswith(".txt") and name[1:-4].isdigit():
            with open(os.path.join(directory, name), "rb") as fh:
                out[name[1:-4]] = hashlib.sha256(fh.read()).hexdigest()
    return out
