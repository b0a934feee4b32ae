"""Expected failures of the experiment layer: one line, exit code 1 (an input
error in the desk's terms), reported by the `fundbook` CLI without a traceback."""

from engine import InputError


class ExperimentError(InputError):
    """A spec, sweep, observation or evidence file is missing, malformed or inconsistent."""


class NotInstalled(ExperimentError):
    """A model arm's library or packaged model is not installed on this host (`make local`)."""
