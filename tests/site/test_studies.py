"""The Studies page (builders/site/studies.py): a running study's state as its status.json states it, and,
once its rules stop, each comparison's drawn decision (verdict, n, per-arm means, the difference and its
bounds at 2 decimals, bounds rounded outwards); a malformed decision is refused in one line."""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from builders.site import pages, studies
from builders.site.records import SiteInputError

REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "runs" / "studies" / "smollm2-heldout"
DECISION = REPO / "runs" / "comparisons" / "shortest-cheapest-vs-do-nothing-betting" / "decision.json"


@pytest.fixture
def runs(tmp_path):
    root = tmp_path / "runs"
    shutil.copytree(STUDY, root / "studies" / STUDY.name)
    return root


def _page(runs):
    return studies.page(pages.environment(), SimpleNamespace(runs_dir=runs, attempts=[]))


def test_a_running_study_shows_the_state_its_status_states(runs):
    status = json.loads((STUDY / "status.json").read_text())
    text = _page(runs)
    assert f"**{status['state']}**: {status['worlds']} worlds played of at most {status['planned_max']}" in text
    for name, c in status["comparisons"].items():
        assert f"<tr><th>Wealth against the claim</th><td>{c['wealth_against']} (stops at 20)</td></tr>" in text
    first = status["per_world"][0]
    assert f"<tr><td>{first['item_id']}</td>" in text
    if status["state"] != "stopped":
        assert "none yet: the rule has not stopped" in text and "<th>Decision</th>" not in text


def test_a_drawn_decision_is_shown_with_its_figures(runs):
    comp = runs / "studies" / STUDY.name / "smollm2-vs-shortest-cheapest"
    shutil.copyfile(DECISION, comp / "decision.json")
    text = _page(runs)
    assert text.count("<th>Decision</th>") == 1
    assert ("<strong>supported</strong> at n = 18: <a href=\"../runs/studies/smollm2-heldout/"
            "smollm2-vs-shortest-cheapest/decision.json\">decision.json</a>") in text
    assert "<td>baseline:do-nothing 48.50; baseline:shortest-cheapest 79.00</td>" in text
    # the lower bound 2.056912698 is floored, never rounded up past what the rule gave
    assert "<td>30.50 (SE 2.93); confidence sequence 2.05 to 100.00</td>" in text


@pytest.mark.parametrize("doc", [[], {"report": None}, {"report": {"per_arm_mean": "x"}}])
def test_a_malformed_decision_is_refused_in_one_line(runs, doc):
    comp = runs / "studies" / STUDY.name / "smollm2-vs-do-nothing"
    (comp / "decision.json").write_text(json.dumps(doc))
    with pytest.raises(SiteInputError, match=r"smollm2-vs-do-nothing/decision.json: expected a decision with a "
                                             r"report of per-arm means$"):
        _page(runs)
