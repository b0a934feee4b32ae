"""The Studies page (builders/site/studies.py): a running study's state as its status.json states it, and,
once its rules stop, each comparison's drawn decision (verdict, n, per-arm means, the difference and its
bounds at 2 decimals, bounds rounded outwards); a malformed decision is refused in one line."""

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from builders.site import fmt, pages, studies
from builders.site.records import SiteInputError
from tests.site.text import plain

REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "runs" / "studies" / "smollm2-heldout"
DECISION = REPO / "runs" / "comparisons" / "shortest-cheapest-vs-do-nothing-betting" / "decision.json"


@pytest.fixture
def runs(tmp_path):
    root = tmp_path / "runs"
    shutil.copytree(STUDY, root / "studies" / STUDY.name)
    (root / "attempts").symlink_to(REPO / "runs" / "attempts")  # the study's evidence lists its attempts' files
    return root


def _page(runs):
    return studies.page(
        pages.environment(), SimpleNamespace(runs_dir=runs, attempts=[], study_erratum=lambda name: None)
    )


def test_a_running_study_shows_the_state_its_status_states(runs):
    status = json.loads((STUDY / "status.json").read_text())
    text = _page(runs)
    assert f"**{status['state']}**: {status['worlds']} worlds played of at most {status['planned_max']}" in text
    for name, c in status["comparisons"].items():
        shown = fmt.decimal(c["wealth_against"], 2)  # two decimals, as every decision figure
        assert f"Wealth against the claim{shown} (stops at 20.00)" in plain(text)
        assert (
            f'<span data-fb-path="status/comparisons/{name}/wealth_against" data-fb-format="decimal2" '
            f'data-fb-of="{STUDY.name}">{shown}</span>'
        ) in text  # a mark: the study's verify checks it
    first = status["per_world"][0]
    assert (
        f'<tr><td class="fb-num fb-cp"></td><td data-fb-path="status/per_world/0/item_id" '
        f'data-fb-of="{STUDY.name}">{first["item_id"]}</td>'
    ) in text
    if status["state"] != "stopped":
        assert "none yet: the rule has not stopped" in text and "<th>Decision</th>" not in text


def test_a_drawn_decision_is_shown_with_its_figures(runs):
    comp = runs / "studies" / STUDY.name / "smollm2-vs-shortest-cheapest"
    shutil.copyfile(DECISION, comp / "decision.json")
    text = _page(runs)
    assert text.count("<th>Decision</th>") == 2  # both questions are decided; this one's decision is replaced
    assert "Decisionsupported at n = 18" in plain(text)
    assert (
        'The decision, <a href="../runs/studies/smollm2-heldout/smollm2-vs-shortest-cheapest/decision.json">'
        "decision.json</a>, is recomputed"
    ) in text
    assert (
        'a recompute in your browser: <a href="../comparisons/smollm2-vs-shortest-cheapest/">'
        "smollm2-vs-shortest-cheapest</a>"
    ) in text
    assert "Mean scoredo-nothing 48.50; shortest-cheapest 79.00" in plain(text)
    # the lower bound 2.056912698 is floored, never rounded up past what the rule gave
    assert "Mean difference30.50 (SE 2.93); confidence sequence 2.05 to 100.00" in plain(text)
    assert (
        '<span data-fb-decision="lower_bound" data-fb-places="2" data-fb-round="floor" '
        'data-fb-of="smollm2-vs-shortest-cheapest">2.05</span>'
    ) in text


@pytest.mark.parametrize("doc", [[], {"report": None}, {"report": {"per_arm_mean": "x"}}])
def test_a_malformed_decision_is_refused_in_one_line(runs, doc):
    comp = runs / "studies" / STUDY.name / "smollm2-vs-do-nothing"
    (comp / "decision.json").write_text(json.dumps(doc))
    with pytest.raises(
        SiteInputError,
        match=r"smollm2-vs-do-nothing/decision.json: expected a decision with a "
        r"report of per-arm means$",
    ):
        _page(runs)


def _study_with_a_decision(runs, name="shortest-cheapest-vs-do-nothing-betting"):
    """A study folder holding a decided comparison and the sweep its evidence names (copied from runs/comparisons)."""
    study = runs / "studies" / "decided"
    study.mkdir(parents=True)
    (study / "study.json").write_text(json.dumps({"comparisons": [name]}))
    shutil.copytree(DECISION.parent, study / name)
    shutil.copytree(DECISION.parent.parent / "heldout-baselines-betting", study / "heldout-baselines-betting")
    return study


def test_a_decided_study_comparison_gets_its_comparison_page_and_the_register_link(runs):
    from builders.site import comparisons, leaderboard

    _study_with_a_decision(runs)
    loaded = comparisons.load(runs)
    (c,) = [c for c in loaded["comparisons"] if c["slug"] == "shortest-cheapest-vs-do-nothing-betting"]
    assert (c["slug"], c["rel"]) == (
        "shortest-cheapest-vs-do-nothing-betting",
        "runs/studies/decided/shortest-cheapest-vs-do-nothing-betting",
    )
    assert {f["href"] for f in c["files"] if f["kind"] == "observations"} == {
        "runs/studies/decided/heldout-baselines-betting/observations.jsonl"
    }
    generated = comparisons.generated_pages(pages.environment(), SimpleNamespace(runs_dir=runs))
    text = generated["comparisons/shortest-cheapest-vs-do-nothing-betting/index.md"]
    assert (
        'data-evidence-url="../../runs/studies/decided/shortest-cheapest-vs-do-nothing-betting/evidence.json"' in text
    )  # the in-browser recompute fetches the study's own evidence
    assert "runs/studies/decided/shortest-cheapest-vs-do-nothing-betting/rules.py" in generated
    assert ("shortest-cheapest-vs-do-nothing-betting", ["baseline:shortest-cheapest"]) in leaderboard.comparison_arms(
        runs
    )["baseline:do-nothing"]


def test_an_edited_study_decision_file_or_a_second_decision_of_one_name_is_refused(runs):
    from builders.site import comparisons

    study = _study_with_a_decision(runs)
    observations = study / "heldout-baselines-betting" / "observations.jsonl"
    kept = observations.read_bytes()
    observations.write_bytes(kept.replace(b'"value":', b'"value": ', 1))
    with pytest.raises(
        SiteInputError,
        match=r"^runs/studies/decided/heldout-baselines-betting/observations.jsonl: "
        r"sha256 differs from runs/studies/decided/",
    ):
        comparisons.load(runs)
    observations.write_bytes(kept)
    shutil.copytree(DECISION.parent, runs / "comparisons" / DECISION.parent.name)
    with pytest.raises(
        SiteInputError,
        match=r"^runs/studies/decided/shortest-cheapest-vs-do-nothing-betting: a "
        r"decision named shortest-cheapest-vs-do-nothing-betting is also at "
        r"runs/comparisons/",
    ):
        comparisons.load(runs)


def test_a_model_arm_s_decision_links_from_the_model_s_row(runs):
    from builders.site import leaderboard

    study = _study_with_a_decision(runs)
    path = study / DECISION.parent.name / "decision.json"
    doc = json.loads(path.read_text())
    doc["arms"] = {"model:tiny-model:0123456789ab": 1, "baseline:do-nothing": -1}
    path.write_text(json.dumps(doc))
    arms = leaderboard.comparison_arms(runs)
    assert (
        arms["model:tiny-model"]
        == arms["model:tiny-model:0123456789ab"]
        == [(DECISION.parent.name, ["baseline:do-nothing"])]
    )
    # the shipped study's decisions link from the real model's row
    assert sorted(arms["model:SmolLM2-135M-Instruct.Q4_1"]) == [
        ("smollm2-vs-do-nothing", ["baseline:do-nothing"]),
        ("smollm2-vs-shortest-cheapest", ["baseline:shortest-cheapest"]),
    ]


@pytest.mark.parametrize("doc", [[], {"comparisons": "x"}, {"comparisons": ["../escape"]}, {"comparisons": [1]}])
def test_a_malformed_study_definition_is_refused_by_the_comparisons_in_one_line(runs, doc):
    from builders.site import comparisons

    study = _study_with_a_decision(runs)
    (study / "study.json").write_text(json.dumps(doc))
    with pytest.raises(
        SiteInputError,
        match=r"^runs/studies/decided/study.json: comparisons: expected a list of "
        r"folder names$",
    ):
        comparisons.load(runs)


def test_each_world_lists_its_attempts_with_how_each_ended(runs):
    """The tries status.json lists for a world, each as its try number and how it ended (marks the study's verify
    reads from the attempt records), the counted one (the last try) in bold."""
    status = json.loads((STUDY / "status.json").read_text())
    status["per_world"][0]["tries"] = [status["per_world"][0]["tries"][0], status["per_world"][0]["tries"][0] + ".2"]
    (runs / "studies" / STUDY.name / "status.json").write_text(json.dumps(status))
    first, second = status["per_world"][0]["tries"]
    family, seed = status["per_world"][0]["item_id"].split("/seed-")
    made = [
        SimpleNamespace(
            attempt_id=aid,
            content={"task": {"split": "heldout", "family": family, "seed": int(seed)}, "termination": {"status": end}},
        )
        for aid, end in ((first, "operator"), (second, "completed"))
    ]
    text = studies.page(
        pages.environment(), SimpleNamespace(runs_dir=runs, attempts=made, study_erratum=lambda name: None)
    )
    row = plain(text.split("Worlds played")[1].split("</tr>")[1])
    assert row.endswith("try 1 (operator); try 2 (completed)")
    assert (
        f'<a href="../attempts/{second}/"><strong><span data-fb-path="status/per_world/0/tries/1" '
        f'data-fb-format="try" data-fb-of="{STUDY.name}">try 2</span></strong></a> (<span '
        f'data-fb-path="attempts/{first}.2/termination/status" data-fb-of="{STUDY.name}">completed</span>)'
    ) in text


def test_an_unfinished_attempt_stops_the_build_with_what_to_do(tmp_path):
    from builders.site.records import load_attempts

    folder = tmp_path / "runs" / "attempts" / "tiny-FUND_01-seed-1.partial"
    folder.mkdir(parents=True)
    (folder / "journal.jsonl").write_text("")
    with pytest.raises(
        SiteInputError,
        match=r"^runs/attempts/tiny-FUND_01-seed-1.partial: an unfinished attempt "
        r"\(still running, or its host died: `fundbook-launch recover` it\)",
    ):
        load_attempts(tmp_path / "runs")


def test_each_freeze_shows_the_commit_that_holds_it_beside_its_date():
    """The study page names the commit that first held each comparison's frozen spec (builders/preregistration.py);
    where there is no history (a shallow clone, a tarball) the date stands alone."""
    from builders.preregistration import freeze_commit

    text = studies.page(
        pages.environment(), SimpleNamespace(runs_dir=REPO / "runs", attempts=[], study_erratum=lambda name: None)
    )
    for comp in ("smollm2-vs-do-nothing", "smollm2-vs-shortest-cheapest"):
        fc = freeze_commit(str(STUDY / comp))
        if fc is None:
            assert "committed in" not in text
            continue
        assert (
            f'The freeze was committed in <code title="{fc["commit"]}">{fc["commit"][:12]}</code> on '
            f"{fc['date']} (from the repository's history)."
        ) in text


def test_a_study_with_a_tier_plan_shows_tier_by_tier_what_ran_and_what_was_cut(runs):
    status_path = runs / "studies" / STUDY.name / "status.json"
    status = json.loads(status_path.read_text())
    status["tiers"] = {
        "overrun_bps": 1000,
        "sd_table": {"score": "11.5"},
        "total_budget": 700,
        "total_spent": 900,
        "tiers": [
            {
                "name": "T1",
                "budget_micro_usd": 400,
                "spent_micro_usd": 600,
                "cumulative_budget": 400,
                "cumulative_spent": 600,
                "over_bps": 5000,
                "complete": True,
                "ran": {"primary": [101, 102]},
                "cut": {},
                "action": "cut 1 seed: T2/<b>diverse</b> seed 103",
            },
            {
                "name": "T2",
                "budget_micro_usd": 300,
                "spent_micro_usd": 300,
                "cumulative_budget": None,
                "cumulative_spent": None,
                "over_bps": None,
                "complete": False,
                "ran": {"<b>diverse</b>": [101]},
                "cut": {"<b>diverse</b>": [103]},
                "action": None,
            },
        ],
    }
    status_path.write_text(json.dumps(status))
    text = _page(runs)
    assert "### Tiers, tier by tier" in text and "The pilot's sd table it froze:\nscore 11.5." in text
    assert (
        "<tr><td>T1</td><td>$0.0004</td><td>$0.0006</td><td>$0.0006 of $0.0004</td><td>primary 101, 102</td>"
        "<td>none</td><td>cut 1 seed: T2/&#60;b&#62;diverse&#60;/b&#62; seed 103</td></tr>"
    ) in text
    assert (
        "<tr><td>T2</td><td>$0.0003</td><td>$0.0003</td><td>not reconciled yet</td><td>&#60;b&#62;diverse&#60;/b&#62; "
        "101</td><td>&#60;b&#62;diverse&#60;/b&#62; 103</td><td>none</td></tr>"
    ) in text
    status["tiers"] = ["not an object"]
    status_path.write_text(json.dumps(status))
    with pytest.raises(SiteInputError, match="status.json: tiers: expected"):
        _page(runs)


def test_a_study_without_a_tier_plan_has_no_tier_section(runs):
    assert "Tiers, tier by tier" not in _page(runs)


@pytest.mark.parametrize(
    "study, spec, message",
    [
        ("[1]", "{}", "study.json: expected a JSON object"),
        ('{"comparisons": "c1"}', "{}", "comparisons: expected a list of comparison folder names"),
        ('{"comparisons": ["c1"]}', "[1]", "c1/spec.json: expected a JSON object"),
    ],
)
def test_a_study_not_started_whose_files_are_not_objects_is_refused_in_one_line(tmp_path, study, spec, message):
    from builders.site import studies as studies_mod
    from builders.site.records import SiteInputError

    folder = tmp_path / "studies" / "s1"
    (folder / "c1").mkdir(parents=True)
    (folder / "study.json").write_text(study)
    (folder / "c1" / "spec.json").write_text(spec)
    (folder / "c1" / "freeze.json").write_text('{"frozen_on": "2026-12-07"}')
    with pytest.raises(SiteInputError) as err:
        studies_mod.preregistered(tmp_path)
    assert message in str(err.value) and "\n" not in str(err.value)


def _waiting_study(tmp_path, deviations):
    folder = tmp_path / "studies" / "s1"
    (folder / "c1").mkdir(parents=True)
    (folder / "c2").mkdir()
    (folder / "study.json").write_text('{"comparisons": ["c1", "c2"]}')
    for comp in ("c1", "c2"):
        (folder / comp / "spec.json").write_text('{"question": "Does it?"}')
        (folder / comp / "freeze.json").write_text('{"frozen_on": "2026-12-07"}')
    (folder / "c1" / "deviations.json").write_text(json.dumps({"deviations": deviations}))
    return folder


def test_a_study_not_started_lists_its_dated_changes_once_escaped(tmp_path):
    entry = {
        "date": "2026-12-07",
        "field": "execution <b>x</b>",
        "original": "one [link](javascript:alert(1))",
        "effective": "two",
        "reason": "speed \ud800",
    }
    shipped = studies.preregistered(REPO / "runs")
    gemma = next((s for s in shipped if s["name"] == "smollm2-gemma-heldout"), None)
    if gemma is not None:  # recorded for all five comparisons: each change listed once, for all of them
        assert len(gemma["deviations"]) == 2 and all(len(d[5]) == 5 for d in gemma["deviations"])
    runs = tmp_path
    folder = _waiting_study(runs, [entry])
    (folder / "c2" / "deviations.json").write_text(json.dumps({"deviations": [entry]}))
    assert studies.preregistered(runs)[0]["deviations"] == [
        ("2026-12-07", "execution <b>x</b>", "one [link](javascript:alert(1))", "two", "speed \ud800", ["c1", "c2"])
    ]
    (folder / "c2" / "deviations.json").unlink()  # recorded for c1 only: the page says so
    text = _page(runs)
    assert (
        "<li>2026-12-07, execution &#60;b&#62;x&#60;/b&#62;: was one &#91;link&#93;(javascript:alert(1)); now two. "
        "Why: speed \u27e8U+D800\u27e9 (c1)</li>"
    ) in text  # markup and a Markdown link escaped, a lone surrogate shown by its code point
    assert "<b>x</b>" not in text


@pytest.mark.parametrize("doc", ['{"deviations": "none"}', '{"deviations": [1]}', "[]"])
def test_a_study_not_started_with_malformed_deviations_is_refused_in_one_line(tmp_path, doc):
    folder = _waiting_study(tmp_path, [])
    (folder / "c1" / "deviations.json").write_text(doc)
    with pytest.raises(SiteInputError) as err:
        studies.preregistered(tmp_path)
    assert "runs/studies/s1/c1/deviations.json" in str(err.value) and "\n" not in str(err.value)
