"""The stages' command lines: one-line errors and the project's exit codes."""

import os
import subprocess
import sys

from builders._files import ROOT


def _run(*argv, env=None):
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, **(env or {}))
    )


def test_usage_errors_exit_64():
    for module in ("builders.bundle", "builders.runs"):
        proc = _run(module, "build", "--no-such-option")
        assert proc.returncode == 64, proc.stderr
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


def test_a_missing_bundle_is_one_line_exit_1(tmp_path):
    proc = _run("builders.runs", "build", "--bundle", str(tmp_path), "--out", str(tmp_path / "runs"))
    assert proc.returncode == 1
    assert proc.stderr == f"error: {tmp_path}/fundbook-engine.zip: missing (run `make build-engine`)\n"
    assert not (tmp_path / "runs").exists()


def test_an_unknown_run_id_is_one_line_exit_1(tmp_path):
    proc = _run(
        "builders.runs", "build", "--bundle", str(tmp_path), "--out", str(tmp_path / "runs"), "--run-id", "reference-W9"
    )
    assert proc.returncode == 1
    assert "--run-id reference-W9: not a published fixture" in proc.stderr


def test_a_bad_source_date_epoch_is_one_line_exit_1(tmp_path):
    proc = _run("builders.bundle", "build", "--out", str(tmp_path / "engine"), env={"SOURCE_DATE_EPOCH": "soon"})
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: SOURCE_DATE_EPOCH: expected an integer") and proc.stderr.count("\n") == 1


def test_a_partial_build_cannot_replace_the_publication():
    proc = _run("builders.runs", "build", "--run-id", "reference-W1")
    assert proc.returncode == 64
    assert "pass --out DIR" in proc.stderr
