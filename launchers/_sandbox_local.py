"""The local sandbox: a subprocess in a fresh temp dir holding only the staged files.

The interpreter runs isolated (`-I -S -B`: no site-packages, so neither the
engine nor the launchers are importable; no bytecode written) with a scrubbed environment (no key variable
reaches it) and its own session so the controller can kill it at the deadline.
It is not a security boundary -- a process under the same user can read what
that user can read (the host's environment through /proc, the checkout, the
claim registry) -- so a paid sampler refuses it: local is for the mock, cached
replays and the tests.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

from ._channel import Channel, split_lines
from ._provider import SandboxProvider

WORKER_ENV = {"PATH": os.defpath, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
DEADLINE_EXIT = 124  # what timeout(1) reports; recorded when the controller kills the worker at its limit


def write_files(root, files):
    for rel, data in files.items():
        path = os.path.join(root, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)


class LocalWorker:
    def __init__(self, proc, root):
        self.proc = proc
        self.root = root
        self.killed_at_deadline = False
        self._stderr = []
        self._drainer = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drainer.start()
        self.channel = Channel(self._write, split_lines(iter(lambda: proc.stdout.readline(), b"")))

    def _drain_stderr(self):
        for line in iter(self.proc.stderr.readline, b""):
            self._stderr.append(line.decode("utf-8", errors="replace"))
            del self._stderr[:-50]

    def _write(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the worker is gone; the controller sees it on the next receive

    def stderr_tail(self) -> str:
        self._drainer.join(2)  # the stream ends with the worker: let the last lines in
        return "".join(self._stderr)[-2000:]

    def wait(self, timeout):
        """The exit code, or None if still running after `timeout` seconds."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        return DEADLINE_EXIT if self.killed_at_deadline else code

    def kill(self, at_deadline=False):
        self.killed_at_deadline = self.killed_at_deadline or at_deadline
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def close(self):
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)


class LocalSandbox:
    name = "local"
    network = "not blocked (a local subprocess under the host user; not an isolation boundary)"
    grace_s = 0

    def __init__(self, python=None):
        self.python = python or sys.executable
        self.info = {}

    def config(self) -> dict:
        return {"name": self.name}

    def shutdown(self):
        pass

    def start(self, files, time_limit_s) -> LocalWorker:
        root = tempfile.mkdtemp(prefix="fundbook-worker-")
        write_files(root, files)
        env = dict(WORKER_ENV, HOME=root, TMPDIR=root)
        proc = subprocess.Popen(
            [self.python, "-I", "-S", "-B", "worker.py"],
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        return LocalWorker(proc, root)

    def worker_env_keys(self):
        return sorted(set(WORKER_ENV) | {"HOME", "TMPDIR"})


class Local(SandboxProvider):
    """`--sandbox local`: a subprocess under the host user, for the mock, a cached replay and models on this host;
    not an isolation boundary, so no paid sampler runs in it."""

    name = "local"

    def build(self):
        return LocalSandbox()
