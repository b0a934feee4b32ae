"""Hostile inputs: each is refused with one line and its exit code, loses nothing, and a forged record does not verify."""

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from engine import canonical_json, content_sha256, pretty_json, sha256_hex
from launchers._ledger import genesis
from fundbook.cli.launch import cli

from .conftest import REPO

MOCK = os.path.join(REPO, "runs", "attempts", "mock-FUND_01-seed-1")


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output and not isinstance(result.exception, (TypeError, ValueError, KeyError))
    return result


def one_line_error(result, code, *parts):
    assert result.exit_code == code, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    for part in parts:
        assert part in lines[0], lines[0]


def forge(src, dst, edit=None, ledger_edit=None, transcript_edit=None):
    """Copy an attempt, edit it, re-chain its ledger and re-hash everything (what a forger can do)."""
    shutil.copytree(src, dst)
    with open(dst / "record.json") as fh:
        record = json.load(fh)
    c = record["content"]
    bodies = [
        {k: v for k, v in json.loads(line).items() if k != "hash"}
        for line in (dst / "ledger.jsonl").read_bytes().splitlines()
    ]
    transcript = json.loads((dst / "transcript.json").read_text())
    if ledger_edit:
        ledger_edit(bodies)
    if transcript_edit:
        transcript_edit(transcript)
    prev, entries = genesis(c["claim"]["sha256"]), []
    for i, body in enumerate(bodies):
        body.update(seq=i, prev_hash=prev)
        entries.append(dict(body, hash=content_sha256(body)))
        prev = entries[-1]["hash"]
    (dst / "ledger.jsonl").write_bytes(b"".join(canonical_json(e) + b"\n" for e in entries))
    (dst / "transcript.json").write_text(pretty_json(transcript))
    c["ledger"]["entries"], c["ledger"]["head"] = entries, {"size": len(entries), "hash": prev}
    if edit:
        edit(c)
    c["transcript"]["sha256"] = sha256_hex((dst / "transcript.json").read_bytes())
    c["outputs"]["ledger"]["sha256"] = sha256_hex((dst / "ledger.jsonl").read_bytes())
    record["content_sha256"] = content_sha256(c)
    (dst / "record.json").write_text(pretty_json(record))
    return dst / "record.json"


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c.update(proposals=None), "content.proposals: not as attempt.schema.json describes"),
        (lambda c: c.update(termination=[]), "content.termination: not as attempt.schema.json describes"),
        (lambda c: c.update(resumed_from=5), "content.resumed_from: not as attempt.schema.json describes"),
        (lambda c: c["receipts_head"].update(size="x"), "content.receipts_head.size: not as"),
        (lambda c: c["cost"].update(calls=1), "content.cost.calls: the record says 1, the ledger says"),
    ],
)
def test_verify_refuses_a_rehashed_record_of_the_wrong_shape(tmp_path, edit, message):
    one_line_error(run("verify", forge(MOCK, tmp_path / "a", edit)), 1, "record.json", message)


def test_verify_refuses_money_booked_against_the_rules(run_attempt, tmp_path):
    _, out = run_attempt()
    assert run("verify", os.path.join(out, "record.json")).exit_code == 0

    def cheaper(bodies):  # every charge halved, the chain and the totals recomputed
        for b in bodies:
            if b["account"] == "inference" and b["kind"] in ("charge", "reserve"):
                b["micro_usd"] //= 2

    def totals(c):
        charges = [b for b in c["ledger"]["entries"] if b["kind"] == "charge"]
        c["cost"]["micro_usd"] = c["ledger"]["totals"]["charged_micro_usd"] = sum(
            b["micro_usd"] for b in charges if b["account"] == "inference"
        )
        c["ledger"]["totals"]["committed_micro_usd"] = c["cost"]["micro_usd"]

    def transcript(t):
        for step in t["steps"]:
            if isinstance(step.get("call"), dict) and "micro_usd" in step["call"]:
                step["call"]["micro_usd"] //= 2

    forged = forge(__import__("pathlib").Path(out), tmp_path / "f", totals, cheaper, transcript)
    one_line_error(run("verify", forged), 1, "ledger.jsonl: line 2: not what the record's prices")


def test_verify_refuses_a_charge_the_transcript_does_not_show(tmp_path):
    def drop(t):
        t["steps"] = [s for s in t["steps"] if not (isinstance(s.get("call"), dict) and s["call"].get("index") == 3)]

    one_line_error(
        run("verify", forge(MOCK, tmp_path / "a", transcript_edit=drop)),
        1,
        "transcript.json: the ledger charges calls [3] the transcript does not show",
    )


@pytest.mark.parametrize(
    "body, message",
    [
        ('"sandboxes": {"modal": 5}', "sandboxes.modal: expected an object"),
        ('"sandboxes": [1]', "sandboxes: expected an object"),
        (
            '"sandboxes": {"local": {"micro_usd_per_second": 100000000000000000000}}',
            "sandboxes.local.micro_usd_per_second: integer outside +-(2^53-1)",
        ),
    ],
)
def test_prices_of_the_wrong_shape(tmp_path, body, message):
    path = tmp_path / "p.json"
    path.write_text(
        '{"schema": "fundbook.prices/1", "models": {"m": {"input_micro_usd_per_mtok": 1, '
        '"output_micro_usd_per_mtok": 1}}, ' + body + "}"
    )
    one_line_error(
        run("budget", "--model", "m", "--tokens-in", 1, "--tokens-out", 1, "--prices", path), 1, str(path), message
    )


@pytest.mark.parametrize(
    "extra, code, message",
    [
        (["--hours", 100_000_000], 64, "--hours"),
        (["--cap-micro-usd", 2**53], 64, "--cap-micro-usd"),
        (["--model", "\udcff"], 1, "--model"),
    ],
)
def test_authorise_refuses_what_a_claim_cannot_hold(state, tmp_path, extra, code, message):
    args = {
        "--family": "FUND_01",
        "--model": "mock",
        "--cap-micro-usd": 1,
        "--cap-tokens": 10**8,
        "--out": tmp_path / "c.json",
    }
    args.update(zip(extra[::2], extra[1::2]))
    one_line_error(run("authorise", *[x for kv in args.items() for x in kv]), code, message)
    assert not (tmp_path / "c.json").exists() and not os.path.exists(os.path.join(state, "issued"))


def test_authorise_into_a_missing_folder_registers_nothing(state, tmp_path):
    out = tmp_path / "missing" / "c.json"
    one_line_error(
        run(
            "authorise",
            "--family",
            "FUND_01",
            "--model",
            "mock",
            "--cap-micro-usd",
            1,
            "--cap-tokens",
            10**8,
            "--out",
            out,
        ),
        1,
        f"--out {out}: cannot write the claim file",
    )
    assert not os.path.exists(os.path.join(state, "issued"))


@pytest.mark.parametrize(
    "extra, code, message",
    [
        (["--attempt-id", "\udcff"], 1, "--attempt-id"),
        (["--max-tokens", 10**20], 64, "--max-tokens"),
    ],
)
def test_execute_refuses_before_the_claim_is_consumed(state, tmp_path, extra, code, message):
    claim = tmp_path / "c.json"
    assert (
        run(
            "authorise",
            "--family",
            "FUND_01",
            "--model",
            "mock",
            "--cap-micro-usd",
            1,
            "--cap-tokens",
            10**8,
            "--out",
            claim,
        ).exit_code
        == 0
    )
    one_line_error(
        run("execute", "--claim", claim, "--out", tmp_path / "a", "--family", "FUND_01", "--seed", 1, *extra),
        code,
        message,
    )
    assert not os.path.exists(os.path.join(state, "consumed")) and not os.path.exists(tmp_path / "a.partial")


@pytest.fixture
def frozen(tmp_path):
    body = {
        "config": {"limits": {"max_calls": 400}},
        "caps": {"project_micro_usd": 100, "project_sandbox_micro_usd": 10},
    }
    path = tmp_path / "project" / "freeze.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "schema": "fundbook.freeze/1",
                "frozen_at": "2026-11-30T00:00:00Z",
                "content": body,
                "content_sha256": content_sha256(body),
            }
        )
    )
    return path


@pytest.mark.parametrize(
    "field, effective, reason, message",
    [
        ("config.limits.max_calls", "99999999999999999999", "r", "integer outside"),
        ("config.limits.max_calls", "NaN", "r", "expected an integer"),
        ("config.limits.max_calls", "500", "\udcff", "--reason"),
        ("caps.project_micro_usd", '"lots"', "r", "expected an integer"),
        ("caps.project_micro_usd", "-5", "r", "expected a non-negative integer"),
    ],
)
def test_deviate_refuses_what_cannot_be_recorded(frozen, field, effective, reason, message):
    one_line_error(
        run("deviate", "--freeze", frozen, "--field", field, "--effective", effective, "--reason", reason), 1, message
    )
    assert not (frozen.parent / "deviations.json").exists()


def test_ledger_refuses_a_deviated_cap_of_the_wrong_type(frozen):
    doc = json.loads(frozen.read_text())
    (frozen.parent / "deviations.json").write_text(
        json.dumps(
            {
                "schema": "fundbook.deviations/1",
                "freeze_sha256": doc["content_sha256"],
                "entries": [{"field": "caps.project_micro_usd", "effective": "lots"}],
            }
        )
    )
    one_line_error(
        run("ledger", "--project", frozen.parent), 1, "caps.project_micro_usd: expected a non-negative integer"
    )


def test_export_into_a_missing_folder(tmp_path):
    one_line_error(
        run("export", "--attempts", tmp_path, "--out-dir", tmp_path / "missing"), 1, "--out-dir", "no such directory"
    )
