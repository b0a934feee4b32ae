"""Nothing is consumed that a check could have saved: credentials, the host (power, sleep, disk), the model id
against the price table; every probe injectable, so every branch is tested on this machine."""

import os
import stat

import pytest
from click.testing import CliRunner

from launchers import _host
from launchers._controller import Limits
from launchers._credentials import check, check_modal, check_tinker
from launchers._errors import InputError
from fundbook.cli.launch import cli

from .conftest import CREDENTIALS, HealthyHost
from .test_paid_path import paid  # noqa: F401 -- the paid-path fixture: a clean tree, fake tinker and modal


def test_a_paid_attempt_without_a_tinker_key_consumes_nothing(paid, tmp_path, monkeypatch):  # noqa: F811
    """Held back: `execute --sampler tinker` without TINKER_API_KEY consumed the claim and recorded an
    infrastructure interruption. Now it is refused in one line before the claim is touched."""
    assert paid["freeze"]().exit_code == 0
    claim = paid["claim"]()
    monkeypatch.delenv("TINKER_API_KEY")
    result = paid["execute"](claim, str(tmp_path / "a"))
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "error: TINKER_API_KEY: not set, nor TINKER_CREDENTIAL_CMD" in result.output
    assert (
        paid["consumed"]() == [] and not os.path.exists(tmp_path / "a") and not os.path.exists(tmp_path / "a.partial")
    )
    monkeypatch.setenv("TINKER_API_KEY", "sk-not-a-tinker-key")
    result = paid["execute"](claim, str(tmp_path / "a"))
    assert result.exit_code == 1 and "TINKER_API_KEY: not a tinker key" in result.output and paid["consumed"]() == []
    monkeypatch.setenv("TINKER_API_KEY", CREDENTIALS["TINKER_API_KEY"])
    monkeypatch.setenv("MODAL_TOKEN_SECRET", "secret")
    result = paid["execute"](claim, str(tmp_path / "a"))
    assert result.exit_code == 1 and "the modal token secret is not of the shape" in result.output
    assert paid["consumed"]() == []


@pytest.mark.parametrize(
    "environ, found",
    [
        ({"TINKER_API_KEY": "tml-" + "a" * 30}, "TINKER_API_KEY"),
        ({"TINKER_API_KEY": "eyJhbGciOi.payload.sig"}, "TINKER_API_KEY"),
        ({"TINKER_CREDENTIAL_CMD": "print-token"}, "TINKER_CREDENTIAL_CMD"),
    ],
)
def test_tinker_credential_sources(environ, found, tmp_path):
    assert check_tinker(dict(environ, HOME=str(tmp_path))) == found


def test_a_stored_tinker_key_counts(tmp_path):
    (tmp_path / ".tinker").mkdir()
    (tmp_path / ".tinker" / "credentials.json").write_text('{"version": 1}')
    assert check_tinker({"HOME": str(tmp_path)}).endswith("credentials.json")


@pytest.mark.parametrize(
    "toml, message",
    [
        ('[default]\ntoken_id = "ak-' + "a" * 22 + '"\ntoken_secret = "as-' + "b" * 22 + '"\n', None),
        ('[work]\nactive = true\ntoken_id = "ak-' + "a" * 22 + '"\ntoken_secret = "as-' + "b" * 22 + '"\n', None),
        ('[default]\ntoken_id = "ak-' + "a" * 22 + '"\n', "one of them is missing"),
        ('[default]\ntoken_id = "nope"\ntoken_secret = "as-' + "b" * 22 + '"\n', "token id is not of the shape"),
        ("[default\n", "not a modal configuration file"),
        ('[other]\ntoken_id = "x"\n', "no profile [default]"),
    ],
)
def test_modal_credentials_from_the_config_file(tmp_path, toml, message):
    path = tmp_path / "modal.toml"
    path.write_text(toml)
    environ = {"HOME": str(tmp_path), "MODAL_CONFIG_PATH": str(path)}
    if message is None:
        assert check_modal(environ) == str(path)
    else:
        with pytest.raises(InputError, match=message.replace("[", r"\[")):
            check_modal(environ)


def test_modal_oauth_must_be_complete_and_alone():
    with pytest.raises(InputError, match="incomplete"):
        check_modal({"MODAL_OAUTH_REFRESH_TOKEN": "r"})
    assert (
        check_modal({"MODAL_OAUTH_REFRESH_TOKEN": "r", "MODAL_OAUTH_CLIENT_ID": "c", "MODAL_OAUTH_JWT_KEY": "k"})
        == "MODAL_OAUTH_REFRESH_TOKEN"
    )
    with pytest.raises(InputError, match="cannot both be set"):
        check_modal(dict(CREDENTIALS, MODAL_OAUTH_REFRESH_TOKEN="r"))
    assert check("mock", "local", {}) == {}  # a free attempt in the local sandbox needs no credential


# -- the host ------------------------------------------------------------------------------------------------------


class Probe(HealthyHost):
    def __init__(self, **answers):
        self.answers = answers
        self.inhibitors = []

    def power(self):
        return self.answers.get("power", super().power())

    def can_sleep(self):
        return self.answers.get("sleep", super().can_sleep())

    def inhibit(self, why):
        if self.answers.get("inhibit") is None:
            return None
        inhibitor = Released(why)
        self.inhibitors.append(inhibitor)
        return inhibitor

    def free_bytes(self, folder):
        return self.answers.get("free", super().free_bytes(folder))


class Released:
    what = "fake-inhibit"

    def __init__(self, why):
        self.why = why
        self.released = False

    def release(self):
        self.released = True


@pytest.mark.parametrize(
    "answers, message",
    [
        ({"power": {"on_battery": True, "percent": 90, "source": "BAT0 Discharging 90%"}}, "running on battery power"),
        ({"power": {"on_battery": False, "percent": 12, "source": "BAT0 Charging 12%"}}, "battery at 12 %"),
        ({"sleep": {"can_sleep": True, "source": "/sys/power/state: mem"}}, "it can suspend"),
        ({"free": 1000}, "1,000 bytes free"),
    ],
)
def test_the_host_preflight_refuses_before_the_claim_is_spent(tmp_path, state, monkeypatch, answers, message):
    """Seed 000: "a subsequent launch was refused on battery power before its authorisation claim or inference"."""
    monkeypatch.setattr(_host, "DEFAULT", Probe(**answers))
    runner = CliRunner()
    claim = str(tmp_path / "c.json")
    assert (
        runner.invoke(
            cli,
            [
                "authorise",
                "--family",
                "FUND_01",
                "--model",
                "mock",
                "--cap-micro-usd",
                "0",
                "--cap-tokens",
                "20000000",
                "--out",
                claim,
            ],
        ).exit_code
        == 0
    )
    result = runner.invoke(
        cli,
        [
            "execute",
            "--claim",
            claim,
            "--family",
            "FUND_01",
            "--seed",
            "1",
            "--horizon",
            "6",
            "--out",
            str(tmp_path / "a"),
        ],
    )
    assert result.exit_code == 1 and result.output.count("\n") == 1 and "error: host: " in result.output, result.output
    assert message in result.output
    assert not os.path.exists(os.path.join(state, "consumed")) and not os.path.exists(tmp_path / "a.partial")


def test_sleep_is_inhibited_for_the_attempt_and_released_after(run_attempt):
    host = Probe(sleep={"can_sleep": True, "source": "/sys/power/state: freeze mem"}, inhibit=True)
    record, out = run_attempt(horizon=6, host=host)
    (inhibitor,) = host.inhibitors
    assert inhibitor.released and inhibitor.why == f"fundbook attempt {os.path.basename(out)}"
    facts = record["volatile"]["host_preflight"]
    assert facts["sleep"] == {
        "can_sleep": True,
        "source": "/sys/power/state: freeze mem",
        "inhibited_by": "fake-inhibit",
    }
    assert facts["need_bytes"] == _host.worst_case_bytes(Limits(), 6)


def test_the_worst_case_disk_figure():
    """Per call: an answer at 32 bytes a token, a report journaled twice at 64 KiB, overheads; per checkpoint: its
    retained work and packet step; three times over (journal, transcript, record) plus ledger and desk."""
    per_call = 2048 * 32 + 2 * 65536 + 3 * 4096
    journal = 160 * per_call + 20 * (6 * 65536 + 4 * 4096)
    assert _host.worst_case_bytes(Limits(), 20) == 3 * journal + 160 * 3 * 1024 + 20 * 256 * 1024 + 1024 * 1024
    assert _host.worst_case_bytes(Limits(), 20) < 128 * 1024 * 1024  # about 126 MiB for the defaults


def _supply(root, name, **fields):
    folder = root / name
    folder.mkdir(parents=True)
    for key, value in fields.items():
        (folder / key).write_text(value + "\n")


def test_linux_power_supplies(tmp_path):
    root = tmp_path / "power_supply"
    assert _host.read_power_supply(str(root))["on_battery"] is False  # no such folder: no battery
    _supply(root, "BAT0", type="Battery", status="Discharging", capacity="57")
    found = _host.read_power_supply(str(root))
    assert (found["on_battery"], found["percent"]) == (True, 57) and "BAT0 Discharging 57%" in found["source"]
    _supply(root, "AC", type="Mains", online="1")
    assert _host.read_power_supply(str(root))["on_battery"] is False  # discharging while on mains: not on battery
    host = _host.Host()
    host.power_root = str(root)
    host.system = lambda: "Linux"
    assert host.power()["percent"] == 57


def test_pmset_output():
    out = "Now drawing from 'Battery Power'\n -InternalBattery-0 (id=123)\t43%; discharging; 3:12 remaining\n"
    assert _host.parse_pmset(out)["on_battery"] is True and _host.parse_pmset(out)["percent"] == 43
    assert _host.parse_pmset("Now drawing from 'AC Power'\n 100%; charged")["on_battery"] is False


def test_the_linux_sleep_states(tmp_path):
    host = _host.Host()
    host.system = lambda: "Linux"
    host.sleep_state = str(tmp_path / "state")
    assert host.can_sleep()["can_sleep"] is False  # no /sys/power/state: a container, the host cannot suspend
    (tmp_path / "state").write_text("freeze mem disk\n")
    assert host.can_sleep() == {"can_sleep": True, "source": f"{tmp_path / 'state'}: freeze mem disk"}


def _fake_tool(folder, name, body):
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_systemd_inhibit_is_held_while_the_pipe_is_open(tmp_path, monkeypatch):
    """The real inhibitor path, with a stand-in `systemd-inhibit` that (like the real one) runs its command: `cat`
    holds until this process closes the pipe -- and so ends with it, even at SIGKILL."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_tool(bin_dir, "systemd-inhibit", 'for a in "$@"; do last="$a"; done\necho "$@" > "$0.args"\nexec "$last"\n')
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    host = _host.Host()
    host.system = lambda: "Linux"
    inhibitor = host.inhibit("fundbook attempt x")
    assert inhibitor.what == "systemd-inhibit" and inhibitor.proc.poll() is None
    args = (bin_dir / "systemd-inhibit.args").read_text()
    assert (
        "--what=sleep:idle:handle-lid-switch" in args and "--mode=block" in args and "--why=fundbook attempt x" in args
    )
    inhibitor.release()
    assert inhibitor.proc.poll() == 0


def test_an_inhibitor_that_fails_is_a_refusal(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_tool(bin_dir, "systemd-inhibit", 'echo "Failed to inhibit: no logind" >&2\nexit 1\n')
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    host = _host.Host()
    host.system = lambda: "Linux"
    with pytest.raises(InputError, match="cannot inhibit sleep \\(systemd-inhibit exited 1: Failed to inhibit"):
        host.inhibit("x")


def test_the_real_probes_answer_on_this_machine(tmp_path):
    """Whatever this machine is, the probes give their documented shapes (no assertion on its power state)."""
    host = _host.Host()
    power, sleep = host.power(), host.can_sleep()
    assert set(power) == {"on_battery", "percent", "source"} and power["on_battery"] in (True, False, None)
    assert set(sleep) == {"can_sleep", "source"} and host.free_bytes(str(tmp_path)) > 0
