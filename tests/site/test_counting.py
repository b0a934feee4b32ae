"""One rule for which attempt counts for a world (builders/counting.py), written once and used by the study's
model arm, the leaderboard and leaderboard.json, the Attempts register, each transcript, the Studies page and
the decision pages: every page shows the same number for an attempt. The expected figures are derived here from
the published records themselves (runs/attempts/*/record.json and the study's status.json), so a newly published
attempt changes what is expected, not whether the test holds: world 20 of the SmolLM2 study (its recovered second
try, no result of its own, scored as the study scores it) is found in the records, not named."""

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
MODEL = "model:llama-cpp:SmolLM2-135M-Instruct.Q4_1"
STUDY_MODEL = "model:SmolLM2-135M-Instruct.Q4_1:9a55afd8992b"  # the study's name of the same weights

pytestmark = pytest.mark.skipif(not (STUDY / "status.json").is_file(), reason="needs the published study")


def _try(attempt_id):
    """An attempt id's try number: a retry is named `<first try's id>.<n>`."""
    head, _, tail = attempt_id.rpartition(".")
    return int(tail) if head and tail.isdigit() else 1


def _published(key=MODEL):
    """What the records say of one agent, without the site's code: {world: [(try, started, id, record)]} (every
    attempt, harness "fundbook worker" only), each world's counted attempt (the highest try, the latest start among
    equals), its score (the record's own points, else the study's score for that world: the engine's grade of the
    accepted batches, which the study's status.json publishes) and whether it qualified."""
    _, provider, model_id = key.split(":", 2)
    worlds = {}
    for path in sorted((RUNS / "attempts").glob("*/record.json")):
        record = json.loads(path.read_text())
        c = record["content"]
        if (
            c.get("kind") != "model-attempt"
            or c.get("harness")
            or (c["model"]["provider"], c["model"]["id"]) != (provider, model_id)
        ):
            continue
        worlds.setdefault(c["task"]["instance_id"], []).append(
            (_try(c["attempt_id"]), record["volatile"]["started"], c["attempt_id"], record)
        )
    study = {w["item_id"]: w["score"] for w in json.loads((STUDY / "status.json").read_text())["per_world"]}
    counted = {}
    for world, tries in sorted(worlds.items()):
        tries.sort(key=lambda t: (t[0], t[1]))
        _, started, attempt_id, record = tries[-1]
        result = record["content"]["result"]
        score = result["score"]["points"] if result else study[world][STUDY_MODEL]
        counted[world] = {
            "attempt_id": attempt_id,
            "started": started,
            "score": score,
            "result": result,
            "qualified": bool(result) and result["verdict"] == "QUALIFIED",
            "tries": [t[2] for t in tries],
        }
    return worlds, counted


def _mean(scores):
    """The mean at one decimal, half up, from exact integers (the board's rounding)."""
    tenths, rest = divmod(sum(scores) * 10 * 2 + len(scores), len(scores) * 2)
    return f"{tenths // 10}.{tenths % 10}"


def _world_without_result():
    """The study's world whose counted attempt ended without a result of its own, after a retry: (world, counted)."""
    _, counted = _published()
    (found,) = [(w, c) for w, c in counted.items() if c["result"] is None and len(c["tries"]) > 1]
    return found


@pytest.fixture(scope="module")
def pub():
    return records.load_publication(RUNS)


@pytest.fixture(scope="module")
def env():
    return pages.environment()


def test_the_study_s_model_arm_retries_by_the_same_rule():
    from experiments import arm_model

    assert arm_model.RETRY_ENDS is counting.RETRY_ENDS and arm_model.MAX_TRIES == counting.MAX_TRIES
    assert [
        counting.retry_due(e)
        for e in ("operator", "infrastructure_interruption", "completed", "incomplete_execution", "failed")
    ] == [True, True, False, False, False]
    ids = arm_model.attempt_ids({"model": "m", "config_hash": "ab" * 32}, {"family": "FUND_01", "seed": 5})
    assert [counting.try_number(i) for i in ids] == [1, 2]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 4),
            st.sampled_from(["", "2026-12-01T08:00:00Z", "2026-12-02T08:00:00Z"]),
            st.text("ab", min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=6,
        unique_by=lambda t: (t[0], t[2]),
    ),
    st.randoms(),
)
def test_the_counted_try_does_not_depend_on_the_order_records_are_read(tries, rnd):
    made = [(f"x-{name}" + (f".{n}" if n > 1 else ""), started, (n, started, name)) for n, started, name in tries]
    shuffled = list(made)
    rnd.shuffle(shuffled)
    last, ordered = counting.counted(shuffled)
    assert last == counting.counted(made)[0] and ordered[-1] == last
    assert last[2][0] == max(n for n, _, _ in tries)  # the highest try number counts, whatever its end


def test_the_world_without_a_result_scores_the_same_on_every_page(pub, env):
    world, mine = _world_without_result()
    first, last = mine["tries"][0], mine["tries"][-1]
    n, score = len(mine["tries"]), mine["score"]
    counts = counted.counting_map(pub)
    assert counts[first] == {
        "world": world,
        "agent": MODEL,
        "try": 1,
        "tries": n,
        "counted": False,
        "counted_id": last,
        "score": None,
        "tries_ids": mine["tries"],
    }
    got = counts[last]["score"]
    assert (got["points"], got["status"], got["verdict"], got["source"]) == (score, "SCORED", "NOT_QUALIFIED", "engine")
    # the leaderboard and leaderboard.json
    model = next(r for r in leaderboard.document(pub)["rows"] if r["key"] == MODEL)
    assert {
        "world": world,
        "attempt_id": last,
        "score": score,
        "qualified": False,
        "graded_by": "engine",
        "started": mine["started"],
    } in model["counted"]  # `started`: the order the board's bands read the scores in
    # Attempts
    listing = pages.attempts_page(env, pub)
    tr = listing[listing.index(f'<tr id="{last}"') :]
    tr = tr[: tr.index("</tr>")]
    assert f"<strong>{score}/100</strong><br><small>graded from its accepted batches</small>" in tr
    assert 'data-outcome="no-result"' in tr and f"try {n} of {n}" in tr
    head = listing[listing.index(f'<tr id="{first}"') :]
    assert f"not counted: try {n} counts" in head[: head.index("</tr>")]
    # its transcript: the score, the verdict and the failed gates in the head; the call that returned nothing
    attempt = next(a for a in pub.attempts if a.attempt_id == last)
    accepted = attempt.record["content"]["accepted_actions"]
    page = pages.transcript_page(env, pub, attempt)
    assert (
        '<span class="fb-score" data-fb-counted-score><span data-fb-path="counted/points" '
        f'data-fb-format="points100">{score}/100</span></span>'
    ) in page  # a mark of the counted root
    assert (
        f"This attempt counts for world {world} (try {n} of {n}, the last): "
        f"{score}/100, SCORED, NOT_QUALIFIED, the engine's grade of the batches the desk accepted from it "
        f"({accepted} accepted action{'' if accepted == 1 else 's'}): the attempt ended without a result of its "
        "own; gates it did not pass: "
    ) in plain(page)
    assert "no errors" not in page.split("data-fb-cost")[1].split("</p>")[1]
    assert "1 model call without an answer" in page
    # the Studies page: the world, then do-nothing, shortest-cheapest and the model, as the study scores them
    row = json.loads((STUDY / "status.json").read_text())["per_world"]
    (row,) = [w for w in row if w["item_id"] == world]
    assert f"{world}{row['score']['baseline:do-nothing']}{row['score']['baseline:shortest-cheapest']}{score}" in plain(
        studies.page(env, pub)
    )


def test_the_leaderboard_counts_worlds_not_attempts(pub):
    """One counted attempt per world (its last try), however many attempts the records hold."""
    from builders.site import intervals

    worlds, mine = _published()
    scores = [c["score"] for c in mine.values()]
    row = next(r for r in leaderboard.document(pub)["rows"] if r["key"] == MODEL)
    assert (row["worlds"], row["attempts"], row["ended_without_result"]) == (
        len(worlds),
        sum(len(t) for t in worlds.values()),
        sum(c["result"] is None for c in mine.values()),
    )
    assert row["worlds"] < row["attempts"]  # the records hold retries and worlds played twice: they count once
    assert sorted((c["world"], c["attempt_id"], c["score"]) for c in row["counted"]) == sorted(
        (w, c["attempt_id"], c["score"]) for w, c in mine.items()
    )
    assert row["mean"]["value"] == _mean(scores) and row["mean"]["n"] == len(mine)
    assert row["mean"] == intervals.t_mean(scores)
    k = sum(c["qualified"] for c in mine.values())
    assert row["qualified"]["k"] == k and row["qualified"] == intervals.wilson(k, len(mine))
    # the scripted baselines graded on the model's worlds agree with the study's own rows of them, and their means
    # over those worlds are the board's
    status = json.loads((STUDY / "status.json").read_text())
    same = {r["world"]: r for r in row["same_worlds"]}
    assert set(same) == set(mine)
    for w in status["per_world"]:
        assert same[w["item_id"]]["do-nothing"] == w["score"]["baseline:do-nothing"]
        assert same[w["item_id"]]["shortest-cheapest"] == w["score"]["baseline:shortest-cheapest"]
    means = row["same_worlds_means"]
    assert {k: v["value"] for k, v in means.items()} == {
        "llama-cpp:SmolLM2-135M-Instruct.Q4_1": _mean(scores),
        **{
            policy: _mean([r[policy] for r in same.values()])
            for policy in ("do-nothing", "shortest-cheapest", "reference")
        },
    }


def test_the_home_page_says_the_result_in_one_sentence(pub):
    worlds, mine = _published()
    n = len(mine)
    scores = [c["score"] for c in mine.values()]
    board = leaderboard.board(pub)
    rows = dict(board["groups"])["Models"]
    best = next(r for r in rows if r["key"] == MODEL)
    assert best["worlds"] == max(r["worlds"] for r in rows)  # the study's model has played the most worlds
    doc_row = next(r for r in leaderboard.document(pub)["rows"] if r["key"] == MODEL)
    same = {k: v["value"] for k, v in doc_row["same_worlds_means"].items()}
    others = [r for r in rows if r is not best and r["worlds"] < n]
    mean = _mean(scores)

    def side(theirs):
        return "above" if float(mean) > float(theirs) else "below"

    assert board["headline"]["text"] == (
        f"The best model so far, llama-cpp:SmolLM2-135M-Instruct.Q4_1, scored a mean of {mean} points out of 100 "
        f"over {n} worlds: {side(same['do-nothing'])} doing nothing on the same worlds ({same['do-nothing']}) and "
        f"{side(same['reference'])} the reference policy ({same['reference']}). It qualified on "
        f"{sum(c['qualified'] for c in mine.values())} of {n}. {len(others)} other model rows, over fewer than {n} "
        "worlds, are preliminary and not ranked here."
    )
    # the rows over fewer worlds are preliminary, never "the best model"
    assert others and all(r["preliminary"] for r in others)
    assert board["headline"]["model"] == MODEL


def test_the_decision_page_says_its_stopping_point_depended_on_world_20(pub, env, monkeypatch, tmp_path):
    """The study's frozen decision (runs/studies/smollm2-heldout/*/decision.json) as its page states it."""
    monkeypatch.setenv("FUNDBOOK_EXPERIMENTS_DIR", str(tmp_path))
    generated = comparisons.generated_pages(env, pub)
    page = generated["comparisons/smollm2-vs-do-nothing/index.md"]
    assert (
        '<strong><span data-fb-decision="@direction">The model (SmolLM2-135M-Instruct.Q4_1) scored lower than '
        'doing nothing</span></strong>: a mean difference of <strong data-fb-decision="estimate.decimal" '
        'data-fb-places="2">-19.35</strong>'
    ) in page
    assert (
        '<span class="fb-label">Upper bound</span> <strong data-fb-decision="upper_bound" data-fb-places="2" '
        'data-fb-round="ceiling">-0.48</strong> against the margin'
    ) in page
    assert page.index("Upper bound") < page.index("Lower bound") < page.index("fb-verify-decision")
    assert counting.RULE in page
    assert (
        "<strong>The stopping point depended on world 20 (FUND_04/seed-2012208819090176)</strong>: its counted "
        "attempt ended without a result, so it scores 9 (the engine's grade of its accepted batches) against "
        "do-nothing 49, a difference of -40, the largest of the decision."
    ) in page
    assert (
        "with that world a tie, the rule stops at n = 28, <strong>not supported</strong> (wealth against 22.56); "
        "with it left out, at 27 worlds, <strong>not supported</strong> (wealth against 22.56). As drawn: "
        "<strong>not supported</strong> at n = 26."
    ) in page  # two decimals, as every figure of a decision page
    # the other question stopped at n = 12, before world 20: nothing to say
    assert "data-fb-lost" not in generated["comparisons/smollm2-vs-shortest-cheapest/index.md"]


def test_a_study_score_that_differs_from_the_counted_attempt_stops_the_build(pub, env, tmp_path):
    W20, mine = _world_without_result()
    W20_LAST = mine["tries"][-1]
    runs = tmp_path / "runs"
    shutil.copytree(STUDY, runs / "studies" / STUDY.name)
    status = json.loads((STUDY / "status.json").read_text())
    (row,) = [w for w in status["per_world"] if w["item_id"] == W20]
    assert mine["score"] != 0
    row["score"][STUDY_MODEL] = 0  # the leaderboard's old number
    (runs / "studies" / STUDY.name / "status.json").write_text(json.dumps(status))

    class Pub:
        runs_dir = runs
        attempts = pub.attempts

    with pytest.raises(SiteInputError) as err:
        studies.page(env, Pub())
    assert str(err.value) == (
        f"runs/studies/smollm2-heldout/status.json: world {W20}: the study scores the model 0, "
        f"its counted attempt {W20_LAST} scores {mine['score']} by the rule of "
        "builders/counting.py: the "
        f"pages would disagree"
    )


def test_the_rule_is_stated_on_each_page(pub, env):
    assert counting.RULE in pages.attempts_page(env, pub)
    assert counting.RULE in studies.page(env, pub)
    world, mine = _world_without_result()
    attempt = next(a for a in pub.attempts if a.attempt_id == mine["tries"][0])
    page = pages.transcript_page(env, pub, attempt)
    assert counting.RULE in page and (
        f"This attempt does not count: it is try 1 of {len(mine['tries'])} on world {world}, and the last try counts"
    ) in plain(page)
    assert counting.RULE in json.loads(leaderboard.json_text(pub))["rule"]
