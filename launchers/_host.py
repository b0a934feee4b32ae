"""The host preflight: refused before the claim is consumed, in one line with the reason.

An attempt needs a host that stays up for its whole duration. An earlier
paid smoke lost its worker when the host hibernated, and the launch after it
was refused on battery power before any claim or inference; this module is
that refusal. Three probes, each replaceable (a `Host` subclass), so every
branch is tested on any machine:

- power: on battery, or a battery below LOW_BATTERY_PERCENT, is refused
  (Linux: /sys/class/power_supply; macOS: `pmset -g batt`);
- sleep: when the host can suspend (Linux: /sys/power/state lists a state;
  macOS always), the launcher inhibits it for the attempt's duration with
  `systemd-inhibit` (Linux) or `caffeinate -w <pid>` (macOS), a child that
  reads a pipe this process holds, so the inhibition ends with the attempt
  -- even one killed with SIGKILL; a host that can suspend and cannot be
  inhibited is refused;
- disk: the free space where the attempt is written must hold its
  worst-case journal and record (`worst_case_bytes`).
"""

import os
import platform
import shutil
import subprocess
import time

from ._errors import InputError

LOW_BATTERY_PERCENT = 20
MIB = 1024 * 1024
TOKEN_BYTES = 32  # planning bound: bytes of answer text per output token
STEP_PAYLOAD = 64 * 1024  # the controller's bound on one journaled worker value (tool output, arguments, batch)
STEP_OVERHEAD = 4096  # a step's own fields, evaluator text, journal framing


def worst_case_bytes(limits, horizon, calls_per_checkpoint=8, retained_limit=65536) -> int:
    """Disk an attempt may need: the journal (per call: the answer, one worker report journaled twice at most,
    overheads; per checkpoint: its packet step and retained work), about as much again in transcript and record,
    the ledger and the desk history."""
    calls = min(limits.max_calls, horizon * calls_per_checkpoint)
    per_call = limits.max_tokens_per_call * TOKEN_BYTES + 2 * STEP_PAYLOAD + 3 * STEP_OVERHEAD
    per_checkpoint = 6 * retained_limit + 4 * STEP_OVERHEAD
    journal = calls * per_call + horizon * per_checkpoint
    ledger = calls * 3 * 1024
    desk = horizon * 256 * 1024
    return 3 * journal + ledger + desk + MIB


class Inhibitor:
    """A child holding a sleep inhibition while this process holds the write end of its stdin."""

    def __init__(self, proc, what):
        self.proc = proc
        self.what = what

    def release(self):
        """End the inhibition: close the pipe (systemd-inhibit's `cat` ends), then make sure the child is gone."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(2)
        except subprocess.TimeoutExpired:  # caffeinate -w waits for this process, not for the pipe
            self.proc.terminate()
            self.proc.wait()
        if self.proc.stderr is not None:
            self.proc.stderr.close()


class Host:
    """The real machine. Override a probe to test a branch."""

    power_root = "/sys/class/power_supply"
    sleep_state = "/sys/power/state"

    def system(self):
        return platform.system()

    def power(self) -> dict:
        """{"on_battery": bool | None, "percent": int | None, "source": text}."""
        if self.system() == "Darwin":
            try:
                out = subprocess.run(["pmset", "-g", "batt"], capture_output=True, text=True, timeout=10).stdout
            except (OSError, subprocess.SubprocessError):
                return {"on_battery": None, "percent": None, "source": "pmset unavailable"}
            return parse_pmset(out)
        return read_power_supply(self.power_root)

    def can_sleep(self) -> dict:
        """{"can_sleep": bool | None, "source": text}."""
        if self.system() == "Darwin":
            return {"can_sleep": True, "source": "macOS"}
        try:
            with open(self.sleep_state, encoding="ascii", errors="replace") as fh:
                states = fh.read(256).split()
        except OSError:
            return {"can_sleep": False, "source": f"no {self.sleep_state} (the host cannot suspend itself)"}
        return {"can_sleep": bool(states), "source": f"{self.sleep_state}: {' '.join(states) or '(none)'}"}

    def inhibit(self, why):
        """An Inhibitor, or None when the platform offers no way; InputError when the way fails."""
        if self.system() == "Darwin" and shutil.which("caffeinate"):
            argv, what = ["caffeinate", "-i", "-s", "-w", str(os.getpid())], "caffeinate"
        elif shutil.which("systemd-inhibit"):
            argv = [
                "systemd-inhibit",
                "--what=sleep:idle:handle-lid-switch",
                "--who=fundbook-launch",
                f"--why={why}",
                "--mode=block",
                "cat",
            ]
            what = "systemd-inhibit"
        else:
            return None
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError as exc:
            raise InputError(f"host: cannot inhibit sleep ({what}: {exc.strerror or exc})") from None
        time.sleep(0.2)  # a refusal (no logind, no permission) comes at once
        if proc.poll() is not None:
            err = proc.stderr.read().decode("utf-8", "replace").strip().splitlines()
            for stream in (proc.stdin, proc.stderr):
                stream.close()
            raise InputError(
                f"host: cannot inhibit sleep ({what} exited {proc.returncode}: {err[0][:160] if err else 'no message'})"
            )
        return Inhibitor(proc, what)

    def free_bytes(self, folder) -> int:
        return shutil.disk_usage(folder).free


def read_power_supply(root) -> dict:
    """Linux power supplies: on battery when a battery discharges and no mains/USB supply is online."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return {"on_battery": False, "percent": None, "source": f"no {root} (no battery)"}
    batteries, mains_online = [], False
    for name in names:

        def read(field, name=name):
            try:
                with open(os.path.join(root, name, field), encoding="ascii", errors="replace") as fh:
                    return fh.read(64).strip()
            except OSError:
                return ""

        kind = read("type")
        if kind == "Battery":
            capacity = read("capacity")
            batteries.append((name, read("status"), int(capacity) if capacity.isdigit() else None))
        elif kind in ("Mains", "USB", "USB_C", "USB_PD") and read("online") == "1":
            mains_online = True
    if not batteries:
        return {"on_battery": False, "percent": None, "source": f"{root}: no battery"}
    discharging = any(status == "Discharging" for _, status, _ in batteries)
    percents = [p for _, _, p in batteries if p is not None]
    on_battery = discharging and not mains_online
    return {
        "on_battery": on_battery,
        "percent": min(percents) if percents else None,
        "source": f"{root}: "
        + ", ".join(f"{n} {s or '?'} {p if p is not None else '?'}%" for n, s, p in batteries)
        + ("; mains online" if mains_online else ""),
    }


def parse_pmset(text) -> dict:
    """`pmset -g batt`: "Now drawing from 'Battery Power'" and " 57%; discharging"."""
    on_battery = "'Battery Power'" in text if "drawing from" in text else None
    percent = None
    for word in text.replace(";", " ").split():
        if word.endswith("%") and word[:-1].isdigit():
            percent = int(word[:-1])
            break
    return {"on_battery": on_battery, "percent": percent, "source": "pmset: " + " ".join(text.split())[:120]}


DEFAULT = Host()


def preflight(folder, need_bytes, why, host=None) -> tuple:
    """Check the host for an attempt written under `folder`; (facts, inhibitor or None) or a one-line InputError.

    The inhibitor (when one is taken) must be released by the caller when the attempt ends."""
    host = host or DEFAULT
    power = host.power()
    if power["on_battery"]:
        raise InputError(
            f"host: running on battery power ({power['source']}): an attempt waits for mains power, "
            f"before its claim is spent"
        )
    if power["percent"] is not None and power["percent"] < LOW_BATTERY_PERCENT:
        raise InputError(
            f"host: battery at {power['percent']} % (below {LOW_BATTERY_PERCENT} %; {power['source']}): "
            f"charge it before an attempt"
        )
    free = host.free_bytes(folder)
    if free < need_bytes:
        raise InputError(
            f"host: {free:,} bytes free in {folder}, the attempt's worst-case journal and record need "
            f"{need_bytes:,}: free some space (or lower --max-calls / --max-tokens)"
        )
    sleep = host.can_sleep()
    inhibitor = None
    if sleep["can_sleep"] is not False:
        inhibitor = host.inhibit(why)
        if inhibitor is None:
            raise InputError(
                f"host: it can suspend ({sleep['source']}) and nothing here can inhibit that for the "
                f"attempt's duration (no systemd-inhibit or caffeinate): a suspended host loses the "
                f"worker"
            )
    facts = {
        "power": power,
        "sleep": dict(sleep, inhibited_by=inhibitor.what if inhibitor else None),
        "free_bytes": free,
        "need_bytes": need_bytes,
    }
    return facts, inhibitor
