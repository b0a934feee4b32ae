"""The worker's compact prompt end to end, with scripted answers at the sampler seam (no model): one call a
checkpoint, the worker's strict reading, the refusal fed back, the day's call limit, and the staged files."""

import json
import os

import engine
from launchers._sampling import Completion, Prepared, approx_prompt_tokens, request_sha256
from launchers._verify import verify_attempt
from launchers.worker import prompt

from .conftest import schema_valid

COMPACT = {"prompt": prompt.PROMPT_VERSION, "temperature_milli": 0}


class Scripted:
    """A compact-prompt sampler whose answers a test writes from the view it is shown (free, like a local model)."""

    provider = "llama-cpp"  # it stands in at the local sampler's seam: booked free, never from the price table

    def __init__(self, answer):
        self.model_id = "scripted"
        self.sampling = dict(COMPACT)
        self.answer = answer
        self.seen = []

    def prepare(self, messages, max_tokens):
        return Prepared(
            request_sha256(self.model_id, messages, max_tokens, self.sampling),
            approx_prompt_tokens(messages),
            max_tokens,
            messages,
        )

    def sample(self, prepared, deadline_s):
        self.seen.append(prepared.messages)
        text = self.answer(prompt.view_in(prepared.messages), prepared.messages)
        return Completion(text, prepared.prompt_tokens, len(text) // 4, cpu_ms=7)


def _do_nothing(view, messages):
    return json.dumps({"day": view["day"], "actions": [], "report": view["report_if_no_action"]})


def test_copying_the_no_action_report_is_the_do_nothing_baseline(run_attempt, tmp_path):
    sampler = Scripted(_do_nothing)
    record, out = run_attempt(
        sampler=sampler,
        model="test-model",
        sampler_name="llama-cpp",
        family="FUND_02",
        horizon=6,
        sampling=dict(COMPACT),
        local=True,
    )
    c = record["content"]
    assert c["termination"]["status"] == "completed", c["termination"]
    instance = engine.with_horizon(engine.generate("FUND_02", 1), 6)
    baseline = engine.grade_candidate(engine.policy_candidate(instance, "do-nothing"), instance)
    assert {k: c["result"][k] for k in ("status", "verdict", "score")} == {
        k: baseline[k] for k in ("status", "verdict", "score")
    }
    assert c["cost"]["calls"] == 6 and len(sampler.seen) == 6  # one call a checkpoint
    assert all(len(m) == 2 for m in sampler.seen)
    staged = {f["path"] for f in c["information_boundary"]["staged"]}
    assert {"prompt.py", "worker.json"} <= staged
    assert c["prompt"]["version"] == prompt.PROMPT_VERSION and c["worker"]["max_calls_per_checkpoint"] == 3
    # the CPU time each call reports is charged in the ledger, shown on its step and summed in the cost
    assert c["cost"]["cpu_ms"] == 7 * 6 == c["ledger"]["totals"]["cpu_ms"]
    verify_attempt(os.path.join(out, "record.json"))
    schema_valid(out)


def test_a_refused_answer_is_retried_with_the_refusal_fed_back_within_the_days_limit(run_attempt):
    def answer(view, messages):
        day, again = view["day"], messages[-1]["content"]
        if day == 1 and len(messages) == 2:
            return '{"day": 1, "day": 1, "actions": [], "report": {}}'  # duplicate keys: the worker refuses it
        if day == 1 and "(answer 2 of 3)" in again:
            return json.dumps(
                {
                    "day": 1,
                    "actions": [{"id": "a1", "type": "REPAY", "trade": "FT999"}],
                    "report": view["report_if_no_action"],
                }
            )  # an id never shown: the desk rejects it
        if day == 2:
            return '{"day": 2, "actions": [{"id": "a1", "type": "FUND", "asset": "A1", "quote": "Q01", "notional": 0}]}'
        return _do_nothing(view, messages)

    sampler = Scripted(answer)
    record, out = run_attempt(
        sampler=sampler,
        model="test-model",
        sampler_name="llama-cpp",
        family="FUND_02",
        horizon=6,
        sampling=dict(COMPACT),
        local=True,
    )
    c = record["content"]
    assert c["termination"]["status"] == "completed"
    day1 = [m for m in sampler.seen if prompt.view_in(m)["day"] == 1]
    assert len(day1) == 3 and len(day1[1]) == len(day1[2]) == 4  # opening + the last answer + why it failed
    assert day1[1][2]["content"].startswith('{"day": 1, "day": 1') and "duplicate key 'day'" in day1[1][3]["content"]
    assert "the evaluator rejected the batch" in day1[2][3]["content"] and "FT999" in day1[2][3]["content"]
    assert day1[2][3]["content"].endswith("(answer 3 of 3).")
    day2 = [m for m in sampler.seen if prompt.view_in(m)["day"] == 2]
    assert len(day2) == 3  # three answers the worker refuses: the day's limit, then the day passes
    assert all("batch.report: missing" in m[3]["content"] for m in day2[1:])
    assert day2[1] != day2[2]  # the same refusal twice is still two requests (the answer's number is named)
    assert [p["day"] for p in c["proposals"] if p["outcome"] == "rejected"] == [1]
    assert c["invalid_artefacts"] == 1 + 3 and c["settled_days"] == 5  # six checkpoints, day 2 passed
    with open(os.path.join(out, "transcript.json")) as fh:
        steps = json.load(fh)["steps"]
    assert any("closed without a batch" in s["text"] for s in steps if s["day"] == 2)
    verify_attempt(os.path.join(out, "record.json"))


def test_a_worker_told_an_unknown_prompt_stops_before_any_call(run_attempt, monkeypatch):
    from launchers import _controller, _staging

    real = _staging.stage

    def staged(packet, prompt=None):
        files = real(packet, prompt=prompt)
        files["worker.json"] = b'{"prompt": "compact/99"}\n'
        return files

    monkeypatch.setattr(_controller, "stage", staged)
    sampler = Scripted(_do_nothing)
    record, _ = run_attempt(
        sampler=sampler,
        model="test-model",
        sampler_name="llama-cpp",
        family="FUND_02",
        horizon=6,
        sampling=dict(COMPACT),
        local=True,
    )
    c = record["content"]
    assert c["termination"]["status"] == "worker_exit" and c["termination"]["worker_exit_code"] == 3
    assert sampler.seen == [] and c["cost"]["calls"] == 0
