"""The seam to Node and the pinned Pyodide runtime.

The stages never fall back to host CPython: if Node or the pinned runtime is
missing they stop with one line naming the install command.
"""

import json
import os
import shutil
import subprocess

from ._errors import BuildError
from ._files import ROOT

INSTALL = "run `npm ci` in the repository root (or `make node_modules/.installed`)"


def pinned_pyodide(root=ROOT) -> dict:
    """The pyodide version and integrity package-lock.json pins."""
    with open(os.path.join(root, "package-lock.json"), encoding="utf-8") as fh:
        lock = json.load(fh)
    entry = lock["packages"]["node_modules/pyodide"]
    return {"version": entry["version"], "integrity": entry["integrity"], "resolved": entry.get("resolved")}


def node_executable(root=ROOT) -> str:
    """Node, with the pinned Pyodide installed beside the repo, or BuildError."""
    node = os.environ.get("FUNDBOOK_NODE") or shutil.which("node")
    if not node or not os.access(node, os.X_OK):
        raise BuildError(f"node not found: install Node 20 and npm, then {INSTALL}")
    pinned = pinned_pyodide(root)["version"]
    installed = os.path.join(root, "node_modules", "pyodide", "package.json")
    try:
        with open(installed, encoding="utf-8") as fh:
            version = json.load(fh)["version"]
    except (OSError, ValueError, KeyError):
        raise BuildError(f"the pinned Pyodide runtime (pyodide {pinned}) is not installed: {INSTALL}")
    if version != pinned:
        raise BuildError(f"node_modules/pyodide is {version}, package-lock.json pins {pinned}: {INSTALL}")
    return node


def node_version(node) -> str:
    return subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()


def node_env() -> dict:
    """An allow-listed environment: nothing from the caller's shell leaks in."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONHASHSEED": "0",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "NODE_OPTIONS": "",
    }
    if "HOME" in os.environ:
        env["HOME"] = os.environ["HOME"]
    return env


def popen(node, argv, root=ROOT):
    """Start `node <argv>` in the repo root, stdout piped line by line."""
    return subprocess.Popen(
        [node, *argv], cwd=root, env=node_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
    )


def run(node, argv, root=ROOT) -> str:
    proc = subprocess.run([node, *argv], cwd=root, env=node_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(last_line(proc.stderr) or f"node {' '.join(argv)} exited with {proc.returncode}")
    return proc.stdout


def last_line(text) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1]
    return line[len("error: ") :] if line.startswith("error: ") else line
