"""The local isolated sandbox (launchers/_sandbox_isolated.py, bubblewrap): a worker there has no network, sees
only its own files (read-only, retained/ writable), cannot read the evaluator's files, the host's environment or
a key, and dies at its memory, CPU and wall-clock limits. Each property is shown by a worker that tries."""

import json
import os
import shutil
import subprocess
import time

import pytest

from launchers._errors import SandboxError
from launchers._sandbox_isolated import IsolatedSandbox, _interpreter, _limits

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (.ci/run installs it)"
)

PROBE = r"""
import json, os, socket, sys
out = {}
try:
    s = socket.socket(); s.settimeout(2); s.connect(("1.1.1.1", 80)); out["net"] = "connected"
except OSError as e:
    out["net"] = e.errno
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 9), 2); out["loopback"] = "connected"
except OSError as e:
    out["loopback"] = e.errno
out["read"] = {}
for p in json.load(open("paths.json")):
    try:
        with open(p, "rb") as fh:
            out["read"][p] = fh.read().decode("utf-8", "replace")
    except OSError as e:
        out["read"][p] = type(e).__name__
out["env"] = dict(os.environ)
try:
    with open("worker.py", "a") as fh:
        fh.write("#")
    out["write_own"] = "wrote"
except OSError as e:
    out["write_own"] = type(e).__name__
with open("retained/kept.txt", "w") as fh:
    fh.write("kept")
out["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps(out), flush=True)
"""


def _run(tmp_path, worker, files=None, memory_mib=256, cpu=60, timeout=60):
    """Run `worker` in the sandbox exactly as `start` does (bubblewrap itself started with an empty environment,
    so not even its own /proc/1/environ holds the host's), collecting its stdout (the channel is not needed)."""
    sandbox = IsolatedSandbox(memory_mib=memory_mib)
    root = tmp_path / "staged"
    (root / "retained").mkdir(parents=True)
    (root / "worker.py").write_text(worker)
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    python, _ = _interpreter()
    return root, subprocess.run(
        sandbox.command(str(root), python),
        capture_output=True,
        timeout=timeout,
        preexec_fn=_limits(memory_mib * 1024 * 1024, cpu),
        env={},
    )


@pytest.fixture
def probed(tmp_path, monkeypatch):
    """A gold file and a key on the host, and what a worker in the sandbox could find of them."""
    gold = tmp_path / "evaluator" / "gold.json"
    gold.parent.mkdir()
    gold.write_text('{"gold": "the reference plan"}')
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [
        str(gold),
        os.path.join(repo, "runs", "index.json"),
        os.path.join(repo, "launchers", "_ledger.py"),
        os.path.expanduser("~/.bashrc"),
        "/etc/hostname",
        "/proc/1/environ",
    ]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-the-key-no-worker-may-see")
    root, done = _run(tmp_path, PROBE, {"paths.json": json.dumps(paths)})
    assert done.returncode == 0, done.stderr.decode()[-500:]
    return root, json.loads(done.stdout.decode().strip().splitlines()[-1]), paths


def test_no_network_not_even_the_hosts_loopback(probed):
    _, out, _ = probed
    assert out["net"] == 101  # ENETUNREACH: the namespace has no route anywhere
    assert out["loopback"] in (101, 111, 99)  # its own loopback is down or empty: never the host's services


def test_the_evaluators_files_and_the_hosts_are_not_there(probed):
    _, out, paths = probed
    for p in paths[:5]:
        assert out["read"][p] in ("FileNotFoundError", "PermissionError"), (p, out["read"][p][:40])
    assert "the-key" not in out["read"]["/proc/1/environ"]  # pid 1 is the sandbox's own, with no environment
    assert out["pids"] and max(out["pids"]) < 10  # its own PID namespace: no host process is visible


def test_no_key_and_only_the_workers_environment(probed):
    _, out, _ = probed
    assert sorted(out["env"]) == ["HOME", "LANG", "PATH", "PWD", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "TMPDIR"]
    assert not any("sk-test" in v for v in out["env"].values())


def test_its_files_are_read_only_but_retained_is_its_own(probed):
    root, out, _ = probed
    assert out["write_own"] in ("OSError", "PermissionError")
    assert (root / "retained" / "kept.txt").read_text() == "kept"
    assert not (root / "worker.py").read_text().endswith("#")


def test_the_memory_limit_holds(tmp_path):
    _, done = _run(tmp_path, "b = bytearray(400 * 1024 * 1024)\nprint('allocated')\n", memory_mib=128)
    assert done.returncode != 0 and b"allocated" not in done.stdout
    assert b"MemoryError" in done.stderr


def test_the_cpu_limit_kills_a_spinning_worker(tmp_path):
    t0 = time.monotonic()
    _, done = _run(tmp_path, "while True:\n    pass\n", cpu=1, timeout=120)
    assert done.returncode != 0 and time.monotonic() - t0 < 60  # SIGXCPU, then SIGKILL at the hard limit


def test_start_gives_bubblewrap_no_environment_so_the_worker_finds_no_key_anywhere(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-the-key-no-worker-may-see")
    seen = {}
    real = subprocess.Popen

    def spy(argv, **kw):
        seen["env"] = kw.get("env")
        return real(argv, **kw)

    monkeypatch.setattr("launchers._sandbox_isolated.subprocess.Popen", spy)
    worker = IsolatedSandbox().start({"worker.py": b"print(open('/proc/1/environ').read())\n"}, 5)
    try:
        assert worker.wait(30) == 0
    finally:
        worker.close()
    assert seen["env"] == {}  # not the controller's environment: bubblewrap (pid 1 inside) starts with none


def test_the_controller_kills_it_at_the_wall_clock_deadline(tmp_path):
    sandbox = IsolatedSandbox()
    worker = sandbox.start({"worker.py": b"import time\ntime.sleep(600)\n"}, 5)
    try:
        assert worker.wait(1) is None  # still running
        worker.kill(at_deadline=True)
        assert worker.wait(10) == 124  # recorded as the deadline, as with the other sandboxes
    finally:
        worker.close()


def test_a_missing_bubblewrap_is_one_line_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(SandboxError, match=r"bubblewrap \(bwrap\) is not installed: `apt-get install bubblewrap`"):
        IsolatedSandbox().check()


def test_local_isolated_is_selectable_from_the_command_line(tmp_path, monkeypatch):
    """`fundbook-launch execute --sandbox local-isolated`: the real worker plays its checkpoints in bubblewrap, and
    the record names the sandbox it ran in (the schema allows it, `verify` accepts it)."""
    from click.testing import CliRunner
    from fundbook.cli.launch import cli
    from .conftest import schema_valid

    monkeypatch.setenv("FUNDBOOK_LAUNCH_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(tmp_path / "project"))
    runner, claim, out = CliRunner(), str(tmp_path / "claim.json"), str(tmp_path / "attempt")
    done = runner.invoke(
        cli,
        [
            "authorise",
            "--family",
            "FUND_02",
            "--model",
            "mock",
            "--cap-micro-usd",
            "0",
            "--cap-tokens",
            "10000000",
            "--sandbox",
            "local-isolated",
            "--out",
            claim,
        ],
    )
    assert done.exit_code == 0, done.output
    done = runner.invoke(
        cli,
        [
            "execute",
            "--claim",
            claim,
            "--out",
            out,
            "--family",
            "FUND_02",
            "--seed",
            "1",
            "--horizon",
            "6",
            "--sandbox",
            "local-isolated",
        ],
    )
    assert done.exit_code == 0, done.output
    with open(os.path.join(out, "record.json"), encoding="utf-8") as fh:
        c = json.load(fh)["content"]
    assert c["termination"]["status"] == "completed" and c["settled_days"] == 6
    assert c["information_boundary"]["sandbox"] == "local-isolated" and c["config"]["sandbox"]["memory_mib"] == 1024
    assert c["claim"]["plan"]["sandbox"] == "local-isolated"
    schema_valid(out)
    done = runner.invoke(cli, ["verify", os.path.join(out, "record.json")])
    assert done.exit_code == 0, done.output
