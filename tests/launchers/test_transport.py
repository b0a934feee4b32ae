"""The sandbox transport without inference: private records, one line when Modal cannot be reached, a stop that
says what it reached, and deterministic proof fixtures for the transport and the worker."""

import json
import os
import stat

import modal.exception
import pytest
from click.testing import CliRunner

from launchers import _transport
from fundbook.cli.launch import cli

from .fakes import FakeModal


@pytest.fixture
def transport(monkeypatch, prices_file):
    fake = FakeModal()
    monkeypatch.setattr(_transport, "_modal", lambda modal=None: fake)
    runner = CliRunner()

    def run(*args):
        return runner.invoke(cli, ["sandbox", *[str(a) for a in args]])

    def launch(record, *extra):
        result = run(
            "launch",
            "--record",
            record,
            "--family",
            "FUND_01",
            "--seed",
            1,
            "--timeout",
            300,
            "--cap-micro-usd",
            100000,
            "--prices",
            prices_file,
            *extra,
        )
        assert result.exit_code == 0, result.output
        with open(record) as fh:
            return json.load(fh)

    yield fake, run, launch
    for sb in fake.sandboxes:  # the fake's processes and pipes end with the test
        sb.terminate()


def test_a_transport_record_is_private(transport, tmp_path):
    """Held back: `sandbox launch --record` wrote the record world-readable (0644); seed 000 says keep it private."""
    fake, run, launch = transport
    record = tmp_path / "sb.json"
    launch(record)
    assert stat.S_IMODE(os.stat(record).st_mode) == 0o600
    assert run("checkpoint", "--record", record).exit_code == 0  # rewritten: still private
    assert stat.S_IMODE(os.stat(record).st_mode) == 0o600
    new = tmp_path / "sb2.json"
    assert (
        run("resume", "--record", record, "--new-record", new, "--timeout", 300, "--cap-micro-usd", 100000).exit_code
        == 0
    )
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o600


def _unreachable(monkeypatch, where):
    """Modal raising its own AuthError where the SDK is first touched (as with a revoked token or no network)."""
    fake = FakeModal()
    error = modal.exception.AuthError("Token missing.\nCould not authenticate client.\nRun `modal token new`.")

    def lookup(name, create_if_missing=False):
        raise error

    if where == "app":
        fake.App.lookup = staticmethod(lookup)
    else:

        def from_id(sandbox_id):
            raise error

        fake.Sandbox.from_id = staticmethod(from_id)
        fake.App.lookup = staticmethod(lookup)
    monkeypatch.setattr(_transport, "_modal", lambda modal=None: fake)
    return fake


@pytest.mark.parametrize("command", ["build", "launch"])
def test_modal_unreachable_is_one_line_not_a_traceback(monkeypatch, tmp_path, prices_file, command):
    """Held back: `sandbox launch` and `sandbox build` printed a Modal AuthError traceback."""
    _unreachable(monkeypatch, "app")
    record = tmp_path / "sb.json"
    args = (
        ["build"]
        if command == "build"
        else [
            "launch",
            "--record",
            str(record),
            "--family",
            "FUND_01",
            "--seed",
            "1",
            "--timeout",
            "300",
            "--cap-micro-usd",
            "100000",
            "--prices",
            prices_file,
        ]
    )
    result = CliRunner().invoke(cli, ["sandbox", *args])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert (
        "error: modal: cannot reach Modal" in result.output and "AuthError: Token missing. Could not" in result.output
    )
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not record.exists()


def test_a_stop_that_reached_nothing_exits_1_and_is_not_recorded_as_stopped(transport, monkeypatch, tmp_path):
    """Held back: `sandbox stop` that reached nothing exited 0 and wrote "stopped" into the record."""
    fake, run, launch = transport
    record = tmp_path / "sb.json"
    launch(record)
    _unreachable(monkeypatch, "sandbox")
    result = run("stop", "--record", record)
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "the stop did not reach everything" in result.output and "AuthError" in result.output
    with open(record) as fh:
        doc = json.load(fh)
    assert doc["stopped"] is None
    (attempt,) = doc["stop_attempts"]
    assert attempt["sandbox_terminated"] is False and attempt["app_stopped"] is False and len(attempt["problems"]) == 2
    monkeypatch.setattr(_transport, "_modal", lambda modal=None: fake)  # Modal is back: the stop goes through
    result = run("stop", "--record", record)
    assert result.exit_code == 0 and "sandbox terminated: True; app stopped: True" in result.output, result.output
    with open(record) as fh:
        doc = json.load(fh)
    assert doc["stopped"]["sandbox_terminated"] is True and len(doc["stop_attempts"]) == 1
    assert all(sb.terminated for sb in fake.sandboxes) and all(app.stopped for app in fake.apps)


def test_modal_credentials_are_checked_before_the_sdk(monkeypatch, tmp_path, prices_file):
    """The real SDK path checks the token's presence and shape first: one line naming what is missing."""
    result = CliRunner().invoke(cli, ["sandbox", "build"])
    assert result.exit_code == 1 and "MODAL_TOKEN_ID: not set" in result.output, result.output
    monkeypatch.setenv("MODAL_TOKEN_ID", "ak-short")
    monkeypatch.setenv("MODAL_TOKEN_SECRET", "as-" + "s" * 22)
    result = CliRunner().invoke(cli, ["sandbox", "build"])
    assert result.exit_code == 1 and "the modal token id is not of the shape" in result.output, result.output


@pytest.mark.parametrize("fixture", ["echo", "tools"])
def test_a_proof_fixture_checks_the_transport_and_the_worker(transport, tmp_path, fixture):
    """`--fixture NAME`: a deterministic proof, computed by the host and run in the sandbox, no model involved."""
    fake, run, launch = transport
    record = tmp_path / "sb.json"
    doc = launch(record, "--fixture", fixture)
    assert doc["fixture"]["name"] == fixture and f"proof/{fixture}.py" in {f["path"] for f in doc["staged"]}
    result = run("exec-worker", "--record", record, "--fixture", fixture)
    assert result.exit_code == 0 and f"fixture {fixture}: proof matches" in result.output, result.output
    # a staged file changed in the sandbox (echo sees it) or a tool that no longer agrees with the host (tools)
    sb = fake.sandboxes[0]
    target = "packet.json" if fixture == "echo" else "desktools/_tools.py"
    with open(os.path.join(sb.root, target), "a", encoding="utf-8") as fh:
        fh.write("\n" if fixture == "echo" else "\n_real = headroom\ndef headroom(packet):\n    return {'x': 1}\n")
    result = run("exec-worker", "--record", record, "--fixture", fixture)
    assert result.exit_code == 1 and f"fixture {fixture}: MISMATCH" in result.output, result.output


def test_a_fixture_must_be_the_one_staged(transport, tmp_path):
    fake, run, launch = transport
    record = tmp_path / "sb.json"
    launch(record)
    result = run("exec-worker", "--record", record, "--fixture", "echo")
    assert result.exit_code == 1 and "was launched without a fixture" in result.output, result.output
    result = run("exec-worker", "--record", record, "--fixture", "echo", "--", "true")
    assert result.exit_code == 64
