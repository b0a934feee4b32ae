"""The real run: `inspect eval inspect_fundbook/desk` against llama-cpp-python's OpenAI-compatible server with
the packaged SmolLM2 (Inspect's openai-api provider, protocol=text), three checkpoints, imported and verified.
Its fast siblings are the scripted mockllm runs of test_task.py and test_import.py (same task, same import)."""

import os

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from inspect_fundbook._task import desk
from launchers.inspect._import import import_logs, verify
from tests.local_server import llama_server  # noqa: F401  (the module's server fixture)

from . import policies as P

pytestmark = P.WARNINGS + [pytest.mark.long, pytest.mark.pyodide]


def test_smollm2_through_inspect_imports_and_verifies(llama_server, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("LOCAL_API_KEY", "none")  # the local server takes any key; Inspect wants one set
    model = get_model(f"openai-api/local/{llama_server.model}", base_url=llama_server.base_url)
    (log,) = inspect_eval(
        desk(worlds="FUND_03:1", days=3, protocol="text", message_limit=14),
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_tokens=256,
        temperature=0,
        seed=0,
    )
    assert log.status == "success", log.error and log.error.message
    attempts = str(tmp_path / "attempts")
    done = import_logs([log.location], attempts)
    assert len(done) == 1 and done[0]["status"] == "new"
    assert os.path.isfile(done[0]["record"])
    assert verify(attempts) == [(done[0]["attempt_id"], [])]
