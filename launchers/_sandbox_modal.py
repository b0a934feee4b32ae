"""The Modal sandbox: the isolated worker for paid attempts.

An app of its own per attempt (a unique name: this launcher created it, so
this launcher stops it), Sandbox.create with block_network=True and a timeout
(the worker limit plus a little grace for staging), the staged files written
through the sandbox filesystem API, the worker started with exec, its stdin and
stdout as the channel, its stderr drained into the record's tail, and
terminate plus App.stop at the end. No secret and no environment variable of
the host is passed in. The app and sandbox ids are recorded. Sandbox setup is
bounded by a deadline of our own; a sandbox the SDK creates after that
deadline is terminated as soon as it appears and its app stopped. A return
code of -1 means Modal ended the sandbox at its timeout. Only these SDK
surfaces are called; the tests fake exactly them, checked against the real
signatures.
"""

import secrets
import threading

from ._channel import Channel, split_lines
from ._deadline import call_with_deadline
from ._errors import CallTimeout, SandboxError
from ._provider import SandboxProvider, sdk_installed

GRACE_S = 60
TIMEOUT_EXIT = -1
WORKDIR = "/work"
LATE_WAIT_S = 30  # how long the end of an attempt waits for a late sandbox, to terminate it


def _default_modal():
    import modal

    return modal


def sdk_error(exc) -> str:
    """An SDK exception as one short line (Modal's messages span lines: an AuthError explains itself at length)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200] + '...' if len(text) > 200 else text}"


def modal_config(python_version="3.11", cpu_milli=1000, memory_mib=1024) -> dict:
    """What the freeze and the config hash see of a Modal sandbox (integers only)."""
    return {
        "name": "modal",
        "python_version": python_version,
        "cpu_milli": cpu_milli,
        "memory_mib": memory_mib,
        "grace_s": GRACE_S,
        "block_network": True,
    }


class ModalWorker:
    def __init__(self, owner, sandbox, process):
        self.owner = owner
        self.sandbox = sandbox
        self.process = process
        self.killed_at_deadline = False
        self._stderr = []
        self._drainer = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drainer.start()
        self.channel = Channel(self._write, split_lines(iter(process.stdout)))

    def _drain_stderr(self):
        try:
            for chunk in self.process.stderr:
                self._stderr.append(chunk.decode("utf-8", errors="replace") if isinstance(chunk, bytes) else chunk)
                del self._stderr[:-200]
        except Exception:
            pass  # the sandbox is gone: what was read is the tail

    def _write(self, data):
        try:
            self.process.stdin.write(data)
            self.process.stdin.drain()
        except Exception:
            pass  # the sandbox is gone; the controller sees it on the next receive

    def stderr_tail(self) -> str:
        self._drainer.join(2)  # the stream ends with the worker: let the last lines in
        return "".join(self._stderr)[-2000:]

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
        self.owner.terminate(self.sandbox)

    def close(self):
        self.owner.terminate(self.sandbox)
        self.owner.shutdown()


class ModalSandbox:
    name = "modal"
    network = "blocked (Modal Sandbox.create block_network=True)"
    grace_s = GRACE_S

    def __init__(
        self,
        app_name=None,
        python_version="3.11",
        cpu_milli=1000,
        memory_mib=1024,
        modal=None,
        setup_seconds=300,
        late_wait_s=LATE_WAIT_S,
    ):
        self.modal = modal or _default_modal()
        self.setup_seconds = setup_seconds
        self.late_wait_s = late_wait_s
        self.app_name = app_name or f"fundbook-worker-{secrets.token_hex(6)}"
        self.python_version = python_version
        self.cpu_milli = cpu_milli
        self.memory_mib = memory_mib
        self.app = None
        self.info = {
            "app_name": self.app_name,
            "app_id": None,
            "app_created": False,
            "app_stopped": False,
            "sandbox_id": None,
            "late_sandbox_terminated": False,
        }
        self._lock = threading.Lock()
        self._abandoned = False
        self._creator = None
        self._terminated = set()

    def config(self) -> dict:
        return modal_config(self.python_version, self.cpu_milli, self.memory_mib)

    def _create(self, time_limit_s):
        modal = self.modal
        app = modal.App.lookup(self.app_name, create_if_missing=True)
        with self._lock:
            self.app = app
            self.info.update(app_id=getattr(app, "app_id", None), app_created=True)
        image = modal.Image.debian_slim(python_version=self.python_version)
        sandbox = modal.Sandbox.create(
            app=app,
            image=image,
            block_network=True,
            timeout=int(time_limit_s) + GRACE_S,
            workdir=WORKDIR,
            cpu=self.cpu_milli / 1000,
            memory=self.memory_mib,
        )
        with self._lock:
            late = self._abandoned
            if not late:
                self.info["sandbox_id"] = getattr(sandbox, "object_id", None)
        if late:  # created after our setup deadline: nobody will use it
            self.terminate(sandbox)
            self.info["late_sandbox_terminated"] = True
            self.shutdown()
        return sandbox

    def start(self, files, time_limit_s) -> ModalWorker:
        box = {}

        def create():
            box["thread"] = threading.current_thread()
            return self._create(time_limit_s)

        try:
            sandbox = call_with_deadline(create, self.setup_seconds, "modal sandbox setup")
        except CallTimeout:
            with self._lock:
                self._abandoned = True
            self._creator = box.get("thread")
            self.shutdown(wait_for_late=False)
            raise SandboxError(
                f"modal: no sandbox within {self.setup_seconds} s (a sandbox created later is "
                f"terminated and the app stopped)"
            )
        except Exception as exc:
            self.shutdown()
            raise SandboxError(f"modal: cannot create the worker sandbox ({sdk_error(exc)})")
        try:
            for rel, data in sorted(files.items()):
                sandbox.filesystem.write_bytes(data, f"{WORKDIR}/{rel}")
            process = sandbox.exec(
                "python3",
                "-I",
                "-S",
                "-B",
                f"{WORKDIR}/worker.py",
                workdir=WORKDIR,
                timeout=int(time_limit_s) + GRACE_S,
                text=False,
            )
        except Exception as exc:
            self.terminate(sandbox)
            self.shutdown()
            raise SandboxError(f"modal: cannot stage or start the worker ({sdk_error(exc)})")
        return ModalWorker(self, sandbox, process)

    def terminate(self, sandbox):
        if id(sandbox) in self._terminated:
            return
        try:
            sandbox.terminate()
            self._terminated.add(id(sandbox))
        except Exception:
            pass  # already gone (timed out or torn down): nothing left to stop

    def shutdown(self, wait_for_late=True):
        """Stop the app this launcher created (its sandboxes end with it); wait a little for a late sandbox."""
        if wait_for_late and self._creator is not None and self._creator is not threading.current_thread():
            self._creator.join(self.late_wait_s)
        with self._lock:
            app, stop = self.app, self.app is not None and self.info["app_created"] and not self.info["app_stopped"]
            if stop:
                self.info["app_stopped"] = True
        if stop:
            try:
                app.stop()
            except Exception:
                with self._lock:
                    self.info["app_stopped"] = False  # recorded: the app may still exist

    def worker_env_keys(self):
        return []


def stop_leftovers(info, modal=None) -> dict:
    """After a host died: terminate the recorded sandbox and stop the app this launcher created (best effort)."""
    out = dict(info)
    if not info.get("app_created") or info.get("app_stopped"):
        return out
    try:
        modal = modal or _default_modal()
    except ImportError:
        return out
    if info.get("sandbox_id"):
        try:
            modal.Sandbox.from_id(info["sandbox_id"]).terminate()
        except Exception:
            pass  # already gone
    if info.get("app_name"):
        try:
            modal.App.lookup(info["app_name"]).stop()
            out["app_stopped"] = True
        except Exception:
            pass
    return out


class Modal(SandboxProvider):
    """`--sandbox modal`: a network-blocked Modal sandbox, the isolation a paid sampler needs; the SDK is imported
    when it is chosen (unless `offline`: a freeze records the configuration only, or a test passes the SDK)."""

    name = "modal"
    ISOLATES = True

    def _setup(self):
        if self.options.modal is None and not self.options.offline:
            sdk_installed("modal")
        return modal_config()

    def build(self):
        return ModalSandbox(modal=self.options.modal)
