"""The attempt lock: held by the process running an attempt, for as long as it runs.

An advisory `flock` on `<out>.partial/lock`: the kernel releases it when the
holder dies (even by SIGKILL), so `recover` can tell a live attempt (refused)
from one whose host died (recovered).
"""

import fcntl
import os

from ._errors import AttemptLive

LOCK_NAME = "lock"


class AttemptLock:
    def __init__(self, directory):
        self.path = os.path.join(directory, LOCK_NAME)
        self.fd = None

    def acquire(self):
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            finally:
                os.close(fd)
            raise AttemptLive(
                f"{os.path.dirname(self.path)}: the attempt is live (process {holder} holds its lock); "
                f"stop that process first"
            )
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        self.fd = fd
        return self

    def release(self, remove=False):
        if self.fd is None:
            return
        if remove:
            try:
                os.remove(self.path)
            except FileNotFoundError:
                pass
        os.close(self.fd)  # closing the descriptor releases the flock
        self.fd = None
