"""`make build` on a fresh checkout leaves the tree clean.

The checkout holds this tree's files (tracked and new, as `git ls-files`
sees them) committed into a new repository; the virtual environment and
node_modules are this checkout's, linked in (their bootstrap is not what is
tested, so make is told they are current). Then the whole `make build` runs,
in one Pyodide runtime, and `git status --porcelain` must print nothing: the
committed runs/ are rebuilt byte for byte. Then, in that checkout, a run template made
to write a figure outside a mark stops `make site` in one line (issue 39).
Slow (the whole build, ~30 s alone)."""

import json
import os
import shutil
import subprocess

import pytest

from builders._files import ROOT

from .conftest import pyodide_test


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def _fresh_checkout(target):
    files = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, files):
        source = os.path.join(ROOT, name)
        if os.path.isfile(source):  # a tracked file deleted in this tree is not part of it
            os.makedirs(os.path.dirname(os.path.join(target, name)), exist_ok=True)
            shutil.copy2(source, os.path.join(target, name))
    for name in (".venv", "node_modules"):
        os.symlink(os.path.join(ROOT, name), os.path.join(target, name))
    _git(target, "init", "-q")
    with open(os.path.join(target, ".git", "info", "exclude"), "a") as fh:
        fh.write(".venv\nnode_modules\n")  # links here, folders in a real clone (.gitignore has `.venv/`)
    _git(target, "add", "-A")
    _git(target, "-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", "checkout")


@pytest.mark.slow
@pytest.mark.long  # the whole build (minutes): make test-long; in make test, test_reproducible and test_published
@pyodide_test  # rebuild the bundle and runs/ byte for byte
def test_make_build_on_a_fresh_checkout_leaves_the_tree_clean(tmp_path):
    checkout = tmp_path / "fundbook"
    checkout.mkdir()
    _fresh_checkout(str(checkout))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "MAKE", "MFLAGS"))}
    env.update(PYTHONPATH=str(checkout), SOURCE_DATE_EPOCH="1")  # an ambient epoch must not leak into the build
    proc = subprocess.run(
        ["make", "-o", ".venv/.installed", "-o", "node_modules/.installed", "build"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    status = _git(checkout, "status", "--porcelain")
    assert status == "", f"make build changed the tree:\n{status}"
    timings = json.loads((checkout / "build" / "timings" / "build.json").read_text())
    assert timings["pyodide_loads"] == 1
    assert set(timings["stages_ms"]) == {"build-engine", "build-runs", "build-desk", "build-experiments"}
    # the desk stdlib came out of that runtime: make did not start another for build-desk
    assert "stdlib_stage" not in proc.stdout and "stdlib.mjs" not in proc.stdout
    assert (checkout / "site" / "assets" / "desk" / "runtime" / "python_stdlib.zip").is_file()
    assert (checkout / "public" / "index.html").is_file()
    # ... and that fresh build refuses a page whose verifiable region shows a figure outside a mark (issue 39): the
    # run template made to say "Score 61/100" in plain text in its result region stops `make site`, in one line
    run = checkout / "builders" / "site" / "templates" / "run.md.j2"
    run.write_text(
        run.read_text().replace(
            '<div data-fb-verified="result">\n', '<div data-fb-verified="result">\n<p>Score 61/100</p>\n', 1
        )
    )
    proc = subprocess.run(
        ["make", "-o", ".venv/.installed", "-o", "node_modules/.installed", "site"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    refusals = [line for line in (proc.stdout + proc.stderr).splitlines() if "verifiable region" in line]
    assert refusals and all(
        line.endswith(
            'verifiable region "result" shows "Score 61/100" outside a figure mark: '
            "write it with the figure renderer (builders/site/figures.py) or move it "
            "out of the region"
        )
        for line in refusals
    ), refusals
    assert "Traceback" not in proc.stdout + proc.stderr
