"""Signals while an attempt runs: SIGTERM, SIGHUP and Ctrl-C end it as the
operator's stop, and the attempt is still recorded.

Inside `Guard`, each of them raises `Stopped` in the main thread (once: later
signals are held, so the cleanup that follows is not itself interrupted).
`deferred()` holds them for a block that must not be cut in two -- consuming
the claim and journaling the start -- and raises the held one at its end.
"""

import contextlib
import signal
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
ACTIVE = []  # the Guard of the attempt running in this process, if any


class Stopped(BaseException):
    """The operator stopped the attempt (a signal or Ctrl-C). BaseException: no `except Exception` swallows it."""

    def __init__(self, name):
        super().__init__(name)
        self.name = name

    @property
    def reason(self):
        return f"stopped by the operator ({self.name})"


def stop_reason(exc) -> str:
    return exc.reason if isinstance(exc, Stopped) else "stopped by the operator (SIGINT)"


class Guard:
    def __init__(self):
        self._held = 0
        self._tripped = False
        self.pending = None
        self._old = {}

    def _handler(self, signum, frame):
        name = signal.Signals(signum).name
        if self._held or self._tripped:
            self.pending = self.pending or name
            return
        self._tripped = True
        raise Stopped(name)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                self._old[sig] = signal.signal(sig, self._handler)
        ACTIVE.append(self)
        return self

    def __exit__(self, *exc):
        ACTIVE.remove(self)
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}
        return False

    @contextlib.contextmanager
    def deferred(self, swallow=False):
        """Hold signals for the block; raise the held one afterwards (unless `swallow`)."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
        if not self._held and self.pending and not swallow and not self._tripped:
            name, self.pending = self.pending, None
            self._tripped = True
            raise Stopped(name)


def critical():
    """Hold signals while an append-only file and its memory are updated together (a ledger entry, a journal line):
    a stop lands before or after, never between."""
    if ACTIVE and threading.current_thread() is threading.main_thread():
        return ACTIVE[-1].deferred()
    return contextlib.nullcontext()
