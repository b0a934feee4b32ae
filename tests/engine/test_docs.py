"""Docs that cannot drift: the command reference and the contract follow the code."""

import pathlib

import engine
from engine._batch import ACTION_TYPES
from engine._grade import GATES
from engine._report import REPORT_FIELDS_PER_ASSET, REPORT_SCALAR_FIELDS
from engine._rules import REASONS
from fundbook.cli.reference import render

SITE = pathlib.Path(__file__).resolve().parents[2] / "site" / "contract"


def test_cli_reference_is_generated_from_the_cli():
    assert (SITE / "cli.md").read_text() == render(), (
        "regenerate: python -m fundbook.cli.reference > site/contract/cli.md"
    )


def test_contract_names_every_rule():
    text = (SITE / "index.md").read_text()
    for name in (
        *REASONS,
        *ACTION_TYPES,
        *GATES,
        *engine.MUTATIONS,
        *REPORT_SCALAR_FIELDS,
        *REPORT_FIELDS_PER_ASSET,
        "SETTLEMENT_FAIL",
        "BUFFER_BREACH",
        "MALFORMED",
        "UNSCORABLE",
        "QUALIFIED",
        *engine.EPISODES,
        *engine.FAMILIES,
        *engine.TOOL_NAMES,
    ):
        assert name in text, name
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 64 |"):
        assert code in text


def test_readme_commands_are_real_commands():
    readme = (SITE.parents[1] / "README.md").read_text()
    reference = render()
    in_code = False
    checked = 0
    for line in readme.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code and line.startswith("fundbook "):
            checked += 1
            words = line.split()
            sub = " ".join(
                w
                for w in words[:3]
                if not w.startswith("-") and "/" not in w and not w.startswith("M") and not w.endswith(".json")
            )
            assert f"## `{sub}`" in reference, line
    assert checked >= 9
