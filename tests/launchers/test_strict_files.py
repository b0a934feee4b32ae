"""Every file the launcher reads goes through one bounded strict reader.

Held back (a hostile suite run against main): a FIFO given as a claim, record or price file hung the command; deep
nesting or NaN in a claim, record, project-ledger line, price file or sandbox record gave a traceback; duplicate keys
were accepted in claims and records. Now each is one line naming the file, exit 1, and nothing is written.
"""

import json
import os

import pytest
from click.testing import CliRunner

from fundbook.cli.launch import cli

from .conftest import REPO

MOCK = os.path.join(REPO, "runs", "attempts", "mock-FUND_01-seed-1")
HOSTILE = {
    "fifo": None,
    "deep": "[" * 100_000 + "]" * 100_000,
    "nan": '{"schema": NaN}',
    "duplicate": '{"schema": "x", "schema": "y"}',
    "float": '{"schema": 1.5}',
    "huge integer": '{"schema": ' + "9" * 5000 + "}",
    "not utf-8": b'{"schema": "\xff"}',
}
EXPECT = {
    "fifo": "not a regular file",
    "deep": "nested deeper than",
    "nan": "not valid JSON",
    "duplicate": "duplicate name",
    "float": "is not an integer",
    "huge integer": "integer",
    "not utf-8": "not UTF-8",
}


def _plant(path, kind, line=False):
    body = HOSTILE[kind]
    if body is None:
        os.mkfifo(path)  # nobody writes to it: a reader that waits for one hangs forever
    else:
        with open(path, "wb") as fh:  # a JSON-lines file gets a whole line (a torn last one is another case)
            fh.write((body if isinstance(body, bytes) else body.encode("utf-8")) + (b"\n" if line else b""))


def _commands(tmp_path, path, prices_file):
    """(what, argv) that read `path` as that kind of file."""
    project = tmp_path / "p"
    project.mkdir()
    return {
        "claim": ["execute", "--claim", path, "--out", str(tmp_path / "a"), "--family", "FUND_01", "--seed", "1"],
        "record": ["verify", path],
        "price table": ["budget", "--model", "mock", "--tokens-in", "1", "--tokens-out", "1", "--prices", path],
        "transport record": ["sandbox", "status", "--record", path],
        "project ledger": ["ledger", "--project", str(project)],
        "freeze": ["deviate", "--freeze", path, "--field", "caps.claim_micro_usd", "--effective", "1", "--reason", "r"],
    }


@pytest.mark.timeout(60)
@pytest.mark.parametrize("what", ["claim", "record", "price table", "transport record", "project ledger", "freeze"])
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_file_is_one_line_never_a_hang_or_a_traceback(tmp_path, state, prices_file, monkeypatch, what, kind):
    from launchers import _transport

    from .fakes import FakeModal

    monkeypatch.setattr(_transport, "_modal", lambda modal=None: FakeModal())
    path = str(tmp_path / "hostile.json")
    argv = _commands(tmp_path, path, prices_file)[what]
    if what == "project ledger":
        path = str(tmp_path / "p" / "project-ledger.jsonl")
    _plant(path, kind, line=what == "project ledger")
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and path in lines[0], result.output
    assert EXPECT[kind] in lines[0], lines[0]
    assert not os.path.exists(os.path.join(state, "consumed")) and not os.path.exists(tmp_path / "a.partial")


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda text: text.replace(
                '"schema": "fundbook.attempt/1"', '"schema": "fundbook.attempt/1", "schema": "fundbook.attempt/1"', 1
            ),
            "duplicate name",
        ),
        (lambda text: text.replace('"duration_ms": ', '"duration_ms": NaN, "x": ', 1), "not valid JSON"),
    ],
)
def test_a_record_with_duplicate_names_or_nan_is_refused(tmp_path, edit, message):
    import shutil

    dst = tmp_path / "a"
    shutil.copytree(MOCK, dst)
    record = dst / "record.json"
    record.write_text(edit(record.read_text()))
    result = CliRunner().invoke(cli, ["verify", str(record)])
    assert result.exit_code == 1 and message in result.output and result.output.count("\n") == 1, result.output


def test_a_claim_with_a_duplicate_cap_is_refused(tmp_path, state):
    runner = CliRunner()
    claim = tmp_path / "c.json"
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
                str(claim),
            ],
        ).exit_code
        == 0
    )
    text = claim.read_text()
    claim.write_text(text.replace('"cap_tokens": 20000000', '"cap_tokens": 20000000, "cap_tokens": 99999999', 1))
    result = runner.invoke(
        cli, ["execute", "--claim", str(claim), "--out", str(tmp_path / "a"), "--family", "FUND_01", "--seed", "1"]
    )
    assert result.exit_code == 1 and "duplicate name" in result.output, result.output
    assert not os.path.exists(os.path.join(state, "consumed"))


def test_a_torn_project_ledger_tail_is_cut_before_the_next_entry(tmp_path, state, project):
    """A writer that died mid-append leaves a torn last line: it is reported as torn (never guessed at) and cut off
    under the lock before the next entry, so the chain goes on."""
    from launchers._project import ProjectLedger

    runner = CliRunner()
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
                str(tmp_path / "c1.json"),
            ],
        ).exit_code
        == 0
    )
    path = os.path.join(project, "project-ledger.jsonl")
    with open(path, "ab") as fh:
        fh.write(b'{"kind": "authorise", "claim')  # torn
    assert len(ProjectLedger(project).entries) == 1
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
                str(tmp_path / "c2.json"),
            ],
        ).exit_code
        == 0
    )
    with open(path, "rb") as fh:
        assert [json.loads(line)["seq"] for line in fh] == [0, 1]


@pytest.mark.parametrize("value", ["[" * 100_000, "NaN", '{"a": 1, "a": 2}', "1e400"])
def test_deviate_reads_its_effective_value_strictly(tmp_path, value):
    from engine import content_sha256

    body = {"caps": {"project_micro_usd": 100, "project_sandbox_micro_usd": 10}, "config": {"x": [1]}}
    path = tmp_path / "freeze.json"
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
    result = CliRunner().invoke(
        cli, ["deviate", "--freeze", str(path), "--field", "config.x", "--effective", value, "--reason", "r"]
    )
    assert result.exit_code == 1 and result.output.count("\n") == 1 and "Traceback" not in result.output, result.output
    assert not (tmp_path / "deviations.json").exists()
