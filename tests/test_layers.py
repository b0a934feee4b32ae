"""The house's layers, read from the code: every import runs down, none in a circle.

    engine < builders < launchers < experiments < inspect_fundbook < fundbook

An AST walk over every Python file of the five packages (imports inside
functions included: a lazy import is still an arrow), plus the relative
imports of their JavaScript runner modules. engine/ imports only the standard
library, since the bundle is exactly engine/ and runs in Pyodide.
"""

import ast
import os
import re
import sys

import pytest

from tests.conftest import REPO

LAYERS = ("engine", "builders", "launchers", "experiments", "inspect_fundbook", "fundbook")
RANK = {name: i for i, name in enumerate(LAYERS)}
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def _python_files(package, root=REPO):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, package)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield os.path.join(dirpath, name)


def _module_name(path, root=REPO):
    rel = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def imports_of(path, root=REPO):
    """[(lineno, absolute module name)] of every import in the file."""
    module = _module_name(path, root)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found.append((node.lineno, target))
            # `from pkg import submodule` is an arrow to the submodule when it is one
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if _is_module(candidate, root):
                    found.append((node.lineno, candidate))
    return found


def _is_module(name, root=REPO):
    path = os.path.join(root, *name.split("."))
    return os.path.isfile(path + ".py") or os.path.isfile(os.path.join(path, "__init__.py"))


def upward_imports(root=REPO):
    """["file:line imports X (layer ...)"] for every import from a lower layer into a higher one,
    and every import of engine/ outside the standard library."""
    bad = []
    for package in LAYERS:
        for path in _python_files(package, root):
            rel = os.path.relpath(path, root)
            for lineno, target in imports_of(path, root):
                top = target.split(".")[0]
                if top in RANK and RANK[top] > RANK[package]:
                    bad.append(f"{rel}:{lineno} imports {target} ({top} is above {package})")
                elif top == "tests":
                    bad.append(f"{rel}:{lineno} imports {target} (tests are above every layer)")
                elif package == "engine" and top not in STDLIB and top != "engine":
                    bad.append(f"{rel}:{lineno} imports {target} (engine/ is the bundle: standard library only)")
    return bad


JS_IMPORT = re.compile(r"""(?:^|\s)(?:import|export)\b[^'"`]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)""", re.M)


def upward_js_imports(root=REPO):
    bad = []
    for package in LAYERS:
        for dirpath, _, filenames in os.walk(os.path.join(root, package)):
            for name in sorted(filenames):
                if not name.endswith((".mjs", ".js")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for match in JS_IMPORT.finditer(text):
                    spec = match.group(1) or match.group(2)
                    if not spec.startswith("."):
                        continue
                    target = os.path.relpath(os.path.normpath(os.path.join(dirpath, spec)), root)
                    top = target.split(os.sep)[0]
                    if top in RANK and RANK[top] > RANK[package]:
                        bad.append(f"{os.path.relpath(path, root)} imports {spec} ({top} is above {package})")
    return bad


def circles(root=REPO):
    """Every strongly connected set of modules (two or more) in the import graph."""
    graph = {}
    for package in LAYERS:
        for path in _python_files(package, root):
            name = _module_name(path, root)
            graph[name] = set()
            for _, target in imports_of(path, root):
                # an import of a package's face (its __init__) is not an arrow back into the package's own modules
                if target != name and _is_module(target, root) and not name.startswith(target + "."):
                    graph[name].add(target)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_every_import_runs_down_the_layers():
    assert upward_imports() == []
    assert upward_js_imports() == []


def test_inspect_ai_stays_in_its_two_places():
    """Inspect AI is imported by the task package (inspect_fundbook/) and the log importer (launchers/inspect/)
    only: the engine, the build and the worker never depend on it."""
    found = []
    for package in LAYERS:
        for path in _python_files(package):
            rel = os.path.relpath(path, REPO).replace(os.sep, "/")
            if rel.startswith(("inspect_fundbook/", "launchers/inspect/")):
                continue
            found += [f"{rel}:{n}" for n, target in imports_of(path) if target.split(".")[0] == "inspect_ai"]
    assert found == []


def test_no_import_circle():
    assert circles() == []


def test_the_bundle_is_exactly_engine():
    """No host-only code hides in engine/: no click, no CLI folder, no exclusion rule in the bundle builder."""
    from builders.bundle import engine_sources
    listed = {s["path"] for s in engine_sources()}
    on_disk = set()
    for dirpath, dirnames, filenames in os.walk(os.path.join(REPO, "engine")):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        on_disk |= {os.path.relpath(os.path.join(dirpath, n), REPO).replace(os.sep, "/") for n in filenames}
    assert listed == on_disk
    assert not os.path.exists(os.path.join(REPO, "engine", "cli"))


# -- the checks can fail -------------------------------------------------------------

def _tree(tmp_path, files):
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for package in LAYERS:
        (tmp_path / package).mkdir(exist_ok=True)
        (tmp_path / package / "__init__.py").touch()
    return str(tmp_path)


def test_an_upward_import_is_named(tmp_path):
    root = _tree(tmp_path, {"builders/site.py": "def f():\n    from experiments import feasibility\n",
                            "experiments/feasibility.py": "", "engine/_x.py": "import click\n",
                            "launchers/x.py": "from tests.engine import fuzzing\n"})
    assert upward_imports(root) == [
        "engine/_x.py:1 imports click (engine/ is the bundle: standard library only)",
        "builders/site.py:2 imports experiments (experiments is above builders)",
        "builders/site.py:2 imports experiments.feasibility (experiments is above builders)",
        "launchers/x.py:1 imports tests.engine (tests are above every layer)",
    ]


def test_a_relative_upward_js_import_is_named(tmp_path):
    root = _tree(tmp_path, {"builders/runner/session.mjs": 'const m = await import("../../experiments/runner/ops.mjs");\n',
                            "experiments/runner/ops.mjs": 'import { fail } from "../../builders/runner/_pyodide.mjs";\n'})
    assert upward_js_imports(root) == [
        "builders/runner/session.mjs imports ../../experiments/runner/ops.mjs (experiments is above builders)"]


def test_a_circle_through_a_lazy_import_is_found(tmp_path):
    root = _tree(tmp_path, {"engine/_run.py": "from ._book import x\n\ndef f():\n    from ._replay import y\n",
                            "engine/_replay.py": "from ._run import Run\n", "engine/_book.py": ""})
    assert circles(root) == [["engine._replay", "engine._run"]]


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_is_a_package(layer):
    assert os.path.isfile(os.path.join(REPO, layer, "__init__.py"))
