"""build-engine on the host side: list the sources, hand them to the pinned
Pyodide (builders/runner/compile_bundle.mjs), check what comes back, write
provenance, and swap the finished directory into place."""

import base64
import datetime
import hashlib
import io
import json
import os
import platform
import shutil
import time
import zipfile

from .._errors import BuildError
from .._files import ROOT, rel, replace_dir, sha256_file, staging_dir, write_bytes
from .._node import node_executable, node_version, pinned_pyodide, run
from .._provenance import code_revision, statement
from ._sources import engine_sources

BUNDLE = "fundbook-engine.zip"
MANIFEST = "manifest.json"
PROVENANCE = "provenance.json"
COMPILER = ("builders/runner/compile_bundle.mjs", "builders/runner/compile_bundle.py",
            "builders/runner/_pyodide.mjs")
BUILD_TYPE = "urn:fundbook:build-engine:v1"


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def source_date_epoch() -> int:
    value = os.environ.get("SOURCE_DATE_EPOCH", "")
    if not value.isdigit():
        raise BuildError(f"SOURCE_DATE_EPOCH: expected an integer number of seconds (the Makefile sets it), got {value!r}")
    return int(value)


def read_bundle(directory):
    """The bundle's bytes and its manifest beside it; BuildError naming the file."""
    paths = {name: os.path.join(directory, name) for name in (BUNDLE, MANIFEST, PROVENANCE)}
    for name, path in paths.items():
        if not os.path.isfile(path):
            raise BuildError(f"{rel(path)}: missing (run `make build-engine`)")
    with open(paths[BUNDLE], "rb") as fh:
        zip_bytes = fh.read()
    with open(paths[MANIFEST], "rb") as fh:
        manifest_bytes = fh.read()
    with open(paths[PROVENANCE], "rb") as fh:
        provenance = json.loads(fh.read())
    return zip_bytes, manifest_bytes, provenance, paths


def verify_bundle(directory) -> dict:
    """Check the bundle against its provenance and manifest before anything runs
    it. Returns {"bundle_sha256", "manifest_sha256", "manifest", "zip_path"}."""
    zip_bytes, manifest_bytes, provenance, paths = read_bundle(directory)
    subjects = {s["name"]: s["digest"]["sha256"] for s in provenance.get("subject", [])}
    actual = {BUNDLE: hashlib.sha256(zip_bytes).hexdigest(), MANIFEST: hashlib.sha256(manifest_bytes).hexdigest()}
    for name in (BUNDLE, MANIFEST):
        if subjects.get(name) != actual[name]:
            raise BuildError(f"{rel(paths[name])}: sha256 expected {subjects.get(name)} ({PROVENANCE} subject), "
                             f"actual {actual[name]}")
    try:
        manifest = json.loads(manifest_bytes)
        with zipfile.ZipFile(io.BytesIO(zip_bytes)) as zf:
            inner = zf.read(MANIFEST)
            if inner != manifest_bytes:
                raise BuildError(f"{rel(paths[BUNDLE])}!{MANIFEST}: sha256 expected {actual[MANIFEST]} "
                                 f"(the manifest beside it), actual {hashlib.sha256(inner).hexdigest()}")
            listed = {f["path"]: f["sha256"] for f in manifest["files"]}
            names = set(zf.namelist()) - {MANIFEST}
            for name in sorted(names | set(listed)):
                got = hashlib.sha256(zf.read(name)).hexdigest() if name in names else None
                if got != listed.get(name):
                    raise BuildError(f"{rel(paths[BUNDLE])}!{name}: sha256 expected {listed.get(name)} "
                                     f"({MANIFEST}), actual {got}")
    except BuildError:
        raise
    except Exception as exc:  # bad CRC, bad deflate stream, broken central directory
        raise BuildError(f"{rel(paths[BUNDLE])}: unreadable bundle ({exc}); sha256 {actual[BUNDLE]}")
    return {"bundle_sha256": actual[BUNDLE], "manifest_sha256": actual[MANIFEST], "manifest": manifest,
            "zip_path": paths[BUNDLE]}


def _dependencies(sources, root, revision):
    pyodide = pinned_pyodide(root)
    algo, _, b64 = pyodide["integrity"].partition("-")
    deps = [
        {"uri": f"git+file:fundbook@{revision['commit']}", "digest": {"gitCommit": revision["commit"]},
         "annotations": {"dirty": revision["dirty"]}},
        {"uri": f"pkg:npm/pyodide@{pyodide['version']}", "digest": {algo: base64.b64decode(b64).hex()},
         "annotations": {"resolved": pyodide["resolved"], "lock": "package-lock.json"}},
    ]
    for path in COMPILER + ("package-lock.json",):
        deps.append({"name": path, "digest": {"sha256": sha256_file(os.path.join(root, path))}})
    deps.extend({"name": s["path"], "digest": {"sha256": s["sha256"]}} for s in sources)
    return deps


def build_engine(out, root=ROOT) -> dict:
    """Build the bundle into `out` (replaced only when complete)."""
    started = _now()
    node = node_executable(root)
    epoch = source_date_epoch()
    sources = engine_sources(root)
    stage = staging_dir(out)
    try:
        config = {"sources": sources, "source_date_epoch": epoch}
        config_path = os.path.join(stage, "config.json")
        write_bytes(config_path, json.dumps(config, sort_keys=True).encode())
        t0 = time.perf_counter()
        facts = json.loads(run(node, [COMPILER[0], "--config", config_path, "--out", stage], root))
        os.remove(config_path)
        zip_sha = sha256_file(os.path.join(stage, BUNDLE))
        manifest_sha = sha256_file(os.path.join(stage, MANIFEST))
        if (zip_sha, manifest_sha) != (facts["bundle_sha256"], facts["manifest_sha256"]):
            raise BuildError(f"{rel(os.path.join(stage, BUNDLE))}: sha256 expected {facts['bundle_sha256']} "
                             f"(written by the runtime), actual {zip_sha}")
        with open(os.path.join(stage, MANIFEST), encoding="utf-8") as fh:
            manifest = json.load(fh)
        revision = code_revision(root, ["engine", "builders/runner", "package-lock.json"])
        doc = statement(
            subjects=[(BUNDLE, zip_sha), (MANIFEST, manifest_sha)],
            build_type=BUILD_TYPE,
            external={"target": "make build-engine", "source_date_epoch": epoch,
                      "sources": "engine/**/*.py and engine/episodes/*.json, excluding engine/cli/",
                      "runtime": {"pyodide_version": facts["pyodide_version"], **manifest["runtime"]}},
            internal={"PYTHONHASHSEED": "0", "slsa_build_level": "L1", "signed": False,
                      "compiler": "py_compile inside the pinned Pyodide (pyodide-build is not used)"},
            dependencies=_dependencies(sources, root, revision),
            builder={"id": "urn:fundbook:builder:make-build-engine",
                     "version": {"node": node_version(node), "host_python": platform.python_version()}},
            metadata={"invocationId": f"build-engine@{revision['commit']}", "startedOn": started,
                      "finishedOn": _now(), "pyodide_load_ms": facts["load_ms"],
                      "compile_ms": facts["compile_ms"],
                      "total_ms": round((time.perf_counter() - t0) * 1000)},
        )
        write_bytes(os.path.join(stage, PROVENANCE),
                    (json.dumps(doc, sort_keys=True, indent=2) + "\n").encode())
        verify_bundle(stage)
        replace_dir(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return {"bundle_sha256": zip_sha, "manifest_sha256": manifest_sha, "files": len(manifest["files"]),
            "load_ms": facts["load_ms"], "compile_ms": facts["compile_ms"]}
