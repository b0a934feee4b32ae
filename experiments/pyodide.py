"""The sampled re-execution through the engine bundle in the pinned Pyodide.

A sweep computes its rows on host CPython. A seeded sample of its items is run
again, task for task (the same arms, the same host-produced candidates),
through experiments/runner/sample.mjs: the bundle is checked like the fixture
runner checks it, the engine is imported from the bundle's bytecode (every
engine module must come from the zip), and experiments/work.py measures the
same metrics. The values must be identical, row for row.
"""

import hashlib
import json
import os
import tempfile

import engine

from .errors import ExperimentError

RUNNER = "experiments/runner/sample.mjs"
DECIDE_RUNNER = "experiments/runner/decide.mjs"
SESSION_MODULE = "experiments/runner/ops.mjs"  # its `ops` run in the build's shared runtime


def select_sample(item_ids, size, seed) -> list:
    """`size` items, ordered by sha256 of the JSON [seed, item_id]: recorded, reproducible, not hand-picked."""

    def key(iid):
        return hashlib.sha256(json.dumps([seed, iid], separators=(",", ":")).encode()).hexdigest()

    return sorted(sorted(item_ids, key=key)[:size], key=list(item_ids).index)


def default_seed(evaluator_id) -> int:
    return int(evaluator_id[:12], 16)


def _run(op, runner, args, take, session):
    """One op in the build's shared runtime (a builders._session.PyodideSession) or in a runtime of its own."""
    from builders import BuildError
    from builders import ROOT
    from builders import last_line, node_executable, popen

    if session is not None:
        try:
            session.request(op, on_event=take, module=SESSION_MODULE, **args)
        except BuildError as exc:
            raise ExperimentError(f"Pyodide: {exc.format_message()}")
        return 0, ""
    try:
        node = node_executable()
    except BuildError as exc:
        raise ExperimentError(f"Pyodide: {exc.format_message()}")
    argv = [runner] + [x for key in args for x in ("--" + key.replace("_", "-"), args[key])]
    with popen(node, argv, ROOT) as proc:
        for raw in proc.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                break
            take(event)
        proc.stdout.read()
        stderr = proc.stderr.read()
        code = proc.wait()
    return code, last_line(stderr)


def decide_in_pyodide(rules_path, payloads, session=None) -> dict:
    """Recompute decisions with experiments/rules.py in Pyodide: {"runtime": event, "results": [answer]}."""
    data = b"".join(json.dumps(p, sort_keys=True, separators=(",", ":")).encode() + b"\n" for p in payloads)
    with open(rules_path, "rb") as fh:
        rules_sha = hashlib.sha256(fh.read()).hexdigest()
    with tempfile.TemporaryDirectory(prefix="fundbook-decide-") as tmp:
        path = os.path.join(tmp, "payloads.jsonl")
        with open(path, "wb") as fh:
            fh.write(data)
        args = {
            "rules": os.path.abspath(rules_path),
            "rules_sha256": rules_sha,
            "payloads": path,
            "payloads_sha256": hashlib.sha256(data).hexdigest(),
        }
        runtime, results, done, timings = None, [], [], []

        def take(event):
            nonlocal runtime
            if event["event"] == "rules":
                runtime = event
            elif event["event"] == "decision":
                results.append(event["result"])
                timings.append(event.get("ms"))
            elif event["event"] == "done":
                done.append(event)

        code, stderr = _run("decide", DECIDE_RUNNER, args, take, session)
    if code != 0 or not done:
        raise ExperimentError(f"Pyodide decisions: {stderr or f'{DECIDE_RUNNER} exited with {code}'}")
    return {"runtime": runtime, "results": results, "ms": timings}


def run_in_pyodide(bundle, tasks, session=None) -> dict:
    """Run `tasks` in one Pyodide runtime: the build's shared one when a
    builders._session.PyodideSession is given (`make build` loads Pyodide
    once), else a runtime of its own (experiments/runner/sample.mjs).
    Returns {"runtime": event, "results": [result]}."""
    from builders import BuildError
    from builders import ROOT
    from builders import last_line, node_executable, popen

    data = b"".join(json.dumps(t, sort_keys=True, separators=(",", ":")).encode() + b"\n" for t in tasks)
    with tempfile.TemporaryDirectory(prefix="fundbook-sample-") as tmp:
        path = os.path.join(tmp, "tasks.jsonl")
        with open(path, "wb") as fh:
            fh.write(data)
        args = {
            "bundle": os.path.abspath(bundle["zip_path"]),
            "bundle_sha256": bundle["bundle_sha256"],
            "manifest": os.path.abspath(os.path.join(bundle["dir"], "manifest.json")),
            "tasks": path,
            "tasks_sha256": hashlib.sha256(data).hexdigest(),
        }
        runtime, results, done = None, [], None

        def take(event):
            nonlocal runtime, done
            if event["event"] == "runtime":
                runtime = event
            elif event["event"] == "task":
                results.append(event["result"])
            elif event["event"] == "done":
                done = event

        if session is not None:
            try:
                session.request("sample", on_event=take, module=SESSION_MODULE, **args)
            except BuildError as exc:
                raise ExperimentError(f"Pyodide re-execution: {exc.format_message()}")
            code, stderr = 0, ""
        else:
            try:
                node = node_executable()
            except BuildError as exc:
                raise ExperimentError(f"Pyodide re-execution: {exc.format_message()}")
            argv = [RUNNER] + [
                x
                for key in ("bundle", "bundle_sha256", "manifest", "tasks", "tasks_sha256")
                for x in ("--" + key.replace("_", "-"), args[key])
            ]
            with popen(node, argv, ROOT) as proc:
                for raw in proc.stdout:
                    try:
                        event = json.loads(raw)
                    except ValueError:
                        break
                    take(event)
                proc.stdout.read()
                stderr = proc.stderr.read()
                code = proc.wait()
    if code != 0 or done is None:
        raise ExperimentError(f"Pyodide re-execution: {last_line(stderr) or f'{RUNNER} exited with {code}'}")
    if runtime.get("bundle_sha256") != bundle["bundle_sha256"]:
        raise ExperimentError("Pyodide re-execution: the runner loaded a different bundle")
    return {"runtime": runtime, "results": results}


def compare(host_values, pyodide_results) -> None:
    """host_values: {item_id: [values]}; ExperimentError naming the first differing row."""
    for result in pyodide_results:
        iid = result["item_id"]
        mine = host_values.get(iid)
        if mine != result["values"]:
            mine = mine or []
            for i in range(max(len(mine), len(result["values"]))):
                a = mine[i] if i < len(mine) else None
                b = result["values"][i] if i < len(result["values"]) else None
                if a != b:
                    raise ExperimentError(
                        f"Pyodide re-execution: item {iid} differs from host CPython at row {i}: "
                        f"host {json.dumps(a)}, bundle in Pyodide {json.dumps(b)}"
                    )


def summary(runtime, item_ids, seed, size) -> dict:
    return {
        "seed": seed,
        "size": size,
        "item_ids": item_ids,
        "identical": True,
        "pyodide_version": runtime["pyodide_version"],
        "bundle_sha256": runtime["bundle_sha256"],
        "manifest_sha256": runtime.get("manifest_sha256"),
        "sample_sha256": engine.content_sha256({"seed": seed, "item_ids": item_ids}),
    }
