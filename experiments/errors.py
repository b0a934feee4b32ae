"""Expected failures of the experiment layer: one line, exit code 1 (an input
error in the desk's terms), reported by the `fundbook` CLI without a traceback.
They sit in the one hierarchy (launchers' `FundbookError`) beside the launcher's
errors, never among them (a handler of the launcher's errors does not catch
them), and are input errors in the engine's terms."""

import engine
from launchers import FundbookError


class ExperimentError(FundbookError, engine.InputError):
    """A spec, sweep, observation or evidence file is missing, malformed or inconsistent."""


class NotInstalled(ExperimentError):
    """A model arm's library or packaged model is not installed on this host (`make local`)."""
