"""The Comparisons pages: rendered from the committed files, decision first,
and never from a file whose hash its evidence does not back."""

import json
import shutil
from pathlib import Path

import pytest

from builders.site import comparisons, fmt, pages
from builders.site.records import SiteInputError
from tests.conftest import REPO

RUNS = Path(REPO) / "runs"


class Pub:
    def __init__(self, runs_dir):
        self.runs_dir = Path(runs_dir)


def test_pages_put_the_decision_first(monkeypatch, tmp_path):
    monkeypatch.setenv("FUNDBOOK_EXPERIMENTS_DIR", str(tmp_path))
    generated = comparisons.generated_pages(pages.environment(), Pub(RUNS))
    assert set(generated) >= {
        "comparisons/index.md",
        "comparisons/scale/index.md",
        "comparisons/grader-certificate/index.md",
        "comparisons/reference-vs-shortest-cheapest/index.md",
        "comparisons/shortest-cheapest-vs-do-nothing/index.md",
    }
    page = generated["comparisons/reference-vs-shortest-cheapest/index.md"]
    decision = json.loads((RUNS / "comparisons/reference-vs-shortest-cheapest/decision.json").read_text())
    assert page.index("## Decision") < page.index("## The bound as n grows") < page.index("## Per family")
    # the informative bound first, at 2 decimals rounded outwards (verify compares them rounded so)
    first = "lower_bound" if decision["verdict"] != "not supported" else "upper_bound"
    mode = "floor" if first == "lower_bound" else "ceiling"
    assert (
        f'<strong data-fb-decision="{first}" data-fb-places="2" data-fb-round="{mode}">'
        f"{fmt.decimal(decision[first], 2, mode)}</strong> against the margin"
    ) in page
    assert (
        page.index("fb-decision-box")
        < page.index('class="fb-verify-decision"')
        < page.index("### How the rule decided")
    )
    assert decision["evaluator_id"] in page and "built without the build's sampled re-execution" in page
    assert 'data-spec-id="spec-bound"' in page and "../../runs/comparisons/heldout-baselines/observations.jsonl" in page
    scale = generated["comparisons/scale/index.md"]
    assert "100,000" in scale and "Modal" in scale
    assert (
        "## The full report" in page
        and f'data-fb-decision="report.se" data-fb-places="2" class="fb-num">{fmt.decimal(decision["report"]["se"], 2)}<'
        in page
    )
    assert (
        'class="fb-verify-decision" data-evidence-url="../../runs/comparisons/reference-vs-shortest-cheapest/'
        'evidence.json"'
        in page
        and "assets/fundbook/decisions.js" in page
    )
    # the rules the decision ran, published beside it (the evidence pins their sha256)
    rules = generated["runs/comparisons/reference-vs-shortest-cheapest/rules.py"]
    assert rules == (RUNS / "comparisons/reference-vs-shortest-cheapest/rules.py").read_text()


def test_the_betting_page_shows_the_wealth_and_both_stopping_points(monkeypatch, tmp_path):
    monkeypatch.setenv("FUNDBOOK_EXPERIMENTS_DIR", str(tmp_path))
    generated = comparisons.generated_pages(pages.environment(), Pub(RUNS))
    page = generated["comparisons/reference-vs-shortest-cheapest-betting/index.md"]
    bet = json.loads((RUNS / "comparisons/reference-vs-shortest-cheapest-betting/decision.json").read_text())
    hoeffding = json.loads((RUNS / "comparisons/reference-vs-shortest-cheapest/decision.json").read_text())
    assert (
        page.index("## Decision")
        < page.index("## The same question under other rules")
        < page.index("## The wealth as n grows")
    )
    assert (
        "This rule is valid at every n" in page
        and f'data-fb-decision="sequential.threshold" data-fb-places="2">{fmt.decimal(bet["sequential"]["threshold"], 2)}<'
        in page
    )
    table = page[page.index("## The same question under other rules") : page.index("## The wealth as n grows")]
    assert (
        f'<td class="fb-num">{bet["n"]}</td>' in table
        and f'<td class="fb-num">{hoeffding["first_settled_n"]}</td>' in table
        and "paired Hoeffding" in table
    )
    spec = comparisons.wealth_chart(bet)
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["line", "rule"]
    index = generated["comparisons/index.md"]
    assert "reference-vs-shortest-cheapest-betting" in index and "Stopping point" in index
    cal = generated["comparisons/calibration/index.md"]
    assert "10,000" in cal and "(misuse)" in cal and "Hoeffding / betting" in cal


def test_a_build_check_is_shown_when_it_matches(monkeypatch, tmp_path):
    sweep = json.loads((RUNS / "comparisons/heldout-baselines/sweep.json").read_text())
    checks = {
        "built": "2026-01-01T00:00:00Z",
        "sweeps": {
            "comparisons/heldout-baselines": {
                "evaluator_id": sweep["evaluator_id"],
                "reused": True,
                "rows": 1,
                "source_check": {"files": 1, "matched": True},
            }
        },
        "recheck": {
            "seed": 42,
            "tasks": 3,
            "pyodide_version": "x",
            "per_sweep": {"comparisons/heldout-baselines": {"items": ["a", "b", "c"]}},
        },
        "comparisons": {},
        "certificate": {},
    }
    (tmp_path / "checks.json").write_text(json.dumps(checks))
    monkeypatch.setenv("FUNDBOOK_EXPERIMENTS_DIR", str(tmp_path))
    page = comparisons.generated_pages(pages.environment(), Pub(RUNS))[
        "comparisons/reference-vs-shortest-cheapest/index.md"
    ]
    assert "3 items drawn with a fresh seed (42)" in page and "reused (their evaluator id is this checkout" in page


def test_a_file_whose_hash_the_evidence_does_not_back_stops_the_site(tmp_path):
    shutil.copytree(RUNS / "comparisons", tmp_path / "comparisons")
    path = tmp_path / "comparisons/heldout-baselines/observations.parquet"
    path.write_bytes(path.read_bytes() + b"\0")
    with pytest.raises(SiteInputError, match="observations.parquet: sha256 differs from runs/comparisons/"):
        comparisons.load(tmp_path)


def test_no_comparisons_is_a_page_that_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("FUNDBOOK_EXPERIMENTS_DIR", str(tmp_path))
    generated = comparisons.generated_pages(pages.environment(), Pub(tmp_path))
    assert "No comparison is published." in generated["comparisons/index.md"]
    assert "No feasibility pilot is published yet." in generated["comparisons/scale/index.md"]


def test_the_chart_layers_estimate_bounds_and_margin():
    decision = json.loads((RUNS / "comparisons/shortest-cheapest-vs-do-nothing/decision.json").read_text())
    spec = comparisons.bound_chart(decision)
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]]
    assert marks == ["area", "line", "line", "rule"]
    page = comparisons.generated_pages(pages.environment(), Pub(RUNS))[
        "comparisons/shortest-cheapest-vs-do-nothing/index.md"
    ]
    assert "is valid only at its pre-registered n = 1000" in page
