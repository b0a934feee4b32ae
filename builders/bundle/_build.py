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
from .._node import node_executable, pinned_pyodide
from .._provenance import file_dependency, statement
from .._session import own_session
from ._sources import engine_sources

BUNDLE = "fundbook-engine.zip"
MANIFEST = "manifest.json"
PROVENANCE = "provenance.json"
# The code every compile runs, whichever command started the runtime (that
# entry point is a builder dependency, in the run details).
COMPILER = ("builders/runner/_pyodide.mjs", "builders/runner/ops.mjs", "builders/runner/compile_bundle.py")
BUILD_TYPE = "urn:fundbook:build-engine:v2"  # v2: sources named by sha256 and git blob id, no commit
BUILDER_ID = "urn:fundbook:builder:make-build-engine"
SOURCE_IDENTITY = (
    "no commit hash (a provenance committed with the code cannot name its own commit): every "
    "source is named by path, sha256 and git blob id; `git ls-tree -r <commit> engine` shows "
    "whether a commit holds exactly these sources"
)


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def source_date_epoch() -> int:
    value = os.environ.get("SOURCE_DATE_EPOCH", "")
    if not value.isdigit():
        raise BuildError(
            f"SOURCE_DATE_EPOCH: expected an integer number of seconds (the Makefile sets it), got {value!r}"
        )
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
            raise BuildError(
                f"{rel(paths[name])}: sha256 expected {subjects.get(name)} ({PROVENANCE} subject), "
                f"actual {actual[name]}"
            )
    try:
        manifest = json.loads(manifest_bytes)
        with zipfile.ZipFile(io.BytesIO(zip_bytes)) as zf:
            inner = zf.read(MANIFEST)
            if inner != manifest_bytes:
                raise BuildError(
                    f"{rel(paths[BUNDLE])}!{MANIFEST}: sha256 expected {actual[MANIFEST]} "
                    f"(the manifest beside it), actual {hashlib.sha256(inner).hexdigest()}"
                )
            listed = {f["path"]: f["sha256"] for f in manifest["files"]}
            names = set(zf.namelist()) - {MANIFEST}
            for name in sorted(names | set(listed)):
                got = hashlib.sha256(zf.read(name)).hexdigest() if name in names else None
                if got != listed.get(name):
                    raise BuildError(
                        f"{rel(paths[BUNDLE])}!{name}: sha256 expected {listed.get(name)} ({MANIFEST}), actual {got}"
                    )
    except BuildError:
        raise
    except Exception as exc:  # bad CRC, bad deflate stream, broken central directory
        raise BuildError(f"{rel(paths[BUNDLE])}: unreadable bundle ({exc}); sha256 {actual[BUNDLE]}")
    return {
        "bundle_sha256": actual[BUNDLE],
        "manifest_sha256": actual[MANIFEST],
        "manifest": manifest,
        "zip_path": paths[BUNDLE],
    }


def _dependencies(sources, root):
    """The build's inputs: the pinned runtime by its package URL, then every
    repository file the compile reads, by name, sha256 and git blob id."""
    pyodide = pinned_pyodide(root)
    algo, _, b64 = pyodide["integrity"].partition("-")
    deps = [
        {
            "uri": f"pkg:npm/pyodide@{pyodide['version']}",
            "digest": {algo: base64.b64decode(b64).hex()},
            "annotations": {"pinned_by": "package-lock.json (npm ci)"},
        }
    ]
    for path in COMPILER + ("package-lock.json",):
        with open(os.path.join(root, path), "rb") as fh:
            deps.append(file_dependency(path, fh.read()))
    for source in sources:
        with open(os.path.join(root, source["path"]), "rb") as fh:
            data = fh.read()
        dep = file_dependency(source["path"], data)
        if dep["digest"]["sha256"] != source["sha256"]:
            raise BuildError(
                f"{source['path']}: sha256 expected {source['sha256']} (listed for the bundle), "
                f"actual {dep['digest']['sha256']} (changed during the build)"
            )
        deps.append(dep)
    return deps


def _write_timings(path, facts):
    if path:
        write_bytes(path, (json.dumps(facts, sort_keys=True, indent=2) + "\n").encode())


def build_engine(out, root=ROOT, session=None, timings=None) -> dict:
    """Build the bundle into `out` (replaced only when complete). With a
    PyodideSession the compile runs in that runtime, else in one of its own.
    `timings`: a file for this build's measured times (never in `out`, which
    the site publishes)."""
    started = _now()
    t_start = time.perf_counter()
    node_executable(root)
    epoch = source_date_epoch()
    sources = engine_sources(root)
    stage = staging_dir(out)
    try:
        config = json.dumps({"sources": sources, "source_date_epoch": epoch}, sort_keys=True)
        with own_session(session, root) as runtime:
            facts, _ = runtime.request("compile", config=config, out=stage, root=os.path.abspath(root))
            load_ms, node = runtime.ready["load_ms"], runtime.ready["node_version"]
            entry = "builders/runner/session.mjs"
        zip_sha = sha256_file(os.path.join(stage, BUNDLE))
        manifest_sha = sha256_file(os.path.join(stage, MANIFEST))
        if (zip_sha, manifest_sha) != (facts["bundle_sha256"], facts["manifest_sha256"]):
            raise BuildError(
                f"{rel(os.path.join(stage, BUNDLE))}: sha256 expected {facts['bundle_sha256']} "
                f"(written by the runtime), actual {zip_sha}"
            )
        with open(os.path.join(stage, MANIFEST), encoding="utf-8") as fh:
            manifest = json.load(fh)
        with open(os.path.join(root, entry), "rb") as fh:
            entry_dep = file_dependency(entry, fh.read())
        doc = statement(
            subjects=[(BUNDLE, zip_sha), (MANIFEST, manifest_sha)],
            build_type=BUILD_TYPE,
            external={
                "target": "make build-engine",
                "source_date_epoch": epoch,
                "sources": "every file of engine/ (its .py sources and episodes/*.json)",
                "runtime": {"pyodide_version": facts["pyodide_version"], **manifest["runtime"]},
            },
            internal={
                "PYTHONHASHSEED": "0",
                "slsa_build_level": "L1",
                "signed": False,
                "compiler": "py_compile inside the pinned Pyodide (pyodide-build is not used)",
                "source_identity": SOURCE_IDENTITY,
            },
            dependencies=_dependencies(sources, root),
            builder={
                "id": BUILDER_ID,
                "version": {"node": node, "host_python": platform.python_version()},
                "builderDependencies": [entry_dep],
            },
            metadata={"startedOn": started, "finishedOn": _now()},
        )
        write_bytes(os.path.join(stage, PROVENANCE), (json.dumps(doc, sort_keys=True, indent=2) + "\n").encode())
        verify_bundle(stage)
        replace_dir(stage, out)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    result = {
        "bundle_sha256": zip_sha,
        "manifest_sha256": manifest_sha,
        "files": len(manifest["files"]),
        "load_ms": load_ms,
        "compile_ms": facts["compile_ms"],
        "shared_runtime": session is not None,
        "total_ms": round((time.perf_counter() - t_start) * 1000),
    }
    _write_timings(timings, {"stage": "build-engine", "started": started, **result})
    return result
