"""The board by weights (builders/site/weights.py, ranking.py, bands.py, leaderboard.py): model rows grouped under
one heading per set of weights, ranked with bands that hold simultaneously, preliminary rows after the ranked
ones; base models and the grammar-1 erratum labelled; the home page counts models by weights. The register holds
one model so far, so most of these run on two fabricated ones (tests/site/boards.py); every expected value is
derived here from the records or from the rule's own definition, never quoted from the published board."""

import json
import random
import types
from fractions import Fraction
from pathlib import Path

import pytest

from builders.site import bands, leaderboard, overview, pages, ranking, records, weights
from tests.site.boards import GEMMA, MOCK, SMOL, attempt, two_models
from tests.site.text import plain

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    if not (MOCK / "record.json").is_file():
        pytest.skip("needs the published mock attempt (make mock-attempt)")
    return two_models(tmp_path_factory.mktemp("two") / "runs")


@pytest.fixture
def runs(base, tmp_path, monkeypatch):
    import shutil

    monkeypatch.setattr(leaderboard, "PRELIMINARY_BELOW", 10)  # fifteen worlds a row: ranked; the server's one: not
    return Path(shutil.copytree(base, tmp_path / "runs"))


def _rules():
    module = types.ModuleType("rules_under_test")
    exec(compile((REPO / "experiments" / "rules.py").read_text(), "rules.py", "exec"), module.__dict__)
    return module


def _records(runs):
    return {p.parent.name: json.loads(p.read_text()) for p in (runs / "attempts").glob("*/record.json")}


def _home(runs):
    pub = records.load_publication(runs)
    return overview.fill((REPO / "site" / "index.md").read_text(), "index.md", pub, pages.environment(), "")


def test_weights_come_from_the_record_the_path_wrote():
    packaged = weights.packaged()["smollm2-135m-instruct"]
    sha = {"sampling": {"model_sha256": "ab" * 32}, "model": {"provider": "llama-cpp", "id": "x"}}
    assert weights.identity(sha) == {"weights": "ab" * 32, "basis": "sha256"}
    stem = packaged["file"][:-5]
    server = {
        "model": {"provider": "openai-compatible", "id": "alias"},
        "sampling": {"local_server": 1},
        "service": {"model_reported": [stem]},
    }
    assert weights.identity(server) == {"weights": packaged["sha256"], "basis": "served name"}
    inspect = {
        "harness": "inspect",
        "model": {"provider": "openai-api", "id": f"local/{stem}"},
        "inspect": {"model_base_url": "http://127.0.0.1:5000/v1"},
    }
    assert weights.identity(inspect) == {"weights": packaged["sha256"], "basis": "served name"}
    hosted = dict(inspect, inspect={"model_base_url": "https://api.example.org/v1"})
    assert weights.identity(hosted) == {"weights": f"openai-api:local/{stem}", "basis": "provider model id"}
    unknown = dict(server, service={"model_reported": ["my-own.gguf"]})
    assert weights.identity(unknown) == {"weights": "local:my-own.gguf", "basis": "served name"}
    # the table is launchers/_packaged.py's own, read as data
    from launchers import _packaged

    assert {n: e["sha256"] for n, e in weights.packaged().items()} == {
        n: e["sha256"] for n, e in _packaged.MODELS.items()
    }


def test_paths_to_one_set_of_weights_are_rows_under_one_heading(runs):
    pub = records.load_publication(runs)
    doc = leaderboard.document(pub)
    recs = _records(runs)
    # each model row's weights: the sha256 its records carry, or the packaged file its server served by name
    for row in (r for r in doc["rows"] if r["kind"] == "model"):
        for aid in row["attempt_ids"]:
            c = recs[aid]["content"]
            want = c["sampling"].get("model_sha256") or next(
                e["sha256"]
                for e in weights.packaged().values()
                if e["file"] == c["service"]["model_reported"][0] + ".gguf"
            )
            assert row["weights"] == want
    heads = {m["weights"]: m for m in doc["models"]}
    assert set(heads) == {SMOL["sha256"], GEMMA["sha256"]}
    assert heads[SMOL["sha256"]]["rows"] == [
        "model:llama-cpp:SmolLM2-135M-Instruct.Q4_1",
        "model:openai-compatible:SmolLM2-135M-Instruct.Q4_1",
    ]
    assert heads[GEMMA["sha256"]] == {
        "weights": GEMMA["sha256"],
        "name": GEMMA["title"],
        "tuning": GEMMA["tuning"],
        "base": True,
        "card": "models/gemma3-270m/",
        "rows": ["model:llama-cpp:gemma-3-270m-q4_k_m"],
    }
    server = next(r for r in doc["rows"] if r["key"].startswith("model:openai-compatible"))
    assert server["weights_basis"] == "served name" and server["preliminary"] and server["rank"] is None
    # the home page: one heading per model, the base model labelled on its heading and on every row of it
    home = _home(runs)
    assert home.count('class="fb-board-model"') == 2
    gemma_rows = [r for r in doc["rows"] if r.get("weights") == GEMMA["sha256"]]
    for r in gemma_rows:
        tr = home[home.index(f'data-agent="{r["key"]}"') :]
        assert '<span class="fb-badge fb-base">base model</span>' in tr[: tr.index("</th>")]
    assert '<span class="fb-badge fb-base" data-fb-verified="tuning">' in home


def test_ranked_by_mean_preliminary_after_and_out_of_the_chart(runs):
    pub = records.load_publication(runs)
    doc = leaderboard.document(pub)
    recs = _records(runs)
    models = [r for r in doc["rows"] if r["kind"] == "model"]
    means = {
        r["key"]: Fraction(
            sum(recs[c["attempt_id"]]["content"]["result"]["score"]["points"] for c in r["counted"]), len(r["counted"])
        )
        for r in models
    }
    ranked = [r for r in models if len(r["counted"]) >= 10]
    assert [r["key"] for r in models[: len(ranked)]] == sorted((r["key"] for r in ranked), key=lambda k: -means[k])
    assert [r["rank"] for r in models] == [1, 2, None] and models[-1]["preliminary"]
    assert doc["simultaneous"]["ranked"] == 2
    # the scores enter the bands in the order the attempts were started
    for r in models:
        starts = [recs[c["attempt_id"]]["volatile"]["started"] for c in r["counted"]]
        assert starts == sorted(starts)
    chart = overview.board_chart(doc)
    drawn = {v["row"] for v in chart["data"]["values"]}
    assert len(drawn) == 2 and not any("openai-compatible" in d for d in drawn)
    # the baselines on each ranked row's own worlds, in the chart too
    for r in ranked:
        series = {v["series"]: v["mean"] for v in chart["data"]["values"] if v["row"].startswith(r["model"])}
        assert series["do-nothing"] == float(r["same_worlds_means"]["do-nothing"]["value"])
        assert set(series) == {"this row", "do-nothing", "shortest-cheapest", "reference"}


def _decimal(x: Fraction) -> str:
    assert (x * 10).denominator == 1
    return f"{x.numerator * 10 // x.denominator // 10}.{x.numerator * 10 // x.denominator % 10}"


def _wealth_rejects(rules, centre, side, scores, alpha, m):
    """Whether the betting wealth for one end, with rules.py's own bets, reaches 1/alpha at the mean m (a decimal)."""
    rule = bands._rule(rules, centre, alpha)
    values = [x * rule.tenk for x in scores]
    test = rules.BettingTest(rule, keep=True, stops=False)
    for v in values:
        test.push(v)
    num, den = rules.dec(m)
    mant, exp = rules._wealth_at(rule, values, test.bets, num * rule.Q, den, side)
    return rules._at_least(mant, exp, rule.alpha[1], rule.alpha[0])


def test_each_band_is_where_its_wealth_stops_crossing_one_over_alpha_prime(runs):
    """The band's ends, read against the wealth itself: at the lower end the wealth betting 'the mean is above m'
    has reached 1/alpha' (m is rejected), a tenth above it has not; likewise the upper end. alpha' = alpha / (2K)."""
    pub = records.load_publication(runs)
    doc = leaderboard.document(pub)
    rules = _rules()
    k = doc["simultaneous"]["ranked"]
    alpha = Fraction(doc["simultaneous"]["alpha"]) / (2 * k)
    assert Fraction(doc["simultaneous"]["per_end_alpha"]) == Fraction(int(alpha * 10**9), 10**9)
    a = doc["simultaneous"]["per_end_alpha"]
    for r in (x for x in doc["rows"] if x.get("rank")):
        scores = [c["score"] for c in r["counted"]]
        lo, hi = Fraction(r["band"]["lower"]), Fraction(r["band"]["upper"])
        tenth = Fraction(1, 10)
        mean = Fraction(sum(scores), len(scores))
        assert lo <= mean <= hi
        if lo > 0:
            assert _wealth_rejects(rules, bands.LOWER_CENTRE, +1, scores, a, r["band"]["lower"])
        assert not _wealth_rejects(rules, bands.LOWER_CENTRE, +1, scores, a, _decimal(lo + tenth))
        if hi < 100:
            assert _wealth_rejects(rules, bands.UPPER_CENTRE, -1, scores, a, r["band"]["upper"])
        assert not _wealth_rejects(rules, bands.UPPER_CENTRE, -1, scores, a, _decimal(hi - tenth))


def test_rank_bands_follow_from_the_bands():
    got = bands.rank_bands(
        {
            "a": {"lower": "60.0", "upper": "80.0"},
            "b": {"lower": "50.0", "upper": "70.0"},
            "c": {"lower": "10.0", "upper": "40.0"},
            "d": {"lower": "40.0", "upper": "45.0"},
        }
    )
    # a and b overlap; both are wholly above c; d touches c (40.0 is not above 40.0), below b
    assert got == {
        "a": {"lower": 1, "upper": 2},
        "b": {"lower": 1, "upper": 2},
        "c": {"lower": 3, "upper": 4},
        "d": {"lower": 3, "upper": 4},
    }
    rules = _rules()
    far = bands.ranking(
        rules,
        [
            {"key": "top", "scores": [90] * 30},
            {"key": "low", "scores": [10] * 30},
            {"key": "short", "scores": [99] * 3},
        ],
        "0.05",
        30,
    )
    assert far["order"] == ["top", "low", "short"] and far["ranked"] == 2
    assert far["rows"]["top"]["rank_band"] == {"lower": 1, "upper": 1}
    assert far["rows"]["low"]["rank_band"] == {"lower": 2, "upper": 2}
    assert far["rows"]["short"] == {"preliminary": True, "rank": None, "band": None, "rank_band": None}
    with pytest.raises(bands.BandError, match=r"row low: score 101 is not an integer in \[0, 100\]"):
        bands.ranking(rules, [{"key": "low", "scores": [101]}], "0.05", 1)


def test_the_bands_hold_together_on_simulated_boards():
    """Three rows of 30 worlds from known score distributions, 40 boards: every band of a board must hold its row's
    true mean at once, on all but at most alpha of the boards (the union bound: far fewer in practice)."""
    rules = _rules()
    rng = random.Random(38)
    shapes = {"a": [20, 25, 30, 35, 60], "b": [0, 10, 50, 50, 90], "c": [45, 48, 49, 49, 100]}
    truth = {k: Fraction(sum(v), len(v)) for k, v in shapes.items()}
    failed = 0
    for _ in range(40):
        rows = [{"key": k, "scores": [rng.choice(v) for _ in range(30)]} for k, v in shapes.items()]
        got = bands.ranking(rules, rows, "0.05", 30)
        failed += any(
            not Fraction(b["lower"]) <= truth[k] <= Fraction(b["upper"])
            for k, b in ((k, got["rows"][k]["band"]) for k in shapes)
        )
    assert failed <= 2


def test_the_grammar_1_note_counts_the_row_s_counted_attempts_the_erratum_names(runs):
    named = {"smol-FUND_01-seed-2": 3, "smol-FUND_01-seed-4": 5, "gemma-nowhere": 50}
    errata = {
        "schema": records.ERRATUM_SCHEMA,
        "grammar": "fundbook.desk-grammar/1",
        "attempts": [
            {"attempt_id": aid, "inexpressible_days": [{"day": 6, "reasons": ["x"]}], "bound": {"withheld_at_most": n}}
            for aid, n in named.items()
        ]
        + [{"attempt_id": "smol-FUND_01-seed-5", "inexpressible_days": [], "bound": {"withheld_at_most": 0}}],
    }
    (runs / "errata").mkdir()
    (runs / "errata" / "grammar-1.json").write_text(json.dumps(errata))
    doc = leaderboard.document(records.load_publication(runs))
    rows = {r["key"]: r for r in doc["rows"] if r["kind"] == "model"}
    counted = {c["attempt_id"] for c in rows["model:llama-cpp:SmolLM2-135M-Instruct.Q4_1"]["counted"]}
    want = [n for aid, n in named.items() if aid in counted]
    assert rows["model:llama-cpp:SmolLM2-135M-Instruct.Q4_1"]["erratum"] == {
        "grammar": "fundbook.desk-grammar/1",
        "attempts": len(want),
        "withheld_at_most": sum(want),
    }
    assert rows["model:llama-cpp:gemma-3-270m-q4_k_m"]["erratum"] is None
    text = plain(_home(runs))
    assert f"decoded under grammar 1: up to {sum(want)} points withheld over {len(want)} of these worlds" in text
    assert 'href="limitations/#the-grammar-1-erratum"' in _home(runs)


def test_the_home_page_counts_models_by_weights(runs):
    recs = _records(runs)
    sets = {
        weights.identity(r["content"])["weights"] for r in recs.values() if r["content"]["model"]["provider"] != "mock"
    }
    line = _home(runs)
    line = line[line.index('<div class="fb-status-line"') :]
    line = plain(line[: line.index("</div>")])
    results = sum(1 for r in recs.values() if r["content"]["model"]["provider"] != "mock" and r["content"]["result"])
    assert f"{results} attempts by {len(sets)} real models reached a result" in line
    assert f"{SMOL['title']}, run 2 ways; {GEMMA['title']}, a base model" in line


def test_leaderboard_json_states_the_method_and_pins_its_code(runs):
    import hashlib

    pub = records.load_publication(runs)
    doc = leaderboard.document(pub)
    sim = doc["simultaneous"]
    assert doc["schema"] == "fundbook.leaderboard/2" and sim["alpha"] == ranking.ALPHA
    assert sim["method"] == bands.METHOD and "union bound" in sim["guarantee"]
    files = leaderboard.files(pub)
    for name, src in (("rules", REPO / "experiments" / "rules.py"), ("bands", REPO / "builders" / "site" / "bands.py")):
        assert files[sim["code"][name]["path"]] == src.read_bytes()
        assert sim["code"][name]["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    assert doc["packaged"] == {
        e["sha256"]: {"name": n, "title": e["title"], "file": e["file"], "tuning": e["tuning"]}
        for n, e in weights.packaged().items()
    }


def test_a_board_whose_ranking_does_not_follow_from_its_rows_is_refused(runs):
    doc = json.loads(leaderboard.json_text(records.load_publication(runs)))
    leaderboard.check_document(doc)
    top = next(r for r in doc["rows"] if r.get("rank") == 1)
    top["band"] = {"lower": "1.1", "upper": "2.2"}  # not the band its counted scores give
    with pytest.raises(records.SiteInputError) as err:
        leaderboard.check_document(doc)
    assert str(err.value).startswith(f"leaderboard.json: row {top['key']}: band: expected ")
    doc = json.loads(leaderboard.json_text(records.load_publication(runs)))
    rows = doc["rows"]
    rows[0], rows[1] = rows[1], rows[0]
    with pytest.raises(records.SiteInputError, match=r"leaderboard.json: model rows: expected the order"):
        leaderboard.check_document(doc)


def test_one_model_id_running_two_files_is_refused_in_one_line(runs):
    attempt(
        runs,
        "smol-other-file",
        seed=9,
        points=20,
        started="2026-12-09T08:00:00Z",
        model_id="SmolLM2-135M-Instruct.Q4_1",
        sha="cd" * 32,
    )
    with pytest.raises(records.SiteInputError) as err:
        leaderboard.board(records.load_publication(runs))
    assert str(err.value) == (
        f"runs/attempts/smol-other-file/record.json: model llama-cpp:SmolLM2-135M-Instruct.Q4_1 "
        f"ran weights {'cd' * 32}, its other attempts {SMOL['sha256']}: one model id, two sets of "
        f"weights"
    )
    assert "\n" not in str(err.value)


def test_the_published_board_is_one_model_reached_three_ways():
    """The register's own records: every real-model path is the packaged SmolLM2 file, so one heading."""
    pub = records.load_publication(REPO / "runs")
    doc = leaderboard.document(pub)
    sets = {weights.identity(a.content)["weights"] for a in pub.attempts if leaderboard.is_real_model(a.content)}
    keys = {leaderboard.model_key(a.content) for a in pub.attempts if leaderboard.is_real_model(a.content)}
    assert [m["weights"] for m in doc["models"]] == sorted(sets) and len(doc["models"][0]["rows"]) == len(keys)
    leaderboard.check_document(doc)
