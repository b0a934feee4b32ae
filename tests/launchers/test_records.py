"""Attempt records: golden round trip, versioning, tamper evidence, the checked-in mock attempt."""

import json
import os
import shutil
import subprocess

import pytest

import engine
from launchers._errors import InputError
from launchers._record import read_record, round_trip

from .conftest import REPO

MOCK = os.path.join(REPO, "runs", "attempts", "mock-FUND_01-seed-1")


@pytest.fixture
def copy(tmp_path):
    dst = tmp_path / "attempt"
    shutil.copytree(MOCK, dst)
    return dst


def test_golden_round_trip():
    path = os.path.join(MOCK, "record.json")
    with open(path, "rb") as fh:
        raw = fh.read()
    assert round_trip(read_record(path)) == raw


def test_a_newer_schema_version_is_refused(copy):
    record = json.loads((copy / "record.json").read_text())
    record["content"]["schema_version"] = 4
    record["content_sha256"] = engine.content_sha256(record["content"])
    (copy / "record.json").write_text(json.dumps(record))
    with pytest.raises(InputError, match="schema_version: expected an integer <= 3, got 4"):
        read_record(str(copy / "record.json"))


@pytest.mark.parametrize(
    "target, message",
    [
        ("record.json", "does not hash"),
        ("transcript.json", "transcript.sha256"),
        ("receipts.json", "outputs.receipts.sha256"),
        ("ledger.jsonl", "outputs.ledger.sha256"),
    ],
)
def test_an_edit_anywhere_is_visible(copy, target, message):
    path = copy / target
    text = path.read_text()
    path.write_text(
        text.replace("0", "1", 1)
        if target != "record.json"
        else text.replace('"settled_days": 20', '"settled_days": 19')
    )
    with pytest.raises(InputError, match=message):
        read_record(str(copy / "record.json"))


def test_the_checked_in_mock_attempt():
    record = read_record(os.path.join(MOCK, "record.json"))
    c = record["content"]
    assert c["attempt_id"] == "mock-FUND_01-seed-1" and c["label"] == "mock"
    assert c["model"] == {"id": "mock", "provider": "mock"}
    assert c["task"]["family"] == "FUND_01" and c["task"]["seed"] == 1
    assert c["information_boundary"]["sandbox"] == "local"
    assert c["termination"]["status"] == "completed" and c["result"]["score"]["points"] == 100
    assert c["cost"]["micro_usd"] == 0 and c["cost"]["calls"] > 0 and c["invalid_artefacts"] > 0
    # the receipts replay to the recorded head with the engine alone
    with open(os.path.join(MOCK, "receipts.json")) as fh:
        receipts = json.load(fh)
    instance = engine.with_horizon(engine.generate("FUND_01", 1), 20)
    final = receipts[-1]["payload"]  # the FINAL receipt reveals the salt: anyone can check the commitment
    assert final["salt"] == c["salt"] and final["fixture_sha256"] == engine.fixture_sha256(instance)
    run = engine.replay(instance, receipts, c["receipts_head"], final["salt"])
    assert run.head == c["receipts_head"] == c["result"]["receipts_head"]
    # the ledger file is the ledger in the record, line by line
    with open(os.path.join(MOCK, "ledger.jsonl"), "rb") as fh:
        lines = [json.loads(line) for line in fh.read().splitlines()]
    assert lines == c["ledger"]["entries"]


def test_verify_cli():
    proc = subprocess.run(
        [os.path.join(REPO, ".venv", "bin", "fundbook-launch"), "verify", os.path.join(MOCK, "record.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "content verified and reconciled with 75 receipts" in proc.stdout and "ended completed" in proc.stdout


def test_records_match_their_published_schemas(run_attempt):
    import jsonschema

    schemas = os.path.join(REPO, "launchers", "schemas")
    with open(os.path.join(schemas, "attempt.schema.json")) as fh:
        attempt = json.load(fh)
    with open(os.path.join(schemas, "transcript.schema.json")) as fh:
        transcript = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(attempt)
    record, out = run_attempt(cap_micro_usd=5000, partial=True)  # an incomplete one too (budget halt)
    for directory in (MOCK, out):
        with open(os.path.join(directory, "record.json")) as fh:
            jsonschema.validate(json.load(fh), attempt, cls=jsonschema.Draft202012Validator)
        with open(os.path.join(directory, "transcript.json")) as fh:
            jsonschema.validate(json.load(fh), transcript, cls=jsonschema.Draft202012Validator)
