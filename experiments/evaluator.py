"""The frozen evaluator: its provenance, its id, and the execution path.

    evaluator_id = sha256(json.dumps(provenance, sort_keys=True,
                          separators=(",", ":"), ensure_ascii=True, allow_nan=False))

The provenance names everything that can change a value: the engine bundle
(its sha256 and its manifest's), the grader's formats, gates and mutations,
the metric definitions and the sha256 of the code that measures them
(experiments/work.py), and the items manifest's sha256. Change any of them
and the id changes; rows of different ids are never compared.

Sweeps run on host CPython for speed. That is honest only if the host runs
the code the bundle was compiled from, so `check_sources` requires every
engine source to hash to the bundle manifest's digest (and no extra or
missing file); a sampled re-execution through the bundle in Pyodide then
checks the observations themselves (experiments/pyodide.py).
"""

import hashlib
import json
import os

import engine
from engine import CANDIDATE_FORMAT
from engine import RESULT_FORMAT

from . import work
from .errors import ExperimentError

PROVENANCE_VERSION = 1
HOST_PATH = "host CPython from engine sources that hash to the bundle manifest"
WORK_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "work.py")


def work_sha256() -> str:
    with open(WORK_FILE, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def load_bundle(bundle_dir) -> dict:
    """The verified bundle (builders.bundle.verify_bundle) or a one-line error."""
    from builders import BuildError
    from builders.bundle import verify_bundle

    try:
        verified = verify_bundle(bundle_dir)
    except BuildError as exc:
        raise ExperimentError(f"engine bundle: {exc.format_message()}")
    return {
        "dir": bundle_dir,
        "bundle_sha256": verified["bundle_sha256"],
        "manifest_sha256": verified["manifest_sha256"],
        "manifest": verified["manifest"],
        "zip_path": verified["zip_path"],
    }


def check_sources(bundle) -> dict:
    """Every host engine source against the bundle manifest; ExperimentError on any difference."""
    from builders.bundle import engine_sources

    host = {s["path"]: s["sha256"] for s in engine_sources()}
    listed = {f["path"]: f["sha256"] for f in bundle["manifest"]["files"] if not f["path"].endswith(".pyc")}
    for path in sorted(set(host) | set(listed)):
        if host.get(path) != listed.get(path):
            raise ExperimentError(
                f"{path}: sha256 {host.get(path) or 'missing'} on the host, {listed.get(path) or 'missing'} in the "
                f"bundle manifest ({os.path.join(bundle['dir'], 'manifest.json')}): the host would not run the "
                f"bundle's code; rebuild it (`make build-engine`)"
            )
    return {
        "files": len(host),
        "matched": True,
        "sources_sha256": engine.content_sha256(sorted([p, d] for p, d in host.items())),
    }


def provenance(bundle, items_sha256, items_count) -> dict:
    return {
        "version": PROVENANCE_VERSION,
        "engine": {
            "bundle_sha256": bundle["bundle_sha256"],
            "manifest_sha256": bundle["manifest_sha256"],
            "engine_version": bundle["manifest"]["engine_version"],
        },
        "grader": {
            "result_format": RESULT_FORMAT,
            "candidate_format": CANDIDATE_FORMAT,
            "gates": list(work.GATES),
            "mutations": list(engine.MUTATIONS),
        },
        "metrics": {"work_format": work.WORK_FORMAT, "definitions": work.METRICS, "code_sha256": work_sha256()},
        "items": {"manifest_sha256": items_sha256, "count": items_count},
    }


def evaluator_id(prov) -> str:
    text = json.dumps(prov, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()
