"""Verifiable regions (builders/site/marks.py): inside a region every figure is a mark, by construction.

The scan finds a digit or a status or verdict word outside a mark (text, title, aria-label, alt), and nothing
inside a mark, outside a region or in a script; its refusal is one line naming the page and the text. The
browser's scan (site/assets/desk/checks.js, marks.js) uses the same pattern and agrees on the same texts. Every
page of the built site passes it and every verifiable page kind has its regions; a build whose template writes a
figure into a region outside a mark stops, in one line (the real hooks, the real mkdocs build)."""

import json
import logging
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from builders.site import marks, pages
from builders.site.records import SiteInputError
from tests.site.conftest import built_site  # noqa: F401  (the shared strict site build)
from tests.site.host_records import write_host_runs

REPO = Path(__file__).resolve().parents[2]
CHECKS = REPO / "site" / "assets" / "desk" / "checks.js"


def test_a_figure_outside_a_mark_in_a_region_is_found_and_nothing_else():
    html = (
        "<h1>Run 7 of 9</h1><p>SCORED outside any region</p>"
        '<div data-fb-verified="result"><p class="x">Score <span data-fb-path="content/score" '
        'data-fb-format="score">11/100</span> · verdict <span data-fb-path="content/verdict">NOT_QUALIFIED</span>'
        "<br>gates: none failed_gates done</p>"
        "<script>var x = 61;</script><style>.a{width:100px}</style>"
        '<table><tr><td data-fb-decision="n">26</td><td>61/100</td></tr></table>'
        '<p title="the full 64 hex">x</p><img alt="QUALIFIED"><span data-fb-path="a" title="123">ok</span>'
        '<div data-fb-verified="inner"><em>MALFORMED</em></div>'
        "<p>supported, inconclusive, passed, completed, NOT_QUALIFIEDx, xSCORED</p></div>"
        "<p>61/100 after the region</p>"
    )
    found, regions = marks.unmarked(html)
    assert regions == ["result", "inner"]
    assert found == [
        ("result", "61/100"),
        ("result", 'title="the full 64 hex"'),
        ("result", 'alt="QUALIFIED"'),
        ("inner", "MALFORMED"),
        ("result", "supported, inconclusive, passed, completed, NOT_QUALIFIEDx, xSCORED"),
    ]
    # every Unicode decimal digit counts (a look-alike "٦١" is a figure too); a word inside another word does not
    assert marks.FIGURE.search("٦١") and not marks.FIGURE.search("failed_gates NOT_QUALIFIEDx RESCORED")


def test_the_refusal_is_one_line_naming_the_page_and_the_text():
    html = (
        '<div data-fb-verified="head"><p>score 61/100 · <span data-fb-path="content/moves">0</span>\n'
        "QUALIFIED</p><p>and 2 more</p></div>"
    )
    with pytest.raises(SiteInputError) as err:
        marks.check_page("attempts/x/index.md", html)
    assert str(err.value) == (
        'attempts/x/index.md: verifiable region "head" shows "score 61/100 ·" outside a figure '
        "mark (and 2 more): write it with the figure renderer (builders/site/figures.py) or "
        "move it out of the region"
    )
    assert "\n" not in str(err.value)
    marks.check_page(
        "runs/x/index.md", '<div data-fb-verified="r"><span data-fb-path="content/score">61/100</span></div>'
    )


SAMPLES = [
    "61/100",
    "QUALIFIED",
    "NOT_QUALIFIED",
    "xQUALIFIED",
    "failed_gates",
    "supported",
    "Supported",
    "٦",
    "x",
    "completed",
    "incompleted",
    "the model stopped",
    "recovered",
    "interrupted",
    "REFUSED",
    "",
    "passed,",
]


def test_the_browser_scans_with_the_same_pattern_and_agrees():
    if not shutil.which("node"):
        pytest.skip("node is not installed")
    script = (
        f'import * as c from "{CHECKS.as_uri()}";'
        f"process.stdout.write(JSON.stringify({{pattern: c.FIGURE_PATTERN, "
        f"found: {json.dumps(SAMPLES)}.map((t) => c.holdsFigure(t))}}));"
    )
    proc = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["pattern"] == marks.FIGURE_PATTERN
    assert out["found"] == [bool(marks.FIGURE.search(t)) for t in SAMPLES]


# The regions each verifiable page kind has (a page kind whose figures left its regions would fail here).
KINDS = {
    "runs/reference-W1/": ["lede", "status", "result", "expected", "days", "receipts", "hashes"],
    "runs/baseline-FUND_01-seed-1-do-nothing/": ["lede", "status", "result", "days", "receipts", "hashes"],
    "runs/": ["register-results", "register-grader"],
    "studies/": ["verdicts", "question", "question", "worlds"],
    "comparisons/reference-vs-shortest-cheapest/": [
        "decision",
        "rule",
        "order",
        "report",
        "per-family",
        "items",
        "deviations",
    ],
}


def test_every_page_of_the_built_site_passes_the_scan_and_each_kind_has_its_regions(built_site):  # noqa: F811
    public = built_site[0]
    kinds = dict(KINDS)
    for folder in sorted((public / "attempts").iterdir()):
        if (folder / "index.html").is_file() and (built_site[1] / "attempts" / folder.name / "record.json").is_file():
            inspect = folder.name.startswith("inspect-")
            kinds[f"attempts/{folder.name}/"] = ["head", "summary"] if inspect else ["head"]
    scanned = 0
    for page in sorted(public.rglob("*.html")):
        rel = page.relative_to(public).as_posix()
        found, regions = marks.unmarked(page.read_text(encoding="utf-8"))
        assert not found, (rel, found[:3])
        key = rel[: -len("index.html")] if rel.endswith("index.html") else None
        if key in kinds:
            assert regions == kinds.pop(key), rel
        if key == "":  # the home page: the headline, then the board's cells (one region each, test_board_browser.py)
            board = json.loads((public / "leaderboard.json").read_text())
            assert regions[0] == "headline"
            ranked = [r for r in board["rows"] if r.get("rank")]
            assert regions.count("rank") == len(ranked) and regions.count("model") == len(board["models"])
            shown = [r for r in board["rows"] if r["group"] != "Machinery tests"]
            assert regions.count("worlds") == len(shown) and regions.count("mean") == len(shown)
        scanned += 1
    assert not kinds, f"pages not built: {sorted(kinds)}"
    assert scanned > 100


def test_a_build_whose_template_writes_a_figure_outside_a_mark_stops_in_one_line(tmp_path, monkeypatch, caplog):
    """The real hooks in a real mkdocs build: a run page whose result region also says "Score 61/100" in plain
    text (a forger's template, or a developer's slip) stops the build, naming the page and the text."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    templates = tmp_path / "templates"
    shutil.copytree(pages.TEMPLATES, templates)
    run = templates / "run.md.j2"
    text = run.read_text()
    assert '<div data-fb-verified="result">\n' in text
    run.write_text(
        text.replace(
            '<div data-fb-verified="result">\n', '<div data-fb-verified="result">\n<p>Score 61/100, QUALIFIED</p>\n', 1
        )
    )
    monkeypatch.setattr(pages, "TEMPLATES", templates)
    runs = write_host_runs(tmp_path / "runs", ["reference-W1"])
    monkeypatch.setenv("FUNDBOOK_RUNS_DIR", str(runs))
    monkeypatch.setenv("FUNDBOOK_OG_DIR", str(tmp_path / "og"))
    monkeypatch.setenv("FUNDBOOK_EXPERIMENTS_DIR", str(tmp_path / "experiments"))
    config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(tmp_path / "public"), strict=False)
    with caplog.at_level(logging.ERROR), pytest.raises(Abort):
        build(config)
    refusals = [r.getMessage() for r in caplog.records if "verifiable region" in r.getMessage()]
    assert refusals == [
        'runs/reference-W1/index.md: verifiable region "result" shows "Score 61/100, QUALIFIED" '
        "outside a figure mark: write it with the figure renderer (builders/site/figures.py) or move "
        "it out of the region"
    ]
    assert not re.search(r"Traceback", caplog.text)
