"""Records say what happened, all of it: the tool-output cut is marked, an attempt in progress says `running`,
capacity refusals are retried on a recorded schedule and end as `capacity_block`, a mock under a real model id is
priced as that model (a projection), and a --cache that is not a cache is refused."""

import json
import os
import sqlite3

import httpx
import pytest
import tinker
from click.testing import CliRunner

from launchers import _controller
from launchers._controller import Limits
from launchers._errors import CapacityError, InputError
from launchers._project import ProjectLedger
from launchers._sampler_cache import open_store
from launchers._sampler_tinker import TinkerSampler
from launchers._verify import verify_attempt
from launchers.worker import protocol
from fundbook.cli.launch import cli

from .conftest import PricedMock
from .fakes import FakeRetryConfig, FakeTinker


def test_the_cut_is_marked_in_what_the_model_sees():
    short = {"a": 1}
    assert protocol.tool_result_text(short) == '{"a": 1}'
    long = {"text": "x" * 20000}
    text = protocol.tool_result_text(long)
    total = len(json.dumps(long, sort_keys=True))
    assert text == json.dumps(long, sort_keys=True)[:12000] + f"...[output truncated: 12000 of {total} characters]..."


class LongTool(PricedMock):
    """First a tool call whose result (an error naming a 20,000-character id) passes the 12,000-character cut."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def answer(self, messages, request_hash):
        self.seen.append(messages[-1]["content"])
        if len(self.seen) == 1:
            return json.dumps({"tool": "read_source", "arguments": {"id": "S" * 20000}})
        return super().answer(messages, request_hash)


def test_a_cut_tool_output_is_marked_for_the_model_and_on_the_transcript(run_attempt):
    """Held back: the worker cut tool output at 12,000 characters with no marker, and the transcript showed the
    whole output, not what the model saw."""
    sampler = LongTool()
    record, out = run_attempt(sampler=sampler, horizon=6, limits=Limits(max_tokens_per_call=8192))
    assert record["content"]["termination"]["status"] == "completed"
    marker = sampler.seen[1]  # what the model saw next: the result, cut and marked
    assert marker.startswith("TOOL RESULT read_source (exit 1): ") and marker.endswith(" characters]...")
    assert "...[output truncated: 12000 of " in marker
    with open(os.path.join(out, "transcript.json")) as fh:
        (call,) = [t for s in json.load(fh)["steps"] for t in s["tool_calls"] if t["name"] == "read_source"]
    assert call["truncated"]["shown"] == 12000 and call["truncated"]["total"] > 20000
    assert call["output"] == marker.split(": ", 1)[1]  # the transcript shows exactly what the model saw


def test_an_attempt_in_progress_says_running(run_attempt):
    """Held back: an attempt in progress had no status. status.json beside the journal says `running` (with the
    attempt and its process) until the record is written; then the folder holds the record, not the status."""
    seen = {}

    class Watching(PricedMock):
        def sample(self, prepared, deadline_s):
            if not seen:
                folder = next(
                    p for p in os.listdir(os.environ["FUNDBOOK_LAUNCH_PROJECT"] + "/..") if p.endswith(".partial")
                )
                with open(os.path.join(os.environ["FUNDBOOK_LAUNCH_PROJECT"], "..", folder, "status.json")) as fh:
                    seen.update(json.load(fh))
            return super().sample(prepared, deadline_s)

    record, out = run_attempt(sampler=Watching(), horizon=6)
    assert seen["status"] == "running" and seen["attempt_id"] == record["content"]["attempt_id"]
    assert seen["pid"] == os.getpid() and seen["claim_id"] == record["content"]["claim"]["id"]
    assert "status.json" not in os.listdir(out)


class Crowded(PricedMock):
    """The provider refuses `refusals` times for capacity, then answers (or never, with refusals=None)."""

    def __init__(self, refusals):
        super().__init__()
        self.refusals = refusals
        self.refused = 0
        self.closed = []

    def sample(self, prepared, deadline_s):
        if self.refusals is None or self.refused < self.refusals:
            self.refused += 1
            raise CapacityError(f"tinker: capacity (RateLimitError: 429 #{self.refused})")
        return super().sample(prepared, deadline_s)

    def close(self, status, detail=None):
        self.closed.append(status)


def test_capacity_refusals_are_retried_on_a_recorded_schedule(run_attempt, monkeypatch):
    monkeypatch.setattr(_controller, "BACKOFF_MS", (1, 2, 4, 8))
    record, out = run_attempt(sampler=Crowded(refusals=2), horizon=6)
    c = record["content"]
    assert c["termination"]["status"] == "completed" and c["cost"]["unresolved_calls"] == []
    with open(os.path.join(out, "transcript.json")) as fh:
        first = next(s for s in json.load(fh)["steps"] if s["role"] == "model")
    assert first["call"]["backoff_ms"] == [
        {"wait_ms": 1, "error": "tinker: capacity (RateLimitError: 429 #1)"},
        {"wait_ms": 2, "error": "tinker: capacity (RateLimitError: 429 #2)"},
    ]
    assert [b["wait_ms"] for b in record["volatile"]["backoff"]] == [1, 2]
    verify_attempt(os.path.join(out, "record.json"))


def test_capacity_that_never_comes_ends_as_a_capacity_block_releasing_everything(run_attempt, monkeypatch):
    """Seed 004: retry with backoff, then after a stated total wait stop as capacity_block with the schedule,
    releasing every client and sandbox."""
    monkeypatch.setattr(_controller, "BACKOFF_MS", (1, 2, 4))
    sampler = Crowded(refusals=None)
    record, out = run_attempt(sampler=sampler, horizon=6)
    c = record["content"]
    t = c["termination"]
    assert t["status"] == "capacity_block" and t["limit"] == "capacity" and t["worker_exit_code"] is not None
    block = t["capacity_block"]
    assert [w["wait_ms"] for w in block["backoff_ms"]] == [1, 2, 4] and block["waited_ms"] == 7
    assert block["call"] == 1 and block["calls_answered"] == 0 and block["released_clients"] is True
    assert "refused model call 1 for capacity 4 times over 7 ms of backoff" in t["reason"]
    assert sampler.closed == ["errored"] and c["cost"]["unresolved_calls"] == [1]  # the liability stays
    verify_attempt(os.path.join(out, "record.json"))


def test_the_schedule_stays_inside_the_call_deadline(run_attempt, monkeypatch):
    monkeypatch.setattr(_controller, "BACKOFF_MS", (1, 2, 4000, 8))  # 4 s cannot fit a 3 s deadline
    record, _ = run_attempt(sampler=Crowded(refusals=None), horizon=6, limits=Limits(call_deadline_s=3))
    assert [w["wait_ms"] for w in record["content"]["termination"]["capacity_block"]["backoff_ms"]] == [1, 2]


def test_tinker_rate_limits_are_capacity_errors():
    request = httpx.Request("POST", "https://tinker.example/sample")
    limited = tinker.RateLimitError("rate limited", response=httpx.Response(429, request=request), body=None)
    busy = tinker.InternalServerError("overloaded", response=httpx.Response(503, request=request), body=None)
    broken = tinker.InternalServerError("boom", response=httpx.Response(500, request=request), body=None)
    fake = FakeTinker()
    sampler = TinkerSampler("m", 5, sdk=(fake, FakeRetryConfig))
    prepared = sampler.prepare([{"role": "user", "content": "hi"}], 8)
    fake.RateLimitError, fake.APIStatusError = tinker.RateLimitError, tinker.APIStatusError
    for error, kind in ((limited, CapacityError), (busy, CapacityError), (broken, None)):

        class Failing:  # the SDK's future: its error surfaces at result()
            def result(self, timeout=None, error=error):
                raise error

        fake.client.sample = lambda prompt, num_samples, sampling_params: Failing()
        with pytest.raises(Exception) as err:
            sampler.sample(prepared, 5)
        assert isinstance(err.value, CapacityError) is (kind is CapacityError), err.value


def test_a_mock_under_a_real_model_id_is_priced_as_a_projection(tmp_path, state, project):
    """Held back: a mock attempt under a real model id was priced at 0; the run protocol's dry run should exercise
    the price table. Now it is booked at that model's row, labelled a projection (nothing was spent)."""
    runner = CliRunner()
    claim = str(tmp_path / "c.json")
    assert (
        runner.invoke(
            cli,
            [
                "authorise",
                "--family",
                "FUND_01",
                "--model",
                "Qwen/Qwen3-8B",
                "--sandbox",
                "local",
                "--cap-micro-usd",
                "2000000",
                "--cap-tokens",
                "20000000",
                "--out",
                claim,
            ],
        ).exit_code
        == 0
    )
    out = str(tmp_path / "a")
    result = runner.invoke(
        cli,
        [
            "execute",
            "--claim",
            claim,
            "--family",
            "FUND_01",
            "--seed",
            "1",
            "--horizon",
            "6",
            "--sampler",
            "mock",
            "--model",
            "Qwen/Qwen3-8B",
            "--out",
            out,
        ],
    )
    assert result.exit_code == 0, result.output
    c = verify_attempt(os.path.join(out, "record.json"), project=project)["record"]["content"]
    assert c["label"] == "mock" and c["model"] == {"id": "Qwen/Qwen3-8B", "provider": "mock"}
    assert c["prices"]["model"]["input_micro_usd_per_mtok"] == 130000 and c["cost"]["projection"] is True
    assert c["cost"]["micro_usd"] > 0 and "micro-USD projected (a mock priced as the model" in c["summary"]
    book = ProjectLedger(project)
    assert book.entries[-1]["projection"] is True
    t = book.totals()
    assert t["charged_micro_usd"] == 0 and t["projected_micro_usd"] == c["cost"]["micro_usd"]


def test_a_mock_under_an_unpriced_model_id_is_refused(tmp_path, state):
    result = CliRunner().invoke(
        cli,
        [
            "authorise",
            "--family",
            "FUND_01",
            "--model",
            "gpt-x",
            "--cap-micro-usd",
            "0",
            "--cap-tokens",
            "20000000",
            "--out",
            str(tmp_path / "c.json"),
        ],
    )
    assert result.exit_code == 1 and "models.gpt-x: no price for this model" in result.output


@pytest.mark.parametrize(
    "content, message",
    [
        (b"{}", "exists and is not an SQLite database"),
        (b"", "exists and is not an SQLite database"),
        ("history", "an SQLite database that is not a decision cache (tables: "),
        ("fifo", "not a regular file"),
    ],
)
@pytest.mark.timeout(30)
def test_a_cache_that_is_not_a_cache_is_refused_untouched(tmp_path, content, message):
    """Held back: --cache naming an existing non-SQLite file silently turned it into a database."""
    path = tmp_path / "thing"
    if content == "history":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE receipts (seq INTEGER)")
        conn.commit()
        conn.close()
    elif content == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes(content)
    before = path.read_bytes() if content != "fifo" else None
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        open_store(str(path))
    if before is not None:
        assert path.read_bytes() == before
    fresh = tmp_path / "new.sqlite"
    open_store(str(fresh))
    open_store(str(fresh))  # a cache it made is a cache
