"""The articles cannot drift from the CLI: every `fundbook` command in the Run
it walk-through is executed, in order, and the outcomes the text states are
checked."""

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from fundbook.cli import cli as fundbook

SITE = Path(__file__).resolve().parents[2] / "site"


def _commands(text):
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip().startswith("fundbook ")]


def test_run_it_walkthrough_runs(tmp_path):
    text = (SITE / "run-it.md").read_text()
    commands = _commands(text)
    assert len(commands) >= 12
    runner = CliRunner()
    outputs = {}
    for line in commands:
        argv = shlex.split(line.replace("/tmp/", f"{tmp_path}/"))[1:]
        if argv[:2] == ["desk", "submit"]:
            # The text says the batch is the reader's own file: nothing to run here.
            continue
        result = runner.invoke(fundbook, argv)
        outputs[line] = result
        assert result.exit_code == 0, (line, result.output)
    gold = outputs["fundbook grade /tmp/w3-gold.json --episode W3"].output
    assert "SCORED" in gold and "QUALIFIED" in gold and "100/100" in gold
    m4 = outputs["fundbook grade /tmp/w3-m4.json --episode W3"].output
    assert "NOT_QUALIFIED" in m4 and "99/100" in m4 and "no_false_full_protection" in m4
    assert "`99/100`" in text and "`100/100`" in text


def test_articles_link_every_section():
    home = (SITE / "index.md").read_text()
    for target in (
        "run-it.md",
        "contract/index.md",
        "runs/index.md",
        "desk/index.md",
        "attempts/index.md",
        "limitations.md",
        "missing-evidence.md",
        "faq.md",
    ):
        assert f"]({target})" in home, target


def test_the_contract_opens_with_the_desk_not_with_hashing():
    """A reader meets the desk's contract first (the world, a day, the packet, the batch, settlement, the report,
    grading); determinism and hashing come after it."""
    text = (SITE / "contract" / "index.md").read_text(encoding="utf-8")
    heads = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert heads[:3] == ["Units", "The world", "A day"]
    assert heads.index("Determinism and hashing") > heads.index("Grading")
    opening = text.split("## The world", 1)[0]
    assert "SHA-256" not in opening and "RFC 8785" not in opening


def test_every_fundbook_command_an_article_names_exists():
    """A command named in prose (`fundbook grade`, `desk replay` after it) is one the CLI has: "`fundbook run`"
    named a command that never existed."""
    import click

    names = set(fundbook.commands)
    groups = {n: set(c.commands) for n, c in fundbook.commands.items() if isinstance(c, click.Group)}
    named = 0
    for page in sorted(SITE.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for span in re.findall(r"`fundbook ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?[^`]*`", text):
            command, sub = span
            assert command in names, (page.name, command)
            if command in groups and sub and not sub.startswith("-"):
                assert sub in groups[command] or sub.upper() == sub, (page.name, command, sub)
            named += 1
        # a bare sibling in a list after one: "`fundbook grade`, `gold` and `desk replay`"
        for tail in re.findall(r"`fundbook [a-z-]+`((?:, `[a-z -]+`)*(?:,? and `[a-z -]+`))", text):
            for word in re.findall(r"`([a-z -]+)`", tail):
                first, *rest = word.split()
                assert first in names, (page.name, word)
                if rest:
                    assert rest[0] in groups.get(first, ()), (page.name, word)
    assert named >= 5
