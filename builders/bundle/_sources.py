"""Which files go into the bundle: the whole `engine/` package.

engine/ holds only what the bundle holds (its Python sources and the episodes'
JSON); the command lines live above it in fundbook/cli/. So nothing is left
out but the interpreter's own bytecode caches, and a file of any other kind
in engine/ stops the build instead of being silently shipped or skipped."""

import hashlib
import os

from .._errors import BuildError
from .._files import ROOT

BUNDLED_SUFFIXES = (".py", ".json")


def engine_sources(root=ROOT) -> list:
    """[{"path", "sha256"}] of every file of engine/, sorted by repo-relative path."""
    found = []
    base = os.path.join(root, "engine")
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")  # written by CPython, not sources
        sub = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for name in filenames:
            path = f"{sub}/{name}"
            if not name.endswith(BUNDLED_SUFFIXES):
                raise BuildError(
                    f"{path}: not an engine file (engine/ holds only .py sources and .json data, "
                    f"all of it bundled); move it out of engine/"
                )
            with open(os.path.join(root, path), "rb") as fh:
                found.append({"path": path, "sha256": hashlib.sha256(fh.read()).hexdigest()})
    return sorted(found, key=lambda item: item["path"])
