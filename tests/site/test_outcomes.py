"""Each study's outcomes per world (builders/site/outcomes.py, studies/<study>/worlds/): one cell per world and
arm -- qualified, scored, no score -- read from the sweep's observation rows; filterable (register.js) and a card
a world on a phone. Expected cells are derived here from observations.jsonl."""

import json
import shutil
from pathlib import Path

import pytest

from builders.site import outcomes, pages, records
from tests.site.text import plain

REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "runs" / "studies" / "smollm2-heldout"


def _cells(study: Path):
    """{(world, arm): outcome} from the study's observation rows."""
    metrics = {}
    for line in (study / "sweep" / "observations.jsonl").read_text().splitlines():
        r = json.loads(line)
        metrics.setdefault((r["item_id"], r["arm"]), {})[r["metric"]] = r["value"]
    return {
        k: (
            "qualified"
            if m.get("scored") == 1 and m.get("qualified") == 1
            else "scored"
            if m.get("scored") == 1
            else "none"
        )
        for k, m in metrics.items()
    }


@pytest.fixture
def study_runs(tmp_path):
    if not (STUDY / "study.json").is_file():
        pytest.skip("needs the published study")
    runs = tmp_path / "runs"
    shutil.copytree(STUDY, runs / "studies" / STUDY.name)
    return runs


def test_every_world_and_arm_is_the_cell_its_observation_rows_give(study_runs):
    view = outcomes.study_view(study_runs, STUDY.name)
    status = json.loads((STUDY / "status.json").read_text())
    sweep = json.loads((STUDY / "sweep" / "sweep.json").read_text())
    want = _cells(STUDY)
    assert [w["world"] for w in view["worlds"]] == [w["item_id"] for w in status["per_world"]]
    assert [a["name"] for a in view["arms"]] == [a["name"] for a in sweep["arms"]]
    for w in view["worlds"]:
        for a, c in zip(view["arms"], w["cells"]):
            assert c["outcome"] == want[(w["world"], a["name"])]
    # the arms' totals are the cells counted
    for j, a in enumerate(view["arms"]):
        for key, _ in outcomes.OUTCOMES:
            assert view["totals"][j][key] == sum(1 for w in view["worlds"] if w["cells"][j]["outcome"] == key)
    model = next(a for a in view["arms"] if a["name"].startswith("model:"))
    assert model["card"] == "models/smollm2-135m-instruct/" and not model["base"]


def test_a_cell_says_qualified_scored_or_no_score_and_a_base_model_is_labelled(study_runs):
    """Rows edited to give each outcome, and the model arm's weights made Gemma's (a base model)."""
    from tests.site.boards import GEMMA

    folder = study_runs / "studies" / STUDY.name / "sweep"
    rows = [json.loads(line) for line in (folder / "observations.jsonl").read_text().splitlines()]
    status = json.loads((STUDY / "status.json").read_text())
    first, second = status["per_world"][0]["item_id"], status["per_world"][1]["item_id"]
    for r in rows:
        if r["arm"] == "baseline:do-nothing" and r["item_id"] == first and r["metric"] in ("qualified",):
            r["value"] = 1
        if r["arm"] == "baseline:do-nothing" and r["item_id"] == second and r["metric"] == "scored":
            r["value"] = 0
    (folder / "observations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    sweep = json.loads((folder / "sweep.json").read_text())
    for arm in sweep["arms"]:
        if arm.get("kind") == "model":
            arm["model_sha256"] = GEMMA["sha256"]
    (folder / "sweep.json").write_text(json.dumps(sweep))
    page = outcomes.generated_pages(pages.environment(), records.Publication(runs_dir=study_runs, index={}))
    text = page[f"studies/{STUDY.name}/worlds/index.md"]
    row1 = text[text.index(f'data-run-id="{first}"') :]
    row1 = row1[: row1.index("</tr>")]
    row2 = text[text.index(f'data-run-id="{second}"') :]
    row2 = row2[: row2.index("</tr>")]
    assert 'data-arm2="qualified"' in row1 and 'data-arm2="none"' in row2
    cell = row2[row2.index('data-label="do-nothing"') :]
    assert plain(cell[: cell.index("</td>")]).endswith("no score")
    assert f"{GEMMA['title']} (base model)" in plain(text)
    assert '<span class="fb-badge fb-base">base model</span>' in text


def test_the_view_filters_by_arm_outcome_and_family_and_fits_a_phone(browser, built_site):
    from builders.site.serve import Serving

    public, runs, _ = built_site
    studies = outcomes.studies(runs)
    if not studies:
        pytest.skip("needs a published study")
    name = studies[0]
    view = outcomes.study_view(runs, name)
    with Serving(public) as url:
        ctx = browser.new_context(viewport={"width": 1366, "height": 900})
        page = ctx.new_page()
        page.goto(f"{url}studies/{name}/worlds/")
        rows = page.locator("table[data-fb-register] tbody tr")
        assert rows.count() == len(view["worlds"])
        j = next(i for i, a in enumerate(view["arms"]) if a["name"].startswith("model:"))
        want = sum(1 for w in view["worlds"] if w["cells"][j]["outcome"] == "scored")
        page.select_option(f'select[data-fb-filter="arm{j + 1}"]', "scored")
        assert page.locator("table[data-fb-register] tbody tr:not([hidden])").count() == want
        assert f"arm{j + 1}=scored" in page.url  # the filter lives in the address
        family = view["families"][0]
        page.select_option('select[data-fb-filter="family"]', family)
        assert page.locator("table[data-fb-register] tbody tr:not([hidden])").count() == sum(
            1 for w in view["worlds"] if w["cells"][j]["outcome"] == "scored" and w["family"] == family
        )
        ctx.close()
        ctx = browser.new_context(viewport={"width": 390, "height": 844})
        page = ctx.new_page()
        page.goto(f"{url}studies/{name}/worlds/")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        first = page.locator("table[data-fb-register] tbody tr").first.bounding_box()
        assert first["width"] <= 390
        ctx.close()
