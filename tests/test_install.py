"""`pip install .` alone gives working commands: no extras, a fresh venv, offline.

The wheelhouse is what requirements-runtime.lock pins (downloaded by `make
test` before the suite); the project itself is built from this checkout. So a
runtime import that pyproject.toml does not declare fails here, and so does a
declared dependency the runtime lock does not hold.
"""

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO

WHEELHOUSE = os.path.join(REPO, "build", "wheelhouse")
pytestmark = pytest.mark.xdist_group("plain-install")  # one venv for the module, in one worker


@pytest.fixture(scope="session")
def plain_install(tmp_path_factory):
    """One plain install per test run, shared by the xdist workers (the group mark alone let three workers each
    build one: 3 x 17 s)."""
    from tests.builders.conftest import _shared

    if not os.path.exists(os.path.join(WHEELHOUSE, ".downloaded")):
        pytest.fail("build/wheelhouse is missing: `make test` downloads it (requirements-runtime.lock)")
    target, _ = _shared(tmp_path_factory, "plain-install", _plain_install)
    return target / "venv" / "bin"


def _plain_install(base):
    base.mkdir(parents=True)
    # a copy of the checkout's tracked files: setuptools builds in the source tree (build/lib), never in this one
    source = base / "fundbook"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    for name in filter(None, files.split("\0")):
        if not name.startswith(("runs/", "tests/", "site/")) and os.path.isfile(os.path.join(REPO, name)):
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.join(REPO, name), source / name)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # --no-compile: the commands run once here, byte-compiling 60 packages would cost more than they do
    proc = subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "--quiet",
            "--no-compile",
            "--no-index",
            "--find-links",
            WHEELHOUSE,
            "--no-cache-dir",
            str(source),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PIP_CONFIG_FILE": os.devnull},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {"venv": str(venv)}


def _run(bin_dir, *argv, cwd):
    return subprocess.run(
        [str(bin_dir / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PATH": os.environ["PATH"], "HOME": str(cwd), "LANG": "C.UTF-8"},
    )


@pytest.mark.parametrize(
    "argv, first_line",
    [
        (("fundbook", "--help"), "Usage: fundbook [OPTIONS] COMMAND [ARGS]..."),
        (("fundbook", "sweep", "--help"), "Usage: fundbook sweep [OPTIONS]"),
        (("fundbook", "compare", "--help"), "Usage: fundbook compare [OPTIONS] DIRECTORY"),
        (("fundbook-launch", "--help"), "Usage: fundbook-launch [OPTIONS] COMMAND [ARGS]..."),
        (("fundbook-launch", "execute", "--help"), "Usage: fundbook-launch execute [OPTIONS]"),
    ],
)
def test_every_command_answers_on_a_plain_install(plain_install, tmp_path, argv, first_line):
    proc = _run(plain_install, *argv, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == first_line


def test_the_plain_install_grades_and_runs_the_launcher_self_check(plain_install, tmp_path):
    """Not only --help: the commands do their work with what `pip install .` brought."""
    gold = _run(plain_install, "fundbook", "gold", "--episode", "W3", "--output", "gold.json", cwd=tmp_path)
    assert gold.returncode == 0, gold.stderr
    graded = _run(plain_install, "fundbook", "grade", "gold.json", "--episode", "W3", "--json", cwd=tmp_path)
    assert graded.returncode == 0, graded.stderr
    assert '"points": 100' in graded.stdout
    check = _run(plain_install, "fundbook-launch", "self-check", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.splitlines()[-1].startswith("self-check: ") and "passed" in check.stdout.splitlines()[-1]
    imports = subprocess.run(
        [
            str(plain_install / "python"),
            "-c",
            "import pyarrow.parquet, jsonschema, tinker, modal, click, openai, anthropic; "
            "import experiments.sweep, experiments.compare, launchers; "
            "[launchers.sampler_class(n) for n in launchers.sampler_names()]; "
            "assert openai.__version__.startswith('3.'), openai.__version__",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert imports.returncode == 0, imports.stderr
