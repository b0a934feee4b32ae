"""The paid-study chain of launchers/README.md runs end to end, as written, with the mock sampler under a real
model id (priced as Qwen/Qwen3-8B: a projection, nothing spent).

Held back: `ledger` read only the top level of the attempts folder, so each pilot attempt (under
`<freeze dir>/pilot/`) was a MISMATCH and the chain stopped at `ledger` (exit 1); the pilot ran with no spend
cap and no confirmation of its projected cost. Here every command of the README's block runs through the CLI in
a scratch checkout layout (cwd holding runs/attempts), with these substitutions only: `tinker` -> `mock`, the
local sandbox, a 6-checkpoint horizon (speed), the mock's own token estimate in the freeze, `execute --freeze`
(the mock is frozen only when told), no key, and no `git`
(the tree is taken as committed).
"""

import os
import re
import shlex

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from fundbook.cli.launch import cli
from launchers import _attempt, _freeze

from .conftest import REPO
from .test_paid_path import CLEAN, PUBLISHED


def readme_chain():
    """The README's paid-study block as a list of argument lists (continuations joined, the loop expanded, `&&`
    split, comments and key assignments dropped, `git` lines skipped)."""
    with open(os.path.join(REPO, "launchers", "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    block = text.split("A paid study, in order", 1)[1].split("```\n", 2)[1]
    commands = []
    for line in block.replace("\\\n", " ").splitlines():
        loop = re.fullmatch(r"for n in ([\d ]+); do (.*); done", line.strip())
        lines = [loop.group(2).replace("$n", n) for n in loop.group(1).split()] if loop else [line]
        for one in lines:
            for part in one.split("&&"):
                words = shlex.split(part, comments=True)
                words = [w for w in words if not w.startswith("TINKER_API_KEY=")]
                if not words or words[0] == "git":
                    continue
                assert words[0] == "fundbook-launch", words
                commands.append(words[1:])
    return commands


MOCK_ESTIMATE = {"--estimate-tokens-in": "1400", "--estimate-tokens-out": "55"}


def as_mock(args):
    """The README's command for the mock dry run: `tinker` -> `mock`, the local sandbox, 6 checkpoints, and (freeze)
    the mock's own token estimate, since the pilot's cost criterion judges the sampler that runs."""
    out = ["mock" if a == "tinker" else a for a in args]
    if out[0] in ("freeze", "execute"):
        out += ["--sandbox", "local", "--horizon", "6"]
    if out[0] == "execute":  # a paid sampler runs under the project's freeze by default; the mock when told
        out += ["--freeze", "runs/attempts/freeze.json"]
    if out[0] == "freeze":
        out = [MOCK_ESTIMATE.get(prev, a) for prev, a in zip([None] + out, out)]
        out += ["--estimate-calls-per-checkpoint", "2"]
    return out


@pytest.fixture
def checkout(tmp_path, monkeypatch, state):
    for module in (_attempt, _freeze):
        monkeypatch.setattr(module, "code_revision", lambda: dict(CLEAN))
        monkeypatch.setattr(module, "engine_identity", lambda: dict(PUBLISHED))
    project = tmp_path / "runs" / "attempts"
    project.mkdir(parents=True)
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(project))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_chain_runs_end_to_end_with_the_mock_under_a_real_model_id(checkout):
    runner = CliRunner()
    commands = [as_mock(c) for c in readme_chain()]
    assert [c[0] for c in commands] == [
        "budget",
        "freeze",
        "authorise",
        "authorise",
        "authorise",
        "pilot",
        "authorise",
        "execute",
        "ledger",
        "verify",
        "export",
        "export",
    ]
    outputs = {}
    for args in commands:
        result = runner.invoke(cli, args)
        assert result.exit_code == 0 and "Traceback" not in result.output, f"{args}\n{result.output}"
        outputs.setdefault(args[0], []).append(result.output)
    assert "pilot PASS" in outputs["pilot"][0]
    assert "spend: at most $6.240000 confirmed ($6.240000), pilot cap $6.240000" in outputs["pilot"][0]
    ledger = outputs["ledger"][0]
    assert "4 claims (0 open)" in ledger, ledger
    assert "reconciled with 4 attempt records (3 pilot, 1 confirmatory or other): ok" in ledger, ledger
    assert "MISMATCH" not in ledger
    assert "runs/attempts.parquet: 4 rows (3 pilot attempts)" in outputs["export"][0], outputs["export"][0]
    assert (
        "ok      runs/attempts.parquet: the export of the 4 verified rows (3 pilot attempts), byte for byte"
        in outputs["export"][1]
    ), outputs["export"][1]
    table = pq.read_table(checkout / "runs" / "attempts.parquet").to_pydict()
    assert sorted(map(str, table["role"])) == ["confirmatory", "pilot", "pilot", "pilot"], table["role"]
    assert set(table["model"]) == {"Qwen/Qwen3-8B"} and all(table["projection"])


def test_the_pilot_is_refused_above_its_cap_or_unconfirmed_before_any_claim_is_consumed(checkout, state):
    runner = CliRunner()
    commands = [as_mock(c) for c in readme_chain()]
    for args in commands[:5]:  # budget, freeze, three pilot claims
        assert runner.invoke(cli, args).exit_code == 0
    pilot = commands[5]
    at = pilot.index("--confirm-spend")
    unconfirmed = pilot[:at] + pilot[at + 2 :]
    result = runner.invoke(cli, unconfirmed)
    assert result.exit_code == 1, result.output
    assert (
        "3 attempts, expected $0.007344, at most $6.240000 (their claims' inference and sandbox caps); confirm "
        "the projected spend with --confirm-spend 6240000"
    ) in result.output, result.output
    short = pilot[:at] + ["--confirm-spend", "6239999"] + pilot[at + 2 :]
    result = runner.invoke(cli, short)
    assert result.exit_code == 1 and "(you confirmed 6239999)" in result.output, result.output
    assert not os.path.isdir(os.path.join(state, "consumed")) or os.listdir(os.path.join(state, "consumed")) == []
    assert not os.path.exists(checkout / "runs" / "attempts" / "pilot" / "pilot.json")


def test_a_pilot_whose_claims_pass_the_frozen_pilot_cap_is_refused(checkout, state):
    runner = CliRunner()
    commands = [as_mock(c) for c in readme_chain()]
    freeze = commands[1]
    at = freeze.index("--pilot-cap-micro-usd")
    freeze[at + 1] = "4000000"
    for args in commands[:5]:
        assert runner.invoke(cli, args).exit_code == 0, args
    result = runner.invoke(cli, commands[5])
    assert result.exit_code == 1, result.output
    assert "over the frozen pilot spend cap of $4.000000" in result.output, result.output
    assert not os.path.isdir(os.path.join(state, "consumed")) or os.listdir(os.path.join(state, "consumed")) == []
