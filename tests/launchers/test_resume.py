"""An interrupted attempt is continued with a new claim from its settled history (the next checkpoint gets the
updated packet and the retained work, never gold or future events), both parts recorded and linked; and the
sandbox transport commands work without any inference."""

import json
import os

import pytest
from click.testing import CliRunner

import engine
from launchers import _transport
from launchers._controller import Limits
from launchers._record import read_record
from launchers._sampler_mock import MockSampler
from launchers._verify import verify_attempt
from fundbook.cli.launch import cli

from .conftest import schema_valid
from .fakes import FakeModal
from .test_isolation import FORBIDDEN_CODE, FORBIDDEN_DATA_KEYS


def _mock(run_attempt, **kw):
    return run_attempt(sampler=MockSampler("mock"), model="mock", sampler_name="mock", horizon=8, **kw)


def _batches(out):
    with open(os.path.join(out, "receipts.json")) as fh:
        return [r["payload"]["batch"] for r in json.load(fh) if r["kind"] == "BATCH"]


def test_an_interrupted_attempt_is_continued_with_a_new_claim(run_attempt, tmp_path, state):
    first, out1 = _mock(run_attempt, limits=Limits(max_calls=9))  # halts on its call limit mid-run
    c1 = first["content"]
    assert c1["termination"]["status"] == "budget_halt" and 0 < c1["settled_days"] < 8
    with open(os.path.join(out1, "retained.json")) as fh:
        retained = json.load(fh)
    assert retained["day"] == c1["settled_days"]  # the retained work after the last settled checkpoint

    runner = CliRunner()
    claim = str(tmp_path / "new-claim.json")
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
    out2 = str(tmp_path / "continued")
    result = runner.invoke(cli, ["execute", "--claim", claim, "--out", out2, "--resume-from", out1])
    assert result.exit_code == 0, result.output
    record = verify_attempt(os.path.join(out2, "record.json"))["record"]
    schema_valid(out2)
    c2 = record["content"]
    assert c2["termination"]["status"] == "completed" and c2["result"]["score"]["points"] == 100
    assert c2["resumed_from"] == {
        "attempt_id": c1["attempt_id"],
        "content_sha256": first["content_sha256"],
        "receipts_head": c1["receipts_head"],
        "settled_days": c1["settled_days"],
    }
    assert c2["task"] == c1["task"] and c2["claim"]["id"] != c1["claim"]["id"]
    assert read_record(os.path.join(out1, "record.json")) == first  # the first part is never rewritten
    # the whole chain is in the continuation's receipts, and it is the chain an uninterrupted run settles
    whole, out3 = _mock(run_attempt)
    assert _batches(out2) == _batches(out3) and _batches(out2)[: c1["settled_days"]] == _batches(out1)
    # the worker restarted at the open checkpoint, with its retained work and nothing of the future
    staged = {f["path"]: f for f in c2["information_boundary"]["staged"]}
    for rel, text in retained["files"].items():
        assert staged[rel]["sha256"] == engine.sha256_hex(text.encode("utf-8"))
    with open(os.path.join(out2, "transcript.json")) as fh:
        steps = json.load(fh)["steps"]
    open_day = c1["settled_days"] + 1
    assert steps[0]["role"] == "evaluator" and steps[0]["text"].startswith(f"Checkpoint {open_day} of 8")
    assert c2["proposals"][0]["day"] == open_day


def test_the_continued_worker_sees_the_current_packet_and_no_future(run_attempt, tmp_path, state, monkeypatch):
    from launchers import _controller

    seen = {}
    real = _controller.stage

    def spy(packet):
        seen.setdefault("packet", packet)
        return real(packet)

    first, out1 = _mock(run_attempt, limits=Limits(max_calls=9))
    monkeypatch.setattr(_controller, "stage", spy)
    second, out2 = run_attempt(sampler=MockSampler("mock"), model="mock", sampler_name="mock", resume_from=out1)
    packet = seen["packet"]
    assert packet["day"] == first["content"]["settled_days"] + 1 and not set(FORBIDDEN_DATA_KEYS) & set(packet)
    instance = engine.with_horizon(engine.generate("FUND_01", 1), 8)
    text = json.dumps(packet)
    for source in instance["sources"]:
        if source["published_day"] > packet["day"]:
            assert source["text"] not in text
    for needle in FORBIDDEN_CODE:
        assert needle not in text


def test_a_completed_attempt_is_not_continued(run_attempt):
    first, out1 = _mock(run_attempt)
    from launchers._errors import InputError

    with pytest.raises(InputError, match="the attempt completed"):
        run_attempt(sampler=MockSampler("mock"), model="mock", sampler_name="mock", resume_from=out1)


def test_a_tampered_attempt_is_not_continued(run_attempt, tmp_path):
    first, out1 = _mock(run_attempt, limits=Limits(max_calls=9))
    path = os.path.join(out1, "receipts.json")
    with open(path) as fh:
        receipts = json.load(fh)
    receipts[0]["payload"]["batch"]["report"]["cash"] += 1
    with open(path, "w") as fh:
        json.dump(receipts, fh)
    from launchers._errors import InputError

    with pytest.raises(InputError, match="outputs.receipts.sha256"):
        run_attempt(sampler=MockSampler("mock"), model="mock", sampler_name="mock", resume_from=out1)


# -- the transport, without inference ---------------------------------------------------------------------------


@pytest.fixture
def transport(monkeypatch, prices_file):
    fake = FakeModal()
    monkeypatch.setattr(_transport, "_modal", lambda modal=None: fake)
    runner = CliRunner()

    def run(*args):
        return runner.invoke(cli, ["sandbox", *args])

    return fake, run


def test_the_sandbox_transport_commands(transport, tmp_path, prices_file):
    fake, run = transport
    record, new_record = str(tmp_path / "sb.json"), str(tmp_path / "sb2.json")
    result = run("build")
    assert result.exit_code == 0 and "image im-debian-3.11" in result.output and fake.apps[0].stopped == 1
    result = run(
        "launch",
        "--record",
        record,
        "--family",
        "FUND_01",
        "--seed",
        "1",
        "--timeout",
        "300",
        "--cap-micro-usd",
        "100000",
        "--prices",
        prices_file,
    )
    assert result.exit_code == 0, result.output
    with open(record) as fh:
        doc = json.load(fh)
    sb = fake.sandboxes[0]
    assert doc["sandbox_id"] == sb.object_id and doc["app_created"] is True and doc["max_micro_usd"] == 40 * 360
    assert sb.kwargs["block_network"] is True and "secrets" not in sb.kwargs
    assert {"/work/" + f["path"] for f in doc["staged"]} == set(sb.written)
    assert "running" in run("status", "--record", record).output
    result = run(
        "exec-worker",
        "--record",
        record,
        "--",
        "python3",
        "-c",
        "import json; print(json.load(open('packet.json'))['day']); open('kept.txt', 'w').write('kept')",
    )
    assert result.exit_code == 0 and result.output.startswith("1\n") and "exit 0" in result.output, result.output
    result = run("exec-worker", "--record", record, "--", "python3", "-c", "raise SystemExit(5)")
    assert result.exit_code == 1 and "exit 5" in result.output
    result = run("checkpoint", "--record", record)
    assert result.exit_code == 0 and "im-snap-0001" in result.output
    result = run(
        "resume",
        "--record",
        record,
        "--new-record",
        new_record,
        "--timeout",
        "300",
        "--cap-micro-usd",
        "100000",
        "--prices",
        prices_file,
    )
    assert result.exit_code == 0, result.output
    with open(new_record) as fh:
        new = json.load(fh)
    assert new["resumed_from"]["sandbox_id"] == doc["sandbox_id"] and new["resumed_from"]["image_id"] == "im-snap-0001"
    result = run("exec-worker", "--record", new_record, "--", "python3", "-c", "print(open('kept.txt').read())")
    assert result.output.startswith("kept"), result.output  # the checkpoint carried the worker's files
    for path in (record, new_record):
        result = run("stop", "--record", path)
        assert result.exit_code == 0 and "sandbox terminated: True; app stopped: True" in result.output
    assert all(sb.terminated for sb in fake.sandboxes) and all(app.stopped for app in fake.apps)
    assert "exited 137" in run("status", "--record", record).output


def test_a_sandbox_above_its_compute_cap_is_not_launched(transport, tmp_path, prices_file):
    fake, run = transport
    result = run(
        "launch",
        "--record",
        str(tmp_path / "sb.json"),
        "--family",
        "FUND_01",
        "--seed",
        "1",
        "--timeout",
        "1200",
        "--cap-micro-usd",
        "1000",
        "--prices",
        prices_file,
    )
    assert result.exit_code == 1 and "above --cap-micro-usd" in result.output
    assert fake.apps == [] and fake.sandboxes == [] and not os.path.exists(tmp_path / "sb.json")
