"""The desk's standard library: only the modules the engine and the desk load.

The runtime's stdlib holds 559 modules; compiled, they are 4.4 MB that barely
compress, and the desk loads 121 of them (116 for Pyodide's own start-up).
`stdlib_modules.txt` beside this file lists them: an import trace of the
desk's whole workload (stdlib_trace.mjs running stdlib_workload.py in the
pinned Pyodide: start-up, the engine, every desk call and tool, the error
paths, verify), less the OPTIONAL modules below, which are imported only under
`try: ... except ImportError` for features the desk never uses.

`make build-desk` (stdlib_build.mjs, in the build's one runtime) selects the listed sources from the
runtime's own stdlib zip with `select_sources` and compiles them with that
runtime (stdlib_compile.py), without docstrings or column ranges. This module
is plain standard library so that it runs inside Pyodide as well as on the
host.

  python -m builders.desk.stdlib_trace [--write]
      re-runs the trace against this checkout's engine bundle and prints the
      list (or rewrites stdlib_modules.txt): stdlib_trace.py, host only, so
      that this helper, which the runner loads into Pyodide by its path,
      imports nothing of the build above it.

tests/desk/test_stdlib_subset.py fails when a fresh trace names a module the
list lacks, and runs the workload on the built subset, failing on any import
it cannot serve.
"""

import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent  # (inside Pyodide this module sits at /desk/: no error)
MODULES = HERE / "stdlib_modules.txt"

# Loaded by the runtime's start-up, but only under `try: import ... except
# ImportError`, for what the desk never does: TLS (asyncio's sslproto) and
# bzip2, LZMA and Zstandard members of zip files (zipfile, shutil).
OPTIONAL = {
    "ssl": "asyncio.sslproto: TLS transports (the desk opens no socket)",
    "_ssl": "ssl's helper",
    "bz2": "zipfile, shutil: bzip2 members (the desk reads stored and deflated zips only)",
    "lzma": "zipfile, shutil: LZMA members",
    "compression.zstd": "zipfile, shutil: Zstandard members",
    "compression.zstd._zstdfile": "compression.zstd's helpers",
    "compression": "compression.zstd's helpers",
    "compression._common": "compression.zstd's helpers",
    "compression._common._streams": "compression.zstd's helpers",
}
HEADER = (
    "# Standard-library modules the practice desk and verify load in the pinned Pyodide:\n"
    "# `python -m builders.desk.stdlib_trace --write` writes this file from an import trace,\n"
    "# less stdlib_subset.OPTIONAL (do not edit by hand).\n"
)


def read_modules(text: str) -> list:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def module_sources(name: str) -> tuple:
    """The zip entries that can hold the source of `name`: a module file or a package's __init__."""
    base = name.replace(".", "/")
    return (f"{base}.py", f"{base}/__init__.py")


def select_sources(stock_path: str, modules, out_path: str) -> dict:
    """Write a zip of the stock stdlib's sources of `modules`, entries in their original order.

    Raises ValueError naming the first module the stock zip does not hold."""
    with zipfile.ZipFile(stock_path) as zin:
        names = set(zin.namelist())
        keep = set()
        for module in modules:
            found = [p for p in module_sources(module) if p in names]
            if not found:
                raise ValueError(f"module {module!r} of {MODULES.name} is not in the runtime's stdlib")
            keep.add(found[0])
        with zipfile.ZipFile(out_path, "w") as zout:
            for info in zin.infolist():
                if info.filename in keep:
                    zout.writestr(info, zin.read(info))
    return {"modules": len(keep)}


def listed(traced) -> list:
    """What stdlib_modules.txt should say for a trace: every traced module but the optional ones."""
    return sorted(set(traced) - set(OPTIONAL))
