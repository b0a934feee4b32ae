"""The adapter to the runtime that executes fixtures: one pinned Pyodide
runtime (builders/runner/session.mjs, maybe shared with the other stages of
the build) executes the whole plan; events stream back one JSON line each."""

import json
import os

import engine

from .._errors import BuildError
from .._files import rel
from .._session import PyodideSession, own_session

RUNNER = "builders/runner/run_fixtures.mjs"
# Records name the bundle where `make build-engine` writes it: the command is a
# recipe for a reader's checkout, and its --bundle-sha256 pins the exact bytes,
# so a build from another directory (verify's scratch, a test) records the same.
CANONICAL_BUNDLE = "build/engine/fundbook-engine.zip"
CANONICAL_MANIFEST = "build/engine/manifest.json"
PLAN_LABEL = "fixture plan"


def plan_text(specs) -> str:
    """One {"run_id", "spec", "sha256"} line per fixture."""
    lines = []
    for spec in specs:
        bare = {k: v for k, v in spec.items() if k != "run_id"}
        lines.append(json.dumps({"run_id": spec["run_id"], "spec": bare, "sha256": engine.content_sha256(bare)},
                                sort_keys=True))
    return "\n".join(lines) + "\n"


def fixture_argv(bundle, spec):
    """The command that executes exactly this fixture through the bundle."""
    bare = {k: v for k, v in spec.items() if k != "run_id"}
    return ["node", RUNNER, "--bundle", CANONICAL_BUNDLE, "--bundle-sha256", bundle["bundle_sha256"],
            "--manifest", CANONICAL_MANIFEST, "--fixture", json.dumps(bare, sort_keys=True, separators=(",", ":"))]


def run_plan(bundle, specs, on_event=None, session=None):
    """Execute `specs` in one runtime. Returns (runtime event, [fixture events], batch facts)."""
    text = plan_text(specs)
    plan_sha = engine.sha256_hex(text.encode())
    with own_session(session) as runtime:
        _, events = runtime.request("run", on_event=on_event, bundle=bundle["file"],
                                    bundle_sha256=bundle["bundle_sha256"], manifest=bundle["manifest_file"],
                                    plan=text, plan_sha256=plan_sha, plan_label=PLAN_LABEL)
        ready = runtime.ready
    runtime_event = next((e for e in events if e["event"] == "runtime"), None)
    fixtures = [e for e in events if e["event"] == "fixture"]
    expected = [s["run_id"] for s in specs]
    got = [f["run_id"] for f in fixtures]
    if runtime_event is None or got != expected:
        raise BuildError(f"{PLAN_LABEL}: the runner executed {len(got)} fixtures, the plan lists {len(expected)}")
    batch = {"runner": " ".join(PyodideSession.argv), "request": "run", "plan_sha256": plan_sha,
             "shared_runtime": session is not None, "pyodide_load_ms": ready["load_ms"]}
    return runtime_event, fixtures, batch


def bundle_paths(directory, verified):
    """Where the bundle is (for the runner) and the names records give it."""
    return {"path": CANONICAL_BUNDLE, "manifest_path": CANONICAL_MANIFEST,
            "file": rel(os.path.join(directory, "fundbook-engine.zip")),
            "manifest_file": rel(os.path.join(directory, "manifest.json")),
            "bundle_sha256": verified["bundle_sha256"], "manifest_sha256": verified["manifest_sha256"]}
