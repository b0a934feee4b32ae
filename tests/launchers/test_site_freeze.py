"""The Attempts page shows the freeze, every dated deviation and the project's spend, escaped, and refuses files
that do not check out."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders.site import pages, records
from builders.site.freeze import load
from launchers import _freeze
from fundbook.cli.launch import cli

from .test_paid_path import CLEAN, FREEZE, PUBLISHED


@pytest.fixture
def runs(tmp_path, monkeypatch, prices_file, state):
    monkeypatch.setattr(_freeze, "code_revision", lambda: dict(CLEAN))
    monkeypatch.setattr(_freeze, "engine_identity", lambda: dict(PUBLISHED))
    folder = tmp_path / "runs" / "attempts"
    folder.mkdir(parents=True)
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(folder))
    runner = CliRunner()
    assert (
        runner.invoke(cli, ["freeze", "--out", str(folder / "freeze.json"), "--prices", prices_file, *FREEZE]).exit_code
        == 0
    )
    result = runner.invoke(
        cli,
        [
            "deviate",
            "--field",
            "config.limits.max_tokens_per_call",
            "--effective",
            "4096",
            "--reason",
            "answers were cut <script>alert(1)</script>",
        ],
    )
    assert result.exit_code == 0, result.output
    return tmp_path / "runs"


def _page(runs_dir):
    pub = records.Publication(runs_dir=Path(runs_dir), index={}, runs=[], attempts=[])
    return pages.attempts_page(pages.environment(), pub)


def test_the_attempts_page_shows_the_freeze_and_its_deviations(runs):
    page = _page(runs)
    doc = json.loads((runs / "attempts" / "freeze.json").read_text())
    assert "## Freeze and deviations" in page and doc["content_sha256"][:12] in page
    assert "test-model (tinker)" in page and "seeds 1, 2" in page
    assert "<code>config.limits.max_tokens_per_call</code>" in page and "<code>2048</code>" in page
    assert (
        "<code>4096</code>" in page
        and "&#60;script&#62;alert(1)&#60;/script&#62;" in page
        and "<script>alert" not in page
    )
    assert "none after launch; one resume with a new claim" in page and "$50.00" in page and "$50.000000" not in page


def test_without_a_freeze_the_page_says_so(tmp_path):
    (tmp_path / "attempts").mkdir()
    assert "No paid study has been frozen yet" in _page(tmp_path)


def test_a_tampered_freeze_or_ledger_fails_the_site(runs):
    path = runs / "attempts" / "freeze.json"
    doc = json.loads(path.read_text())
    doc["content"]["caps"]["project_micro_usd"] = 1
    path.write_text(json.dumps(doc))
    with pytest.raises(records.SiteInputError, match="content_sha256"):
        load(runs)


def test_the_project_spend_is_shown(runs, tmp_path, state):
    runner = CliRunner()
    claim = str(tmp_path / "c.json")
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
    assert (
        runner.invoke(
            cli,
            [
                "execute",
                "--claim",
                claim,
                "--family",
                "FUND_01",
                "--seed",
                "1",
                "--horizon",
                "6",
                "--out",
                str(tmp_path / "a"),
            ],
        ).exit_code
        == 0
    )
    page = _page(runs)
    assert "Project ledger: 1 claims (0 open)" in page
    ledger = runs / "attempts" / "project-ledger.jsonl"
    ledger.write_text(ledger.read_text().replace('"reserve_micro_usd":0', '"reserve_micro_usd":1'))
    with pytest.raises(records.SiteInputError, match="hash chain is broken"):
        _page(runs)
