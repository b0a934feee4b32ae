"""Re-executing practitioner sessions through the compiled bundle in the
pinned Pyodide: one runtime (builders/_session.py) for every session of an
import, the op in builders/runner/practitioners.mjs. Never host CPython."""

import json

import engine

from .._errors import BuildError
from .._files import rel
from .._session import own_session

MODULE = "builders/runner/practitioners.mjs"
EXECUTION_PATH = "compiled bundle in Pyodide"


def execute_sessions(bundle, sessions, session=None):
    """[{"source", "moves", "finalize"}] -> (runtime event, [session events]), in order.

    `bundle`: the verified bundle ({"zip_path", "manifest_path", "bundle_sha256"})."""
    text = "".join(json.dumps(s, sort_keys=True, separators=(",", ":")) + "\n" for s in sessions)
    with own_session(session) as runtime:
        _, events = runtime.request(
            "practitioners",
            module=MODULE,
            bundle=rel(bundle["zip_path"]),
            bundle_sha256=bundle["bundle_sha256"],
            manifest=rel(bundle["manifest_path"]),
            sessions=text,
            sessions_sha256=engine.sha256_hex(text.encode()),
        )
    runtime_event = next((e for e in events if e.get("event") == "runtime"), None)
    done = [e for e in events if e.get("event") == "session"]
    if runtime_event is None or len(done) != len(sessions):
        raise BuildError(f"{MODULE}: executed {len(done)} practitioner sessions of {len(sessions)}")
    if runtime_event["bundle_sha256"] != bundle["bundle_sha256"]:
        raise BuildError(
            f"{rel(bundle['zip_path'])}: sha256 expected {bundle['bundle_sha256']}, "
            f"the runtime saw {runtime_event['bundle_sha256']}"
        )
    for event in done:
        if event["ok"]:
            got = engine.content_sha256({k: event[k] for k in ("state", "result", "receipts")})
            if got != event["sha256"]:
                raise BuildError(
                    f"practitioner session {event['index']}: sha256 {event['sha256']} computed in "
                    f"Pyodide, {got} after transport"
                )
    return runtime_event, done
