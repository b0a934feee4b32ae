"""Seed 002's pilot figures (issue 40 item 8): the pilot records tokens per decision and the sd of the paired
differences (the attempt's score points minus the do-nothing baseline's on the same world); a tier plan frozen
with `"sd_table": "pilot"` takes its sd table from that pilot (recorded in the confirmatory attempt's freeze
reference), and a pilot that lacks the figure is refused in one line. Run with the mock sampler."""

import json
import os

import pytest
from click.testing import CliRunner

from engine import content_sha256, pretty_json
from fundbook.cli.launch import cli
from launchers import _attempt, _freeze, _pilot

from .test_paid_path import CLEAN, PUBLISHED
from .test_pilot import FREEZE


@pytest.fixture
def tiered(monkeypatch, state, project, tmp_path):
    for module in (_attempt, _freeze):
        monkeypatch.setattr(module, "code_revision", lambda: dict(CLEAN))
        monkeypatch.setattr(module, "engine_identity", lambda: dict(PUBLISHED))
    plan = {
        "schema": "fundbook.tier-plan/1",
        "overrun_bps": 1000,
        "sd_table": "pilot",
        "sacrifice": [],
        "tiers": [
            {
                "name": "T1",
                "cells": [
                    {
                        "name": "mock-FUND_01",
                        "model": "mock",
                        "family": "FUND_01",
                        "seeds": [101, 102],
                        "micro_usd_per_seed": 0,
                        "keep_at_least": 1,
                    }
                ],
            }
        ],
    }
    (tmp_path / "tiers.json").write_text(json.dumps(plan))
    runner = CliRunner()
    freeze = os.path.join(project, "freeze.json")
    result = runner.invoke(cli, ["freeze", "--out", freeze, *FREEZE, "--tiers", str(tmp_path / "tiers.json")])
    assert result.exit_code == 0, result.output
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

    def confirm(name):
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
            ],
        )

    def pilot(*seeds):
        args = ["pilot"]
        for s in seeds:
            args += ["--claim", claim(), "--seed", str(s)]
        return runner.invoke(cli, args)

    with open(freeze) as fh:
        assert json.load(fh)["content"]["tiers"]["sd_table"] == "pilot"
    return {"confirm": confirm, "pilot": pilot, "path": os.path.join(project, "pilot", "pilot.json")}


def test_the_pilot_records_tokens_per_decision_and_the_sd_the_tier_plan_takes(tiered, tmp_path):
    result = tiered["pilot"](1, 2, 3)
    assert result.exit_code == 0 and "paired differences of points vs baseline:do-nothing: n 3, sd " in result.output
    with open(tiered["path"]) as fh:
        doc = json.load(fh)
    d = doc["content"]["decisions"]
    assert d["answered_calls"] > 0 and d["tokens_in_per_decision"] > 0 and d["tokens_out_per_decision"] > 0
    assert d["reasoning_tokens_per_decision"] is None  # the mock reports no reasoning
    paired = d["paired"]
    assert paired["n"] == 3 and paired["sd"] == _pilot.sd_text(paired["differences"])
    result = tiered["confirm"]("c")
    assert result.exit_code == 0, result.output
    with open(tmp_path / "c" / "record.json") as fh:
        ref = json.load(fh)["content"]["freeze"]["pilot"]
    assert ref["sd_table"] == {"points vs baseline:do-nothing": paired["sd"]}


def test_a_pilot_without_the_sd_is_refused_when_the_tier_plan_takes_it(tiered, state):
    assert tiered["pilot"](1, 2).exit_code == 0
    with open(tiered["path"]) as fh:
        doc = json.load(fh)
    del doc["content"]["decisions"]  # a pilot written before the figure was recorded: still a valid pilot
    doc["content_sha256"] = content_sha256(doc["content"])
    with open(tiered["path"], "w") as fh:
        fh.write(pretty_json(doc))
    result = tiered["confirm"]("c")
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "the pilot records no sd of paired differences" in result.output
    assert len(os.listdir(os.path.join(state, "consumed"))) == 2  # the pilot's two: the refused one never spent


@pytest.mark.parametrize(
    "values, sd", [([0, 0], "0.000000"), ([1, 3], "1.414214"), ([-5, 0, 5], "5.000000"), ([7], None), ([], None)]
)
def test_the_sd_is_exact_decimal_text(values, sd):
    assert _pilot.sd_text(values) == sd
