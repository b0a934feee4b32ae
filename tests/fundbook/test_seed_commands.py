"""The seed's commands as written (issue 32): `fundbook desk ... --source-root .` is accepted (only as a check
that DIR is this checkout), `npm run preview -- --port N` passes the port to `make preview`, and `fundbook
sweep --help` names every arm kind."""

import json
import os
import shlex
import subprocess

from click.testing import CliRunner

from fundbook.cli import cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_desk_commands_accept_the_seed_s_source_root_when_it_is_this_checkout(tmp_path):
    runner = CliRunner()
    assert runner.invoke(cli, ["families", "--output", str(tmp_path / "f"), "--seeds", "1"]).exit_code == 0
    family = str(tmp_path / "f" / "FUND_01" / "seed-1")
    db = str(tmp_path / "h.sqlite")
    got = runner.invoke(
        cli, ["desk", "init", "--family-root", family, "--source-root", REPO, "--db", db, "--observation-end-day", "20"]
    )
    assert got.exit_code == 0 and got.stdout.startswith(f"initialised {db}: FUND_01/seed-1"), got.output
    got = runner.invoke(cli, ["desk", "packet", "--source-root", str(tmp_path), "--db", db])
    assert got.exit_code == 64
    assert (
        f"Invalid value for '--source-root': {tmp_path}: not the checkout whose engine this command runs" in got.stderr
    )


def test_npm_run_preview_passes_its_port_to_make_preview(tmp_path):
    """npm appends `-- ARGS` to the script's command line; builders/site/preview.sh turns --port N into PORT for
    `make preview` (a stand-in `make` on PATH prints what it was given)."""
    with open(os.path.join(REPO, "package.json")) as fh:
        argv = shlex.split(json.load(fh)["scripts"]["preview"])
    assert argv == ["sh", "builders/site/preview.sh"]
    (tmp_path / "make").write_text('#!/bin/sh\necho "PORT=$PORT $*"\n')
    (tmp_path / "make").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "PORT"}
    env["PATH"] = f"{tmp_path}:{env['PATH']}"
    for args, port in (([], "8000"), (["--port", "4321"], "4321"), (["--port=4321"], "4321")):
        done = subprocess.run([*argv, *args], capture_output=True, text=True, env=env, cwd=REPO)
        assert (done.returncode, done.stdout.strip()) == (0, f"PORT={port} --no-print-directory preview"), done.stderr
    for args, message in (
        (["--host", "x"], "unknown option --host (expected --port N)"),
        (["--port", "80; rm -rf /"], "--port: expected a number, got '80; rm -rf /'"),
        (["--port"], "--port needs a number"),
    ):
        done = subprocess.run([*argv, *args], capture_output=True, text=True, env=env, cwd=REPO)
        assert done.returncode == 64 and message in done.stderr and not done.stdout, (args, done.stderr)


def test_sweep_help_names_every_arm_kind():
    text = CliRunner().invoke(cli, ["sweep", "--help"]).output
    for kind in (
        "baseline:<policy>",
        "files:<dir>",
        "attempts:<dir>",
        "practitioners:<dir>",
        "mock-worker",
        "model:llama-cpp:<GGUF file>",
    ):
        assert kind in " ".join(text.split()), kind
