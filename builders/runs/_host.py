"""Host CPython from the sources: the parity cross-check, never a substitute.

Produces the same shape as the Pyodide runner's fixture events so the two can
be compared field by field. Nothing it computes is published.
"""

import time

import engine

HOST_PATH = "host reference"


def execute_on_host(spec) -> dict:
    bare = {k: v for k, v in spec.items() if k != "run_id"}
    t0 = time.perf_counter()
    execution = engine.execute_fixture(bare)
    elapsed = time.perf_counter() - t0
    fields = engine.engine_fields(execution)
    return {"run_id": execution["run_id"], "fields": fields, "fields_sha256": engine.content_sha256(fields),
            "candidate_sha256": execution["candidate_sha256"], "execution": execution,
            "execute_us": round(elapsed * 1_000_000)}
