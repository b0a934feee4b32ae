"""The real run's log, kept: SmolLM2-135M-Instruct (llama-cpp-python's OpenAI-compatible server, Inspect's
openai-api provider, protocol=text, FUND_03 seed 1 over 3 checkpoints; made by test_real_run.py) imports and
verifies offline, with no model (the fast sibling of test_real_run.py on a real model's answers). The log is
bound to the engine bundle (its task version): after an engine change, run test_real_run.py again and keep
its log here (`fundbook inspect import` then refuses this one by task_version)."""

import json
import os

import pytest

from launchers.inspect._import import import_logs, verify

from . import policies as P

pytestmark = P.WARNINGS + [pytest.mark.pyodide]
LOG = os.path.join(os.path.dirname(__file__), "data", "smollm2-FUND_03-seed-1.eval")


def test_the_real_smollm2_log_imports_and_verifies(tmp_path):
    attempts = str(tmp_path / "attempts")
    (done,) = import_logs([LOG], attempts)
    assert done["attempt_id"] == "inspect-local-SmolLM2-135M-Instruct.Q4_1-FUND_03-seed-1-e001-5ff9a510"
    c = json.load(open(done["record"]))["content"]
    assert c["model"] == {
        "id": "local/SmolLM2-135M-Instruct.Q4_1",
        "provider": "openai-api",
        "as_logged": "openai-api/local/SmolLM2-135M-Instruct.Q4_1",
        "answered_as": "SmolLM2-135M-Instruct.Q4_1",
    }
    assert c["inspect"]["protocol"] == "text" and c["inspect"]["version"] == "0.3.285"
    assert (c["result"]["status"], c["result"]["verdict"], c["result"]["score"]["points"]) == (
        "SCORED",
        "NOT_QUALIFIED",
        11,
    )
    assert c["moves"] == 0 and c["turns"] == 6  # the model never answered one JSON object
    assert verify(attempts) == [(done["attempt_id"], [])]
