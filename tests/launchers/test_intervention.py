"""The frozen intervention policy is enforced, not only recorded.

Held back: under a policy saying an interrupted attempt "may be resumed once", one interrupted attempt was
continued twice (two claims consumed, two continuations of one settled history). Here `freeze --max-resumes 1`
allows one continuation per attempt's line: a second one -- of the original again, or of the continuation -- is
refused before its claim is consumed, until a dated deviation of `intervention.max_resumes` allows it, and the
record then names that deviation.
"""

import os

import pytest
from click.testing import CliRunner

from fundbook.cli.launch import cli
from launchers import _attempt, _freeze
from launchers._verify import verify_attempt

from .test_paid_path import CLEAN, PUBLISHED

FREEZE = [
    "--sampler",
    "mock",
    "--model",
    "mock",
    "--family",
    "FUND_01",
    "--seed",
    "1",
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
    "--horizon",
    "16",
    "--max-calls",
    "9",
    "--max-resumes",
    "1",
    "--intervention-policy",
    "no intervention after launch; an interrupted attempt may be resumed once",
]


@pytest.fixture
def frozen(monkeypatch, state, project, tmp_path):
    for module in (_attempt, _freeze):
        monkeypatch.setattr(module, "code_revision", lambda: dict(CLEAN))
        monkeypatch.setattr(module, "engine_identity", lambda: dict(PUBLISHED))
    runner = CliRunner()
    freeze = os.path.join(project, "freeze.json")
    assert runner.invoke(cli, ["freeze", "--out", freeze, *FREEZE]).exit_code == 0
    result = runner.invoke(
        cli,
        [
            "deviate",
            "--freeze",
            freeze,
            "--field",
            "pilot.required",
            "--effective",
            "false",
            "--reason",
            "a test of the intervention policy, not of the pilot",
        ],
    )
    assert result.exit_code == 0, result.output
    counter = {"n": 0}

    def run(name, *extra):
        counter["n"] += 1
        claim = str(tmp_path / f"claim-{counter['n']}.json")
        assert (
            runner.invoke(
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
                    claim,
                ],
            ).exit_code
            == 0
        )
        out = os.path.join(project, name)
        result = runner.invoke(
            cli,
            [
                "execute",
                "--claim",
                claim,
                "--out",
                out,
                "--family",
                "FUND_01",
                "--seed",
                "1",
                "--horizon",
                "16",
                "--max-calls",
                "9",
                "--freeze",
                freeze,
                *extra,
            ],
        )
        return result, out, claim

    return {"runner": runner, "freeze": freeze, "run": run}


def _consumed(state):
    folder = os.path.join(state, "consumed")
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def test_a_continuation_beyond_the_frozen_policy_is_refused_before_its_claim_is_consumed(frozen, state, project):
    run = frozen["run"]
    result, first, _ = run("a")
    c = verify_attempt(os.path.join(first, "record.json"))["record"]["content"]
    assert c["termination"]["status"] == "budget_halt", result.output  # interrupted mid-run (9 calls)
    result, second, _ = run("b", "--resume-from", first)
    assert "Traceback" not in result.output and os.path.exists(os.path.join(second, "record.json")), result.output
    spent = _consumed(state)
    for source in (first, second):  # the original again, or the continuation: both a second continuation
        result, out, _ = run(f"again-{os.path.basename(source)}", "--resume-from", source)
        assert result.exit_code == 1, result.output
        assert "intervention.max_resumes: the frozen policy allows 1 continuation(s) of attempt" in result.output
        assert "1 already" in result.output and "this would be continuation 2" in result.output
        assert not os.path.exists(out) and not os.path.exists(out + ".partial")
        assert _consumed(state) == spent  # refused before the claim was consumed
    result = frozen["runner"].invoke(
        cli,
        [
            "deviate",
            "--freeze",
            frozen["freeze"],
            "--field",
            "intervention.max_resumes",
            "--effective",
            "2",
            "--reason",
            "the provider failed twice in one night (dated, before the run)",
        ],
    )
    assert result.exit_code == 0, result.output
    result, third, _ = run("c", "--resume-from", second)
    assert "Traceback" not in result.output and os.path.exists(os.path.join(third, "record.json")), result.output
    c3 = verify_attempt(os.path.join(third, "record.json"))["record"]["content"]
    assert sorted(d["field"] for d in c3["freeze"]["deviations"]) == ["intervention.max_resumes", "pilot.required"]
    result, out, _ = run("d", "--resume-from", third)  # a third continuation: past the deviated limit too
    assert result.exit_code == 1 and "allows 2 continuation(s)" in result.output, result.output
