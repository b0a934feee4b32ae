"""The Modal sandbox: the isolated worker for paid attempts.

Sandbox.create with block_network=True and a timeout (the worker limit plus a
little grace for staging), the staged files written through the sandbox
filesystem API, the worker started with exec, its stdin/stdout as the
channel, and terminate in a finally. No secret and no environment variable of
the host is passed in. A return code of -1 means Modal ended the sandbox at its
timeout. Only these SDK surfaces are called; the tests fake exactly them.
"""

import threading

from ._channel import Channel, split_lines
from ._deadline import call_with_deadline
from ._errors import CallTimeout, SandboxError

GRACE_S = 60
TIMEOUT_EXIT = -1
WORKDIR = "/work"


def _default_modal():
    import modal
    return modal


class ModalWorker:
    def __init__(self, sandbox, process):
        self.sandbox = sandbox
        self.process = process
        self.killed_at_deadline = False
        self.channel = Channel(self._write, split_lines(iter(process.stdout)))

    def _write(self, data):
        try:
            self.process.stdin.write(data)
            self.process.stdin.drain()
        except Exception:
            pass  # the sandbox is gone; the controller sees it on the next receive

    def stderr_tail(self) -> str:
        return ""  # Modal keeps the worker's stderr in the sandbox logs

    def wait(self, timeout):
        """process.wait() bounded by `timeout` seconds; None if it is still running."""
        box = {}

        def target():
            try:
                box["code"] = self.process.wait()
            except Exception:  # the sandbox is gone: its last known state
                box["code"] = self.process.poll()
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        thread.join(timeout)
        code = box.get("code")
        if code is not None and self.killed_at_deadline and code != TIMEOUT_EXIT:
            return 124
        return code

    def kill(self, at_deadline=False):
        self.killed_at_deadline = self.killed_at_deadline or at_deadline
        try:
            self.sandbox.terminate()
        except Exception:
            pass  # already gone (timed out or torn down): nothing left to stop

    def close(self):
        try:
            self.sandbox.terminate()
        except Exception:
            pass


class ModalSandbox:
    name = "modal"
    network = "blocked (Modal Sandbox.create block_network=True)"

    def __init__(self, app_name="fundbook-worker", python_version="3.11", cpu=1.0, memory_mib=1024, modal=None,
                 setup_seconds=300):
        self.modal = modal or _default_modal()
        self.setup_seconds = setup_seconds
        self.app_name = app_name
        self.python_version = python_version
        self.cpu = cpu
        self.memory_mib = memory_mib

    def start(self, files, time_limit_s) -> ModalWorker:
        modal = self.modal

        def create():
            app = modal.App.lookup(self.app_name, create_if_missing=True)
            image = modal.Image.debian_slim(python_version=self.python_version)
            return modal.Sandbox.create(app=app, image=image, block_network=True, timeout=int(time_limit_s) + GRACE_S,
                                        workdir=WORKDIR, cpu=self.cpu, memory=self.memory_mib)
        try:
            sandbox = call_with_deadline(create, self.setup_seconds, "modal sandbox setup")
        except CallTimeout:
            raise SandboxError(f"modal: no sandbox within {self.setup_seconds} s (one created late ends at its own "
                               f"timeout of {int(time_limit_s) + GRACE_S} s)")
        except Exception as exc:
            raise SandboxError(f"modal: cannot create the worker sandbox ({type(exc).__name__}: {exc})")
        try:
            for rel, data in sorted(files.items()):
                sandbox.filesystem.write_bytes(data, f"{WORKDIR}/{rel}")
            process = sandbox.exec("python3", "-I", "-S", "-B", f"{WORKDIR}/worker.py", workdir=WORKDIR,
                                   timeout=int(time_limit_s) + GRACE_S, text=False)
        except Exception as exc:
            sandbox.terminate()
            raise SandboxError(f"modal: cannot stage or start the worker ({type(exc).__name__}: {exc})")
        return ModalWorker(sandbox, process)

    def worker_env_keys(self):
        return []
