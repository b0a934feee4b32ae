"""llama-cpp-python as this process loads it: imported with the OpenMP wait policy set first (what the record
states), its load-time noise on stderr silenced, and the versions and CPU features it was built with.
"""

import contextlib
import importlib.metadata
import io
import logging
import os
import sys

from ._errors import NotInstalled

OMP_WAIT_POLICY = "PASSIVE"

_policy = []  # the OpenMP wait policy the library loaded under (what the record states)


def library():
    """llama_cpp, imported with the OpenMP wait policy set first; a one-line InputError if missing."""
    if "llama_cpp" not in sys.modules:
        os.environ["OMP_WAIT_POLICY"] = OMP_WAIT_POLICY  # read once, when the OpenMP runtime loads
    logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)  # llama.cpp's own log: errors only
    try:
        import llama_cpp
        import llama_cpp.llama_chat_format  # noqa: F401 (the chat template renderer)
    except ImportError as exc:
        raise NotInstalled(
            f"the llama-cpp-python library is not installed ({exc}): `make local` installs it from "
            f"requirements-local.lock"
        )
    if not _policy:
        _policy.append(
            os.environ.get("OMP_WAIT_POLICY")
            if os.environ.get("OMP_WAIT_POLICY") == OMP_WAIT_POLICY
            else f"unknown (llama_cpp was loaded before the sampler set {OMP_WAIT_POLICY})"
        )
    return llama_cpp


@contextlib.contextmanager
def _quiet_stderr():
    """llama.cpp writes some load-time warnings straight to fd 2 whatever its log level: silenced while a file
    loads (a failed load still raises, with its message)."""
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the library's Python log callback, wherever stderr points
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def versions(llama_cpp) -> dict:
    """The library as built here: its version, llama.cpp's, and the CPU features it was compiled for
    (it builds with -march=native, so a result is tied to the CPU features as well as to the versions)."""
    return {
        "llama_cpp_python": importlib.metadata.version("llama_cpp_python"),
        "llama_cpp": llama_cpp.llama_version().decode("utf-8", "replace"),
        "system_info": llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip(),
    }
