"""The desk's standard-library subset: it serves every import the desk and
verify make, and the list behind it is what an import trace says."""

import ast
import importlib.util
import zipfile
from pathlib import Path

import pytest

from builders.desk import stdlib_subset as subset
from builders.desk import stdlib_trace

# Shares the bundle the browser tests build (one build per session, on one worker).
pytestmark = pytest.mark.xdist_group("browser")

ROOT = Path(__file__).resolve().parents[2]
BUILT = ROOT / "site" / "assets" / "desk" / "runtime" / "python_stdlib.zip"


@pytest.fixture(scope="module")
def built():
    if not BUILT.is_file():
        pytest.fail(f"{BUILT} is missing: run `make build-desk` (make test builds it first)")
    return BUILT


def test_the_built_subset_holds_exactly_the_listed_modules(built):
    listed = subset.read_modules(subset.MODULES.read_text())
    with zipfile.ZipFile(built) as zf:
        names = zf.namelist()
    held = sorted(
        n[: -len("/__init__.pyc")].replace("/", ".")
        if n.endswith("/__init__.pyc")
        else n[: -len(".pyc")].replace("/", ".")
        for n in names
    )
    assert held == sorted(listed)
    assert all(n.endswith(".pyc") for n in names)  # compiled: nothing to compile at page load
    assert built.stat().st_size < 1_000_000


def test_the_desk_workload_runs_on_the_subset(built, bundle_dir):
    """Every desk call, tool, error path and verify, on the subset: no import it cannot serve."""
    out = stdlib_trace.trace(bundle_dir / "fundbook-engine.zip", stdlib=built)
    assert out["failures"] == []
    assert out["answers"]["ok"] > 100 and out["answers"]["refused"] >= 5
    assert set(out["modules"]) <= set(subset.read_modules(subset.MODULES.read_text()))


def test_a_fresh_trace_names_no_module_the_list_lacks(bundle_dir):
    """A new import in the engine (or the runtime) fails here: run `make stdlib-trace`."""
    out = stdlib_trace.trace(bundle_dir / "fundbook-engine.zip")
    assert out["failures"] == []
    listed = set(subset.read_modules(subset.MODULES.read_text()))
    missing = sorted(set(subset.listed(out["modules"])) - listed)
    assert not missing, f"the desk loads {missing}: run `make stdlib-trace`"
    stale = sorted(listed - set(out["modules"]))
    assert not stale, f"listed but never loaded {stale}: run `make stdlib-trace`"


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def test_every_stdlib_import_of_the_engine_core_is_listed():
    """Static cross-check of the trace: every import in engine/ (the CLI aside), even in a
    function body, is built in or listed."""
    listed = set(subset.read_modules(subset.MODULES.read_text()))
    wanted = set()
    for path in sorted((ROOT / "engine").rglob("*.py")):
        if "cli" in path.relative_to(ROOT / "engine").parts:
            continue
        wanted |= {m for m in _imports(path) if m.split(".")[0] != "engine"}
    # modules built into or frozen in the interpreter need no file (CPython and Pyodide agree on these)
    builtin = {m for m in wanted if getattr(importlib.util.find_spec(m), "origin", None) in ("built-in", "frozen")}
    assert wanted - builtin <= listed, sorted(wanted - builtin - listed)


def test_select_sources_names_a_module_the_runtime_lacks(tmp_path):
    stock = ROOT / "node_modules" / "pyodide" / "python_stdlib.zip"
    if not stock.is_file():
        pytest.skip("the pinned Pyodide runtime is not installed (npm ci)")
    out = tmp_path / "src.zip"
    assert subset.select_sources(str(stock), ["json", "json.decoder"], str(out)) == {"modules": 2}
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == ["json/__init__.py", "json/decoder.py"]
    with pytest.raises(
        ValueError, match="module 'no_such_module' of stdlib_modules.txt is not in the runtime's stdlib"
    ):
        subset.select_sources(str(stock), ["json", "no_such_module"], str(tmp_path / "x.zip"))


def test_optional_modules_are_imported_only_under_a_guard():
    """What the list leaves out is imported under `except ImportError` wherever the trace loads it."""
    stock = ROOT / "node_modules" / "pyodide" / "python_stdlib.zip"
    if not stock.is_file():
        pytest.skip("the pinned Pyodide runtime is not installed (npm ci)")
    importers = {
        "ssl": ["asyncio/sslproto.py"],
        "bz2": ["zipfile/__init__.py", "shutil.py"],
        "lzma": ["zipfile/__init__.py", "shutil.py"],
        "compression.zstd": ["zipfile/__init__.py", "shutil.py"],
    }
    with zipfile.ZipFile(stock) as zf:
        for module, files in importers.items():
            assert module in subset.OPTIONAL
            for name in files:
                tree = ast.parse(zf.read(name))
                guarded = [
                    n
                    for n in ast.walk(tree)
                    if isinstance(n, ast.Try)
                    and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError" for h in n.handlers)
                    and module in set(_names(n.body))
                ]
                assert guarded, f"{name} imports {module} without an ImportError guard"


def _names(body):
    for node in body:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import):
                yield from (a.name for a in sub.names)
            elif isinstance(sub, ast.ImportFrom) and sub.module:
                yield sub.module
                yield from (f"{sub.module}.{a.name}" for a in sub.names)  # from compression import zstd
