"""Seed 002's provider rules (issue 40 item 8): Anthropic's effort setting where the Messages API takes it
(output_config.effort, recorded and frozen), and keys from an env file the CLI reads when told to (a strict
parser; the values reach the provider's client and nothing else)."""

import json
import os

import pytest
from click.testing import CliRunner

from fundbook.cli.launch import cli
from launchers import env_file_environment, read_env_file
from launchers._errors import InputError
from launchers._sampler_anthropic import settings as anthropic_settings

from .test_api_samplers import ANTHROPIC_KEY, OPENAI_KEY, Provider, run


def _files(*roots):
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                yield os.path.join(folder, name)


# -- Anthropic's effort ---------------------------------------------------------------------------------------------


def test_anthropic_effort_is_sent_in_output_config_and_recorded(tmp_path):
    provider = Provider("anthropic")
    record, *_ = run(tmp_path, "anthropic", provider, "claude-haiku-4-5", effort="low")
    body = provider.generations()[0][3]
    assert body["output_config"]["effort"] == "low" and body["output_config"]["format"]["type"] == "json_schema"
    assert record["content"]["sampling"]["effort"] == "low"
    assert record["content"]["config"]["sampling"]["effort"] == "low"


def test_without_effort_nothing_is_sent_and_the_settings_keep_their_bytes(tmp_path):
    assert "effort" not in anthropic_settings(0) and anthropic_settings(0) == anthropic_settings(0, "none")
    provider = Provider("anthropic")
    run(tmp_path, "anthropic", provider, "claude-haiku-4-5")
    assert "effort" not in provider.generations()[0][3]["output_config"]


def test_effort_goes_with_anthropic_only_and_takes_the_apis_levels():
    result = CliRunner().invoke(
        cli,
        [
            "execute",
            "--claim",
            "c.json",
            "--out",
            "o",
            "--family",
            "FUND_01",
            "--seed",
            "1",
            "--sampler",
            "openai",
            "--model",
            "gpt-5.4-mini",
            "--effort",
            "low",
        ],
    )
    assert result.exit_code == 64 and "--effort goes with --sampler anthropic" in result.output, result.output
    with pytest.raises(InputError, match="--effort 'extreme'"):
        anthropic_settings(0, "extreme")


def test_the_freeze_records_the_effort(tmp_path, state, project, monkeypatch):
    from launchers import _freeze
    from .test_api_arm import CLEAN, PUBLISHED

    monkeypatch.setattr(_freeze, "code_revision", lambda: dict(CLEAN))
    monkeypatch.setattr(_freeze, "engine_identity", lambda: dict(PUBLISHED))
    path = os.path.join(project, "freeze.json")
    result = CliRunner().invoke(
        cli,
        [
            "freeze",
            "--out",
            path,
            "--sampler",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--effort",
            "low",
            "--family",
            "FUND_01",
            "--seed",
            "1",
            "--cap-micro-usd",
            "1",
            "--cap-tokens",
            "1",
            "--cap-sandbox-micro-usd",
            "1",
            "--project-cap-micro-usd",
            "1",
            "--project-cap-sandbox-micro-usd",
            "1",
            "--intervention-policy",
            "none",
        ],
    )
    assert result.exit_code == 0, result.output
    with open(path) as fh:
        assert json.load(fh)["content"]["config"]["sampling"]["effort"] == "low"


# -- --env-file -----------------------------------------------------------------------------------------------------


def test_an_env_file_is_read_strictly(tmp_path):
    path = tmp_path / "keys.env"
    path.write_text(f"# provider keys\n\nOPENAI_API_KEY={OPENAI_KEY}\r\nANTHROPIC_API_KEY={ANTHROPIC_KEY}\n")
    assert read_env_file(str(path)) == {"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    assert env_file_environment(str(path), {"HOME": "/h"}) == {
        "HOME": "/h",
        "OPENAI_API_KEY": OPENAI_KEY,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
    }
    assert env_file_environment(None) is None


@pytest.mark.parametrize(
    "text, line, message",
    [
        (f"OPENAI_API_KEY = {OPENAI_KEY}\n", 1, "expected KEY=VALUE"),
        (f"# ok\nexport OPENAI_API_KEY={OPENAI_KEY}\n", 2, "expected KEY=VALUE"),
        (f'OPENAI_API_KEY="{OPENAI_KEY}"\n', 1, "expected KEY=VALUE"),
        (f"OPENAI_API_KEY={OPENAI_KEY} trailing\n", 1, "expected KEY=VALUE"),
        ("OPENAI_API_KEY=\n", 1, "expected KEY=VALUE"),
        (f"\n\nHOME={OPENAI_KEY}\n", 3, "HOME is not a provider variable"),
        (f"OPENAI_API_KEY={OPENAI_KEY}\nOPENAI_API_KEY={OPENAI_KEY}\n", 2, "OPENAI_API_KEY is set twice"),
    ],
)
def test_a_bad_env_file_line_is_one_line_naming_file_and_line_never_the_value(tmp_path, text, line, message):
    path = tmp_path / "keys.env"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        read_env_file(str(path))
    said = caught.value.format_message()
    assert said.startswith(f"--env-file {path}: line {line}: ") and message in said and "\n" not in said
    assert OPENAI_KEY not in said and "sk-test" not in said


def test_a_bad_env_file_through_the_cli_is_one_line_exit_1(tmp_path):
    path = tmp_path / "keys.env"
    path.write_bytes(b"OPENAI_API_KEY=\xff\xfe\n")
    result = CliRunner().invoke(
        cli,
        [
            "execute",
            "--claim",
            "c.json",
            "--out",
            str(tmp_path / "o"),
            "--family",
            "FUND_01",
            "--seed",
            "1",
            "--sampler",
            "openai",
            "--model",
            "gpt-5.4-mini",
            "--env-file",
            str(path),
        ],
    )
    assert result.exit_code == 1 and result.output.strip() == f"error: --env-file {path}: line 1: not UTF-8 text"


def test_the_cli_gives_the_env_files_key_to_the_provider_and_prints_none_of_it(tmp_path, monkeypatch):
    """The key and endpoint come from the file (the environment has neither): the preflight goes to the file's
    endpoint, which nobody serves, so the command stops there in one line, nothing consumed, no key shown."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "keys.env"
    path.write_text(f"OPENAI_API_KEY={OPENAI_KEY}\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\n")
    result = CliRunner().invoke(
        cli,
        [
            "execute",
            "--claim",
            str(tmp_path / "c.json"),
            "--out",
            str(tmp_path / "o"),
            "--family",
            "FUND_01",
            "--seed",
            "1",
            "--sampler",
            "openai",
            "--model",
            "gpt-5.4-mini",
            "--env-file",
            str(path),
        ],
    )
    assert result.exit_code == 1 and "not set" not in result.output, result.output
    assert "http://127.0.0.1:9/v1" in result.output and "nothing was consumed" in result.output
    assert OPENAI_KEY not in result.output and "OPENAI_API_KEY" not in os.environ


@pytest.mark.parametrize(
    "kind, model, variable, key",
    [
        ("openai", "gpt-5.4-mini", "OPENAI_API_KEY", OPENAI_KEY),
        ("anthropic", "claude-haiku-4-5", "ANTHROPIC_API_KEY", ANTHROPIC_KEY),
    ],
)
def test_no_file_an_attempt_writes_holds_the_env_files_key(tmp_path, kind, model, variable, key):
    """Every file an attempt writes (record, transcript, journal, ledger, cache, receipts, the claim registry and
    the project ledger) is searched for the key the env file gave its provider."""
    os.mkdir(tmp_path / "secrets")
    path = tmp_path / "secrets" / "keys.env"
    path.write_text(f"{variable}={key}\n")
    environ = env_file_environment(str(path), {})
    provider = Provider(kind)
    record, out, claim, state, project = run(tmp_path, kind, provider, model, environ=environ)
    assert record["content"]["termination"]["status"] == "completed"
    assert provider.generations()  # the provider was called, with the file's key
    sent = provider.generations()[0][2]
    assert sent.get("x-api-key", sent.get("authorization", "")).endswith(key)
    files = [f for f in _files(out, state, project, os.path.dirname(claim)) if not f.startswith(str(path.parent))]
    assert len(files) > 5
    for name in files:
        with open(name, "rb") as fh:
            assert key.encode() not in fh.read(), name


# -- reasoning tokens apart -----------------------------------------------------------------------------------------


def _anthropic_with_thinking(body):
    from .test_api_samplers import anthropic_response, no_action_answer

    answer = anthropic_response(no_action_answer(body), usage=(300, 0, 0, 150))
    answer["usage"]["output_tokens_details"] = {"thinking_tokens": 90}
    return answer


@pytest.mark.parametrize(
    "kind, model, script, each",
    [("openai", "gpt-5.4-mini", ["ok"], 64), ("anthropic", "claude-haiku-4-5", [_anthropic_with_thinking], 90)],
)
def test_reasoning_tokens_are_recorded_apart_in_ledger_step_and_cost_and_verify(tmp_path, kind, model, script, each):
    from launchers import verify_attempt
    from .test_api_samplers import model_steps

    record, out, claim, state, project = run(tmp_path, kind, Provider(kind, script), model)
    c = record["content"]
    charges = [e for e in c["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"]
    assert charges and all(e["reasoning_tokens"] == each <= e["tokens_out"] for e in charges)
    assert [s["call"]["reasoning_tokens"] for s in model_steps(out)] == [each] * len(charges)
    assert (
        c["cost"]["reasoning_tokens"] == each * len(charges)
        and c["cost"]["tokens_out"] >= c["cost"]["reasoning_tokens"]
    )
    verify_attempt(os.path.join(out, "record.json"), project=project)


def test_a_record_without_reasoning_tokens_still_verifies_and_a_forged_figure_does_not(tmp_path):
    """Old records carry no reasoning_tokens (the anthropic stand-in reports none): they verify unchanged; a
    figure edited into the record's cost (its hashes redone) is named by verify against the ledger."""
    from launchers import verify_attempt
    from launchers._errors import LaunchError
    from engine import content_sha256
    from .test_api_samplers import tree_text  # noqa: F401

    record, out, claim, state, project = run(tmp_path, "anthropic", Provider("anthropic"), "claude-haiku-4-5")
    assert "reasoning_tokens" not in record["content"]["cost"]
    assert not any("reasoning_tokens" in e for e in record["content"]["ledger"]["entries"])
    path = os.path.join(out, "record.json")
    verify_attempt(path)
    with open(path) as fh:
        doc = json.load(fh)
    doc["content"]["cost"]["reasoning_tokens"] = 5
    doc["content_sha256"] = content_sha256(doc["content"])
    with open(path, "w") as fh:
        json.dump(doc, fh)
    with pytest.raises(LaunchError, match="reasoning_tokens"):
        verify_attempt(path)
