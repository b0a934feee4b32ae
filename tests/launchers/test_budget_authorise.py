"""One projection behind `budget` and `authorise` (issue 40, item 3): for every sampler `budget` offers, the caps
it prints for one attempt are the caps `authorise` accepts with the options printed beside them, and a micro-USD
or a token less is refused with authorise's own message. Held back: `budget --sampler anthropic` planned the compact
prompt's 2,500 opening tokens while `authorise` checked 8,000, so budget's figures were refused."""

import json

import pytest
from click.testing import CliRunner

from fundbook.cli.launch import cli
from launchers import sampler_names

MODELS = {
    "tinker": ("Qwen/Qwen3-8B", ["--tokens-in", "6000", "--tokens-out", "500"]),
    "llama-cpp": ("SmolLM2-135M-Instruct.Q4_1", ["--tokens-in", "3000", "--tokens-out", "300"]),
    "openai": ("gpt-5.4-mini", []),
    "anthropic": ("claude-sonnet-4-5", []),
    "openai-compatible": ("gpt-5.4-mini", []),
}


def test_every_budget_sampler_is_covered():
    assert sorted(sampler_names("budget")) == sorted(MODELS)


def _budget(sampler, extra=()):
    model, figures = MODELS[sampler]
    result = CliRunner().invoke(cli, ["budget", "--sampler", sampler, "--model", model, *figures, *extra, "--json"])
    assert result.exit_code == 0, result.output
    return model, json.loads(result.output)


def _authorise(tmp_path, model, args, name):
    return CliRunner().invoke(
        cli, ["authorise", "--family", "FUND_01", "--model", model, *args, "--out", str(tmp_path / name)]
    )


def _with(args, option, value):
    args = list(args)
    args[args.index(option) + 1] = str(value)
    return args


@pytest.mark.parametrize("sampler", sorted(MODELS))
@pytest.mark.parametrize("extra", [(), ("--max-tokens", "1024", "--max-calls", "60")])
def test_budgets_caps_are_the_caps_authorise_accepts(tmp_path, state, sampler, extra):
    model, est = _budget(sampler, extra)
    args = est["authorise"]
    assert int(args[args.index("--cap-micro-usd") + 1]) == est["worst_case_micro_usd"]
    assert int(args[args.index("--cap-tokens") + 1]) == est["worst_case_tokens"]
    result = _authorise(tmp_path, model, args, "ok.json")
    assert result.exit_code == 0 and "covers the worker's worst case" in result.output, result.output
    less = [("--cap-tokens", est["worst_case_tokens"] - 1, "tokens")]
    if est["worst_case_micro_usd"]:  # a free sampler's worst case costs nothing: no micro-USD to take away
        less.append(("--cap-micro-usd", est["worst_case_micro_usd"] - 1, "micro-USD"))
    for option, value, unit in less:
        result = _authorise(tmp_path, model, _with(args, option, value), f"less{option}.json")
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        want = value + 1
        assert (
            f"error: {option} {value} is below the worker's worst case of {want} {unit} (budget's figure for "
            f"{est['authorise'][est['authorise'].index('--horizon') + 1]} checkpoints, --tokens-in "
            f"{args[args.index('--tokens-in') + 1]}"
        ) in result.output
        assert not (tmp_path / f"less{option}.json").exists()


def test_the_issues_figures(tmp_path, state):
    """The issue's case: budget's 15,610,320 micro-USD and 4,957,680 tokens for anthropic at --max-tokens 1024
    --max-calls 60 are what authorise --sampler anthropic accepts (it wanted 16,600,320 and 5,287,680)."""
    result = CliRunner().invoke(
        cli,
        [
            "budget",
            "--sampler",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--max-tokens",
            "1024",
            "--max-calls",
            "60",
        ],
    )
    assert "15,610,320 micro-USD, 4,957,680 tokens" in result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith(
        "authorise each attempt with: --sampler anthropic --cap-micro-usd 15610320 --cap-tokens 4957680 "
    )
    args = line.removeprefix("authorise each attempt with: ").split()
    assert _authorise(tmp_path, "claude-sonnet-4-5", args, "c.json").exit_code == 0
