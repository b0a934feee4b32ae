"""A pilot that can fail: N attempts of the frozen configuration, judged from their records against the freeze's
pre-registered criteria; a confirmatory attempt under the freeze needs a passing pilot or a recorded deviation.
Run here with the mock sampler (the pilot goes through the same `execute` as any attempt, so it works with any
sampler the adapters know)."""

import json
import os

import pytest
from click.testing import CliRunner

from engine import content_sha256, pretty_json
from launchers import _attempt, _freeze, _pilot, _pilot_run
from launchers import Given
from tests.launchers.specs import sandbox_factory as make_sandbox_factory
from launchers._errors import FreezeRefused
from launchers._prices import load_prices
from launchers._sampler_mock import MockSampler
from fundbook.cli.launch import cli

from .conftest import HealthyHost
from .test_paid_path import CLEAN, PUBLISHED

FREEZE = [
    "--sampler",
    "mock",
    "--model",
    "mock",
    "--family",
    "FUND_01",
    "--seed",
    "101",
    "--seed",
    "102",
    "--cap-micro-usd",
    "0",
    "--cap-tokens",
    "20000000",
    "--cap-sandbox-micro-usd",
    "0",
    "--project-cap-micro-usd",
    "0",
    "--project-cap-sandbox-micro-usd",
    "0",
    "--intervention-policy",
    "none",
    "--horizon",
    "6",
]


@pytest.fixture
def study(monkeypatch, state, project, tmp_path):
    for module in (_attempt, _freeze):
        monkeypatch.setattr(module, "code_revision", lambda: dict(CLEAN))
        monkeypatch.setattr(module, "engine_identity", lambda: dict(PUBLISHED))
    runner = CliRunner()
    freeze = os.path.join(project, "freeze.json")
    result = runner.invoke(cli, ["freeze", "--out", freeze, *FREEZE])
    assert result.exit_code == 0 and "needs a passing pilot" in result.output, result.output
    counter = {"n": 0}

    def claim():
        counter["n"] += 1
        path = str(tmp_path / f"claim-{counter['n']}.json")
        result = runner.invoke(
            cli,
            [
                "authorise",
                "--family",
                "FUND_01",
                "--model",
                "mock",
                "--cap-micro-usd",
                "0",
                "--cap-tokens",
                "20000000",
                "--out",
                path,
            ],
        )
        assert result.exit_code == 0, result.output
        return path

    def confirm(name, *extra):
        return runner.invoke(
            cli,
            [
                "execute",
                "--claim",
                claim(),
                "--out",
                str(tmp_path / name),
                "--family",
                "FUND_01",
                "--seed",
                "101",
                "--horizon",
                "6",
                "--freeze",
                freeze,
                *extra,
            ],
        )

    return {"runner": runner, "freeze": freeze, "claim": claim, "confirm": confirm}


def test_a_confirmatory_attempt_needs_a_pilot(study, state):
    result = study["confirm"]("c")
    assert result.exit_code == 1 and "no pilot: a confirmatory attempt" in result.output, result.output
    consumed = os.path.join(state, "consumed")
    assert not os.path.isdir(consumed) or os.listdir(consumed) == []  # refused before the claim was spent


def test_a_passing_pilot_opens_the_confirmatory_attempts(study, project, tmp_path):
    runner = study["runner"]
    result = runner.invoke(
        cli, ["pilot", "--claim", study["claim"](), "--claim", study["claim"](), "--seed", "1", "--seed", "2"]
    )
    assert result.exit_code == 0 and "pilot PASS" in result.output, result.output
    path = os.path.join(project, "pilot", "pilot.json")
    with open(path) as fh:
        doc = json.load(fh)
    body = doc["content"]
    assert [c["result"] for c in body["criteria"]] == ["PASS"] * 4
    assert [c["criterion"] for c in body["criteria"]] == ["validity", "failures", "cost", "budget_halts"]
    f = body["figures"]
    assert f["attempts"] == 2 and f["statuses"] == {"completed": 2} and f["failed_calls"] == 0
    assert f["validity_bps"] == f["valid_answers"] * 10000 // f["answered_calls"] >= 8000
    assert doc["volatile"]["latency"]["calls"] == f["answered_calls"]  # timings only in volatile
    for a in body["attempts"]:
        with open(os.path.join(project, "pilot", a["folder"], "record.json")) as fh:
            c = json.load(fh)["content"]
        assert c["role"] == "pilot" and c["freeze"]["sha256"] == body["freeze_sha256"]
    result = study["confirm"]("c")
    assert result.exit_code == 0, result.output
    with open(tmp_path / "c" / "record.json") as fh:
        c = json.load(fh)["content"]
    assert c["role"] == "confirmatory"
    assert c["freeze"]["pilot"] == {"required": True, "sha256": doc["content_sha256"], "verdict": "PASS", "attempts": 2}

    # an edited pilot (a figure changed and re-hashed) is recomputed from its records and refused
    body["figures"]["failed_calls"] = 0 if f["failed_calls"] else 1
    doc["content_sha256"] = content_sha256(body)
    with open(path, "w") as fh:
        fh.write(pretty_json(doc))
    result = study["confirm"]("d")
    assert result.exit_code == 1 and "figures: not what the pilot's records give" in result.output, result.output


def test_a_failed_pilot_refuses_confirmatory_attempts_until_a_deviation(study, project, tmp_path):
    class Sloppy(MockSampler):  # a model whose answers are often not the artefact asked for
        def __init__(self, model_id="mock"):
            super().__init__(model_id, invalid_per_mille=500)

    pilot = _pilot_run.PilotSpec(
        freeze=study["freeze"],
        claims=(study["claim"](),),
        seeds=(1,),
        out_dir=os.path.join(project, "pilot"),
        prices=load_prices(),
    )
    doc = _pilot_run.run(
        pilot, sampler=Given("mock", Sloppy), sandbox=make_sandbox_factory("local"), host=HealthyHost()
    )
    body = doc["content"]
    assert body["verdict"] == "FAIL"
    (validity,) = [c for c in body["criteria"] if c["criterion"] == "validity"]
    assert validity["result"] == "FAIL" and validity["value"] < 8000
    result = study["confirm"]("c")
    assert result.exit_code == 1 and "the pilot FAILED (validity)" in result.output, result.output
    result = study["runner"].invoke(
        cli,
        [
            "deviate",
            "--field",
            "pilot.required",
            "--effective",
            "false",
            "--reason",
            "the pilot failed on validity; the study runs anyway, as recorded",
        ],
    )
    assert result.exit_code == 0, result.output
    result = study["confirm"]("d")
    assert result.exit_code == 0, result.output
    with open(tmp_path / "d" / "record.json") as fh:
        freeze = json.load(fh)["content"]["freeze"]
    assert freeze["pilot"] == {"required": False} and [d["field"] for d in freeze["deviations"]] == ["pilot.required"]


def test_pilot_seeds_are_not_the_studys(study):
    result = study["runner"].invoke(cli, ["pilot", "--claim", study["claim"](), "--seed", "101"])
    assert result.exit_code == 1 and "a pilot seed is one of the study's frozen seeds" in result.output
    result = study["runner"].invoke(cli, ["pilot", "--claim", study["claim"](), "--seed", "1", "--seed", "2"])
    assert result.exit_code == 1 and "one claim per pilot attempt" in result.output


TERMS = _pilot.terms({"m": 1000}, 8000, 600, 3)


def _figures(**kw):
    base = {"attempts": 1, "validity_bps": 9000, "failures_bps": 0, "committed_micro_usd": 1000, "budget_halts": 0}
    return dict(base, **kw)


@pytest.mark.parametrize(
    "figs, failed",
    [
        (_figures(), []),
        (_figures(validity_bps=8000), []),
        (_figures(validity_bps=7999), ["validity"]),
        (_figures(validity_bps=None), ["validity"]),  # no answer at all is no validity
        (_figures(failures_bps=1000), []),
        (_figures(failures_bps=1001), ["failures"]),
        (_figures(committed_micro_usd=1300), []),
        (_figures(committed_micro_usd=1301), ["cost"]),
        (_figures(committed_micro_usd=700), []),
        (_figures(committed_micro_usd=699), ["cost"]),
        (_figures(attempts=2, committed_micro_usd=2600), []),
        (_figures(budget_halts=1), ["budget_halts"]),
    ],
)
def test_the_criteria_are_the_run_protocols(figs, failed):
    """Validity >= 80 %, failures <= 10 %, cost within 30 % of the estimate, no budget halts (integers only)."""
    judged = _pilot.judge(figs, TERMS, "m")
    assert [c["criterion"] for c in judged if c["result"] == "FAIL"] == failed


def test_the_estimate_is_frozen_with_the_criteria(study):
    doc, entries = _freeze.load(study["freeze"])
    assert doc["content"]["pilot"] == {
        "required": True,
        "criteria": _pilot.CRITERIA,
        "estimate": {
            "tokens_in": 8000,
            "tokens_out": 600,
            "calls_per_checkpoint": 3,
            "expected_micro_usd": {"mock": 0},
        },
        "spend_cap_micro_usd": 0,
    }  # default: the project's caps (0 + 0 here)
    with pytest.raises(FreezeRefused, match="no pilot"):
        _pilot.require(study["freeze"], doc, entries)
