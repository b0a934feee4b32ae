"""Which files go into the bundle: the engine's Python sources and its
episodes, never the host-only CLI (click) and never caches."""

import hashlib
import os

from .._files import ROOT

EXCLUDED_DIRS = {"cli", "__pycache__"}


def engine_sources(root=ROOT) -> list:
    """[{"path", "sha256"}] sorted by repo-relative path."""
    found = []
    base = os.path.join(root, "engine")
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDED_DIRS)
        sub = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for name in filenames:
            path = f"{sub}/{name}"
            if name.endswith(".py") or (sub == "engine/episodes" and name.endswith(".json")):
                with open(os.path.join(root, path), "rb") as fh:
                    found.append({"path": path, "sha256": hashlib.sha256(fh.read()).hexdigest()})
    return sorted(found, key=lambda item: item["path"])
