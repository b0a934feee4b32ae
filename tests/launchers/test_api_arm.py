"""API models as sweep arms (issue 40 item 7; experiments/arm_api.py): `model:openai:MODEL` over the real openai
SDK on a mock transport (no network), a paid arm: each item's attempt under its own claim at the project
freeze's caps, in the (fake) modal sandbox, verified, read back on a second sweep; the key never written; a
missing key is one line naming the variable (exit 1) before anything is spent."""

import json
import os
import shutil

import httpx2
import pytest
from click.testing import CliRunner

from experiments import arm_api, arm_model, items as items_mod
from experiments.arms import parse_arms, public
from experiments.errors import ExperimentError
from experiments.sweep import Running, run_sweep
from fundbook.cli import cli as fundbook_cli
from fundbook.cli.launch import cli as launch_cli
from launchers import Planned, load_prices, projection, verify_attempt
from launchers import _attempt, _freeze, _sandbox_modal

from .conftest import CREDENTIALS, REPO
from .fakes import FakeModal
from .test_api_samplers import OPENAI_KEY, Provider

BUNDLE = os.path.join(REPO, "build", "engine")
ROWS = [
    {"kind": "family", "family": "FUND_01", "seed": 16, "horizon": 2},
    {"kind": "family", "family": "FUND_03", "seed": 1, "horizon": 2},
]
CLEAN = {"commit": "c" * 40, "dirty": False, "trees": {"engine": "e" * 40, "launchers": "l" * 40}}
with open(os.path.join(REPO, "runs", "index.json")) as fh:
    PUBLISHED = dict(json.load(fh)["engine"], sources_match=True, mismatch=None)
MODEL = "gpt-5.4-mini"
L = arm_model.LIMITS


@pytest.fixture
def paid_arm(tmp_path, monkeypatch, state, project):
    """A clean committed tree, the published engine, a fake modal, the openai SDK over a mock transport, the key
    in the environment, and the project's freeze for the arm (the pilot dropped by a dated deviation)."""
    for module in (_attempt, _freeze):
        monkeypatch.setattr(module, "code_revision", lambda: dict(CLEAN))
        monkeypatch.setattr(module, "engine_identity", lambda: dict(PUBLISHED))
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "FUNDBOOK_OPENAI_COMPATIBLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setattr(_sandbox_modal, "_default_modal", lambda: FakeModal())
    server = Provider("openai", model=MODEL)
    monkeypatch.setattr(arm_api, "HTTP_CLIENT", httpx2.Client(transport=httpx2.MockTransport(server)))
    monkeypatch.setenv(arm_model.ATTEMPTS_ENV, str(tmp_path / "attempts"))
    plan = projection(
        load_prices(),
        MODEL,
        Planned("openai", None, L["max_tokens_per_call"], L["max_calls"], 2, L["worker_seconds"], "modal"),
    )
    runner = CliRunner()
    result = runner.invoke(
        launch_cli,
        [
            "freeze",
            "--out",
            os.path.join(project, "freeze.json"),
            "--sampler",
            "openai",
            "--model",
            MODEL,
            "--family",
            "FUND_01",
            "--family",
            "FUND_03",
            "--seed",
            "1",
            "--seed",
            "16",
            "--cap-micro-usd",
            str(plan["worst_case_micro_usd"]),
            "--cap-tokens",
            str(plan["worst_case_tokens"]),
            "--cap-sandbox-micro-usd",
            str(plan["sandbox_micro_usd"]),
            "--project-cap-micro-usd",
            "100000000",
            "--project-cap-sandbox-micro-usd",
            "10000000",
            "--intervention-policy",
            "none after launch",
            "--worker-seconds",
            str(L["worker_seconds"]),
            "--call-deadline",
            str(L["call_deadline_s"]),
            "--max-tokens",
            str(L["max_tokens_per_call"]),
            "--max-calls",
            str(L["max_calls"]),
            "--horizon",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        launch_cli,
        ["deviate", "--field", "pilot.required", "--effective", "false", "--reason", "machinery test: no pilot"],
    )
    assert result.exit_code == 0, result.output
    return server


def _sweep(tmp_path, specs):
    rows = items_mod.manifest_rows(ROWS, items_mod.PRACTICE)
    plan = {"split": "practice", "families": ["FUND_01", "FUND_03"], "seeds": "1,16"}
    return run_sweep(
        str(tmp_path / "sweep"), plan, rows, parse_arms(specs), BUNDLE, running=Running(sample_size=0, progress=False)
    )


def _files(root):
    for folder, _, names in os.walk(root):
        for name in names:
            yield os.path.join(folder, name)


def test_an_openai_arm_and_a_baseline_sweep_two_worlds_each_attempt_claimed_frozen_and_verified(
    paid_arm, tmp_path, state, project
):
    doc = _sweep(tmp_path, [f"model:openai:{MODEL}", "baseline:do-nothing"])
    arm = doc["arms"][0]
    assert arm["name"].startswith(f"model:{MODEL}:") and arm["provider"] == "openai" and arm["paid"] is True
    assert arm["configuration"]["sandbox"] == "modal" and arm["configuration"]["sampling"]["reasoning_effort"] == "low"
    with open(tmp_path / "sweep" / "observations.jsonl") as fh:
        obs = [json.loads(line) for line in fh]
    by_arm = {}
    for r in obs:
        by_arm.setdefault(r["arm"], []).append((r["item_id"], r["metric"], r["value"]))
    assert by_arm[arm["name"]] == by_arm["baseline:do-nothing"]  # the stand-in answers no action, truthfully
    folders = sorted(os.listdir(tmp_path / "attempts"))
    assert len(folders) == 2
    claims = set()
    for folder in folders:
        path = str(tmp_path / "attempts" / folder / "record.json")
        checked = verify_attempt(path, project=project)
        c = checked["record"]["content"]
        assert c["model"] == {"id": MODEL, "provider": "openai"} and c["termination"]["status"] == "completed"
        assert c["freeze"]["sha256"] and c["role"] == "confirmatory" and c["information_boundary"]["sandbox"] == "modal"
        claims.add(c["claim"]["id"])
    assert len(claims) == 2  # each attempt under its own claim
    assert len(os.listdir(os.path.join(state, "consumed"))) == 2
    for path in [*_files(tmp_path / "attempts"), *_files(tmp_path / "sweep"), *_files(project), *_files(state)]:
        with open(path, "rb") as fh:
            assert OPENAI_KEY.encode() not in fh.read(), path
    # a new sweep folder over the same worlds: the attempts are read back (verified), no call made
    calls = len(paid_arm.generations())
    shutil.rmtree(tmp_path / "sweep")
    _sweep(tmp_path, [f"model:openai:{MODEL}", "baseline:do-nothing"])
    assert len(paid_arm.generations()) == calls


def test_a_missing_key_is_one_line_naming_the_variable_and_nothing_is_spent(tmp_path, monkeypatch, state, project):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv(arm_model.ATTEMPTS_ENV, str(tmp_path / "attempts"))
    result = CliRunner().invoke(
        fundbook_cli,
        [
            "sweep",
            "--out",
            str(tmp_path / "sweep"),
            "--arm",
            f"model:openai:{MODEL}",
            "--arm",
            "baseline:do-nothing",
            "--family",
            "FUND_01",
            "--seeds",
            "1",
            "--no-progress",
        ],
    )
    assert result.exit_code == 1, result.output
    assert result.output.count("\n") == 1 and "OPENAI_API_KEY: not set" in result.output, result.output
    assert not os.path.exists(tmp_path / "attempts") and not os.path.exists(state)
    assert not os.path.exists(os.path.join(project, "ledger.jsonl"))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("model:openai:", "expected model:openai:MODEL"),
        ("model:openai-compatible:m", "expected model:openai-compatible:MODEL@http"),
        ("model:openai-compatible:m@http://user:pw@host/v1", "expected model:openai-compatible:MODEL@http"),
        ("model:openai-compatible:m@http://host/v1#frag", "must hold no user, password, query or fragment"),
    ],
)
def test_a_malformed_api_arm_is_one_line(spec, message):
    with pytest.raises(ExperimentError, match=message):
        parse_arms([spec])


def test_an_openai_compatible_arm_names_its_server_and_a_loopback_server_is_free(monkeypatch):
    monkeypatch.delenv("FUNDBOOK_OPENAI_COMPATIBLE_API_KEY", raising=False)
    (local,) = parse_arms(["local=model:openai-compatible:my@model@http://127.0.0.1:8080/v1/"])
    assert (local["model"], local["paid"], local["configuration"]["sandbox"]) == ("my@model", False, "local")
    assert local["configuration"]["base_url"] == "http://127.0.0.1:8080/v1"
    (other,) = parse_arms(["other=model:openai-compatible:my@model@http://127.0.0.1:8081/v1"])
    assert other["config_hash"] != local["config_hash"]  # another server is another arm
    assert "base_url" not in public(local) and "text" not in public(local)
