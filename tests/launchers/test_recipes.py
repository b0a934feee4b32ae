"""The "Evaluate your model" recipes (README.md and site/run-it.md) stay in step with the CLI: every
`fundbook-launch` line parses with the command's own options, and the OpenAI recipe's claim covers the worst
case of the attempt it runs (authorise refuses less)."""

import os
import re
import shlex

import click
import pytest

from fundbook.cli.launch import cli

from .conftest import REPO


def _recipe_lines(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as fh:
        text = fh.read()
    # the recipes' own heading (README's "Evaluate your model with Inspect" section comes first)
    section = re.split(r"^#+ Evaluate your model\n", text, maxsplit=1, flags=re.M)[1]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)[:4]  # the three providers and the local server
    return [
        line.split("   #")[0].strip()
        for block in blocks
        for line in block.splitlines()
        if line.strip().startswith("fundbook-launch ")
    ]


@pytest.mark.parametrize("path", ["README.md", "site/run-it.md"])
def test_every_recipe_line_parses_with_the_cli(path):
    lines = _recipe_lines(path)
    samplers = set()
    for line in lines:
        argv = shlex.split(line)[1:]
        command = cli.commands[argv[0]]
        with command.make_context(argv[0], argv[1:]) as ctx:  # a missing or unknown option raises here
            samplers.add(ctx.params.get("sampler_name"))
    assert {"openai", "anthropic", "openai-compatible"} <= samplers and len(lines) >= 10


def test_the_openai_recipe_claim_covers_its_attempts_worst_case(tmp_path, monkeypatch):
    from click.testing import CliRunner

    monkeypatch.setenv("FUNDBOOK_LAUNCH_STATE", str(tmp_path / "state"))
    line = next(x for x in _recipe_lines("README.md") if x.startswith("fundbook-launch authorise") and "gpt-" in x)
    argv = shlex.split(re.sub(r"--out \S+", f"--out {tmp_path / 'claim.json'}", line))[1:]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    assert "covers the worker's worst case for 20 checkpoints" in result.output
    assert click  # the parser above is click's own
