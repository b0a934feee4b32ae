"""File helpers shared by the stages: hashing, repo-relative paths, and
replacing an output directory only once it is complete."""

import hashlib
import os
import shutil
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sha256_file(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def rel(path, root=ROOT) -> str:
    """Repo-relative, forward slashes: how paths appear in published records.
    A path outside the repo stays absolute rather than becoming ../../..."""
    relative = os.path.relpath(os.path.abspath(path), root)
    if relative == ".." or relative.startswith(".." + os.sep):
        return os.path.abspath(path).replace(os.sep, "/")
    return relative.replace(os.sep, "/")


def write_bytes(path, data: bytes):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


def staging_dir(target) -> str:
    """A fresh directory beside `target` (same filesystem, so rename is atomic)."""
    parent = os.path.dirname(os.path.abspath(target))
    os.makedirs(parent, exist_ok=True)
    path = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}-staging-", dir=parent)
    os.chmod(path, 0o755)  # mkdtemp makes 0700; the published tree is world-readable
    return path


def replace_dir(staged, target):
    """Swap a finished staging directory into place; the old one goes last."""
    old = None
    if os.path.exists(target):
        old = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}-old-", dir=os.path.dirname(target))
        os.rmdir(old)
        os.rename(target, old)
    os.rename(staged, target)
    if old:
        shutil.rmtree(old)
