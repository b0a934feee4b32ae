"""Run a blocking call with a deadline of our own.

The SDKs block in places their own timeouts do not reach (tinker's session
setup waits on the network with its own retry window; a tokenizer may be
fetched). The call runs in a daemon thread; past the deadline the caller gets
CallTimeout and moves on, and the abandoned thread cannot keep the process alive.
"""

import threading

from ._errors import CallTimeout


def call_with_deadline(fn, seconds, what="the call"):
    box = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(max(0.0, seconds))
    if thread.is_alive():
        raise CallTimeout(f"{what}: no answer within the controller's deadline of {seconds:.0f} s")
    if "error" in box:
        raise box["error"]
    return box["value"]
