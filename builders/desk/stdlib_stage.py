"""build-desk's stdlib, driven from Python so that `make build` can compile it
in the runtime the other stages already loaded (builders/_session.py).

    python -m builders.desk.stdlib_stage --out site/assets/desk/runtime/python_stdlib.zip

The output is a function of its inputs (the pinned runtime's own stdlib zip,
the compiler scripts, the Pyodide version), so a build whose inputs and output
are unchanged since the last one skips the compile; the inputs' digest is kept
in build/desk-stdlib.json (not beside the output: site/assets is published).
"""

import json
import os

import click

from builders._cli import StageCommand
from builders._errors import BuildError
from builders._files import ROOT, rel, sha256_file, write_bytes
from builders._node import pinned_pyodide
from builders._session import own_session

COMPILER = (
    "builders/desk/stdlib_build.mjs",
    "builders/desk/stdlib_compile.py",
    "builders/desk/stdlib_subset.py",
    "builders/desk/stdlib_modules.txt",
    "builders/runner/_pyodide.mjs",
)
STATE = os.path.join("build", "desk-stdlib.json")


def stdlib_inputs(root=ROOT) -> dict:
    runtime_zip = os.path.join(root, "node_modules", "pyodide", "python_stdlib.zip")
    if not os.path.isfile(runtime_zip):
        raise BuildError(f"{rel(runtime_zip, root)}: missing: run `npm ci` (or `make node_modules/.installed`)")
    inputs = {
        "pyodide": pinned_pyodide(root)["version"],
        "node_modules/pyodide/python_stdlib.zip": sha256_file(runtime_zip),
    }
    for path in COMPILER:
        inputs[path] = sha256_file(os.path.join(root, path))
    return inputs


def _state(state_path) -> dict:
    """{output path: {"inputs", "sha256"}} from the last builds."""
    try:
        with open(state_path, encoding="utf-8") as fh:
            state = json.load(fh)
        return state if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {}


def _current(out, inputs, state) -> bool:
    last = state.get(os.path.abspath(out)) or {}
    return last.get("inputs") == inputs and os.path.isfile(out) and sha256_file(out) == last.get("sha256")


def build_stdlib(out, session=None, root=ROOT, force=False) -> dict:
    """Compile the desk's stdlib into `out` unless it is current. Returns facts."""
    inputs = stdlib_inputs(root)
    state_path = os.path.join(root, STATE)
    state = _state(state_path)
    if not force and _current(out, inputs, state):
        os.utime(out)  # current: tell make so too, so build-desk does not load Pyodide again
        return {"skipped": True, "sha256": sha256_file(out)}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with own_session(session, root) as runtime:
        facts, _ = runtime.request("stdlib", out=os.path.abspath(out))
    digest = sha256_file(out)
    state[os.path.abspath(out)] = {"inputs": inputs, "sha256": digest}
    write_bytes(state_path, (json.dumps(state, sort_keys=True, indent=2) + "\n").encode())
    return dict(facts, skipped=False, sha256=digest)


@click.command(cls=StageCommand)
@click.option("--out", required=True, help="Where to write the compiled stdlib zip.")
@click.option("--force", is_flag=True, help="Compile even when the inputs and output are unchanged.")
def main(out, force):
    """Compile the pinned runtime's stdlib with that runtime, for the desk."""
    facts = build_stdlib(out, force=force)
    if facts["skipped"]:
        click.echo(f"desk stdlib: {rel(out)} is current (sha256 {facts['sha256'][:12]})")
    else:
        click.echo(
            f"desk stdlib: {facts['compiled']} modules compiled in {facts['compile_ms']} ms, "
            f"sha256 {facts['sha256'][:12]}"
        )


if __name__ == "__main__":
    main()
