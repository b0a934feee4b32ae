"""build-desk's memory snapshot of the started engine, and the key the desk checks.

    python -m builders.desk.snapshot_stage --bundle build/engine --stdlib site/assets/desk/runtime/python_stdlib.zip

writes, beside the stdlib (site/assets/desk/runtime/, ignored by git):
  engine.snapshot   Pyodide's memory image with the stdlib started and the engine imported
                    (builders/desk/snapshot.mjs; about 30 MB, 3.6 MB as Brotli);
  runtime.json      its key: the Pyodide version, the stdlib's, the bundle's and the
                    manifest's sha256, and the image's own sha256 and size.

The desk's worker restores the image only when runtime.json names the bundle it
checked (and the image hashes to what runtime.json says, and the restored
interpreter names the same key); anything else is a cold start. The image is a
function of its inputs (the build fixes the host's random bytes and clock), so
a build whose inputs are unchanged keeps it; the inputs' digest is kept in
build/desk-snapshot.json.
"""

import json
import os
import subprocess
from pathlib import Path

import click

from builders._cli import StageCommand
from builders._errors import BuildError
from builders._files import ROOT, rel, sha256_file, write_bytes
from builders._node import last_line, node_env, node_executable, pinned_pyodide
from builders.bundle import verify_bundle

SCRIPT = "builders/desk/snapshot.mjs"
SNAPSHOT = "engine.snapshot"
RUNTIME = "runtime.json"
STATE = os.path.join("build", "desk-snapshot.json")
RUNTIME_FORMAT = 1  # bump when a field of runtime.json changes meaning (worker.js reads it)


def snapshot_inputs(bundle_dir, stdlib, root=ROOT) -> dict:
    verified = verify_bundle(bundle_dir)
    if not os.path.isfile(stdlib):
        raise BuildError(f"{rel(stdlib, root)}: missing: run `make build-desk` first (the desk's stdlib)")
    return {
        "pyodide": pinned_pyodide(root)["version"],
        "bundle_sha256": verified["bundle_sha256"],
        "manifest_sha256": verified["manifest_sha256"],
        "stdlib_sha256": sha256_file(stdlib),
        SCRIPT: sha256_file(os.path.join(root, SCRIPT)),
        "zip_path": verified["zip_path"],
    }


def _load(path):
    try:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh)
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}


def runtime_doc(facts) -> dict:
    """runtime.json: what the worker compares with the bundle it checked before fetching the image."""
    return {
        "format": RUNTIME_FORMAT,
        "pyodide_version": facts["pyodide_version"],
        "stdlib_sha256": facts["stdlib_sha256"],
        "bundle_sha256": facts["bundle_sha256"],
        "manifest_sha256": facts["manifest_sha256"],
        "snapshot": {"file": SNAPSHOT, "sha256": facts["snapshot_sha256"], "bytes": facts["bytes"]},
    }


def run_snapshot(bundle_zip, inputs, out, root=ROOT) -> dict:
    """Make the image with snapshot.mjs; returns its facts line."""
    node = node_executable(root)
    argv = [
        node,
        SCRIPT,
        "--stdlib",
        os.path.abspath(inputs["stdlib"]),
        "--bundle",
        os.path.abspath(bundle_zip),
        "--bundle-sha256",
        inputs["bundle_sha256"],
        "--manifest-sha256",
        inputs["manifest_sha256"],
        "--out",
        os.path.abspath(out),
    ]
    proc = subprocess.run(argv, cwd=root, env=node_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(last_line(proc.stderr) or f"{SCRIPT} exited with {proc.returncode}")
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise BuildError(f"{SCRIPT}: no facts line on stdout")


def build_snapshot(bundle_dir, stdlib, root=ROOT, force=False) -> dict:
    """Write engine.snapshot and runtime.json beside `stdlib` unless they are current."""
    inputs = snapshot_inputs(bundle_dir, stdlib, root)
    zip_path = inputs.pop("zip_path")
    out_dir = os.path.dirname(os.path.abspath(stdlib))
    out, doc_path = os.path.join(out_dir, SNAPSHOT), os.path.join(out_dir, RUNTIME)
    state_path = os.path.join(root, STATE)
    state = _load(state_path)
    last = state.get(os.path.abspath(out)) or {}
    doc = _load(doc_path)
    if (
        not force
        and last.get("inputs") == inputs
        and os.path.isfile(out)
        and doc.get("snapshot", {}).get("sha256") == last.get("sha256") == sha256_file(out)
    ):
        os.utime(out)
        os.utime(doc_path)
        return {"skipped": True, "sha256": last["sha256"], "bytes": os.path.getsize(out)}
    facts = run_snapshot(zip_path, dict(inputs, stdlib=stdlib), out, root)
    if sha256_file(out) != facts["snapshot_sha256"]:
        raise BuildError(f"{rel(out, root)}: sha256 differs from what {SCRIPT} reported")
    write_bytes(doc_path + ".tmp", (json.dumps(runtime_doc(facts), sort_keys=True, indent=2) + "\n").encode())
    os.replace(doc_path + ".tmp", doc_path)
    state[os.path.abspath(out)] = {"inputs": inputs, "sha256": facts["snapshot_sha256"]}
    write_bytes(state_path, (json.dumps(state, sort_keys=True, indent=2) + "\n").encode())
    return {"skipped": False, "sha256": facts["snapshot_sha256"], "bytes": facts["bytes"]}


@click.command(cls=StageCommand)
@click.option("--bundle", "bundle_dir", default="build/engine", show_default=True, help="The engine bundle folder.")
@click.option("--stdlib", required=True, help="The desk's stdlib zip (the image goes beside it).")
@click.option("--force", is_flag=True, help="Make the image even when its inputs are unchanged.")
@click.option(
    "--compile-if-stale",
    is_flag=True,
    help="First compile the bundle (as `make build-engine`) when it is missing or not of these sources.",
)
def main(bundle_dir, stdlib, force, compile_if_stale):
    """Snapshot the started engine for the desk's worker."""
    if compile_if_stale:
        from builders.bundle import build_engine
        from builders.desk.devsite import fresh_bundle

        if not fresh_bundle(Path(bundle_dir)):
            os.environ.setdefault("SOURCE_DATE_EPOCH", "1788739200")
            build_engine(bundle_dir, root=ROOT)
    facts = build_snapshot(bundle_dir, stdlib, force=force)
    state = "is current" if facts["skipped"] else "written"
    click.echo(f"desk snapshot: {state}, {facts['bytes'] / 2**20:.1f} MiB, sha256 {facts['sha256'][:12]}")


if __name__ == "__main__":
    main()
