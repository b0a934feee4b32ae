"""Deterministic proof fixtures for the transport and the worker: checks that need no model.

`fundbook-launch sandbox launch --fixture NAME` stages one of these beside the
worker; `sandbox exec-worker --fixture NAME` runs it in the sandbox and
compares what it prints, byte for byte, with what the host computes itself.
They are not a sampler (the mock sampler stands in for a model on the host;
a fixture never calls one) and they read nothing a worker may not read.

- `echo`: the files arrived and the sandbox's Python runs: the fixture prints
  the sha256 of every file under the work folder; the host expects exactly
  the staged manifest.
- `tools`: the worker's calculation tools run there and agree with the host:
  the fixture runs the staged `project` (no actions) and `headroom` on the
  staged packet; the host runs the engine's own on the same packet.
"""

import json

from engine import headroom, project, sha256_hex

ECHO = b'''"""Proof fixture `echo`: the sha256 of every file under the work folder (sorted, canonical JSON)."""
import hashlib, json, os, sys
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
files = {}
for folder, dirs, names in os.walk(root):
    dirs[:] = sorted(d for d in dirs if d != "__pycache__")
    for name in names:
        path = os.path.join(folder, name)
        with open(path, "rb") as fh:
            files[os.path.relpath(path, root).replace(os.sep, "/")] = hashlib.sha256(fh.read()).hexdigest()
sys.stdout.write(json.dumps({"fixture": "echo", "files": files}, sort_keys=True, separators=(",", ":")) + "\\n")
'''

TOOLS = b'''"""Proof fixture `tools`: the staged calculation tools on the staged packet (canonical JSON)."""
import json, os, sys
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, root)
from desktools import _tools
with open(os.path.join(root, "packet.json"), encoding="utf-8") as fh:
    packet = json.load(fh)
out = {"fixture": "tools", "project": _tools.project(packet, []), "headroom": _tools.headroom(packet)}
sys.stdout.write(json.dumps(out, sort_keys=True, separators=(",", ":")) + "\\n")
'''

FIXTURES = {"echo": ECHO, "tools": TOOLS}


def files(name) -> dict:
    """The fixture's files to stage (relative path -> bytes)."""
    return {f"proof/{name}.py": FIXTURES[name]}


def command(name) -> list:
    return ["python3", "-I", "-S", "-B", f"proof/{name}.py"]


def _line(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"


def expected(name, staged, packet) -> str:
    """What the fixture must print, computed on the host. `staged`: every staged file (path -> bytes)."""
    if name == "echo":
        return _line({"fixture": "echo", "files": {rel: sha256_hex(data) for rel, data in sorted(staged.items())}})
    return _line({"fixture": "tools", "project": project(packet, []), "headroom": headroom(packet)})
