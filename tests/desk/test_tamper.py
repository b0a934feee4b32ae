"""Verified means every figure shown: a forger's edit of any figure a verifiable page shows -- or a figure typed
into it outside a mark, or a mark taken away -- is named by that page's verify, for each page kind.

Each test edits a COPY of the strictly built site (tests/site/conftest.py built_site) the way a forger with a copy
of public/ would, clicks the page's verify and expects "mismatch" with the named field, the published text beside
the computed one. The kinds: a run page, a local model's attempt, an OpenAI-compatible server's attempt, the
Inspect-imported attempt (the reported case: its header score 11/100 -> 61/100 and its verdict QUALIFIED), a
practitioner record (built from a submission as the import writes it), a decision, the Studies page and the home
page's headline. Each kind's untouched page verifies "match" in the tests beside it (test_verify.py,
test_verify_attempt.py, tests/experiments/test_browser_decisions.py) and here for the new ones."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from builders.site import marks
from builders.site.serve import Serving
from tests.desk.conftest import LOAD_TIMEOUT_MS
from tests.desk.test_verify import check, vcontext, vpage  # noqa: F401  (fixtures: a fresh, offline profile)
from tests.site.conftest import built_site  # noqa: F401  (the shared strict site build)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("verify")]
REPO = Path(__file__).resolve().parents[2]


def _copy(public: Path, dst: Path) -> Path:
    shutil.copytree(public, dst, copy_function=os.link)
    return dst


def _edit(site: Path, rel: str, *subs):
    """Rewrite one page of the copy: each (pattern, replacement) must match (the built site stays as built)."""
    path = site / rel / "index.html"
    html = path.read_text(encoding="utf-8")
    for pattern, repl in subs:
        new = re.sub(pattern, repl, html, count=1)
        assert new != html, pattern
        html = new
    path.unlink()  # break the hard link
    path.write_text(html, encoding="utf-8")


def _verify(page, url, rel, button):
    page.goto(url + rel)
    page.get_by_role("button", name=button).first.click()
    box = page.locator(".fb-verify-output").first
    box.locator("[data-result]").first.wait_for(state="attached", timeout=3 * LOAD_TIMEOUT_MS)
    return box


def _rows(box, name):
    ok, rows = check(box, name)
    assert not ok, (name, box.inner_text()[:2000])
    return {r[0]: list(r[1:]) for r in rows}


def _attempt(built_site, want):  # noqa: F811
    """The published attempt of a kind: "inspect", "local" (a llama-cpp attempt that counts, with a grade),
    "server" (the OpenAI-compatible server's)."""
    for folder in sorted((built_site[1] / "attempts").iterdir()):
        path = folder / "record.json"
        if not path.is_file() or not (built_site[0] / "attempts" / folder.name / "index.html").is_file():
            continue
        c = json.loads(path.read_text())["content"]
        kind = (
            "inspect"
            if c.get("harness") == "inspect"
            else "server"
            if c["model"]["provider"] == "openai-compatible"
            else "local"
            if c["model"]["provider"] == "llama-cpp" and c.get("result")
            else None
        )
        html = (built_site[0] / "attempts" / folder.name / "index.html").read_text()
        if kind == want and "This attempt counts" in re.sub(r"<[^>]+>", "", html):
            return folder.name, c
    pytest.skip(f"needs a published {want} attempt that counts")


def test_a_run_page_names_an_edited_badge_and_a_figure_typed_outside_a_mark(vpage, built_site, tmp_path):  # noqa: F811
    site = _copy(built_site[0], tmp_path / "site")
    _edit(
        site,
        "runs/reference-W1",
        (r'(data-fb-path="content/status"[^>]*>)SCORED<', r"\1MALFORMED<"),
        # the score's mark taken away: its text stays, unmarked, in the result region
        (r'<span data-fb-path="content/score" data-fb-format="score" class="fb-score">(\d+/100)</span>', r"\1"),
    )
    with Serving(site) as url:
        box = _verify(vpage, url, "runs/reference-W1/", "Verify this run in your browser")
        assert box.locator("[data-result]").first.get_attribute("data-result") == "mismatch"
        rows = _rows(box, "page")
        assert rows["page: content.status"] == ["MALFORMED", "SCORED"]
        assert rows["page: content.score"][0] == "(not shown)"
        assert rows["page: region result"] == ["100/100", "(a figure outside a mark: not in the record)"]
    assert not vpage.errors


def test_a_local_attempt_names_its_counts_line_and_a_component(vpage, built_site, tmp_path):  # noqa: F811
    """The reported case: the 'Counts' line and a score component of a local model's attempt edited."""
    attempt, content = _attempt(built_site, "local")
    points = content["result"]["score"]["points"]
    name, comp = sorted(content["result"]["score"]["components"].items())[0]
    site = _copy(built_site[0], tmp_path / "site")
    _edit(
        site,
        f"attempts/{attempt}",
        (
            r'(<p class="fb-line" data-fb-counts>.*?data-fb-path="counted/points" data-fb-format="points100">)\d+/100',
            rf"\g<1>{points + 50}/100",
        ),
        (
            rf'(data-fb-path="content/result/score/components/{name}" data-fb-format="points">)\d+/',
            rf"\g<1>{comp['points'] + 5}/",
        ),
    )
    with Serving(site) as url:
        box = _verify(vpage, url, f"attempts/{attempt}/", "Verify this attempt in your browser")
        rows = _rows(box, "page")
        assert rows["page: counted.points"] == [f"{points + 50}/100", f"{points}/100"]
        assert rows[f"page: content.result.score.components.{name}"] == [
            f"{comp['points'] + 5}/{comp['max']}",
            f"{comp['points']}/{comp['max']}",
        ]
    assert not vpage.errors


def test_a_server_attempt_names_its_cost_line(vpage, built_site, tmp_path):  # noqa: F811
    attempt, _ = _attempt(built_site, "server")
    site = _copy(built_site[0], tmp_path / "site")
    _edit(site, f"attempts/{attempt}", (r'(data-fb-path="content" data-fb-format="cost">)\$0\.00', r"\1$0.01"))
    with Serving(site) as url:
        box = _verify(vpage, url, f"attempts/{attempt}/", "Verify this attempt in your browser")
        rows = _rows(box, "page")
        published, computed = rows["page: content"]
        assert published.startswith("$0.01") and computed.startswith("$0.00")
    assert not vpage.errors


def test_the_inspect_attempt_names_its_header_score_and_verdict(vpage, built_site, tmp_path):  # noqa: F811
    """The reported case: the header's 11/100 made 61/100 and its verdict QUALIFIED."""
    attempt, content = _attempt(built_site, "inspect")
    points, verdict = content["result"]["score"]["points"], content["result"]["verdict"]
    site = _copy(built_site[0], tmp_path / "site")
    _edit(
        site,
        f"attempts/{attempt}",
        (
            r'(data-fb-counted-score><span data-fb-path="counted/points" data-fb-format="points100">)\d+/100',
            rf"\g<1>{points + 50}/100",
        ),
        (
            r'(data-fb-path="counted/verdict" data-fb-format="verdict" class="fb-badge fb-verdict-)[a-z_]+(">)[A-Z_]+<',
            r"\1qualified\2QUALIFIED<",
        ),
    )
    with Serving(site) as url:
        box = _verify(vpage, url, f"attempts/{attempt}/", "Verify this attempt in your browser")
        assert box.locator("[data-result]").first.get_attribute("data-result") == "mismatch"
        rows = _rows(box, "page")
        assert rows["page: counted.points"] == [f"{points + 50}/100", f"{points}/100"]
        assert rows["page: counted.verdict"] == ["QUALIFIED", verdict]
        ok, _ = check(box, "reexecution")
        assert ok  # the record itself is intact: the page is what was forged
    assert not vpage.errors


def test_the_inspect_attempt_names_a_figure_typed_into_what_fundbook_established(vpage, built_site, tmp_path):  # noqa: F811
    attempt, _ = _attempt(built_site, "inspect")
    site = _copy(built_site[0], tmp_path / "site")
    _edit(
        site,
        f"attempts/{attempt}",
        (r"(<span class=\"fb-label\">Established by fundbook</span>)", r"\1 The model QUALIFIED."),
    )
    with Serving(site) as url:
        box = _verify(vpage, url, f"attempts/{attempt}/", "Verify this attempt in your browser")
        rows = _rows(box, "page")
        assert any(k == "page: region head" and v[0].startswith("The model QUALIFIED.") for k, v in rows.items()), rows
    assert not vpage.errors


def test_a_decision_page_names_a_family_figure_and_its_verdict(vpage, built_site, tmp_path):  # noqa: F811
    rel = "comparisons/reference-vs-shortest-cheapest"
    decision = json.loads(
        (built_site[1] / "comparisons" / "reference-vs-shortest-cheapest" / "decision.json").read_text()
    )
    site = _copy(built_site[0], tmp_path / "site")
    _edit(
        site,
        rel,
        (r'(data-fb-decision="&#91;&#34;per_family&#34;, 0, &#34;n&#34;&#93;"[^>]*>)\d+<', r"\g<1>9999<"),
        (r'(<p class="admonition-title"><span data-fb-decision="verdict">)[A-Z ]+<', r"\1INCONCLUSIVE<"),
    )
    with Serving(site) as url:
        box = _verify(vpage, url, rel + "/", "Verify this decision in your browser")
        rows = _rows(box, "page")
        assert rows["per_family.0.n"] == ["9999", str(decision["per_family"][0]["n"])]
        assert rows["verdict"] == ["INCONCLUSIVE", decision["verdict"]]
    assert not vpage.errors


def test_the_studies_page_names_a_world_score(vpage, built_site, tmp_path):  # noqa: F811
    status = json.loads((built_site[1] / "studies" / "smollm2-heldout" / "status.json").read_text())
    arm = next(a for a in status["per_world"][0]["score"] if a.startswith("model:"))
    shown = status["per_world"][0]["score"][arm]
    site = _copy(built_site[0], tmp_path / "site")
    path_attr = f"status/per_world/0/score/{arm}".replace(":", "%3A")
    _edit(site, "studies", (rf'(data-fb-path="{re.escape(path_attr)}"[^>]*>){shown}<', rf"\g<1>{shown + 40}<"))
    with Serving(site) as url:
        box = _verify(vpage, url, "studies/", "Verify this study in your browser")
        rows = _rows(box, "page")
        assert rows[f"page: status.per_world[0].score.{arm}"] == [str(shown + 40), str(shown)]
    assert not vpage.errors


def test_the_home_headline_names_an_edited_mean(vpage, built_site, tmp_path):  # noqa: F811
    doc = json.loads((built_site[0] / "leaderboard.json").read_text())
    m = re.search(r"scored a mean of (\d+\.\d)", doc["headline"])
    if not m:
        pytest.skip("needs a model with a result")
    site = _copy(built_site[0], tmp_path / "site")
    _edit(site, "", (r'(data-fb-path="headline/mean">)[0-9.]+<', r"\g<1>58.9<"))
    with Serving(site) as url:
        box = _verify(vpage, url, "", "Check this sentence in your browser")
        rows = _rows(box, "page")
        assert rows["page: headline.mean"] == ["58.9", m.group(1)]
        assert _rows(box, "sentence")  # leaderboard.json states the sentence as built, not the edited one
    assert not vpage.errors


def test_a_practitioner_record_names_its_clock_and_a_figure_outside_a_mark(vpage, tmp_path, bundle_dir):
    """A practitioner record as the import writes it, on a stand-in site: its page passes the build's scan and
    verifies; an edited task clock and a figure typed into its region are each named."""
    from builders.desk import devsite
    from builders.site.practitioner_page import site_files
    from tests.site.hostile import practitioner_record

    runs = tmp_path / "runs"
    runs.mkdir()
    folder = practitioner_record(runs, bundle_dir, finalize=True)
    html = site_files(runs)[f"practitioners/{folder.name}/index.md"]
    assert not marks.unmarked(html.split("\n---\n", 1)[1])[0]
    served = devsite.build(tmp_path / "site", Path(bundle_dir))
    (rel,) = devsite.practitioner_pages(served, runs)
    with Serving(served) as url:
        box = _verify(vpage, url, rel, "Verify this practitioner run in your browser")
        assert box.locator("[data-result]").first.get_attribute("data-result") == "match", box.inner_text()
        page = served / rel / "index.html"
        text = page.read_text()
        text = re.sub(
            r'(data-fb-path="content/clock/active_ms" data-fb-format="hms">)\d+:(\d\d:\d\d)<',
            r"\g<1>9:\2<",
            text,
            count=1,
        )
        text = text.replace("<p><strong>A person</strong>", "<p>Scored 99/100. <strong>A person</strong>", 1)
        page.write_text(text)
        box = _verify(vpage, url, rel, "Verify this practitioner run in your browser")
        rows = _rows(box, "page")
        assert rows["page: content.clock.active_ms"][0].startswith("9:")
        assert rows["page: region record"][0] == "Scored 99/100."
    assert not vpage.errors
