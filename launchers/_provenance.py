"""What an attempt ran: the code revision, package versions, the published engine
bundle it is judged by, the prompt and the worker's files.

Attempts are judged by the host engine; `engine_identity` names the published
bundle (runs/index.json) and checks that every source file in its manifest is
byte-for-byte the host's, so "judged by the published engine" is a checked
fact, not a hope. A paid attempt refuses a dirty tree and an engine that
differs from the bundle.
"""

import hashlib
import importlib.metadata
import os
import platform
import subprocess

import engine

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Every module an attempt's behaviour depends on, by its path: the layers it runs (engine, builders, launchers),
# the experiment layer whose model arms run attempts, and the command lines (fundbook/cli: the launch CLI and the
# error and rendering layer it shares; a folder, so a key holds no dot and a deviation can name it). The freeze
# records each one's git tree id and refuses an attempt where one differs; the keys are its list of what it covers.
CODE_TREES = ("engine", "builders", "launchers", "experiments", "fundbook/cli")
RUNS = os.path.join(REPO, "runs")


def _git(*args):
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30)


def code_revision() -> dict:
    """{commit, dirty, trees}: dirty when tracked files outside runs/ differ from the commit; trees are the
    git tree ids of the code directories (unchanged by committing runs/, e.g. a freeze or an attempt).

    runs/ is data (records being rewritten, like the attempt now being made), not code; untracked files are not counted."""
    try:
        head = _git("rev-parse", "HEAD")
        status = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)runs")
        trees = {name: _git("rev-parse", f"HEAD:{name}").stdout.strip() or None for name in CODE_TREES}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None, "trees": {name: None for name in CODE_TREES}}
    if head.returncode != 0:
        return {"commit": None, "dirty": None, "trees": {name: None for name in CODE_TREES}}
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip()), "trees": trees}


def packages() -> dict:
    out = {"python": platform.python_version(), "engine": engine.ENGINE_VERSION}
    for name in ("fundbook", "click", "tinker", "modal"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def _sha256_file(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def engine_identity(runs_dir=RUNS) -> dict:
    """{bundle_sha256, manifest_sha256, sources_match, mismatch}: the published bundle and whether the host's
    engine sources are the ones in it (every non-bytecode file of its manifest, byte for byte)."""
    out = {"bundle_sha256": None, "manifest_sha256": None, "sources_match": False, "mismatch": None}
    from ._errors import InputError
    from ._jsonfile import read_json

    try:
        index = read_json(os.path.join(runs_dir, "index.json"), "engine index")
        manifest = read_json(os.path.join(runs_dir, "engine", "manifest.json"), "engine index")
        index_engine = (index.get("engine") if isinstance(index, dict) else None) or {}
        if not isinstance(manifest, dict) or not isinstance(index_engine, dict):
            raise InputError("not an index and a manifest")
    except InputError as exc:
        out["mismatch"] = f"no published engine ({exc.format_message()})"
        return out
    out["bundle_sha256"] = index_engine.get("bundle_sha256")
    out["manifest_sha256"] = index_engine.get("manifest_sha256")
    for entry in manifest.get("files") or []:
        path = entry.get("path", "") if isinstance(entry, dict) else ""
        if path.endswith(".pyc"):
            continue
        local = os.path.join(REPO, *path.split("/"))
        if not os.path.isfile(local) or _sha256_file(local) != entry.get("sha256"):
            out["mismatch"] = f"{path} differs from the published bundle's manifest"
            return out
    out["sources_match"] = out["bundle_sha256"] is not None
    return out
