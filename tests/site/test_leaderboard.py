"""The home page's status line and leaderboard (builders/site/leaderboard.py,
overview.py): one row per agent, labelled; the mock apart and never charted;
what it says follows the records (a real model's result, a practitioner's
session), never a fixed sentence."""

import json
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

import engine
from builders.site import fmt, leaderboard, overview, pages, records, weights
from tests.site.host_records import write_host_runs
from tests.site.text import plain

REPO = Path(__file__).resolve().parents[2]
MOCK = REPO / "runs" / "attempts" / "mock-FUND_01-seed-1"
BASELINES = [f"baseline-FUND_01-seed-{s}-{p}" for s in (1, 2) for p in ("do-nothing", "reference", "shortest-cheapest")]


@pytest.fixture(scope="module")
def base_runs(tmp_path_factory):
    if not (MOCK / "record.json").is_file():
        pytest.skip("needs the published mock attempt (make mock-attempt)")
    runs = write_host_runs(tmp_path_factory.mktemp("board") / "runs", BASELINES)
    shutil.copytree(MOCK, runs / "attempts" / MOCK.name)
    return runs


@pytest.fixture
def runs(base_runs, tmp_path):
    return Path(shutil.copytree(base_runs, tmp_path / "runs"))


def _seal(path: Path, record: dict):
    record["content_sha256"] = engine.content_sha256(record["content"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1))


def add_model_attempt(
    runs: Path,
    attempt_id: str,
    provider="llama-cpp",
    model_id="qwen2.5-0.5b-instruct-q4",
    points=None,
    cpu_ms=12_300,
    started="2026-12-03T08:00:00Z",
    accepted=True,
    seed=None,
    harness=None,
):
    """A copy of the mock attempt as another sampler's: a result with `points`, or none (its accepted batches
    kept, or none accepted); `seed` moves it to another world of FUND_01 (its fixture hash with it)."""
    record = json.loads((MOCK / "record.json").read_text())
    c = record["content"]
    if not accepted:
        c["proposals"] = []
    if seed is not None:
        c["task"] = dict(
            c["task"],
            seed=seed,
            instance_id=f"FUND_01/seed-{seed}",
            fixture_sha256=engine.fixture_sha256(engine.generate("FUND_01", seed)),
        )
        c["proposals"] = []  # the mock's batches are for seed 1
    if harness is not None:
        c["harness"] = harness
    c["attempt_id"], c["label"] = attempt_id, None
    c["model"] = {"id": model_id, "provider": provider}
    c["cost"] = dict(c["cost"], micro_usd=0, cpu_ms=cpu_ms)
    if points is None:
        c["result"] = None
        c["termination"] = {"limit": "time", "reason": "worker time limit", "status": "interrupted"}
    else:
        c["result"] = dict(
            c["result"],
            verdict="QUALIFIED" if points >= 90 else "NOT_QUALIFIED",
            score=dict(c["result"]["score"], points=points),
        )
    record["volatile"] = dict(record["volatile"], started=started)
    folder = runs / "attempts" / attempt_id
    folder.mkdir(parents=True)
    shutil.copyfile(MOCK / "transcript.json", folder / "transcript.json")
    _seal(folder / "record.json", record)


def add_session(runs: Path, session_id: str, cohort="pilot-2026", points=71, completed=True):
    content = {
        "kind": "practitioner-attempt",
        "participant": "p-" + "0123456789abcdef",
        "cohort": cohort,
        "task": {
            "instance_id": f"FUND_02/seed-{len(session_id)}",
            "family": "FUND_02",
            "seed": 3,
            "split": "public-practice",
            "fixture_sha256": "f" * 64,
            "horizon": 20,
        },
        "clock": {"per_checkpoint_ms": [60_000] * 20, "pauses": []},
        "termination": {
            "status": "completed" if completed else "abandoned",
            "reason": "",
            "checkpoints_submitted": 20 if completed else 4,
        },
        "result": {"status": "SCORED", "verdict": "NOT_QUALIFIED", "score": {"points": points, "denominator": 100}}
        if completed
        else None,
    }
    _seal(
        runs / "practitioners" / session_id / "record.json",
        {"schema": "fundbook.practitioner/1", "content": content, "volatile": {"imported": "2026-12-04T10:00:00Z"}},
    )


def _home(runs: Path) -> str:
    pub = records.load_publication(runs)
    text = (REPO / "site" / "index.md").read_text()
    return overview.fill(text, "index.md", pub, pages.environment(), "")


def _row(board, key):
    return next(r for _, rows in board["groups"] for r in rows if r["key"] == key)


def test_baselines_are_one_row_per_policy_with_exact_intervals(runs):
    board = leaderboard.board(records.load_publication(runs))
    assert [label for label, _ in board["groups"]] == ["Models", "Practitioners", "Scripted baselines"]
    baselines = [r["key"] for r in dict(board["groups"])["Scripted baselines"]]
    assert baselines == ["baseline:shortest-cheapest", "baseline:reference", "baseline:do-nothing"]
    ref = _row(board, "baseline:reference")
    assert ref["kind_label"] == "scripted baseline" and ref["worlds"] == 2 and ref["n"] == 2
    assert ref["rate"] == {"value": "100.0", "lower": "34.2", "upper": "100.0", "k": 2, "n": 2}
    assert ref["mean"] == {"value": "100.0", "lower": "100.0", "upper": "100.0", "n": 2}
    assert ref["links"][0] == ("runs", "runs/?policy=reference")
    assert ref["cost"].startswith("$0 (scripted, no model calls; ")


def test_the_mock_is_a_machinery_row_never_ranked_or_charted(runs):
    pub = records.load_publication(runs)
    board = leaderboard.board(pub)
    assert dict(board["groups"])["Models"] == []
    assert [r["key"] for r in board["machinery"]] == ["machinery:mock:mock"]
    assert board["machinery"][0]["kind_label"] == "machinery test"
    # the chart draws ranked model rows only (the baselines on their worlds beside them): none here
    assert overview.home_sections(pub)["chart"] is None
    assert board["status"]["model_results"] == 0 and board["status"]["machinery_attempts"] == 1


def test_the_status_line_follows_the_records(runs):
    home = _home(runs)
    line = home[home.index('<div class="fb-status-line"') :]
    line = line[: line.index("</div>")]
    assert 'data-fb-status="none"' in line and "<strong>no real model has a result yet.</strong>" in line
    assert "No practitioner session has been imported yet." in home
    assert "Status on 2026-12-01:" in line  # the mock attempt's start is the newest record
    # the first real-model attempt with a result changes it, and its date
    add_model_attempt(runs, "llama-FUND_01-seed-1", points=62)
    home = _home(runs)
    line = home[home.index('<div class="fb-status-line"') :]
    line = line[: line.index("</div>")]
    assert 'data-fb-status="results"' in line and "no real model has a result yet" not in home
    assert (
        "<strong>1 attempt by 1 real model reached a result</strong> (models counted by their weights: "
        f'<a href="models/{weights.slug("llama-cpp:qwen2.5-0.5b-instruct-q4")}/">qwen2.5-0.5b-instruct-q4</a>)' in line
    ) and "Status on 2026-12-03:" in line
    # the lede says what fundbook is before anything else, the status line next
    article = home[home.index("# fundbook") :]
    assert article.index('class="fb-lede"') < article.index("fb-status-line") < article.index('class="fb-board"')


def test_models_are_grouped_by_provider_and_id_and_failures_count(runs):
    add_model_attempt(runs, "llama-a", points=62)
    add_model_attempt(runs, "llama-b", points=None, started="2026-12-05T08:00:00Z", accepted=False, seed=2)
    add_model_attempt(runs, "tinker-a", provider="tinker", model_id="Qwen/Qwen3-8B", points=95, cpu_ms=None)
    board = leaderboard.board(records.load_publication(runs))
    models = dict(board["groups"])["Models"]
    assert [r["key"] for r in models] == ["model:tinker:Qwen/Qwen3-8B", "model:llama-cpp:qwen2.5-0.5b-instruct-q4"]
    llama = models[1]
    assert llama["n"] == llama["worlds"] == 2 and llama["ended_without_result"] == 1 and llama["preliminary"]
    # the interrupted attempt accepted nothing: it scores what the engine grades for an empty run of its world
    # (FUND_01 seed 2 played empty: 9 points, the funding-cost component alone)
    assert [(c["world"], c["attempt_id"], c["score"], c["graded_by"]) for c in llama["counted"]] == [
        ("FUND_01/seed-1", "llama-a", 62, "record"),
        ("FUND_01/seed-2", "llama-b", 9, "engine"),
    ]
    assert llama["mean"]["value"] == "35.5"  # (62 + 9) / 2
    assert llama["rate"]["k"] == 0 and llama["date"] == "2026-12-05"
    calls = json.loads((MOCK / "record.json").read_text())["content"]["cost"]["calls"]
    per = round(24_600 / (2 * calls))  # no tie at these figures
    assert llama["cost"].startswith(f"$0.00 (local) · CPU 24.6 s ({fmt.duration(per)} per call) · {2 * calls} calls, ")
    assert [t for t, _ in llama["links"]][:3] == ["attempts", "transcript llama-a", "transcript llama-b"]
    assert models[0]["cost"].startswith(f"$0.00 · {calls} calls")


def test_the_last_try_counts_whatever_its_end_and_n_is_worlds(runs):
    """Three attempts on one world: a first try stopped by the operator, its second try (`.2`) recovered with
    nothing accepted, and the same world played again by an earlier session: one world counts, its last try,
    scored as the engine grades its empty run (9), and the intervals are over 1 world."""
    add_model_attempt(runs, "sess-FUND_01-seed-1", points=30, started="2026-12-01T08:00:00Z")
    add_model_attempt(runs, "arm-FUND_01-seed-1", points=None, started="2026-12-02T08:00:00Z")
    add_model_attempt(runs, "arm-FUND_01-seed-1.2", points=None, started="2026-12-02T07:00:00Z", accepted=False)
    board = leaderboard.board(records.load_publication(runs))
    (row,) = dict(board["groups"])["Models"]
    assert (row["worlds"], row["n"], row["attempts"], row["ended_without_result"]) == (1, 1, 3, 1)
    assert row["counted"] == [
        {
            "world": "FUND_01/seed-1",
            "attempt_id": "arm-FUND_01-seed-1.2",
            "score": 9,
            "qualified": False,
            "graded_by": "engine",
            "started": "2026-12-02T07:00:00Z",
        }
    ]
    assert row["mean"] == {"value": "9.0", "lower": None, "upper": None, "n": 1}
    assert row["rate"]["n"] == 1
    # the same scripted baselines, graded on the model's own world, beside it
    assert row["same_worlds"] == [
        {
            "world": "FUND_01/seed-1",
            "attempt_id": "arm-FUND_01-seed-1.2",
            "model": 9,
            "do-nothing": 49,
            "shortest-cheapest": 64,
            "reference": 100,
        }
    ]
    doc = leaderboard.document(records.load_publication(runs))
    (model,) = [r for r in doc["rows"] if r["kind"] == "model"]
    assert model["counted"] == row["counted"] and doc["rule"] == leaderboard.counting.RULE
    assert doc["headline"] == (
        "The best model so far, llama-cpp:qwen2.5-0.5b-instruct-q4, scored a mean of 9.0 "
        "points out of 100 over 1 world: below doing nothing on the same worlds (49.0) and "
        "below the reference policy (100.0). It qualified on 0 of 1."
    )
    csv = leaderboard.csv_text(records.load_publication(runs)).splitlines()
    assert csv[0] == "group,agent,kind,world,attempt_id,score,qualified,graded_by"
    assert "Models,model:llama-cpp:qwen2.5-0.5b-instruct-q4,model,FUND_01/seed-1,arm-FUND_01-seed-1.2,9,0,engine" in csv
    home = _home(runs)
    assert home.index("data-fb-headline") < home.index("fb-board-table")
    assert doc["headline"] in plain(home)
    assert '<span data-fb-path="headline/mean">9.0</span>' in home  # each figure a mark the home page's check reads


def test_the_home_page_and_leaderboard_json_state_the_same_figures(runs):
    add_model_attempt(runs, "llama-a", points=62)
    add_model_attempt(runs, "llama-b", points=None, seed=3)
    pub = records.load_publication(runs)
    doc = json.loads(leaderboard.json_text(pub))
    home = _home(runs)
    for row in doc["rows"]:
        if row["group"] == "Machinery tests":
            continue
        tr = home[home.index(f'data-agent="{row["key"]}"') :]
        tr = tr[: tr.index("</tr>")]
        key = quote(row["key"], safe="")
        assert f'data-fb-path="board/rows/{key}/mean/value">{row["mean"]["value"]}</span><br>' in tr
        assert f'data-fb-path="board/rows/{key}/worlds" data-fb-format="number">{row["worlds"]}</span>' in tr
        assert f'data-fb-path="board/rows/{key}/qualified/value">{row["qualified"]["value"]}</span> %' in tr
        # every figure recomputes from the counted scores
        from builders.site import intervals

        scores = [c["score"] for c in row["counted"]]
        assert intervals.t_mean(scores) == row["mean"] and row["worlds"] == len({c["world"] for c in row["counted"]})
        assert intervals.wilson(sum(c["qualified"] for c in row["counted"]), len(scores)) == row["qualified"]


def test_a_world_the_engine_cannot_rebuild_is_refused_in_one_line(runs):
    add_model_attempt(runs, "llama-x", points=None)
    path = runs / "attempts" / "llama-x" / "record.json"
    record = json.loads(path.read_text())
    record["content"]["task"]["fixture_sha256"] = "0" * 64
    _seal(path, record)
    with pytest.raises(records.SiteInputError) as err:
        leaderboard.board(records.load_publication(runs))
    assert str(err.value).startswith(
        "runs/attempts/llama-x/record.json: attempt llama-x: task.fixture_sha256: expected fe9e1555"
    )


def test_the_harness_is_shown_beside_the_provider(runs):
    add_model_attempt(runs, "worker-a", points=40)
    add_model_attempt(runs, "inspect-a", points=50, harness="inspect")
    board = leaderboard.board(records.load_publication(runs))
    rows = {r["key"]: r for r in dict(board["groups"])["Models"]}
    assert rows["model:llama-cpp:qwen2.5-0.5b-instruct-q4"]["harness"] == "fundbook worker"
    assert rows["model:llama-cpp:qwen2.5-0.5b-instruct-q4:inspect"]["harness"] == "Inspect"
    home = _home(runs)
    assert 'data-fb-harness="Inspect">provider llama-cpp · harness Inspect</span>' in home
    assert 'data-fb-harness="fundbook worker">provider llama-cpp · harness fundbook worker</span>' in home


def test_practitioner_cohorts_come_from_imported_sessions(runs):
    assert "No practitioner session has been imported yet" in _home(runs)
    add_session(runs, "s-one", points=71)
    add_session(runs, "s-two", points=55)
    add_session(runs, "s-three", completed=False)
    board = leaderboard.board(records.load_publication(runs))
    (cohort,) = dict(board["groups"])["Practitioners"]
    assert cohort["name"] == "cohort pilot-2026" and cohort["kind_label"] == "practitioner cohort"
    assert cohort["n"] == 3 and cohort["ended_without_result"] == 1 and cohort["mean"]["value"] == "42.0"
    assert cohort["date"] == "2026-12-04" and cohort["cost"] == "$0 (no model calls; 60 min at the desk)"
    assert cohort["links"][0] == ("session p-0123456789abcdef", "runs/practitioners/s-one/record.json")
    for name in ("receipts.json", "submission.json"):  # as an import writes it: the record has its own page
        (runs / "practitioners" / "s-one" / name).write_text("{}")
    board = leaderboard.board(records.load_publication(runs))
    assert dict(board["groups"])["Practitioners"][0]["links"][0] == (
        "session p-0123456789abcdef",
        "practitioners/s-one/",
    )
    home = _home(runs)
    assert "3 practice-desk sessions by practitioners have been imported." in home


def test_a_tampered_session_is_refused_in_one_line(runs):
    add_session(runs, "s-one")
    path = runs / "practitioners" / "s-one" / "record.json"
    record = json.loads(path.read_text())
    record["content"]["result"]["score"]["points"] = 100
    path.write_text(json.dumps(record))
    with pytest.raises(records.SiteInputError) as err:
        records.load_publication(runs)
    assert str(err.value) == (
        "runs/practitioners/s-one/record.json: field `content_sha256` does not match sha256(canonical_json(content))"
    )
    path.write_text(json.dumps(dict(record, schema="fundbook.practitioner/9")))
    with pytest.raises(records.SiteInputError, match="field `schema` expected 'fundbook.practitioner/1'"):
        records.load_publication(runs)


def test_comparisons_are_linked_from_the_arms_they_name(runs):
    folder = runs / "comparisons" / "reference-vs-do-nothing"
    folder.mkdir(parents=True)
    (folder / "decision.json").write_text(json.dumps({"arms": {"baseline:reference": 1, "baseline:do-nothing": -1}}))
    board = leaderboard.board(records.load_publication(runs))
    assert ("vs do-nothing", "comparisons/reference-vs-do-nothing/") in _row(board, "baseline:reference")["links"]
    assert ("vs reference", "comparisons/reference-vs-do-nothing/") in _row(board, "baseline:do-nothing")["links"]
    assert not [link for link in _row(board, "baseline:shortest-cheapest")["links"] if "comparisons/" in link[1]]


# The first real-model attempt, verbatim as the local sampler published it (branch `local`, commit 3799cf3:
# runs/attempts/smollm2-FUND_01-seed-1/{record,transcript}.json): SmolLM2-135M on FUND_01 seed 1, llama-cpp,
# 20 calls, cost.cpu_ms 522,318, micro_usd 0, SCORED NOT_QUALIFIED 30/100.
LLAMA = Path(__file__).parent / "fixtures" / "smollm2-FUND_01-seed-1"
LLAMA_KEY = "model:llama-cpp:SmolLM2-135M-Instruct.Q4_1"


@pytest.fixture
def llama_runs(runs):
    shutil.copytree(LLAMA, runs / "attempts" / LLAMA.name)
    return runs


def test_a_local_model_attempt_is_a_model_row_with_its_interval_and_cpu_cost(llama_runs):
    pub = records.load_publication(llama_runs)
    board = leaderboard.board(pub)
    (row,) = dict(board["groups"])["Models"]
    assert row["key"] == LLAMA_KEY and row["kind_label"] == "model" and row["preliminary"]
    assert row["n"] == row["worlds"] == 1 and row["date"] == "2026-12-01" and row["ended_without_result"] == 0
    assert row["rate"] == {"value": "0.0", "lower": "0.0", "upper": "79.4", "k": 0, "n": 1}  # Wilson, 0 of 1
    assert row["mean"] == {"value": "30.0", "lower": None, "upper": None, "n": 1}
    # 522,318 ms / 20 calls = 26,115.9 ms; 31,734 / 20 = 1,586.7 tokens in; 5,155 / 20 = 257.75 out
    assert row["cost"] == (
        "$0.00 (local) · CPU 522.3 s (26.1 s per call) · 20 calls, 31,734 tokens in, 5,155 out (1,587 and 258 per call)"
    )
    assert [r["key"] for r in board["machinery"]] == ["machinery:mock:mock"]  # the mock stays apart
    assert overview.home_sections(pub)["chart"] is None  # a preliminary row is out of the chart
    home = _home(llama_runs)
    tr = plain(home[home.index(f'data-agent="{LLAMA_KEY}"') :])
    tr = tr[: tr.index("one world: no interval") + 40]
    assert "not ranked" in tr and "0.0 %[0.0, 79.4]" in tr and "30.0one world: no interval" in tr  # <br> between
    assert "preliminary" in tr


def test_the_status_line_says_what_the_register_holds(llama_runs, runs):
    def line(runs_dir):
        home = _home(runs_dir)
        text = home[home.index('<div class="fb-status-line"') :]
        return text[: text.index("</div>")]

    assert (
        "The Attempts page holds 1 real-model attempt (run on this host by an open-weights model, at $0), and "
        "1 mock attempt, a machinery test that measures no model."
    ) in line(llama_runs)
    assert (
        "<strong>1 attempt by 1 real model reached a result</strong> (models counted by their weights: "
        '<a href="models/smollm2-135m-instruct/">SmolLM2-135M-Instruct</a>)'
    ) in line(llama_runs)
    assert (
        "What the register holds: 0 grader tests on fixtures (adversarial and reference; 0 passed) and "
        "6 scripted-baseline runs." in line(llama_runs)
    )
    add_model_attempt(llama_runs, "llama-late", points=None)  # interrupted: counted, without a result
    add_model_attempt(llama_runs, "tinker-a", provider="tinker", model_id="Qwen/Qwen3-8B", points=None)
    assert (
        "holds 3 real-model attempts (2 of them run on this host by an open-weights model, at $0), 2 of them "
        "without a result, and 1 mock attempt"
    ) in line(llama_runs)
    shutil.rmtree(llama_runs / "attempts")
    assert "No model attempt has been retained." in line(llama_runs)


def test_a_local_attempt_page_gives_cpu_and_tokens_per_call_and_in_total_at_zero_usd(llama_runs):
    pub = records.load_publication(llama_runs)
    env = pages.environment()
    (attempt,) = [a for a in pub.attempts if a.attempt_id == LLAMA.name]
    page = pages.transcript_page(env, pub, attempt)
    assert (
        '<p class="fb-line" data-fb-cost><span class="fb-label">Cost</span> <span data-fb-path="content" '
        'data-fb-format="cost">$0.00 (local): a model run on this '
        "host, no charge · 20 model calls · CPU 522.3 s in total, 26.1 s per call · tokens 31,734 in and 5,155 "
        "out in total, 1,587 in and 258 out per call</span></p>"
    ) in page  # one mark: verify checks the line
    assert "A machinery test, not a model." not in page and 'class="fb-badge fb-kind-model">model</span>' in page
    assert "step 1</strong> · model · 600 tokens in · 64 tokens out · $0.00 · CPU 7.4 s" in page  # per call
    assert "$0.000000" not in page and "fb-mock" not in page
    listing = pages.attempts_page(env, pub)
    row = listing[listing.index(f'<tr id="{LLAMA.name}"') :]
    row = row[: row.index("</tr>")]
    assert f'<a href="{LLAMA.name}/" title="attempt {LLAMA.name}">FUND_01/seed-1</a>' in row
    assert "fb-kind-model" in row and "$0.00 (local) · CPU 522.3 s · 31,734 / 5,155 tokens" in row
    assert '<span class="fb-badge fb-outcome-scored">scored</span>' in row and "<strong>30/100</strong>" in row
    mock = pages.transcript_page(env, pub, next(a for a in pub.attempts if a.attempt_id == MOCK.name))
    assert "A machinery test, not a model." in mock and 'fb-badge fb-mock">mock</span>' in mock


def test_per_call_is_exact_and_rounds_half_up():
    assert [fmt.per_call(t, 20) for t in (522_318, 31_734, 5_155, 10, 30)] == [26_116, 1_587, 258, 1, 2]
    assert fmt.per_call(5, 0) is None and fmt.per_call(None, 3) is None and fmt.per_call(True, 1) is None


def test_the_status_line_states_each_study_as_its_status_does(runs):
    """A study's state on the home page is its committed status.json's: worlds played, each question's verdict
    once its rule has stopped, "no verdict yet" before; no study, no sentence."""

    def line():
        home = _home(runs)
        text = home[home.index('<div class="fb-status-line"') :]
        return text[: text.index("</div>")]

    assert "pre-registered study" not in line()
    study = REPO / "runs" / "studies" / "smollm2-heldout"
    shutil.copytree(study, runs / "studies" / study.name)
    status = json.loads((study / "status.json").read_text())
    status.update(state="running", worlds=7, planned_max=40)
    status["comparisons"]["smollm2-vs-do-nothing"]["verdict"] = None
    status["comparisons"]["smollm2-vs-shortest-cheapest"]["verdict"] = "not supported"
    (runs / "studies" / study.name / "status.json").write_text(json.dumps(status))
    assert (
        'A pre-registered study (<a href="studies/">Studies</a>): <strong>smollm2-heldout</strong> running, 7 of '
        'at most 40 worlds played (<a href="studies/smollm2-heldout/worlds/">outcomes per world</a>): '
        "smollm2-vs-do-nothing no verdict yet, smollm2-vs-shortest-cheapest "
        "<strong>not supported</strong>."
    ) in line()


def test_two_comparisons_against_the_same_arm_have_distinct_labels(runs):
    for slug in ("reference-vs-do-nothing", "reference-vs-do-nothing-betting"):
        folder = runs / "comparisons" / slug
        folder.mkdir(parents=True)
        (folder / "decision.json").write_text(
            json.dumps({"arms": {"baseline:reference": 1, "baseline:do-nothing": -1}})
        )
    board = leaderboard.board(records.load_publication(runs))
    links = [t for t, h in _row(board, "baseline:do-nothing")["links"] if "comparisons/" in h]
    assert links == ["vs reference (reference-vs-do-nothing)", "vs reference (reference-vs-do-nothing-betting)"]


def test_a_summary_s_raw_units_are_read():
    text = (
        "Ended completed. 20 model calls (0 from the cache), 25555 tokens in, 4499 out, 0 micro-USD charged, "
        "1234567 micro-USD unresolved; sandbox 0 micro-USD."
    )
    assert fmt.readable_units(text) == (
        "Ended completed. 20 model calls (0 from the cache), 25,555 tokens in, 4,499 "
        "out, $0.00 charged, $1.234567 unresolved; sandbox $0.00."
    )
    assert fmt.readable_units("seed-2012208819090176 tokens") == "seed-2012208819090176 tokens"  # not a count


def test_the_published_rows_recompute_from_their_counted_attempts_or_the_build_stops(runs):
    add_model_attempt(runs, "llama-a", points=62)
    add_model_attempt(runs, "llama-b", points=40, seed=2)
    pub = records.load_publication(runs)
    doc = json.loads(leaderboard.json_text(pub))
    leaderboard.check_document(doc)  # as published
    model = next(r for r in doc["rows"] if r["kind"] == "model")
    model["counted"][0]["score"] = 100  # a row that no longer follows from what it counted
    with pytest.raises(records.SiteInputError) as err:
        leaderboard.check_document(doc)
    assert str(err.value).startswith(
        "leaderboard.json: row model:llama-cpp:qwen2.5-0.5b-instruct-q4: qualified and mean: expected"
    )
    model["counted"].append(dict(model["counted"][0]))  # the same world twice
    with pytest.raises(records.SiteInputError, match=r"counted: expected one attempt per world, got 3 for 2 worlds"):
        leaderboard.check_document(doc)
    assert set(leaderboard.files(pub)) == {
        "leaderboard.json",
        "leaderboard.csv",
        "leaderboard/rules.py",
        "leaderboard/bands.py",
    }
