"""A real attempt: tinker sampling and a Modal sandbox. Costs money.

Runs only with `pytest --run-paid` and an operator's freeze and claim:
  FUNDBOOK_LAUNCH_PROJECT=<the project folder holding freeze.json (and project-ledger.jsonl)>
  FUNDBOOK_PAID_CLAIM=<claim file from `fundbook-launch authorise`, within the freeze's caps>
  FUNDBOOK_PAID_MODEL=<the claim's model, one of the frozen models>
plus the SDKs' own credentials in the environment (TINKER_API_KEY, the Modal token), a clean checkout, a
passing pilot under the freeze (`fundbook-launch pilot`; or a dated deviation of pilot.required) and a host on
mains power. The run settings are the freeze's; the claim is consumed by the run, as any paid attempt consumes it.
"""

import json
import os

import pytest
from click.testing import CliRunner

from launchers._verify import verify_attempt
from fundbook.cli.launch import cli


@pytest.mark.paid
def test_a_real_attempt_under_the_freeze(tmp_path):
    claim, model = os.environ.get("FUNDBOOK_PAID_CLAIM"), os.environ.get("FUNDBOOK_PAID_MODEL")
    project = os.environ.get("FUNDBOOK_LAUNCH_PROJECT")
    if not claim or not model or not project:
        pytest.skip("set FUNDBOOK_LAUNCH_PROJECT, FUNDBOOK_PAID_CLAIM and FUNDBOOK_PAID_MODEL")
    with open(claim) as fh:
        scope = json.load(fh)["claim"]["scope"]
    with open(os.path.join(project, "freeze.json")) as fh:
        frozen = json.load(fh)["content"]
    config, limits = frozen["config"], frozen["config"]["limits"]
    out = str(tmp_path / "attempt")
    result = CliRunner().invoke(
        cli,
        [
            "execute",
            "--claim",
            claim,
            "--out",
            out,
            "--family",
            scope["family"],
            "--seed",
            str(frozen["seeds"][0]),
            "--sampler",
            "tinker",
            "--model",
            model,
            "--horizon",
            str(config["horizon"]),
            "--worker-seconds",
            str(limits["worker_seconds"]),
            "--call-deadline",
            str(limits["call_deadline_s"]),
            "--max-tokens",
            str(limits["max_tokens_per_call"]),
            "--max-calls",
            str(limits["max_calls"]),
            "--temperature-milli",
            str(config["sampling"]["temperature_milli"]),
            "--sampling-seed",
            str(config["sampling"]["seed"]),
        ],
    )
    assert os.path.exists(os.path.join(out, "record.json")), result.output
    c = verify_attempt(os.path.join(out, "record.json"), project=project)["record"]["content"]
    charges = sum(
        e["micro_usd"] for e in c["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"
    )
    assert c["cost"]["micro_usd"] == charges and c["model"] == {"id": model, "provider": "tinker"}
    assert c["information_boundary"]["network"].startswith("blocked") and c["sandbox"]["app_stopped"] is True
    assert c["cost"]["micro_usd"] + c["cost"]["unresolved_micro_usd"] <= c["claim"]["cap_micro_usd"]
    assert c["cost"]["sandbox_micro_usd"] <= c["claim"]["cap_sandbox_micro_usd"]
    assert c["freeze"]["sha256"] and c["service"]["session_closed"] is True
