"""'Verify this board in your browser' (site/assets/fundbook/board.js): on the strictly built site the board
recomputes from the published records and matches on every check; a record, leaderboard.json or a mark of the
page edited in a copy of the site (as a forger with a copy of public/ would) is named by the check it breaks,
the published value beside the computed one; and on two fabricated models the browser recomputes the board the
build computed, field for field (bands.py and rules.py in the engine worker's Pyodide, the host's CPython in the
build)."""

import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

import engine
from builders.site import leaderboard, ranking, records
from builders.site.serve import Serving
from tests.desk.conftest import LOAD_TIMEOUT_MS
from tests.desk.test_verify import check, vcontext, vpage  # noqa: F401  (fixtures: a fresh, offline profile)
from tests.site.boards import MOCK, two_models
from tests.site.conftest import built_site  # noqa: F401  (the shared strict site build)

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("verify")]
BUTTON = "Verify this board in your browser"
CHECKS = ("records", "rows", "baselines", "weights", "ranking", "erratum", "page")


def _copy(public: Path, dst: Path) -> Path:
    shutil.copytree(public, dst, copy_function=os.link)
    return dst


def _rewrite(path: Path, text: str):
    path.unlink()  # break the hard link: the built site stays as built
    path.write_text(text, encoding="utf-8")


def _verify(page, url):
    page.goto(url)
    page.get_by_role("button", name=BUTTON).click()
    box = page.locator(".fb-verify-board .fb-verify-output")
    box.locator("[data-result]").first.wait_for(state="attached", timeout=3 * LOAD_TIMEOUT_MS)
    return box


def _problems(box, name):
    ok, rows = check(box, name)
    assert not ok, (name, box.inner_text()[:2000])
    return {r[0]: list(r[1:]) for r in rows}


def _ranked(public):
    board = json.loads((public / "leaderboard.json").read_text())
    row = next((r for r in board["rows"] if r.get("rank")), None)
    if row is None:
        pytest.skip("needs a ranked model row on the board")
    return board, row


def test_the_published_board_verifies_on_every_check(vpage, built_site):  # noqa: F811
    board = json.loads((built_site[0] / "leaderboard.json").read_text())
    with Serving(built_site[0]) as url:
        box = _verify(vpage, url)
        assert box.locator("[data-result]").first.get_attribute("data-result") == "match", box.inner_text()
        for name in CHECKS:
            assert check(box, name) == (True, []), name
        figures = int(re.search(r"all (\d+) marked figures", box.inner_text()).group(1))
        models = [r for r in board["rows"] if r["kind"] == "model"]
        assert figures >= 3 * len(models) + 2 * len(board["models"])
    assert not vpage.errors


def test_a_record_edited_and_resealed_is_named_by_the_row_it_changes(vpage, built_site, tmp_path):  # noqa: F811
    """A counted attempt's recorded score raised and its content_sha256 recomputed (so its hash still holds): the
    row's counted score, its mean and the page's mark of it no longer follow."""
    board, row = _ranked(built_site[0])
    i, counted = next((i, c) for i, c in enumerate(row["counted"]) if c["graded_by"] == "record")
    site = _copy(built_site[0], tmp_path / "site")
    path = site / "runs" / "attempts" / counted["attempt_id"] / "record.json"
    record = json.loads(path.read_text())
    raised = min(100, counted["score"] + 40)
    record["content"]["result"]["score"]["points"] = raised
    record["content_sha256"] = engine.content_sha256(record["content"])
    _rewrite(path, json.dumps(record, indent=1))
    with Serving(site) as url:
        box = _verify(vpage, url)
        assert box.locator("[data-result]").first.get_attribute("data-result") == "mismatch"
        rows = _problems(box, "rows")
        assert rows[f"rows[{row['key']}].counted[{i}].score"] == [str(counted["score"]), str(raised)]
        scores = [c["score"] for c in row["counted"]]
        scores[i] = raised
        from builders.site import intervals

        assert rows[f"rows[{row['key']}].mean.value"] == [
            json.dumps(row["mean"]["value"]),
            json.dumps(intervals.t_mean(scores)["value"]),
        ]
        page = _problems(box, "page")
        assert page[f"page: board.rows.{row['key']}.mean.value"][0] == row["mean"]["value"]
        assert check(box, "records") == (True, [])  # the record is published and hashes: it is its content that moved
    assert not vpage.errors


def test_an_edited_band_in_leaderboard_json_is_named(vpage, built_site, tmp_path):  # noqa: F811
    board, row = _ranked(built_site[0])
    site = _copy(built_site[0], tmp_path / "site")
    edited = json.loads((site / "leaderboard.json").read_text())
    target = next(r for r in edited["rows"] if r["key"] == row["key"])
    target["band"]["upper"] = "99.9"
    target["rank_band"]["upper"] = 7
    _rewrite(site / "leaderboard.json", json.dumps(edited, indent=1))
    with Serving(site) as url:
        box = _verify(vpage, url)
        problems = _problems(box, "ranking")
        assert problems[f"rows[{row['key']}].band.upper"] == ['"99.9"', json.dumps(row["band"]["upper"])]
        assert problems[f"rows[{row['key']}].rank_band.upper"] == ["7", str(row["rank_band"]["upper"])]
        assert check(box, "page") == (True, [])  # the page still shows what the records give
    assert not vpage.errors


def test_an_edited_mark_and_a_figure_typed_outside_one_are_named(vpage, built_site, tmp_path):  # noqa: F811
    board, row = _ranked(built_site[0])
    key = quote(row["key"], safe="")
    site = _copy(built_site[0], tmp_path / "site")
    html = (site / "index.html").read_text(encoding="utf-8")
    mark = f'data-fb-path="board/rows/{key}/band/lower">{row["band"]["lower"]}<'
    assert mark in html
    html = html.replace(mark, f'data-fb-path="board/rows/{key}/band/lower">1.5<', 1)
    mark = f'data-fb-path="board/rows/{key}/rank" data-fb-format="number">{row["rank"]}</span>'
    html = html.replace(mark, mark + " (top 3)", 1)  # a figure typed into the rank region
    _rewrite(site / "index.html", html)
    with Serving(site) as url:
        box = _verify(vpage, url)
        page = _problems(box, "page")
        assert page[f"page: board.rows.{row['key']}.band.lower"] == ["1.5", row["band"]["lower"]]
        assert page["page: region rank"] == ["(top 3)", "(a figure outside a mark: not in the record)"]
    assert not vpage.errors


FIELDS = (
    "counted",
    "worlds",
    "attempts",
    "qualified",
    "mean",
    "ended_without_result",
    "same_worlds",
    "same_worlds_means",
) + leaderboard.MODEL_FIELDS


def test_two_models_recompute_in_the_browser_as_the_build_computes_them(vpage, built_site, tmp_path, monkeypatch):  # noqa: F811
    """The register has one model yet: two fabricated ones (SmolLM2 in process and behind a local server, Gemma 3
    270M), ranked, each row's weights, headings, bands and rank bands recomputed by board.js in this browser."""
    if not (MOCK / "record.json").is_file():
        pytest.skip("needs the published mock attempt")
    monkeypatch.setattr(leaderboard, "PRELIMINARY_BELOW", 10)
    site = _copy(built_site[0], tmp_path / "site")
    fab = two_models(site / "fab" / "runs").parent
    doc = leaderboard.document(records.load_publication(fab / "runs"))
    for path, data in ranking.site_files().items():
        (fab / path).parent.mkdir(parents=True, exist_ok=True)
        (fab / path).write_bytes(data)
    assert doc["simultaneous"]["ranked"] == 2 and len(doc["models"]) == 2
    with Serving(site) as url:
        vpage.goto(url)
        got = vpage.evaluate(
            """async ([root, doc]) => {
            const m = await import(new URL("assets/fundbook/board.js", location.href).href);
            const out = await m.recomputeBoard(doc, new URL(root, location.href));
            return { doc: out.doc, problems: out.problems };
        }""",
            ["fab/", doc],
        )
    assert {k: v for k, v in got["problems"].items() if v} == {}
    mine = {r["key"]: r for r in got["doc"]["rows"]}
    for row in doc["rows"]:
        for field in FIELDS:
            if field in row:
                assert mine[row["key"]][field] == row[field], (row["key"], field)
    assert got["doc"]["models"] == doc["models"]
    assert [r["key"] for r in got["doc"]["rows"] if r["kind"] == "model"] == [
        r["key"] for r in doc["rows"] if r["kind"] == "model"
    ]
    assert not vpage.errors
