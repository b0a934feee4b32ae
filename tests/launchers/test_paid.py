"""A real attempt: tinker sampling and a Modal sandbox. Costs money.

Runs only with `pytest --run-paid` and an operator's claim:
  FUNDBOOK_PAID_CLAIM=<claim file from `fundbook-launch authorise`>
  FUNDBOOK_PAID_MODEL=<the claim's model, e.g. Qwen/Qwen3-8B>
plus the SDKs' own credentials in the environment (TINKER_API_KEY, Modal token).
The claim is consumed by the run, as any paid attempt consumes it.
"""

import json
import os

import pytest
from click.testing import CliRunner

from launchers._record import read_record
from launchers.cli import cli


@pytest.mark.paid
def test_a_real_two_checkpoint_attempt(tmp_path):
    claim, model = os.environ.get("FUNDBOOK_PAID_CLAIM"), os.environ.get("FUNDBOOK_PAID_MODEL")
    if not claim or not model:
        pytest.skip("set FUNDBOOK_PAID_CLAIM and FUNDBOOK_PAID_MODEL to an authorised claim and its model")
    with open(claim) as fh:
        family = json.load(fh)["claim"]["scope"]["family"]
    out = str(tmp_path / "attempt")
    result = CliRunner().invoke(cli, ["execute", "--claim", claim, "--out", out, "--family", family, "--seed", "1",
                                      "--sampler", "tinker", "--model", model, "--sandbox", "modal", "--horizon", "6",
                                      "--worker-seconds", "900", "--call-deadline", "120", "--max-calls", "20"])
    assert os.path.exists(os.path.join(out, "record.json")), result.output
    c = read_record(os.path.join(out, "record.json"))["content"]
    charges = sum(e["micro_usd"] for e in c["ledger"]["entries"] if e["kind"] == "charge")
    assert c["cost"]["micro_usd"] == charges and c["model"] == {"id": model, "provider": "tinker"}
    assert c["information_boundary"]["network"].startswith("blocked")
    assert c["cost"]["micro_usd"] + c["cost"]["unresolved_micro_usd"] <= c["claim"]["cap_micro_usd"]
