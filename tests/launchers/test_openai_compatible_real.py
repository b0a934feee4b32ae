"""`--sampler openai-compatible` end to end against a real OpenAI-compatible server: llama-cpp-python's own
`python -m llama_cpp.server` on 127.0.0.1 (tests/local_server.py) serving the packaged SmolLM2-135M-Instruct.
A two-checkpoint attempt through the CLI, its record verified, then replayed from its own cache.jsonl with the
server stopped (nothing listens any more: a replay that reached for it would fail). Marked `long` (a model
evaluates every call: tens of CPU seconds); its fast sibling in `make test` is tests/launchers/
test_api_samplers.py, which covers the sampler's contract at the HTTP seam."""

import json
import os

import pytest
from click.testing import CliRunner

from fundbook.cli.launch import cli
from launchers._rederive import rederive
from launchers._verify import verify_attempt
from launchers.worker import prompt
from tests.local_server import _answers, local_server

from .conftest import schema_valid

pytestmark = [pytest.mark.long, pytest.mark.xdist_group("llama")]
WORLD = ["--family", "FUND_03", "--seed", "1", "--horizon", "2"]


def _cli(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


def test_an_attempt_through_a_real_local_server_verifies_and_replays_with_the_server_stopped(tmp_path, monkeypatch):
    pytest.importorskip("llama_cpp.server", reason="`make local` installs llama-cpp-python with its server extra")
    monkeypatch.setenv("FUNDBOOK_LAUNCH_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(tmp_path / "project"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out, claim = tmp_path / "attempt", tmp_path / "claim.json"
    with local_server() as server:
        code, text = _cli(
            "authorise",
            "--family",
            "FUND_03",
            "--model",
            server.model,
            "--cap-micro-usd",
            0,
            "--cap-tokens",
            10**7,
            "--hours",
            1,
            "--local",
            "--out",
            claim,
        )
        assert code == 0, text
        code, text = _cli(
            "execute",
            "--claim",
            claim,
            "--out",
            out,
            *WORLD,
            "--sampler",
            "openai-compatible",
            "--local-server",
            "--server-dialect",
            "llama-cpp-python",
            "--base-url",
            server.base_url,
            "--model",
            server.model,
            "--worker-seconds",
            3600,
            "--call-deadline",
            600,
            "--max-tokens",
            1024,
            "--max-calls",
            60,
        )
        assert code == 0, text
        base_url = server.base_url
    assert server.process.poll() is not None and not _answers(base_url, timeout=1)  # stopped: nothing listens

    with open(out / "record.json", encoding="utf-8") as fh:
        c = json.load(fh)["content"]
    assert c["termination"]["status"] == "completed" and c["result"] is not None
    assert c["model"] == {"id": "SmolLM2-135M-Instruct.Q4_1", "provider": "openai-compatible"}
    assert c["service"]["base_url"] == base_url and c["service"]["model_reported"] == [server.model]
    assert c["service"]["sdk"].startswith("openai 3.") and c["service"]["key_variable"] is None
    assert c["sampling"]["local_server"] == 1 and c["sampling"]["dialect"] == "llama-cpp-python"
    assert c["sampling"]["temperature_milli"] == 0 and c["sampling"]["prompt"] == prompt.PROMPT_VERSION
    assert c["cost"]["micro_usd"] == 0 and c["cost"]["calls"] >= 2 and c["cost"]["tokens_in"] > 500
    assert c["information_boundary"]["sandbox"] == "local" and c["outputs"]["cache"]["path"] == "cache.jsonl"
    with open(out / "transcript.json", encoding="utf-8") as fh:
        answers = [s for s in json.load(fh)["steps"] if s["role"] == "model"]
    for step in answers:  # decoded under the day's grammar by the server: one batch, today's day
        batch = prompt.read_answer(step["text"])
        assert batch["day"] == step["day"] and list(batch) == ["day", "actions", "report"]
    verify_attempt(str(out / "record.json"))
    schema_valid(str(out))

    done = rederive(str(out / "record.json"))  # the server is gone: every answer from the attempt's own cache
    assert done["answers"] == c["cost"]["calls"] and done["receipts_head"] == c["receipts_head"]
    code, text = _cli(
        "execute",
        "--claim",
        claim,
        "--out",
        tmp_path / "again",
        *WORLD,
        "--sampler",
        "openai-compatible",
        "--local-server",
        "--base-url",
        base_url,
        "--model",
        server.model,
    )
    assert code == 1 and text.startswith("error: openai-compatible: cannot reach " + base_url)  # refused, no claim
    assert not os.path.exists(tmp_path / "again")
