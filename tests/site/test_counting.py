"""One rule for which attempt counts for a world (builders/counting.py), written once and used by the study's
model arm, the leaderboard and leaderboard.json, the Attempts register, each transcript, the Studies page and
the decision pages: every page shows the same number for an attempt. Exact values from the published runs
(world 20 of the SmolLM2 study: its recovered second try, no result of its own, scores 9 everywhere)."""

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import counting
from builders.site import comparisons, counted, leaderboard, pages, records, studies
from builders.site.records import SiteInputError
from tests.site.text import plain

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "runs"
STUDY = RUNS / "studies" / "smollm2-heldout"
W20 = "FUND_04/seed-2012208819090176"
W20_FIRST = "SmolLM2-135M-Instruct.Q4_1-9a55afd8-FUND_04-seed-2012208819090176"
W20_LAST = W20_FIRST + ".2"
MODEL = "model:llama-cpp:SmolLM2-135M-Instruct.Q4_1"

pytestmark = pytest.mark.skipif(not (STUDY / "status.json").is_file(), reason="needs the published study")


@pytest.fixture(scope="module")
def pub():
    return records.load_publication(RUNS)


@pytest.fixture(scope="module")
def env():
    return pages.environment()


def test_the_study_s_model_arm_retries_by_the_same_rule():
    from experiments import arm_model
    assert arm_model.RETRY_ENDS is counting.RETRY_ENDS and arm_model.MAX_TRIES == counting.MAX_TRIES
    assert [counting.retry_due(e) for e in ("operator", "infrastructure_interruption", "completed",
                                            "incomplete_execution", "failed")] == [True, True, False, False, False]
    ids = arm_model.attempt_ids({"model": "m", "config_hash": "ab" * 32}, {"family": "FUND_01", "seed": 5})
    assert [counting.try_number(i) for i in ids] == [1, 2]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.sampled_from(["", "2026-12-01T08:00:00Z", "2026-12-02T08:00:00Z"]),
                          st.text("ab", min_size=1, max_size=3)), min_size=1, max_size=6, unique_by=lambda t: (t[0], t[2])),
       st.randoms())
def test_the_counted_try_does_not_depend_on_the_order_records_are_read(tries, rnd):
    made = [(f"x-{name}" + (f".{n}" if n > 1 else ""), started, (n, started, name)) for n, started, name in tries]
    shuffled = list(made)
    rnd.shuffle(shuffled)
    last, ordered = counting.counted(shuffled)
    assert last == counting.counted(made)[0] and ordered[-1] == last
    assert last[2][0] == max(n for n, _, _ in tries)  # the highest try number counts, whatever its end


def test_world_20_scores_9_on_every_page(pub, env):
    counts = counted.counting_map(pub)
    assert counts[W20_FIRST] == {"world": W20, "agent": MODEL, "try": 1, "tries": 2, "counted": False,
                                 "counted_id": W20_LAST, "score": None, "tries_ids": [W20_FIRST, W20_LAST]}
    got = counts[W20_LAST]["score"]
    assert (got["points"], got["status"], got["verdict"], got["source"]) == (9, "SCORED", "NOT_QUALIFIED", "engine")
    # the study (status.json, which decided the do-nothing question)
    status = json.loads((STUDY / "status.json").read_text())
    (row,) = [w for w in status["per_world"] if w["item_id"] == W20]
    assert row["score"]["model:SmolLM2-135M-Instruct.Q4_1:9a55afd8992b"] == 9
    # the leaderboard and leaderboard.json
    model = next(r for r in leaderboard.document(pub)["rows"] if r["key"] == MODEL)
    started = next(a for a in pub.attempts if a.attempt_id == W20_LAST).record["volatile"]["started"]
    assert {"world": W20, "attempt_id": W20_LAST, "score": 9, "qualified": False, "graded_by": "engine",
            "started": started} in model["counted"]  # `started`: the order the board's bands read the scores in
    # Attempts
    listing = pages.attempts_page(env, pub)
    tr = listing[listing.index(f'<tr id="{W20_LAST}"'):]
    tr = tr[:tr.index("</tr>")]
    assert "<strong>9/100</strong><br><small>graded from its accepted batches</small>" in tr
    assert 'data-outcome="no-result"' in tr and "try 2 of 2" in tr
    first = listing[listing.index(f'<tr id="{W20_FIRST}"'):]
    assert "not counted: try 2 counts" in first[:first.index("</tr>")]
    # its transcript: the score, the verdict and the failed gates in the head; the call that returned nothing
    attempt = next(a for a in pub.attempts if a.attempt_id == W20_LAST)
    page = pages.transcript_page(env, pub, attempt)
    assert ('<span class="fb-score" data-fb-counted-score><span data-fb-path="counted/points" '
            'data-fb-format="points100">9/100</span></span>') in page  # a mark of the counted root: verify derives it
    assert ("This attempt counts for world FUND_04/seed-2012208819090176 (try 2 of 2, the last): "
            "9/100, SCORED, NOT_QUALIFIED, the engine's grade of the batches the desk accepted from it (0 accepted "
            "actions): the attempt ended without a result of its own; gates it did not pass: no_settlement_failure, "
            "checkpoint_coverage.") in plain(page)
    assert "no errors" not in page.split("data-fb-cost")[1].split("</p>")[1]
    assert "1 model call without an answer" in page
    # the Studies page
    text = plain(studies.page(env, pub))
    assert f"{W20}49929" in text  # the world, do-nothing 49, shortest-cheapest 92, the model 9


def test_the_leaderboard_counts_worlds_not_attempts(pub):
    """Before: 26.9 = 887/33 over 33 attempts, labelled "Worlds 30". After: one counted attempt per world."""
    row = next(r for r in leaderboard.document(pub)["rows"] if r["key"] == MODEL)
    assert (row["worlds"], row["attempts"], row["ended_without_result"]) == (30, 33, 1)
    assert len(row["counted"]) == 30 == len({c["world"] for c in row["counted"]})
    assert sum(c["score"] for c in row["counted"]) == 866  # 887 - 30 (FUND_01 seed 1 twice) + 9 (world 20)
    assert row["mean"] == {"value": "28.9", "lower": "25.4", "upper": "32.3", "n": 30}
    assert row["qualified"] == {"value": "0.0", "lower": "0.0", "upper": "11.4", "k": 0, "n": 30}
    means = row["same_worlds_means"]
    assert {k: v["value"] for k, v in means.items()} == {"llama-cpp:SmolLM2-135M-Instruct.Q4_1": "28.9",
                                                         "do-nothing": "48.5", "shortest-cheapest": "78.1",
                                                         "reference": "100.0"}
    # the scripted baselines graded on the model's worlds agree with the study's own rows of them
    status = json.loads((STUDY / "status.json").read_text())
    same = {r["world"]: r for r in row["same_worlds"]}
    for w in status["per_world"]:
        assert same[w["item_id"]]["do-nothing"] == w["score"]["baseline:do-nothing"]
        assert same[w["item_id"]]["shortest-cheapest"] == w["score"]["baseline:shortest-cheapest"]


def test_the_home_page_says_the_result_in_one_sentence(pub):
    assert leaderboard.board(pub)["headline"]["text"] == (
        "The best model so far, llama-cpp:SmolLM2-135M-Instruct.Q4_1, scored a mean of 28.9 points out of 100 over 30 "
        "worlds: below doing nothing on the same worlds (48.5) and below the reference policy (100.0). It qualified "
        "on 0 of 30. 2 other model rows, over fewer than 30 worlds, are preliminary and not ranked here.")
    # the one-world rows (the OpenAI-compatible server's attempt scores 30 on its world) are not "the best model"
    rows = dict(leaderboard.board(pub)["groups"])["Models"]
    assert [(r["worlds"], r["preliminary"]) for r in rows if r["worlds"] == 1] == [(1, True), (1, True)]
    assert max(rows, key=lambda r: -r["order"])["harness"] is not None and leaderboard.board(pub)["headline"][
        "model"] == "model:llama-cpp:SmolLM2-135M-Instruct.Q4_1"


def test_the_decision_page_says_its_stopping_point_depended_on_world_20(pub, env, monkeypatch, tmp_path):
    monkeypatch.setenv("FUNDBOOK_EXPERIMENTS_DIR", str(tmp_path))
    generated = comparisons.generated_pages(env, pub)
    page = generated["comparisons/smollm2-vs-do-nothing/index.md"]
    assert ('<strong><span data-fb-decision="@direction">The model (SmolLM2-135M-Instruct.Q4_1) scored lower than '
            'doing nothing</span></strong>: a mean difference of <strong data-fb-decision="estimate.decimal" '
            'data-fb-places="2">-19.35</strong>') in page
    assert ('<span class="fb-label">Upper bound</span> <strong data-fb-decision="upper_bound" data-fb-places="2" '
            'data-fb-round="ceiling">-0.48</strong> against the margin') in page
    assert page.index("Upper bound") < page.index("Lower bound") < page.index("fb-verify-decision")
    assert counting.RULE in page
    assert ("<strong>The stopping point depended on world 20 (FUND_04/seed-2012208819090176)</strong>: its counted "
            "attempt ended without a result, so it scores 9 (the engine's grade of its accepted batches) against "
            "do-nothing 49, a difference of -40, the largest of the decision.") in page
    assert ("with that world a tie, the rule stops at n = 28, <strong>not supported</strong> (wealth against 22.56); "
            "with it left out, at 27 worlds, <strong>not supported</strong> (wealth against 22.56). As drawn: "
            "<strong>not supported</strong> at n = 26.") in page  # two decimals, as every figure of a decision page
    # the other question stopped at n = 12, before world 20: nothing to say
    assert "data-fb-lost" not in generated["comparisons/smollm2-vs-shortest-cheapest/index.md"]


def test_a_study_score_that_differs_from_the_counted_attempt_stops_the_build(pub, env, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(STUDY, runs / "studies" / STUDY.name)
    status = json.loads((STUDY / "status.json").read_text())
    (row,) = [w for w in status["per_world"] if w["item_id"] == W20]
    row["score"]["model:SmolLM2-135M-Instruct.Q4_1:9a55afd8992b"] = 0  # the leaderboard's old number
    (runs / "studies" / STUDY.name / "status.json").write_text(json.dumps(status))

    class Pub:
        runs_dir = runs
        attempts = pub.attempts
    with pytest.raises(SiteInputError) as err:
        studies.page(env, Pub())
    assert str(err.value) == (f"runs/studies/smollm2-heldout/status.json: world {W20}: the study scores the model 0, "
                              f"its counted attempt {W20_LAST} scores 9 by the rule of builders/counting.py: the "
                              f"pages would disagree")


def test_the_rule_is_stated_on_each_page(pub, env):
    assert counting.RULE in pages.attempts_page(env, pub)
    assert counting.RULE in studies.page(env, pub)
    attempt = next(a for a in pub.attempts if a.attempt_id == W20_FIRST)
    page = pages.transcript_page(env, pub, attempt)
    assert counting.RULE in page and (f"This attempt does not count: it is try 1 of 2 on world "
                                      f"{W20}, and the last try counts") in plain(page)
    assert counting.RULE in json.loads(leaderboard.json_text(pub))["rule"]
