"""The house's layers, read from the code: every import runs down, none in a circle.

    engine < builders < launchers < experiments < inspect_fundbook < fundbook

An AST walk over every Python file of the six packages (imports inside
functions included: a lazy import is still an arrow), plus the relative
imports of their JavaScript runner modules, plus every file one of them loads
by a path string (the runner's `.mjs` modules, the Python helpers it copies
into Pyodide, the files a stage hashes). engine/ imports only the standard
library, since the bundle is exactly engine/ and runs in Pyodide.

No circle, at two scales: no modules that import each other (an import of a
package's face counts when it reads a name the face defines, as
`from fundbook.cli import cli` does), and no folders that do (at every level
of the tree, a folder's files and subfolders as rooms: builders/desk/ and
builders/site/ may not each import the other).
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


JS_IMPORT = re.compile(
    r"""(?:^|\s)(?:import|export)\b[^'"`]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)""", re.M
)


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


# -- files loaded by a path string ---------------------------------------------------

PATH_STRING = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.(?:mjs|js|py)")
JS_STRING = re.compile(r"""["'`]([\w./-]+\.(?:mjs|js|py))["'`]""")
JS_COMMENT = re.compile(r"/\*.*?\*/|(?:^|(?<=\s))//[^\n]*", re.S)
# loadHelper(py, URL, name) (builders/runner/_pyodide.mjs) reads URL against its own folder, whoever calls it
LOAD_HELPER = re.compile(r"""loadHelper\(\s*\w+\s*,\s*["'`]([^"'`]+)["'`]""")
HELPER_HOME = "builders/runner/_pyodide.mjs"


def _source_files(package, root=REPO):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, package)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".mjs", ".js")):
                yield os.path.join(dirpath, name)


def _in_tree(candidate, root):
    """The repository-relative path (with /) of an existing file of the tree, or None."""
    path = os.path.normpath(candidate)
    rel = os.path.relpath(path, root)
    if rel.startswith("..") or not os.path.isfile(path):
        return None
    return rel.replace(os.sep, "/")


def _docstrings(tree):
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def path_loads(path, root=REPO):
    """[(lineno, repository-relative file)] of the tree's .py/.mjs/.js files that a source names by a path string.

    Python: a string constant (docstrings aside) naming a file from the repository root ("launchers/runner/
    inspect_calls.mjs", a session op's module) or beside the file itself (os.path.join(HERE, "work.py")).
    JavaScript (comments aside): loadHelper's URL, read against builders/runner/; any other string naming a file
    beside the module (new URL("./stdlib_workload.py", import.meta.url)) or from the repository root. A path
    under the Pyodide file system ("/helpers/x.py") names no file of the tree."""
    here = os.path.dirname(path)
    found = []
    if path.endswith(".py"):
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in skip
                and PATH_STRING.fullmatch(node.value)
            ):
                target = _in_tree(os.path.join(root, node.value), root) or _in_tree(
                    os.path.join(here, node.value), root
                )
                if target:
                    found.append((node.lineno, target))
    else:
        with open(path, encoding="utf-8") as fh:
            text = JS_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), fh.read())
        imports = [m.span() for m in JS_IMPORT.finditer(text)]
        helpers = {m.start(1): m.group(1) for m in LOAD_HELPER.finditer(text)}
        for match in JS_STRING.finditer(text):
            spec, start = match.group(1), match.start(1)
            if spec.startswith("/") or any(a <= start < b for a, b in imports):
                continue
            if start in helpers:
                target = _in_tree(os.path.join(root, os.path.dirname(HELPER_HOME), spec), root)
            else:
                target = _in_tree(os.path.join(here, spec), root) or _in_tree(os.path.join(root, spec), root)
            if target:
                found.append((text.count("\n", 0, start) + 1, target))
    own = os.path.relpath(path, root).replace(os.sep, "/")
    return [(n, t) for n, t in found if t != own]


# -- the arrows between files ---------------------------------------------------------


def _module_file(name, root=REPO):
    base = os.path.join(root, *name.split("."))
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return os.path.relpath(candidate, root).replace(os.sep, "/")
    return None


def _python_arrows(path, root=REPO):
    """The modules a Python file imports, a package's face (__init__) only where a name it defines is read:
    `from . import sibling` loads the sibling, not its package's face again; `from fundbook.cli import cli` reads
    the face."""
    module = _module_name(path, root)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            names = [f"{target}.{alias.name}" for alias in node.names]
            modules = [name for name in names if _is_module(name, root)]
            targets += modules
            if len(modules) < len(names):
                targets.append(target)
    return targets


def arrows(root=REPO):
    """{file: set of files} over the six packages' .py, .mjs and .js files (repository-relative, with /): Python
    imports, relative JavaScript imports and path-string loads, each to a file of the tree."""
    graph = {}
    for package in LAYERS:
        for path in _source_files(package, root):
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            out = set()
            if path.endswith(".py"):
                out |= {f for f in (_module_file(t, root) for t in _python_arrows(path, root)) if f}
            else:
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for match in JS_IMPORT.finditer(text):
                    spec = match.group(1) or match.group(2)
                    if spec.startswith("."):
                        target = _in_tree(os.path.join(os.path.dirname(path), spec), root)
                        if target:
                            out.add(target)
            out |= {target for _, target in path_loads(path, root)}
            out.discard(rel)
            graph[rel] = out
    return graph


def upward_path_loads(root=REPO):
    """["file:line loads X (layer ...)"] for every path-string load from a lower layer into a higher one (or tests)."""
    bad = []
    for package in LAYERS:
        for path in _source_files(package, root):
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            for lineno, target in path_loads(path, root):
                top = target.split("/")[0]
                if top in RANK and RANK[top] > RANK[package]:
                    bad.append(f"{rel}:{lineno} loads {target} ({top} is above {package})")
                elif top == "tests":
                    bad.append(f"{rel}:{lineno} loads {target} (tests are above every layer)")
    return bad


def _strongly_connected(graph):
    """Every strongly connected set (two or more nodes) of {node: set of nodes}, each sorted, in order."""
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

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:  # the limit is the process's: restored, so a later test in this worker sees the default
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(out)


def _label(rel):
    """A Python file by its module name, any other file by its path."""
    if not rel.endswith(".py"):
        return rel
    name = rel[:-3].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def circles(root=REPO):
    """Every set of two or more files that import (or load) each other in a loop: Python files by module name."""
    graph = {_label(f): {_label(t) for t in ts} for f, ts in arrows(root).items()}
    return _strongly_connected(graph)


# Arrows left out of the folder check, each with why and until when; test_no_folder_circle fails when one is gone.
EXCUSED = {
    (
        "builders/runner/session.mjs",
        "builders/desk/stdlib_build.mjs",
    ): "the shared runtime's built-in stdlib op (desk/ above runner/: builders/desk/stdlib.mjs imports "
    "../runner/_pyodide.mjs); session.mjs is hashed into the bundle's published provenance, so the op moves "
    "(to a module the stdlib stage hands the session, as the layers above do) with the next change of it",
}


def folder_circles(root=REPO, excused=EXCUSED):
    """Every circle of rooms that holds a folder, at every level of the tree: in a folder, each file and each
    subfolder is a room, and an arrow between two files below the folder is an arrow between their rooms there.
    (A circle of files alone is a circle of modules: circles() names it.) Rooms by path, a folder with a /."""
    levels = {}
    for source, targets in arrows(root).items():
        for target in targets:
            if (source, target) in excused:
                continue
            a, b = source.split("/"), target.split("/")
            common = 0
            while common < min(len(a), len(b)) - 1 and a[common] == b[common]:
                common += 1
            here = "/".join(a[:common])
            room_a = "/".join(a[: common + 1]) + ("/" if len(a) > common + 1 else "")
            room_b = "/".join(b[: common + 1]) + ("/" if len(b) > common + 1 else "")
            level = levels.setdefault(here, {})
            level.setdefault(room_a, set()).add(room_b)
            level.setdefault(room_b, set())
    return sorted(
        group
        for level in levels.values()
        for group in _strongly_connected(level)
        if any(room.endswith("/") for room in group)
    )


def test_every_import_runs_down_the_layers():
    assert upward_imports() == []
    assert upward_js_imports() == []
    assert upward_path_loads() == []


def test_the_runner_modules_loaded_by_path_are_arrows():
    """The session runs an op's module by the path a layer above hands it, and loadHelper copies a Python helper
    into Pyodide by its path: both are arrows of the graph (a circle or an upward load through them is seen)."""
    graph = arrows()
    assert "launchers/runner/inspect_calls.mjs" in graph["launchers/inspect/_import.py"]
    assert "launchers/runner/inspect_calls.py" in graph["launchers/runner/inspect_calls.mjs"]
    assert "builders/runner/run_fixtures.py" in graph["experiments/runner/ops.mjs"]
    assert "builders/runner/session.mjs" in graph["builders/_session.py"]
    with open(os.path.join(REPO, HELPER_HOME), encoding="utf-8") as fh:  # where LOAD_HELPER reads its URL against
        assert re.search(
            r"export function loadHelper\(py, url, name\) \{\n  const source = readFileSync\(new URL\(url, "
            r"import\.meta\.url\)",
            fh.read(),
        )


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


CLI_FACE = "fundbook.cli"


def test_no_import_circle():
    assert [c for c in circles() if CLI_FACE not in c] == []


def test_the_cli_registers_its_commands_without_a_circle():
    assert [c for c in circles() if CLI_FACE in c] == []


def test_no_folder_circle():
    assert folder_circles() == []
    graph = arrows()
    assert [arrow for arrow in EXCUSED if arrow[1] not in graph.get(arrow[0], ())] == []  # an excuse outlives no arrow


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
    root = _tree(
        tmp_path,
        {
            "builders/site.py": "def f():\n    from experiments import feasibility\n",
            "experiments/feasibility.py": "",
            "engine/_x.py": "import click\n",
            "launchers/x.py": "from tests.engine import fuzzing\n",
        },
    )
    assert upward_imports(root) == [
        "engine/_x.py:1 imports click (engine/ is the bundle: standard library only)",
        "builders/site.py:2 imports experiments (experiments is above builders)",
        "builders/site.py:2 imports experiments.feasibility (experiments is above builders)",
        "launchers/x.py:1 imports tests.engine (tests are above every layer)",
    ]


def test_a_relative_upward_js_import_is_named(tmp_path):
    root = _tree(
        tmp_path,
        {
            "builders/runner/session.mjs": 'const m = await import("../../experiments/runner/ops.mjs");\n',
            "experiments/runner/ops.mjs": 'import { fail } from "../../builders/runner/_pyodide.mjs";\n',
        },
    )
    assert upward_js_imports(root) == [
        "builders/runner/session.mjs imports ../../experiments/runner/ops.mjs (experiments is above builders)"
    ]


def test_a_circle_through_a_lazy_import_is_found(tmp_path):
    root = _tree(
        tmp_path,
        {
            "engine/_run.py": "from ._book import x\n\ndef f():\n    from ._replay import y\n",
            "engine/_replay.py": "from ._run import Run\n",
            "engine/_book.py": "",
        },
    )
    assert circles(root) == [["engine._replay", "engine._run"]]


def test_a_circle_through_a_package_face_is_found(tmp_path):
    """The CLI's registration circle: the face imports its subcommand module, which reads a name of the face."""
    root = _tree(
        tmp_path,
        {
            "fundbook/cli/__init__.py": "cli = 1\nfrom . import experiments\n",
            "fundbook/cli/experiments.py": "from . import cli\n",
            "fundbook/cli/tools.py": "from . import _common\n",
            "fundbook/cli/_common.py": "",
            "builders/runs/__init__.py": "from ._stage import x\n",
            "builders/runs/_stage.py": "from . import _index\nx = 1\n",
            "builders/runs/_index.py": "",
        },
    )
    assert circles(root) == [["fundbook.cli", "fundbook.cli.experiments"]]


def test_a_folder_circle_is_found(tmp_path):
    root = _tree(
        tmp_path,
        {
            "builders/desk/devsite.py": "from builders.site.csp import with_csp\n",
            "builders/site/csp.py": "",
            "builders/site/hooks.py": "def f():\n    from builders.desk.page import site_files\n",
            "builders/desk/page.py": "",
            "builders/runs/_stage.py": "from builders._files import rel\n",
            "builders/_files.py": "",
        },
    )
    assert circles(root) == []
    assert folder_circles(root) == [["builders/desk/", "builders/site/"]]


def test_a_file_loaded_by_path_is_an_arrow(tmp_path):
    root = _tree(
        tmp_path,
        {
            "builders/runner/_pyodide.mjs": "export function loadHelper(py, url, name) {}\n",
            "builders/runner/run_fixtures.py": "",
            "builders/runner/session.mjs": "// the op's module: launchers/x.mjs\n",
            "builders/_session.py": '"""builders/runner/nothing.mjs"""\nRUNNER = "builders/runner/session.mjs"\n',
            "launchers/inspect/_import.py": 'RUNNER = "launchers/runner/calls.mjs"\n',
            "launchers/runner/calls.mjs": 'import { loadHelper } from "../../builders/runner/_pyodide.mjs";\n'
            'loadHelper(py, "./run_fixtures.py", "f");\n'
            'loadHelper(py, "../../launchers/runner/calls.py", "c");\n'
            'py.FS.writeFile("/helpers/calls.py", "");\n',
            "launchers/runner/calls.py": "",
            "engine/_x.py": 'SOURCE = "builders/runner/run_fixtures.py"\n',
        },
    )
    graph = arrows(root)
    assert graph["builders/_session.py"] == {"builders/runner/session.mjs"}
    assert graph["builders/runner/session.mjs"] == set()
    assert graph["launchers/inspect/_import.py"] == {"launchers/runner/calls.mjs"}
    assert graph["launchers/runner/calls.mjs"] == {
        "builders/runner/_pyodide.mjs",
        "builders/runner/run_fixtures.py",
        "launchers/runner/calls.py",
    }
    assert upward_path_loads(root) == [
        "engine/_x.py:1 loads builders/runner/run_fixtures.py (builders is above engine)"
    ]


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_is_a_package(layer):
    assert os.path.isfile(os.path.join(REPO, layer, "__init__.py"))
