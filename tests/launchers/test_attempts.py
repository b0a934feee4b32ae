"""End to end: complete and incomplete attempts, each recorded honestly."""

import json
import os

import pytest
from click.testing import CliRunner

from launchers._controller import Limits
from launchers._errors import OutputExists, SamplerError
from launchers._record import read_record
from launchers._verify import verify_attempt
from launchers._sandbox_modal import GRACE_S, ModalSandbox
from fundbook.cli.launch import cli

from .conftest import PricedMock
from .fakes import FakeModal

TRANSCRIPT_ROLES = {"model", "tool", "evaluator"}


def _check_shapes(record, out):
    c = record["content"]
    assert record["schema"] == "fundbook.attempt/1" and c["schema_version"] == 3
    for key in (
        "attempt_id",
        "label",
        "model",
        "sampling",
        "code",
        "packages",
        "task",
        "information_boundary",
        "claim",
        "ledger",
        "termination",
        "proposals",
        "receipts_head",
        "result",
        "accepted_actions",
        "settled_days",
        "cost",
        "transcript",
        "config",
        "config_hash",
        "prices",
        "engine",
        "prompt",
        "command_line",
        "salt",
        "freeze",
        "sandbox",
    ):
        assert key in c, key
    assert set(c["termination"]) >= {"status", "reason", "limit", "worker_exit_code"}
    assert set(c["cost"]) >= {"micro_usd", "tokens_in", "tokens_out", "unresolved_micro_usd"}
    assert c["ledger"]["head"]["size"] == len(c["ledger"]["entries"])
    assert read_record(os.path.join(out, "record.json")) == record  # every hash checks out
    assert verify_attempt(os.path.join(out, "record.json"))["record"] == record  # and it tells what the receipts hold
    with open(os.path.join(out, "transcript.json")) as fh:
        transcript = json.load(fh)
    assert transcript["attempt_id"] == c["attempt_id"] and transcript["summary"] == c["summary"]
    for i, step in enumerate(transcript["steps"]):
        assert step["index"] == i and step["role"] in TRANSCRIPT_ROLES and isinstance(step["text"], str)
        for call in step["tool_calls"]:
            assert set(call) == {"name", "arguments", "output", "exit_code"}
    return c, transcript


def test_complete_priced_attempt(run_attempt):
    record, out = run_attempt(sampler=PricedMock(invalid_per_mille=50))
    c, transcript = _check_shapes(record, out)
    assert c["termination"]["status"] == "completed" and c["termination"]["worker_exit_code"] == 0
    assert c["result"]["status"] == "SCORED" and c["result"]["score"]["points"] == 100
    assert c["settled_days"] == 20 and c["accepted_actions"] > 0
    assert c["receipts_head"] == c["result"]["receipts_head"]
    t = c["ledger"]["totals"]
    assert c["cost"]["micro_usd"] == t["charged_micro_usd"] > 0 and c["cost"]["unresolved_micro_usd"] == 0
    charges = [e for e in c["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"]
    model_steps = [s for s in transcript["steps"] if s["role"] == "model"]
    assert len(charges) == len(model_steps) == c["cost"]["calls"]
    assert sum(s["call"]["micro_usd"] for s in model_steps) == c["cost"]["micro_usd"]
    assert c["claim"]["consumed_at_step"] == 0 and c["claim"]["cap_micro_usd"] == 10_000_000
    assert all(p["outcome"] == "accepted" for p in c["proposals"]) and len(c["proposals"]) == 20
    assert sorted(os.listdir(out)) == [
        "ledger.jsonl",
        "receipts.json",
        "record.json",
        "retained.json",
        "transcript.json",
    ]
    with open(os.path.join(out, "retained.json")) as fh:
        retained = json.load(fh)
    assert retained["day"] == 20 and len(json.loads(retained["files"]["retained/history.json"])) == 20


def test_worker_limit_with_no_submission(run_attempt):
    record, out = run_attempt(sampler=PricedMock(delay_s=3), limits=Limits(worker_seconds=2, call_deadline_s=60))
    c, _ = _check_shapes(record, out)
    assert c["termination"]["status"] == "worker_limit" and c["termination"]["limit"] == "time"
    assert c["termination"]["worker_exit_code"] == 124 and "no submission" in c["termination"]["reason"]
    assert c["proposals"] == [] and c["settled_days"] == 0 and c["result"] is None
    # the call cut off by the deadline keeps its reservation as a liability
    assert c["cost"]["unresolved_micro_usd"] > 0 and c["cost"]["unresolved_calls"] == [1]
    assert [(e["account"], e["kind"]) for e in c["ledger"]["entries"]] == [
        ("sandbox", "reserve"),
        ("inference", "reserve"),
        ("inference", "unresolved"),
        ("sandbox", "charge"),
        ("sandbox", "release"),
    ]


def test_budget_halt(run_attempt):
    record, out = run_attempt(cap_micro_usd=5000, partial=True)
    c, _ = _check_shapes(record, out)
    assert c["termination"]["status"] == "budget_halt" and c["termination"]["limit"] == "cost"
    t = c["ledger"]["totals"]
    assert t["committed_micro_usd"] <= 5000 and c["result"] is None


def test_token_cap_halt(run_attempt):
    record, out = run_attempt(cap_tokens=20000, partial=True)
    c, _ = _check_shapes(record, out)
    assert c["termination"]["status"] == "budget_halt" and c["termination"]["limit"] == "tokens"


def test_provider_failures_are_an_infrastructure_interruption(run_attempt):
    record, out = run_attempt(sampler=PricedMock(fail=SamplerError("tinker: sample failed (HTTP 503)")))
    c, transcript = _check_shapes(record, out)
    assert c["termination"]["status"] == "infrastructure_interruption"
    assert c["cost"]["unresolved_calls"] == [1, 2, 3]  # not known to be unbilled: kept as liabilities
    assert "HTTP 503" in c["termination"]["reason"]


def test_sandbox_that_cannot_start_is_recorded(run_attempt):
    record, out = run_attempt(sandbox=ModalSandbox(modal=FakeModal(fail_create=True)))
    c, _ = _check_shapes(record, out)
    assert (
        c["termination"]["status"] == "infrastructure_interruption"
        and "no route to modal" in c["termination"]["reason"]
    )
    assert c["cost"]["calls"] == 0


def test_modal_adapter_end_to_end_with_a_fake_modal(run_attempt):
    fake = FakeModal()
    record, out = run_attempt(sandbox=ModalSandbox(modal=fake), horizon=6, limits=Limits(worker_seconds=300))
    c, _ = _check_shapes(record, out)
    assert c["termination"]["status"] == "completed", c["termination"]
    (sb,) = fake.sandboxes
    assert sb.kwargs["block_network"] is True and sb.kwargs["timeout"] == 300 + GRACE_S
    assert sb.kwargs["workdir"] == "/work" and "secrets" not in sb.kwargs and "env" not in sb.kwargs
    assert sorted(sb.written) == sorted("/work/" + f["path"] for f in c["information_boundary"]["staged"])
    assert sb.terminated >= 1
    assert c["information_boundary"]["network"].startswith("blocked")


def test_modal_timeout_return_is_a_worker_limit(run_attempt):
    fake = FakeModal(expire_after_s=1.0)
    record, out = run_attempt(
        sandbox=ModalSandbox(modal=fake), sampler=PricedMock(delay_s=0.3), limits=Limits(worker_seconds=300)
    )
    c, _ = _check_shapes(record, out)
    assert c["termination"]["status"] == "worker_limit" and c["termination"]["worker_exit_code"] == -1
    assert fake.sandboxes[0].terminated >= 1


def test_modal_exec_failure_terminates_the_sandbox(run_attempt):
    fake = FakeModal(fail_exec=True)
    record, out = run_attempt(sandbox=ModalSandbox(modal=fake))
    assert record["content"]["termination"]["status"] == "infrastructure_interruption"
    assert fake.sandboxes[0].terminated >= 1 and fake.apps[0].stopped == 1  # and the app it created is stopped


def test_existing_output_dir_is_refused_before_the_claim_is_consumed(tmp_path, state, run_attempt):
    from launchers._attempt import check_out_dir

    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    with pytest.raises(OutputExists):
        check_out_dir(str(tmp_path / "busy"))
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
                "mock",
                "--cap-micro-usd",
                "0",
                "--cap-tokens",
                "20000000",
                "--out",
                claim,
            ],
        ).exit_code
        == 0
    )
    args = ["execute", "--claim", claim, "--family", "FUND_01", "--seed", "1", "--horizon", "6"]
    result = runner.invoke(cli, args + ["--out", str(tmp_path / "busy")])
    assert result.exit_code == 1 and "not empty" in result.output
    result = runner.invoke(cli, args + ["--out", str(tmp_path / "new")])  # the claim was not spent by the refusal
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, args + ["--out", str(tmp_path / "again")])
    assert result.exit_code == 1 and "already consumed" in result.output and not os.path.exists(tmp_path / "again")


def test_execute_cli_usage_errors_exit_64(tmp_path, state):
    result = CliRunner().invoke(
        cli,
        [
            "execute",
            "--claim",
            "c.json",
            "--out",
            str(tmp_path / "o"),
            "--family",
            "FUND_01",
            "--seed",
            "1",
            "--sampler",
            "cache",
        ],
    )
    assert result.exit_code == 64 and "--cache" in result.output


def test_cached_replay_costs_nothing(tmp_path, state, prices_file):
    runner = CliRunner()
    cache = str(tmp_path / "cache.sqlite")
    # the replay names the recorded attempt: its world salt is needed to show the worker the same packets
    for n, extra in (
        (1, ["--sampler", "mock", "--cache", cache]),
        (2, ["--sampler", "cache", "--cache", cache, "--replay-of", str(tmp_path / "a1")]),
    ):
        claim = str(tmp_path / f"c{n}.json")
        assert (
            runner.invoke(
                cli,
                [
                    "authorise",
                    "--family",
                    "FUND_01",
                    "--model",
                    "mock",
                    "--cap-micro-usd",
                    "0",
                    "--cap-tokens",
                    "20000000",
                    "--out",
                    claim,
                ],
            ).exit_code
            == 0
        )
        result = runner.invoke(
            cli,
            [
                "execute",
                "--claim",
                claim,
                "--out",
                str(tmp_path / f"a{n}"),
                "--family",
                "FUND_01",
                "--seed",
                "1",
                "--horizon",
                "6",
                "--model",
                "mock",
                "--prices",
                prices_file,
                *extra,
            ],
        )
        assert result.exit_code == 0, result.output
    first = read_record(str(tmp_path / "a1" / "record.json"))["content"]
    replay = read_record(str(tmp_path / "a2" / "record.json"))["content"]
    assert replay["label"] == "cached replay" and replay["cost"]["cache_hits"] == replay["cost"]["calls"] > 0
    assert replay["cost"]["micro_usd"] == 0 and replay["ledger"]["totals"]["tokens_in"] == 0
    assert replay["proposals"] == first["proposals"] and replay["result"] == first["result"]


def test_bad_inputs_are_refused_before_the_claim_is_consumed(tmp_path, state, prices_file):
    runner = CliRunner()
    claim = str(tmp_path / "c.json")
    result = runner.invoke(
        cli,
        [
            "authorise",
            "--family",
            "FUND_01",
            "--model",
            "unpriced",
            "--cap-micro-usd",
            "10",
            "--cap-tokens",
            "10",
            "--out",
            claim,
        ],
    )  # the model id against the price table
    assert result.exit_code == 1 and "models.unpriced: no price for this model" in result.output, result.output
    assert not os.path.exists(claim) and not os.path.exists(os.path.join(state, "issued"))
    assert (
        runner.invoke(
            cli,
            [
                "authorise",
                "--family",
                "FUND_01",
                "--model",
                "test-model",
                "--prices",
                prices_file,
                "--cap-micro-usd",
                "10000000",
                "--cap-tokens",
                "20000000",
                "--cap-sandbox-micro-usd",
                "100000",
                "--out",
                claim,
            ],
        ).exit_code
        == 0
    )
    base = [
        "execute",
        "--claim",
        claim,
        "--family",
        "FUND_01",
        "--seed",
        "1",
        "--prices",
        prices_file,
        "--sampler",
        "tinker",
        "--model",
        "test-model",
    ]
    for extra, message in ((["--horizon", "99"], "--horizon: observation end day"), ([], "TINKER_API_KEY: not set")):
        result = runner.invoke(cli, base + extra + ["--out", str(tmp_path / "o")])
        assert result.exit_code == 1 and message in result.output, result.output
        assert not os.path.exists(tmp_path / "o") and not os.path.exists(os.path.join(state, "consumed"))


def test_a_host_failure_after_consumption_is_still_recorded(run_attempt):
    from launchers._sandbox_local import LocalSandbox

    class Broken(LocalSandbox):
        def start(self, files, time_limit_s):
            raise ValueError("disk full")

    record, out = run_attempt(sandbox=Broken())
    c = record["content"]
    assert c["termination"]["status"] == "infrastructure_interruption" and "disk full" in c["termination"]["reason"]
    assert read_record(os.path.join(out, "record.json"))["content"]["claim"]["consumed_at_step"] == 0


def test_the_same_mock_attempt_twice_gives_the_same_transcript(run_attempt, monkeypatch):
    from launchers import _desk
    from launchers._sampler_mock import MockSampler

    monkeypatch.setattr(_desk, "new_salt", lambda: "5e" * 32)  # the same secret salt: the same packets
    first, out1 = run_attempt(sampler=MockSampler("mock"), model="mock", sampler_name="mock", horizon=6)
    second, out2 = run_attempt(sampler=MockSampler("mock"), model="mock", sampler_name="mock", horizon=6)
    with open(f"{out1}/transcript.json") as a, open(f"{out2}/transcript.json") as b:
        t1, t2 = json.load(a), json.load(b)
    assert t1["attempt_id"] != t2["attempt_id"]  # named after their claims
    assert t1["steps"] == t2["steps"] and t1["summary"] == t2["summary"]
    for key in ("proposals", "result", "cost", "receipts_head", "termination"):
        assert first["content"][key] == second["content"][key]
    assert first["content"]["claim"]["id"] != second["content"]["claim"]["id"]  # two claims, each used once


def test_the_controller_bounds_every_call_itself(run_attempt):
    """A provider that never answers in time: each call is cut at the controller's deadline and kept as a liability."""
    record, out = run_attempt(sampler=PricedMock(delay_s=8), limits=Limits(worker_seconds=600, call_deadline_s=1))
    c = record["content"]
    assert c["termination"]["status"] == "infrastructure_interruption"
    assert "3 model calls in a row ended without an answer" in c["termination"]["reason"]
    assert c["cost"]["unresolved_calls"] == [1, 2, 3] and c["cost"]["micro_usd"] == 0
    notes = [e["note"] for e in c["ledger"]["entries"] if e["kind"] == "unresolved"]
    assert len(notes) == 3 and all(n.startswith("request_timeout") for n in notes)
    assert record["volatile"]["duration_ms"] < 20_000


HOST = """
import sys
from tests.launchers.specs import execute_kw as execute
from launchers._controller import Limits
from launchers._prices import load_prices
from launchers._sandbox_local import LocalSandbox
from tests.launchers.conftest import HealthyHost, PricedMock
execute(claim_path=sys.argv[1], out=sys.argv[2], family="FUND_01", seed=1, split="public-practice", model="test-model",
        sampler_name="fake", sandbox_name="local", make_sampler=lambda m: PricedMock(m, delay_s=0.25),
        make_sandbox=LocalSandbox, prices=load_prices(sys.argv[3]), limits=Limits(), state=sys.argv[4],
        host=HealthyHost())
"""


def test_a_host_that_dies_mid_attempt_is_recovered_into_a_record(tmp_path, state, prices_file):
    import signal
    import subprocess
    import sys
    import time
    from launchers._claims import Grant, authorise
    from .conftest import plan_for, REPO

    claim, out = str(tmp_path / "c.json"), str(tmp_path / "attempt")
    authorise(
        claim,
        "FUND_01",
        "public-practice",
        "test-model",
        10_000_000,
        20_000_000,
        1,
        grant=Grant(state=state, plan=plan_for()),
    )
    scratch = tmp_path / "tmp"  # the orphaned worker's folder lands here, not in the system temp dir
    scratch.mkdir()
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, claim, out, prices_file, state],
        cwd=REPO,
        env=dict(os.environ, TMPDIR=str(scratch)),
    )
    journal = os.path.join(out + ".partial", "journal.jsonl")
    end = time.monotonic() + 60

    def model_steps():
        if not os.path.exists(journal):
            return 0
        with open(journal) as fh:
            return fh.read().count('"role": "model"')

    while time.monotonic() < end and model_steps() < 3:  # wait for a few model steps, then pull the plug
        time.sleep(0.05)
    host.send_signal(signal.SIGKILL)
    host.wait()
    assert not os.path.exists(out) and os.path.exists(out + ".partial")
    from launchers._claims import check
    from launchers._errors import ClaimRefused

    with pytest.raises(ClaimRefused, match="already consumed"):  # a crash never renews the claim
        check(claim, "FUND_01", "public-practice", "test-model", state=state)
    runner = CliRunner()
    result = runner.invoke(cli, ["recover", out + ".partial", "--out", out])
    assert result.exit_code == 1, result.output
    record = read_record(os.path.join(out, "record.json"))
    c = record["content"]
    assert c["termination"]["status"] == "incomplete_execution" and "recovered" in c["termination"]["reason"]
    assert record["volatile"]["recovered"] is True and c["result"] is None
    assert c["cost"]["calls"] >= 3 and c["claim"]["consumed_at_step"] == 0
    opened = {e["call"] for e in c["ledger"]["entries"] if e["kind"] == "reserve" and e["account"] == "inference"}
    settled = {e["call"] for e in c["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"}
    assert c["cost"]["unresolved_calls"] == sorted(opened - settled)
    assert {"ledger.jsonl", "receipts.json", "record.json", "transcript.json"} <= set(os.listdir(out))


def test_every_transcript_step_names_its_checkpoint(run_attempt):
    record, out = run_attempt(horizon=8)
    with open(f"{out}/transcript.json") as fh:
        steps = json.load(fh)["steps"]
    days = [s["day"] for s in steps]
    assert days[0] == 1 and days[-1] is None and days[:-1] == sorted(days[:-1])
    assert set(days[:-1]) == set(range(1, 9))
    assert all(s["day"] == 8 for s in steps[-4:-1])  # the last day's model, tool and evaluator steps
