"""Inside the pinned Pyodide: compile the engine sources and write the bundle.

Runs in the runtime that will execute the bundle, so the bytecode is that
runtime's own (unchecked-hash .pyc: no timestamps, no source check at import).
The zip is deterministic: sorted entries, one fixed timestamp, fixed
permissions, explicit ZipInfo, no extra fields, the runtime's own zlib.
"""

import ast
import hashlib
import importlib.util
import json
import os
import py_compile
import shutil
import sys
import sysconfig
import time
import zipfile

FORMAT_VERSION = 1  # bump when the bundle layout or the manifest fields change
MANIFEST = "manifest.json"
DOS_EPOCH = 315532800  # 1980-01-01T00:00:00Z, the earliest time a zip can hold
FILE_MODE = 0o100644


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _engine_version(source):
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "ENGINE_VERSION" for t in node.targets):
            return ast.literal_eval(node.value)
    raise ValueError("engine/__init__.py: ENGINE_VERSION not found")


def runtime_info(pyodide_version):
    return {
        "pyodide_version": pyodide_version,
        "python_version": sys.version.split()[0],
        "abi": sysconfig.get_config_var("SOABI"),
        "cache_tag": sys.implementation.cache_tag,
        "pyc_magic": importlib.util.MAGIC_NUMBER.hex(),
        "pyc_invalidation": "unchecked-hash",
    }


def _zip_bytes(entries, epoch):
    date_time = time.gmtime(max(epoch, DOS_EPOCH))[:6]
    path = "/build/out/bundle.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=date_time)
            info.create_system = 3  # unix, so external_attr carries the mode
            info.external_attr = FILE_MODE << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            info.extra = b""
            zf.writestr(info, entries[name], compresslevel=9)
    with open(path, "rb") as fh:
        return fh.read()


def reset():
    """Forget an earlier compile in this runtime (one session may build twice)."""
    shutil.rmtree("/build", ignore_errors=True)


def build(config_json, pyodide_version):
    """Compile, write the manifest and the zip; return their bytes and facts."""
    config = json.loads(config_json)
    epoch = int(config["source_date_epoch"])
    entries = {}
    for item in config["sources"]:
        rel = item["path"]
        with open(f"/build/src/{rel}", "rb") as fh:
            data = fh.read()
        if _sha256(data) != item["sha256"]:
            raise ValueError(f"{rel}: sha256 expected {item['sha256']}, actual {_sha256(data)}")
        entries[rel] = data
        if rel.endswith(".py"):
            cfile = f"/build/pyc/{rel}c"
            os.makedirs(os.path.dirname(cfile), exist_ok=True)
            # dfile: the bundle-relative name, so no build path leaks into the bytecode.
            py_compile.compile(f"/build/src/{rel}", cfile=cfile, dfile=rel, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
            with open(cfile, "rb") as fh:
                entries[rel + "c"] = fh.read()
    manifest = {
        "format_version": FORMAT_VERSION,
        "name": "fundbook-engine",
        "engine_version": _engine_version(entries["engine/__init__.py"]),
        "runtime": runtime_info(pyodide_version),
        "source_date_epoch": epoch,
        "entry": {"sys_path": "fundbook-engine.zip", "import": "engine",
                  "execute": "engine.execute_fixture(spec)", "fields": "engine.engine_fields(execution)",
                  "verify": "engine.verify_record(record, execution)"},
        "files": [{"path": name, "sha256": _sha256(entries[name]), "size": len(entries[name])}
                  for name in sorted(entries)],
    }
    manifest_bytes = (json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
    entries[MANIFEST] = manifest_bytes
    zip_bytes = _zip_bytes(entries, epoch)
    return {"zip": zip_bytes, "manifest": manifest_bytes}
