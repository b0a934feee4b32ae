"""Unit tests of the site builders that need no site build."""

import html
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from builders.og import cards
from builders.og.__main__ import main as og_main
from builders.site import escape, fmt, og_paths, pages, records
from tests.site import hostile
from tests.site.host_records import write_host_runs
from tests.site.text import plain

RUN_IDS = [
    "reference-W1",
    "adversarial-W3-M4_fully_hedged_tail",
    "adversarial-W1-M7_malformed",
    "baseline-FUND_01-seed-1-do-nothing",
]


@pytest.fixture(scope="module")
def small_runs(tmp_path_factory):
    runs = write_host_runs(tmp_path_factory.mktemp("runs") / "runs", RUN_IDS)
    hostile.write(runs)
    return runs


@pytest.fixture
def runs_copy(small_runs, tmp_path):
    return Path(shutil.copytree(small_runs, tmp_path / "runs"))


def test_money_and_scores_are_exact():
    assert fmt.money(123456789) == "1,234,567.89"
    assert fmt.money(-5) == "-0.05"
    assert fmt.micro_usd(1234) == "$0.001234"
    assert fmt.score_text({"points": 73, "denominator": 100}) == "73/100"
    assert fmt.score_text(None) == "no score"


def test_card_paths():
    assert og_paths.card_for("runs/reference-W1/index.md") == "runs/reference-W1.png"
    assert og_paths.card_for("index.md") == "pages/home.png"
    assert og_paths.card_for("runs/index.md") == "pages/runs.png"
    assert og_paths.card_for("contract/cli.md") == "pages/contract-cli.png"


def test_publication_loads_and_orders_runs(small_runs):
    pub = records.load_publication(small_runs)
    assert [r.run_id for r in pub.runs] == sorted(RUN_IDS)
    assert [a.attempt_id for a in pub.attempts] == [hostile.ATTEMPT_ID]


@pytest.mark.parametrize(
    "tamper, message",
    [
        (
            lambda d: (d / "reference-W1.json").write_text(
                (d / "reference-W1.json").read_text().replace("SCORED", "MALFORMED", 1)
            ),
            "reference-W1.json: file sha256 differs from runs/index.json entries",
        ),
        (
            lambda d: (d / "index.json").write_text(json.dumps({"schema": "fundbook.index/9"})),
            "runs/index.json: field `schema` expected 'fundbook.index/2'",
        ),
        (lambda d: (d / "reference-W1.json").unlink(), "record: file runs/reference-W1.json not found"),
        (lambda d: (d / "index.json").write_text("{not json"), "runs/index.json: expected UTF-8 JSON"),
    ],
)
def test_bad_records_are_refused_with_one_line(runs_copy, tamper, message):
    tamper(runs_copy)
    with pytest.raises(records.SiteInputError) as err:
        records.load_publication(runs_copy)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_edited_content_without_rehash_is_refused(runs_copy):
    index = json.loads((runs_copy / "index.json").read_text())
    path = runs_copy / "reference-W1.json"
    record = json.loads(path.read_text())
    record["content"]["score"]["points"] = 99
    path.write_text(json.dumps(record))
    index["entries"][[e["run_id"] for e in index["entries"]].index("reference-W1")]["file_sha256"] = (
        records.file_sha256(path)
    )
    (runs_copy / "index.json").write_text(json.dumps(index))
    with pytest.raises(records.SiteInputError, match="content_sha256` does not match"):
        records.load_publication(runs_copy)


def test_transcript_is_escaped_and_nothing_is_cut(small_runs):
    pub = records.load_publication(small_runs)
    text = pages.transcript_page(pages.environment(), pub, pub.attempts[0])
    assert "<script>window" not in text and "<img src=x" not in text and "<iframe" not in text
    assert "&#60;script&#62;window.__pwned = &#39;script&#39;;&#60;/script&#62;" in text
    assert "&#60;/code&#62;&#60;/pre&#62;&#60;/td&#62;" in text
    # The 201-line tool output is folded, and its last line is still there.
    assert "folded; open to read all of it" in text
    assert "THE LAST LINE &#60;script&#62;" in text and "line 200: " in text
    assert "mock" in text and "worker time limit" in text


def test_transcript_footer_dates_the_attempt_not_the_build(small_runs):
    pub = records.load_publication(small_runs)
    text = pages.transcript_page(pages.environment(), pub, pub.attempts[0])
    assert "Generated on" not in text and "SOURCE_DATE_EPOCH" not in text
    assert "for the attempt started on 2026-11-28 (UTC, from the record&#39;s volatile.started)" in text


def test_unsafe_attempt_id_is_refused(runs_copy):
    record_path = runs_copy / "attempts" / hostile.ATTEMPT_ID / "record.json"
    record = json.loads(record_path.read_text())
    record["content"]["attempt_id"] = "../../evil<script>"
    from engine import content_sha256

    record["content_sha256"] = content_sha256(record["content"])
    record_path.write_text(json.dumps(record))
    pub = records.load_publication(runs_copy)
    with pytest.raises(records.SiteInputError, match="content.attempt_id: expected an id"):
        pages.generated_pages(pub)


def test_run_page_sections_in_reading_order(small_runs):
    pub = records.load_publication(small_runs)
    run = next(r for r in pub.runs if r.run_id == "adversarial-W3-M4_fully_hedged_tail")
    text = pages.run_page(pages.environment(), pub, run)
    order = [
        text.index(s)
        for s in (
            "## Status, verdict and score",
            "## Expected and observed",
            "## Days",
            "## Cash and funding",
            "## Receipts",
            "## Command and trace",
            "## Hashes",
            "## Downloads",
        )
    ]
    assert order == sorted(order)
    status, verdict, score = (text.index(s) for s in ('fb-label">Status', 'fb-label">Verdict', 'fb-label">Score'))
    assert status < verdict < score
    assert run.record["content_sha256"] in text and run.content["fixture_sha256"] in text
    assert 'class="fb-verify" data-run-id="adversarial-W3-M4_fully_hedged_tail"' in text
    assert (
        f'Show all <span data-fb-path="receipts" data-fb-format="count">{run.content["receipts_head"]["size"]}'
        f"</span> receipts" in text
    )
    assert "PYTHONHASHSEED=0 " in text and "Trace <code>runs/traces/" in text


def test_run_page_figures_carry_their_path_and_format(small_runs):
    pub = records.load_publication(small_runs)
    run = next(r for r in pub.runs if r.run_id == "adversarial-W3-M4_fully_hedged_tail")
    text = pages.run_page(pages.environment(), pub, run)
    score = run.content["score"]
    assert (
        f'<span data-fb-path="content/score" data-fb-format="score" class="fb-score">'
        f"{score['points']}/{score['denominator']}</span>"
    ) in text
    cash = run.content["days"][3]["cash"]
    assert (
        f'<td data-fb-path="content/days/3/cash" data-fb-format="money" class="fb-num" data-label="Cash">'
        f"{fmt.money(cash)}</td>"
    ) in text
    for i, gate in enumerate(run.content["gates"]):
        assert f'<span data-fb-path="content/gates/{i}/gate">{gate["gate"]}</span>' in text


@pytest.mark.parametrize(
    "kind, says, never",
    [
        (
            "reference-W1",
            "The reference fixture states the outcome its gold candidate must reach",
            "constructed adverse candidate",
        ),
        (
            "adversarial-W3-M4_fully_hedged_tail",
            "This fixture is a constructed adverse candidate",
            "The reference fixture",
        ),
    ],
)
def test_expected_section_says_what_the_fixture_is(small_runs, kind, says, never):
    pub = records.load_publication(small_runs)
    text = pages.run_page(pages.environment(), pub, next(r for r in pub.runs if r.run_id == kind))
    assert says in text and never not in text


@pytest.mark.parametrize(
    "run_id, lede",
    [
        ("adversarial-W3-M4_fully_hedged_tail", "<p>An <strong>"),
        ("reference-W1", "<p>A <strong>"),
        ("baseline-FUND_01-seed-1-do-nothing", "<p>A <strong>"),
    ],
)
def test_run_lede_uses_the_right_article(small_runs, run_id, lede):
    pub = records.load_publication(small_runs)
    text = pages.run_page(pages.environment(), pub, next(r for r in pub.runs if r.run_id == run_id))
    assert lede in text and "A adversarial" not in text


def test_malformed_run_page_has_no_score_and_no_chart(small_runs):
    pub = records.load_publication(small_runs)
    run = next(r for r in pub.runs if r.run_id == "adversarial-W1-M7_malformed")
    text = pages.run_page(pages.environment(), pub, run)
    assert "Score no score (MALFORMED)" in plain(text) and "## Cash and funding" not in text


def _row(text, run_id):
    row = text[text.index(f'data-run-id="{run_id}"') :]
    return row[: row.index("</tr>")]


def test_register_splits_results_from_grader_tests(small_runs):
    pub = records.load_publication(small_runs)
    text = pages.register_page(pages.environment(), pub)
    results = text[text.index('data-fb-view-section="results"') : text.index('data-fb-view-section="grader"')]
    grader = text[text.index('data-fb-view-section="grader"') :]
    assert 'data-run-id="baseline-FUND_01-seed-1-do-nothing"' in results
    for run_id in ("reference-W1", "adversarial-W3-M4_fully_hedged_tail", "adversarial-W1-M7_malformed"):
        assert f'data-run-id="{run_id}"' in grader and f'data-run-id="{run_id}"' not in results
    # the results view comes first: the register opens with it
    assert text.index('data-fb-view-section="results"') < text.index('data-fb-view-section="grader"')


def test_grader_tests_show_one_badge_with_the_expectation_in_its_tooltip(small_runs):
    pub = records.load_publication(small_runs)
    row = _row(pages.register_page(pages.environment(), pub), "adversarial-W3-M4_fully_hedged_tail")
    # the tooltip is on the mark (inside a verifiable region a figure's words are a mark's)
    assert (
        '<span class="fb-badge fb-passed-yes"><span aria-hidden="true">✓ </span><span data-fb-path="content/passed" '
        'data-fb-format="passed" title="expected fails no_false_full_protection; status SCORED; verdict '
        'NOT_QUALIFIED; observed fails no_false_full_protection; status SCORED; verdict NOT_QUALIFIED">passed'
        "</span></span>"
    ) in row
    assert row.count("expected ") == 1  # the expectation is not repeated as text in the row
    assert 'data-fb-format="expectation"' not in row


def test_baseline_rows_show_the_same_world_scale(small_runs):
    pub = records.load_publication(small_runs)
    row = _row(pages.register_page(pages.environment(), pub), "baseline-FUND_01-seed-1-do-nothing")
    points = next(r for r in pub.runs if r.run_id == "baseline-FUND_01-seed-1-do-nothing").content["score"]["points"]
    assert (
        f'do-nothing <span data-fb-path="content/score" data-fb-format="score" '
        f'data-fb-run="baseline-FUND_01-seed-1-do-nothing">{points}/100</span>'
    ) in row
    assert "reference <span title=" in row  # no reference baseline of FUND_01 seed 1 in this publication


def test_constant_columns_are_stated_once_and_a_varying_one_stays(small_runs, runs_copy):
    pub = records.load_publication(small_runs)
    text = pages.register_page(pages.environment(), pub)
    bundle = pub.runs[0].content["engine"]["bundle_sha256"]
    assert (
        f'Every run was executed by the engine bundle <code data-fb-path="index/engine/bundle_sha256" '
        f'data-fb-format="short" title="{bundle}">{bundle[:12]}</code>, on the path <em>'
    ) in text
    assert 'data-label="Engine"' not in text and 'data-label="Execution path"' not in text
    # one run on another path: the path is a column again, and only the engine is stated once
    path = runs_copy / "reference-W1.json"
    record = json.loads(path.read_text())
    record["content"]["execution_path"] = "model worker"
    from engine import content_sha256

    record["content_sha256"] = content_sha256(record["content"])
    path.write_text(json.dumps(record))
    index = json.loads((runs_copy / "index.json").read_text())
    for entry in index["entries"]:
        if entry["run_id"] == "reference-W1":
            entry["file_sha256"], entry["content_sha256"] = records.file_sha256(path), record["content_sha256"]
    (runs_copy / "index.json").write_text(json.dumps(hostile.reseal_index(index)))
    text = pages.register_page(pages.environment(), records.load_publication(runs_copy))
    assert 'data-label="Execution path"' in text and "on the path <em>" not in text
    assert "Every run was executed by the engine bundle" in text


def test_register_headers_carry_the_glossary(small_runs):
    from builders.site import glossary

    pub = records.load_publication(small_runs)
    text = pages.register_page(pages.environment(), pub)
    for key in ("world", "policy", "test", "kind", "check", "status", "verdict", "score", "scale", "fixture", "time"):
        name, meaning = glossary.REGISTER[key]
        assert f'data-fb-key="{key}" title="{escape.escape(meaning)}">{escape.escape(name)}</th>' in text, key
        assert f"<dt>{escape.escape(name)}</dt><dd>{escape.escape(meaning)}</dd>" in text, key


def test_cards_are_deterministic_pngs():
    a = cards.card("reference-W1", ["SCORED", "QUALIFIED", "100/100"], "reference run", [5, 3, 4])
    b = cards.card("reference-W1", ["SCORED", "QUALIFIED", "100/100"], "reference run", [5, 3, 4])
    assert a == b and a.startswith(b"\x89PNG")


def test_build_og_writes_every_card_or_nothing(small_runs, tmp_path):
    out = tmp_path / "og"
    result = CliRunner().invoke(og_main, ["--out", str(out), "--runs", str(small_runs)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(f"{r}.png" for r in RUN_IDS)
    assert (out / "pages" / "home.png").is_file() and (out / "pages" / f"attempts-{hostile.ATTEMPT_ID}.png").is_file()
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    result = CliRunner().invoke(og_main, ["--out", str(out), "--runs", str(tmp_path / "missing")])
    assert result.exit_code == 1 and "index.json: file not found" in result.output
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_preview_server_types_wasm_and_binds_locally(tmp_path):
    import urllib.request
    from builders.site.serve import serve

    (tmp_path / "a.wasm").write_bytes(b"\0asm")
    (tmp_path / "b.mjs").write_text("export {}")
    srv = serve(tmp_path)
    try:
        host, port = srv.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/a.wasm") as r:
            assert r.headers["Content-Type"] == "application/wasm"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/b.mjs") as r:
            assert r.headers["Content-Type"] == "text/javascript"
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_volatile_field_of_the_wrong_type_shows_a_dash(runs_copy):
    path = runs_copy / "reference-W1.json"
    record = json.loads(path.read_text())
    record["volatile"]["duration_ms"] = "12 ms <script>"
    path.write_text(json.dumps(record))
    index = json.loads((runs_copy / "index.json").read_text())
    for entry in index["entries"]:
        if entry["run_id"] == "reference-W1":
            entry["file_sha256"] = records.file_sha256(path)
    (runs_copy / "index.json").write_text(json.dumps(hostile.reseal_index(index)))
    pub = records.load_publication(runs_copy)
    run = next(r for r in pub.runs if r.run_id == "reference-W1")
    assert run.duration_ms is None
    assert '(<span data-fb-path="record/volatile/duration_ms" data-fb-format="duration">—</span>)' in pages.run_page(
        pages.environment(), pub, run
    )
    from builders.site import parquet

    assert parquet.exports(pub)  # the Parquet register takes the dash as null


def test_escape_leaves_nothing_markup_can_use():
    for payload in hostile.PAYLOADS:
        out = str(escape.escape(payload))
        assert not set(out) & set("<>\"'`*[]{}|!\\\n\r"), payload
        assert html.unescape(out) == escape.visible(payload)
    assert escape.finalize(None) == "" and escape.escape(escape.escape("<")) == "&#60;"
