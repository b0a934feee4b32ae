"""The local isolated sandbox: the worker in bubblewrap's namespaces on this host, for a researcher with no
Modal account.

Built on bubblewrap (Debian's `bubblewrap`, the sandbox Flatpak uses), not on anything home-made. The worker
process gets:
- no network: a new, empty network namespace (`--unshare-all`: no interface but a loopback that is down);
- only its own files: its code (the staged worker, protocol, prompt, desk tools) bound read-only at /worker;
  writable there only the working copy of the day's packet and sources it rewrites each checkpoint
  (packet.json, sources/) and retained/, the work it keeps between checkpoints; the interpreter's own installation
  and the system libraries read-only; a private /tmp; nothing else of the host's file system (not the checkout,
  the claims, the ledgers, the evaluator's files, the home folder);
- not the host's environment or the keys: `--clearenv` and only the worker's few variables; its own PID
  namespace and /proc, so no host process (and no environment of one) is visible;
- limits: an address-space limit (RLIMIT_AS) and a CPU-time limit (RLIMIT_CPU) set before bubblewrap starts,
  inherited by the worker (it dies at either), and the controller's wall-clock deadline, which kills the whole
  process group as with the plain local sandbox.
The host controller makes the model calls exactly as with Modal: the worker only speaks the channel on its
standard streams. Unlike `local`, this sandbox is an isolation boundary, so a paid sampler may use it
(`--sandbox local-isolated`, the `LocalIsolated` provider: bubblewrap is checked when it is chosen, before a
claim is consumed).
"""

import os
import resource
import shutil
import subprocess
import sys
import tempfile

from ._errors import SandboxError
from ._provider import SandboxProvider
from ._sandbox_local import WORKER_ENV, LocalWorker, write_files

BWRAP = "bwrap"
MEMORY_MIB = 1024  # the worker's address-space limit (Modal's default container memory)
ROOT = "/worker"  # where the staged files appear inside the sandbox
WRITABLE = ("packet.json", "retained", "sources")  # what the worker writes in its folder (agent.py); the rest is code
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc/alternatives", "/etc/ld.so.cache")


def _bwrap_path():
    found = shutil.which(BWRAP)
    if found is None:
        raise SandboxError(
            "--sandbox local-isolated: bubblewrap (bwrap) is not installed: `apt-get install "
            "bubblewrap` (Debian), or use --sandbox modal"
        )
    return found


def _interpreter():
    """The real interpreter (a venv's python is a link into its base installation) and its installation."""
    real = os.path.realpath(sys.executable)
    prefixes = sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.base_exec_prefix)})
    return real, prefixes


def _limits(memory_bytes, cpu_seconds):
    def apply():  # runs in the child before bubblewrap: the limits pass to the worker it starts
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


class IsolatedSandbox:
    name = "local-isolated"
    network = "blocked (bubblewrap: a new network namespace with no interface up)"
    grace_s = 0

    def __init__(self, memory_mib=MEMORY_MIB, bwrap=None):
        self.memory_mib = memory_mib
        self.bwrap = bwrap
        self.info = {}

    def config(self) -> dict:
        return {
            "name": self.name,
            "isolation": "bubblewrap",
            "memory_mib": self.memory_mib,
            "network": "none",
            "filesystem": "the staged code read-only; packet.json, sources/ and retained/ writable; a private /tmp",
        }

    def check(self):
        """Before a claim is consumed: bubblewrap is installed and can make the namespaces on this host."""
        bwrap = self.bwrap or _bwrap_path()
        try:
            done = subprocess.run(
                [
                    bwrap,
                    "--unshare-all",
                    "--die-with-parent",
                    "--ro-bind",
                    "/usr",
                    "/usr",
                    "--ro-bind-try",
                    "/lib",
                    "/lib",
                    "--ro-bind-try",
                    "/lib64",
                    "/lib64",
                    "--ro-bind-try",
                    "/bin",
                    "/bin",
                    "--",
                    "/bin/true",
                ],
                capture_output=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxError(f"--sandbox local-isolated: bubblewrap did not start ({exc})") from None
        if done.returncode != 0:
            why = " ".join(done.stderr.decode("utf-8", "replace").split())[:200]
            raise SandboxError(f"--sandbox local-isolated: bubblewrap cannot make its namespaces here ({why})")
        return bwrap

    def command(self, root, python) -> list:
        """The bubblewrap command line that runs the worker in `root` (the host folder of the staged files)."""
        bwrap = self.bwrap or _bwrap_path()
        _, prefixes = _interpreter()
        argv = [
            bwrap,
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
        ]
        for path in SYSTEM_DIRS:
            argv += ["--ro-bind-try", path, path]
        for prefix in prefixes:
            argv += ["--ro-bind", prefix, prefix]
        argv += ["--bind", root, ROOT]
        for name in sorted(os.listdir(root)):  # every staged file but the worker's working files, read-only on top
            if name not in WRITABLE:
                argv += ["--ro-bind", os.path.join(root, name), f"{ROOT}/{name}"]
        argv += ["--chdir", ROOT]
        for key, value in sorted(dict(WORKER_ENV, HOME="/tmp", TMPDIR="/tmp").items()):
            argv += ["--setenv", key, value]
        return argv + ["--", python, "-I", "-S", "-B", "worker.py"]

    def start(self, files, time_limit_s) -> LocalWorker:
        root = tempfile.mkdtemp(prefix="fundbook-isolated-")
        write_files(root, files)
        for folder in ("retained", "sources"):  # the worker's own folders (it makes them itself elsewhere)
            os.makedirs(os.path.join(root, folder), exist_ok=True)
        python, _ = _interpreter()
        cpu = max(1, int(time_limit_s)) + 60
        try:
            proc = subprocess.Popen(
                self.command(root, python),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=_limits(self.memory_mib * 1024 * 1024, cpu),
                env={},
            )
        except OSError as exc:
            shutil.rmtree(root, ignore_errors=True)
            raise SandboxError(f"--sandbox local-isolated: cannot start bubblewrap ({exc.strerror or exc})") from None
        return LocalWorker(proc, root)

    def shutdown(self):
        pass

    def worker_env_keys(self):
        return sorted(set(WORKER_ENV) | {"HOME", "TMPDIR"})


class LocalIsolated(SandboxProvider):
    """`--sandbox local-isolated`: the worker in bubblewrap's namespaces on this host (no network, its own files
    read-only, no host file, environment or key, memory and time limits): an isolation boundary, so a paid sampler
    may run in it, with no Modal account. Bubblewrap is checked when the provider is built (before any claim is
    consumed): missing, or unable to make its namespaces here, is one line (SandboxError, exit 1). A freeze
    (`offline`) records the configuration only."""

    name = "local-isolated"
    ISOLATES = True

    def _setup(self):
        sandbox = IsolatedSandbox()
        if not self.options.offline:
            sandbox.check()
        return sandbox.config()

    def build(self):
        return IsolatedSandbox()
