"""The adapter to the Node runner (builders/runner/run_fixtures.mjs): one
pinned Pyodide runtime executes the whole plan; events stream back one JSON
line each."""

import json
import os

import engine

from .._errors import BuildError
from .._files import rel, write_bytes
from .._node import last_line, node_executable, popen

RUNNER = "builders/runner/run_fixtures.mjs"


def write_plan(specs, path):
    """One {"run_id", "spec", "sha256"} line per fixture; returns the file's sha256."""
    lines = []
    for spec in specs:
        bare = {k: v for k, v in spec.items() if k != "run_id"}
        lines.append(json.dumps({"run_id": spec["run_id"], "spec": bare, "sha256": engine.content_sha256(bare)},
                                sort_keys=True))
    data = ("\n".join(lines) + "\n").encode()
    write_bytes(path, data)
    return engine.sha256_hex(data)


def fixture_argv(bundle, spec):
    """The command that executes exactly this fixture through the bundle."""
    bare = {k: v for k, v in spec.items() if k != "run_id"}
    return ["node", RUNNER, "--bundle", bundle["path"], "--bundle-sha256", bundle["bundle_sha256"],
            "--manifest", bundle["manifest_path"], "--fixture", json.dumps(bare, sort_keys=True, separators=(",", ":"))]


def run_plan(bundle, specs, plan_path, on_event=None):
    """Execute `specs` in one runtime. Returns (runtime event, [fixture events], batch argv)."""
    node = node_executable()
    plan_sha = write_plan(specs, plan_path)
    argv = [RUNNER, "--bundle", bundle["path"], "--bundle-sha256", bundle["bundle_sha256"],
            "--manifest", bundle["manifest_path"], "--fixtures", rel(plan_path), "--fixtures-sha256", plan_sha]
    runtime, fixtures, done = None, [], False
    with popen(node, argv) as proc:
        for line in proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                break  # the runner stopped mid-line; its exit code and stderr say why
            if event["event"] == "runtime":
                runtime = event
            elif event["event"] == "fixture":
                fixtures.append(event)
            elif event["event"] == "done":
                done = True
            if on_event:
                on_event(event)
        proc.stdout.read()
        stderr = proc.stderr.read()
        code = proc.wait()
    if code != 0 or not done:
        raise BuildError(last_line(stderr) or f"{RUNNER} exited with {code}")
    expected = [s["run_id"] for s in specs]
    got = [f["run_id"] for f in fixtures]
    if got != expected:
        raise BuildError(f"{rel(plan_path)}: the runner executed {len(got)} fixtures, the plan lists {len(expected)}")
    return runtime, fixtures, ["node", *argv]


def bundle_paths(directory, verified):
    return {"path": rel(os.path.join(directory, "fundbook-engine.zip")),
            "manifest_path": rel(os.path.join(directory, "manifest.json")),
            "bundle_sha256": verified["bundle_sha256"], "manifest_sha256": verified["manifest_sha256"]}
