"""Transcripts as trajectories (builders/site/transcript.py): a section per
checkpoint with its outcome, errors and refusals marked, money formatted,
and headings that hold no record text."""

import json
import re
import shutil
from pathlib import Path

import pytest

from builders.site import pages, records, transcript
from tests.site import hostile

REPO = Path(__file__).resolve().parents[2]
MOCK = REPO / "runs" / "attempts" / "mock-FUND_01-seed-1"
HEADING = re.compile(
    r"^### (Day \d+|Before the first checkpoint|After the last checkpoint): [a-z0-9 ·,.?]+"
    r"( · \d+ errors?)?( · \d+ refused)? \{ #[a-z0-9-]+ \.fb-day-title data-toc-label=\"[A-Za-z0-9 ✗]+\" "
    r"data-fb-day-title=\"[a-z0-9-]+\" \}$"
)


@pytest.fixture(scope="module")
def mock():
    if not (MOCK / "record.json").is_file():
        pytest.skip("needs the published mock attempt")
    return json.loads((MOCK / "transcript.json").read_text()), json.loads((MOCK / "record.json").read_text())


def test_steps_are_grouped_by_checkpoint_with_the_outcome_of_the_result(mock):
    steps, record = mock
    groups = transcript.checkpoints(steps, record["content"]["result"])
    assert [g["key"] for g in groups] == [f"day-{d}" for d in range(1, 21)] + ["after"]
    assert sum(len(g["steps"]) for g in groups) == len(steps["steps"])
    day3 = record["content"]["result"]["days"][2]
    assert groups[2]["outcome"] == f"batch accepted · {day3['accepted']} accepted, 0 refused · cash 14,600,000.00"
    assert groups[-1]["title"] == "After the last checkpoint"
    invalid = [s for g in groups for s in g["steps"] if s["error"]]
    assert [s["marks"] for s in invalid] == [[("error", "exit 1")]] * 2  # the mock's two invalid answers
    assert sum(g["errors"] for g in groups) == 2


@pytest.mark.parametrize(
    "step, marks",
    [
        ({"role": "tool", "tool_calls": [{"name": "project", "exit_code": 1}]}, [("error", "exit 1")]),
        ({"role": "tool", "tool_calls": [{"name": "project", "exit_code": None}]}, [("error", "no exit code")]),
        ({"role": "tool", "tool_calls": [{"name": "project", "exit_code": 0}]}, []),
        ({"role": "tool", "tool_calls": [{"name": "project", "exit_code": True}]}, [("error", "no exit code")]),
        ({"role": "evaluator", "text": "Batch rejected whole: day 3 expected"}, [("error", "batch rejected")]),
        (
            {"role": "evaluator", "text": "Model call 7 ended without an answer (timeout): its reservation stays"},
            [("error", "model call without an answer")],
        ),
        (
            {
                "role": "evaluator",
                "text": "Model call 7 ended without an answer (timeout)",
                "call": {"outcome": "timeout"},
            },
            [("error", "model call without an answer")],
        ),
        (
            {
                "role": "evaluator",
                "text": "Checkpoint 4: batch accepted; 1 action accepted, 2 refused (d04-a1 CASH; d04-a2 "
                "TITLE); closing cash 1.00.",
            },
            [("refusal", "2 refused")],
        ),
        (
            {
                "role": "evaluator",
                "text": "Checkpoint 4: batch accepted; 1 action accepted, 0 refused; closing cash 1.00.",
            },
            [],
        ),
        ({"role": "evaluator", "text": "Checkpoint 5 closed without a batch (pass)."}, [("refusal", "no batch")]),
        ({"role": "model", "text": "Batch rejected whole: I say so"}, []),  # a model's words mark nothing
    ],
)
def test_errors_and_refusals_are_marked(step, marks):
    assert transcript.flags(step) == marks


def test_the_page_is_a_day_index_with_money_formatted_and_exit_1_not_a_success(mock):
    pub = records.Publication(
        runs_dir=REPO / "runs",
        index={},
        attempts=[
            records.Attempt(
                attempt_id="mock-FUND_01-seed-1",
                record=mock[1],
                transcript=mock[0],
                folder="runs/attempts/mock-FUND_01-seed-1",
            )
        ],
    )
    text = pages.transcript_page(pages.environment(), pub, pub.attempts[0])
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert len(headings) == 21 and all(HEADING.match(h) for h in headings), headings[:3]
    # errors show in the index: the days whose tool calls exited non-zero (read from the file, not from flags)
    failed = sorted(
        {st["day"] for st in mock[0]["steps"] for call in st.get("tool_calls") or [] if call.get("exit_code") != 0}
    )
    assert failed and 1 not in failed and 'data-toc-label="Day 1"' in text
    assert all(f'data-toc-label="Day {d} ✗"' in text for d in failed)
    assert text.count(' ✗" data-fb-day-title=') == len(failed)
    assert text.count('<details class="fb-day') == 21 and '<details class="fb-day" open' not in text
    assert "A machinery test, not a model." in text
    # the invalid answer: a red exit badge, never the plain "exit 1" of a success
    assert '<span class="fb-badge fb-flag-error">✗ exit 1</span>' in text
    assert '<span class="fb-exit-ok">exit 1</span>' not in text
    # a model's batch: money as amounts, the text as written one click away
    assert "&#34;cash&#34;: 15,000,000.00" in text and "&#34;cash&#34;: 1500000000" in text


def test_hostile_text_never_reaches_a_heading(tmp_path):
    runs = REPO / "runs"
    if not (runs / "index.json").is_file():
        pytest.skip("needs the published runs/")
    dst = hostile.publication(runs, tmp_path / "runs", payloads=hostile.PAYLOADS[:6] + hostile.PAYLOADS[14:17])
    pub = records.load_publication(dst)
    env = pages.environment()
    for attempt in pub.attempts:
        if attempt.attempt_id.startswith("hostile-a"):
            text = pages.transcript_page(env, pub, attempt)
            headings = [line for line in text.splitlines() if line.startswith("### ")]
            assert headings and all(HEADING.match(h) for h in headings), (attempt.attempt_id, headings[:2])
    shutil.rmtree(dst)


# ---- an Inspect-imported attempt: the worker transcript's reading aids, and what fundbook established ----


def _inspect_pub():
    runs = REPO / "runs"
    if not any(p.name.startswith("inspect-") for p in (runs / "attempts").iterdir()):
        pytest.skip("needs a published Inspect attempt")
    pub = records.load_publication(runs)
    return pub, next(a for a in pub.attempts if a.inspect)


def test_an_inspect_attempts_messages_read_like_a_worker_transcript():
    """By checkpoint (a day index in the table of contents), each answer the desk refused as not the protocol's
    flagged, an errors-only filter, each model turn numbered with its neighbours linked and listed at the top,
    the score's components, and a final summary (issue 39, item 6)."""
    pub, attempt = _inspect_pub()
    groups = transcript.inspect_checkpoints(attempt.transcript, attempt.content["result"])
    steps = [s for g in groups for s in g["steps"]]
    assert len(steps) == len(attempt.transcript["steps"]) and groups[0]["key"] == "before"
    assert [g["key"] for g in groups[1:]] == [f"day-{g['day']}" for g in groups[1:]] and len(groups) > 1
    invalid = [s for s in steps if s["text"].startswith("Invalid answer")]
    assert invalid and all(s["invalid"] and ("error", "invalid answer") in s["marks"] for s in invalid)
    turns = [s["turn"] for s in steps if s["role"] == "assistant"]
    assert turns == list(range(1, attempt.content["turns"] + 1))
    page = pages.inspect_page(pages.environment(), pub, attempt)
    for heading in [line for line in page.splitlines() if line.startswith("### ")]:
        assert HEADING.match(heading), heading
    assert "data-fb-errors-only" in page and "transcript.js" in page
    assert f'<a href="#turn-{turns[-1]}"' in page and 'id="turn-1"' in page and 'href="#turn-2">next turn</a>' in page
    assert f"({len(invalid)} invalid answers)" in page
    comps = attempt.content["result"]["score"]["components"]
    assert all(f'data-fb-path="content/result/score/components/{name}"' in page for name in comps)
    assert "## Final summary" in page and 'data-fb-verified="summary"' in page


def test_an_inspect_attempt_page_keeps_what_fundbook_established_apart_from_what_is_as_logged():
    """The page never says the attempt was run with a command, or that fundbook verified the model: the
    re-executed batches, receipts and grade are established; the model, the provider and that a model wrote the
    messages at all are as Inspect logged them (issue 39, item 2, the page side)."""
    from tests.site.text import plain

    pub, attempt = _inspect_pub()
    text = plain(pages.inspect_page(pages.environment(), pub, attempt))
    assert "was run with" not in text and "inspect eval" not in text and "verified by fundbook" not in text.lower()
    established = text.split("Established by fundbook", 1)[1].split("As logged, not verified", 1)[0]
    logged = text.split("As logged, not verified", 1)[1].split("Cost", 1)[0]
    c = attempt.content
    assert "Re-executed in order through the compiled engine bundle in Pyodide" in established
    assert f"head {c['receipts_head']['hash'][:12]}" in established and c["result"]["status"] in established
    assert c["model"]["as_logged"] not in established and c["model"]["as_logged"] in logged
    assert "or that a model wrote them at all" in logged and c["inspect"]["version"] in logged
