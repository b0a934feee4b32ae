"""Parity: host CPython, executing the same fixtures from the sources, must
give every record the same content_sha256 as the bundle did in Pyodide.

The comparison goes through engine.verify_record, the same check the browser
runs, so a divergence is reported as the record and its first differing field.
"""

import engine

from .._errors import BuildError
from ._host import execute_on_host


def check_parity(records, specs, executor=execute_on_host) -> dict:
    """records: {run_id: record}. Returns {run_id: host execute µs}; BuildError on divergence."""
    timings = {}
    for spec in specs:
        record = records[spec["run_id"]]
        host = executor(spec)
        timings[spec["run_id"]] = host["execute_us"]
        outcome = engine.verify_record(record, host["execution"])
        if not outcome["match"]:
            raise BuildError(f"parity: runs/{spec['run_id']}.json differs between Pyodide and host CPython at "
                             f"{outcome['first_difference']} (content_sha256 Pyodide "
                             f"{outcome['published_content_sha256']}, host {outcome['computed_content_sha256']})")
    return timings
