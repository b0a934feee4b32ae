"""Code revision and package versions for an attempt record."""

import importlib.metadata
import os
import platform
import subprocess

import engine

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def code_revision() -> dict:
    """{commit, dirty}: dirty when tracked files outside runs/ differ from the commit.

    runs/ is data (records being rewritten, like the attempt now being made), not code; untracked files are not counted."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30)
    try:
        head = git("rev-parse", "HEAD")
        status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)runs")
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    if head.returncode != 0:
        return {"commit": None, "dirty": None}
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def packages() -> dict:
    out = {"python": platform.python_version(), "engine": engine.ENGINE_VERSION}
    for name in ("fundbook", "click", "tinker", "modal"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out
