"""Which attempt folders hold an Inspect record (harness inspect): everything that walks runs/attempts asks here
and treats those deliberately (they have no ledger, no claim and no worker transcript: `fundbook inspect
verify` re-imports them from their kept log)."""

import json
import os

RECORD_SCHEMA = "fundbook.inspect-attempt/1"
SKIP_REASON = ("an Inspect attempt (harness inspect): no ledger, claim or worker calls to check; "
               "`fundbook inspect verify` re-imports it from its kept log")


def is_inspect_record(record_path) -> bool:
    """True when the record's schema is the Inspect attempt's (a file that cannot be read is not: its own
    verifier names what is wrong)."""
    try:
        with open(record_path, encoding="utf-8") as fh:
            return json.load(fh).get("schema") == RECORD_SCHEMA
    except (OSError, ValueError, AttributeError):
        return False


def inspect_folder(folder) -> bool:
    return is_inspect_record(os.path.join(folder, "record.json"))
