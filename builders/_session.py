"""One pinned Pyodide runtime shared by the stages of a build.

`make build` compiles the engine, executes every fixture and compiles the
desk's stdlib in one Node process (builders/runner/session.mjs), so Pyodide is
loaded once. Each stage takes an optional session; without one it starts its
own (and the runtime is loaded for that stage alone).

    with PyodideSession() as session:
        build_engine(out, session=session)
        build_runs(bundle, runs, session=session)
"""

import json
import subprocess
import tempfile

from ._errors import BuildError
from ._files import ROOT
from ._node import last_line, node_env, node_executable

RUNNER = "builders/runner/session.mjs"


class PyodideSession:
    """A running builders/runner/session.mjs: requests in, JSON events out."""

    argv = ("node", RUNNER)

    def __init__(self, root=ROOT):
        self.root = root
        self.proc = None
        self.loads = 0
        self._ready = None
        self._stderr = None

    def __enter__(self):
        return self  # the runtime starts with the first request, so a stage that fails early loads nothing

    @property
    def ready(self) -> dict:
        """The runtime's ready event (Pyodide version, load time, Node version)."""
        if self.proc is None:
            self.start()
        return self._ready

    def __exit__(self, *exc):
        self.close()
        return False

    def start(self):
        node = node_executable(self.root)
        # stderr to a file, not a pipe: a chatty runtime must never block the session
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        self.proc = subprocess.Popen(
            [node, RUNNER],
            cwd=self.root,
            env=node_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
        )
        self._ready = self._next()
        if self._ready.get("event") != "ready":
            raise BuildError(f"{RUNNER}: expected the ready event first, got {self._ready.get('event')!r}")
        self.loads += 1
        return self

    def request(self, op, on_event=None, **params) -> tuple:
        """Send one request; returns (end event, [the op's other events])."""
        if self.proc is None:
            self.start()
        try:
            self.proc.stdin.write(json.dumps({"op": op, **params}) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self._fail()
        events = []
        while True:
            event = self._next()
            if event.get("event") == "end":
                return event, events
            events.append(event)
            if on_event:
                on_event(event)

    def _next(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self._fail()
        try:
            return json.loads(line)
        except ValueError:
            self._fail()  # the runner stopped mid-line; its exit code and stderr say why

    def _fail(self):
        code = self.proc.wait()
        self._stderr.seek(0)
        message = last_line(self._stderr.read())
        self._cleanup()
        raise BuildError(message or f"{RUNNER} exited with {code}")

    def close(self):
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()  # end of requests: the runner exits
        except OSError:
            pass
        code = self.proc.wait()
        self._stderr.seek(0)
        message = last_line(self._stderr.read())
        self._cleanup()
        if code != 0:
            raise BuildError(message or f"{RUNNER} exited with {code}")

    def _cleanup(self):
        for stream in (self.proc.stdin, self.proc.stdout) if self.proc else ():
            try:
                stream.close()
            except OSError:  # a broken pipe to a runner that already stopped
                pass
        if self._stderr:
            self._stderr.close()
        self.proc = None


class _Owned:
    """`with own_session(session) as s`: the caller's session, or a new one
    that lives for this block only."""

    def __init__(self, session, root):
        self.given, self.root, self.session = session, root, None

    def __enter__(self):
        self.session = self.given or PyodideSession(self.root)
        return self.session

    def __exit__(self, exc_type, *exc):
        if self.given is None:
            if exc_type is None:
                self.session.close()
            else:  # the stage already failed: stop the runtime, keep the first error
                self.session.proc.kill() if self.session.proc else None
                try:
                    self.session.close()
                except BuildError:
                    pass
        return False


def own_session(session=None, root=ROOT):
    return _Owned(session, root)
