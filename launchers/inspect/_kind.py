"""Which attempt folders hold an Inspect record (harness inspect): everything that walks runs/attempts asks here
and treats those deliberately (they have no ledger, no claim and no worker transcript: `fundbook inspect
verify` re-imports them from their kept log). A record of any version of the Inspect format counts, so an old one
is never mistaken for a worker's: the build's check (builders/inspect_records.py) refuses any but the current."""

import json
import os

from engine import read_limited

from builders.inspect_format import MAX_FILE_BYTES, RECORD_SCHEMA  # noqa: F401  (the format's one owner)

SCHEMA_FAMILY = "fundbook.inspect-attempt/"


def is_inspect_schema(schema) -> bool:
    return isinstance(schema, str) and schema.startswith(SCHEMA_FAMILY)


def read_record(record_path):
    """A record.json parsed, read within MAX_FILE_BYTES and only if it is a regular file; None otherwise."""
    try:
        if not os.path.isfile(record_path):
            return None
        data = read_limited(record_path, MAX_FILE_BYTES)
        return json.loads(data) if len(data) <= MAX_FILE_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None


def is_inspect_record(record_path) -> bool:
    """True when the record's schema is an Inspect attempt's (a file that cannot be read is not: its own
    verifier names what is wrong)."""
    rec = read_record(record_path)
    return isinstance(rec, dict) and is_inspect_schema(rec.get("schema"))
