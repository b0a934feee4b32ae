"""Runs inside the pinned Pyodide: the runtime's own stdlib zip, with every module
as an unchecked-hash .pyc compiled by that runtime (sources dropped).

Pyodide then imports the stdlib without compiling it at page load, which is
most of its start-up time. Code objects carry the path the runtime mounts the
zip at, so tracebacks name the right file. Deterministic: entries in the
original order, fixed timestamps, fixed permissions.
"""

import importlib.util
import sys
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

STDLIB_ZIP = "/lib/python%d%d.zip" % sys.version_info[:2]
DATE = (1980, 1, 1, 0, 0, 0)


def build(source_path: str, out_path: str) -> dict:
    compiled = kept = 0
    with (
        zipfile.ZipFile(source_path) as zin,
        zipfile.ZipFile(out_path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout,
    ):
        for info in zin.infolist():
            data = zin.read(info)
            name = info.filename
            if name.endswith(".py"):
                try:
                    # optimize=2: no docstrings or asserts in the stdlib's own code (-OO, for this zip only)
                    code = compile(data, f"{STDLIB_ZIP}/{name}", "exec", dont_inherit=True, optimize=2)
                except SyntaxError:  # test data that is not meant to compile: keep it as it is
                    pass
                else:
                    name, data = (
                        name[:-3] + ".pyc",
                        bytes(_code_to_hash_pyc(code, importlib.util.source_hash(data), False)),
                    )
                    compiled += 1
            if not name.endswith(".pyc"):
                kept += 1
            out = zipfile.ZipInfo(name, DATE)
            out.external_attr = 0o644 << 16
            out.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(out, data, compresslevel=9)
    return {"compiled": compiled, "kept": kept}
