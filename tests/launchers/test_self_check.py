import os
import subprocess

from click.testing import CliRunner

from launchers import _selfcheck
from fundbook.cli.launch import cli

from .conftest import REPO


def test_self_check_passes_as_installed():
    """`fundbook-launch self-check`, the console script, in the test suite."""
    proc = subprocess.run(
        [os.path.join(REPO, ".venv", "bin", "fundbook-launch"), "self-check"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, FUNDBOOK_LAUNCH_STATE="/nonexistent"),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "self-check: 19/19 passed" in proc.stdout
    for name in (
        "reserve, charge, release",
        "refusal at the cap",
        "reused claim refused",
        "crash keeps the reservation as a liability",
        "a deleted consumed marker does not renew the claim",
        "a paid sampler refuses the local sandbox",
        "a change after the freeze needs a dated deviation",
        "sandbox compute is capped apart from inference",
        "a cache-only replay miss is an error, never debt",
        "the budget's worst case is the worker's call limit",
        "a committed batch missing from the journal is reconciled from the receipts",
        "recover refuses a live attempt",
        "a claim is refused in a project that never authorised it",
        "a claim below the worker's worst case is refused at authorise",
        "missing or malformed credentials are refused before consumption",
        "the host preflight refuses battery power, an uninhibited sleep and a full disk",
        "a --cache that is not a decision cache is refused, untouched",
    ):
        assert f"ok   {name}" in proc.stdout


def test_self_check_fails_when_a_control_is_broken(monkeypatch):
    real = _selfcheck.consume
    calls = {"n": 0}

    def consume_twice(*args, **kwargs):  # a registry that forgets consumption
        calls["n"] += 1
        if calls["n"] == 1:
            return real(*args, **kwargs)
        return {"sha256": "x"}

    monkeypatch.setattr(_selfcheck, "consume", consume_twice)
    result = CliRunner().invoke(cli, ["self-check"])
    assert result.exit_code == 1
    assert "FAIL reused claim refused" in result.output and "FAIL a crash does not renew the claim" in result.output


def test_self_check_fails_when_a_preflight_is_broken(monkeypatch):
    """The new preflights are covered: a host probe that no longer refuses battery power fails the self-check."""
    from launchers import _host

    real = _host.preflight

    def lenient(folder, need, why, host=None):
        class Mains(type(host)):
            def power(self):
                return {"on_battery": False, "percent": None, "source": "broken"}

        return real(folder, need, why, Mains())

    monkeypatch.setattr(_host, "preflight", lenient)
    result = CliRunner().invoke(cli, ["self-check"])
    assert result.exit_code == 1 and "FAIL the host preflight refuses battery power" in result.output
