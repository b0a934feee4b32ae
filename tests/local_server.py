"""A real OpenAI-compatible server on 127.0.0.1, for tests: llama-cpp-python's own
(`python -m llama_cpp.server`, the `server` extra in requirements-local.lock)
serving the packaged SmolLM2-135M-Instruct GGUF (or any GGUF file).

    with local_server() as server:        # starts it, waits until it answers
        server.base_url                   # http://127.0.0.1:<port>/v1
        server.model                      # the id it reports (its --model_alias)
    # stopped here, whatever happened inside (SIGTERM, then SIGKILL)

or, in a test module, `from tests.local_server import llama_server` and ask for
the `llama_server` fixture (one server a module). The server listens on
127.0.0.1 only, at a free port; its output goes to a log file whose tail is in
the error when it does not come up. It loads the model with the in-process
sampler's settings (launchers/_sampler_llama.SETTINGS: context, batch, one
thread generating and two evaluating, seed 0) and OMP_WAIT_POLICY=PASSIVE.
"""

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pytest

START_TIMEOUT_S = 180  # loading a 98 MB model takes a few seconds; a loaded machine, longer
STOP_TIMEOUT_S = 15


@dataclasses.dataclass
class LocalServer:
    base_url: str  # what --base-url takes: http://127.0.0.1:<port>/v1
    model: str  # the model id the server reports
    port: int
    process: subprocess.Popen
    log_path: str

    def log_tail(self, chars=2000) -> str:
        try:
            with open(self.log_path, "rb") as fh:
                return fh.read()[-chars:].decode("utf-8", "replace")
        except OSError:
            return ""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(base_url, timeout=2.0, api_key=None) -> bool:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with urllib.request.urlopen(
            urllib.request.Request(base_url + "/models", headers=headers), timeout=timeout
        ) as resp:
            return resp.status == 200 and isinstance(json.loads(resp.read()).get("data"), list)
    except (OSError, ValueError, urllib.error.URLError):
        return False


def _stop(process):
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)  # its own session: uvicorn's workers go with it
    except ProcessLookupError:
        return
    try:
        process.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(STOP_TIMEOUT_S)


@contextlib.contextmanager
def local_server(model_file=None, model=None, api_key=None, timeout_s=START_TIMEOUT_S, log_dir=None):
    """Start `python -m llama_cpp.server` on 127.0.0.1 at a free port, wait until GET /v1/models answers, yield a
    LocalServer, and always stop it. `model_file`: a GGUF (default: the packaged SmolLM2); `model`: the id it
    reports (default: the file's name without .gguf); `api_key`: a key every request must carry."""
    from launchers._sampler_llama import SETTINGS, packaged_model

    model_file = model_file or packaged_model()
    name = os.path.basename(model_file)
    model = model or (name[:-5] if name.lower().endswith(".gguf") else name)
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        model_file,
        "--model_alias",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(SETTINGS["n_ctx"]),
        "--n_batch",
        str(SETTINGS["n_batch"]),
        "--n_ubatch",
        str(SETTINGS["n_batch"]),
        "--n_threads",
        str(SETTINGS["n_threads"]),
        "--n_threads_batch",
        str(SETTINGS["n_threads_batch"]),
        "--seed",
        str(SETTINGS["seed"]),
        "--verbose",
        "False",
    ]
    if api_key:
        cmd += ["--api_key", api_key]
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    log_dir = log_dir or tempfile.mkdtemp(prefix="fundbook-llama-server-")
    log_path = os.path.join(log_dir, "server.log")
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    server = LocalServer(f"http://127.0.0.1:{port}/v1", model, port, process, log_path)
    try:
        end = time.monotonic() + timeout_s
        while not _answers(server.base_url, api_key=api_key):
            if process.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server exited with code {process.returncode} before answering: {server.log_tail()}"
                )
            if time.monotonic() > end:
                raise RuntimeError(
                    f"llama_cpp.server did not answer on {server.base_url} within {timeout_s} s: {server.log_tail()}"
                )
            time.sleep(0.25)
        yield server
    finally:
        _stop(process)


@pytest.fixture(scope="module")
def llama_server():
    """One llama_cpp.server a test module (the packaged SmolLM2), stopped after the module's last test."""
    from launchers._errors import InputError

    try:
        import llama_cpp.server  # noqa: F401  (the `server` extra: fastapi, uvicorn, ...)
        from launchers._sampler_llama import packaged_model

        packaged_model()
    except (ImportError, InputError) as exc:  # the library, its server extra or the packaged model
        if os.environ.get("FUNDBOOK_LOCAL_TESTS") == "required":
            pytest.fail(f"llama_cpp.server or the packaged model is missing under make test-long ({exc}): `make local`")
        pytest.skip(f"llama_cpp.server or the packaged model is not installed ({exc}): `make local`")
    with local_server() as server:
        yield server


def main(argv=None):
    """`python -m tests.local_server -- CMD ...`: run CMD with the server up, its URL and model id in
    FUNDBOOK_OPENAI_BASE_URL and FUNDBOOK_LOCAL_SERVER_MODEL; the server is stopped when CMD ends (its exit code)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: python -m tests.local_server -- CMD [ARG ...]", file=sys.stderr)
        return 64
    with local_server() as server:
        env = dict(os.environ, FUNDBOOK_OPENAI_BASE_URL=server.base_url, FUNDBOOK_LOCAL_SERVER_MODEL=server.model)
        return subprocess.run(argv, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
