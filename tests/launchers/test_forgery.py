"""Think like a forger: prices and caps are bound to what the attempt cannot rewrite.

Held back (a hostile suite run against main): `verify` accepted a ledger whose charges were lowered together with
the record's own price row, a raised claim cap and a rewritten retained work file; and a consumed claim ran again
once its local marker was deleted and --project pointed at a new folder. The record's own files can all be
rewritten consistently; the claim as registered at `authorise`, its consumption and the settlement naming the
record's content sha256 -- the project ledger -- and the freeze's price table cannot. Each forgery below is made
the way a careful forger would (every hash recomputed) and refused, naming the field.
"""

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import canonical_json, content_sha256, pretty_json, sha256_hex
from launchers._errors import InputError
from launchers._ledger import genesis
from launchers._verify import verify_attempt
from fundbook.cli.launch import cli


@pytest.fixture
def attempt(run_attempt, project):
    record, out = run_attempt(horizon=6)
    assert verify_attempt(os.path.join(out, "record.json"), project=project)["bound"]["settle_entry"] == 2
    return Path(out)


def _rebooked(src, dst, price_edit, also=None):
    """A careful forger: a lower price row, and the whole ledger booked again at it by the Ledger's own rules
    (reservations, charges, releases, the chain), the transcript's charges, totals and costs made to agree."""
    from launchers._ledger import Ledger

    shutil.copytree(src, dst)
    record = json.loads((dst / "record.json").read_text())
    c = record["content"]
    price = price_edit(dict(c["prices"]["model"]))
    claim = c["claim"]
    book = Ledger(
        claim["sha256"],
        claim["cap_micro_usd"],
        claim["cap_tokens"],
        price,
        cap_sandbox_micro_usd=claim["cap_sandbox_micro_usd"],
        sandbox_rate=c["prices"]["sandbox"]["micro_usd_per_second"],
    )
    for e in c["ledger"]["entries"]:
        if e["account"] == "sandbox":
            continue  # the local sandbox books nothing
        if e["kind"] == "reserve":
            book.reserve(e["call"], e["tokens_in"], e["tokens_out"])
        elif e["kind"] == "charge":
            book.settle(e["call"], e["tokens_in"], e["tokens_out"], e["note"], cached_in=e["cached_tokens_in"])
        elif e["kind"] == "unresolved":
            book.mark_unresolved(e["call"], e["note"])
    (dst / "ledger.jsonl").write_bytes(b"".join(canonical_json(e) + b"\n" for e in book.entries))
    charges = {e["call"]: e["micro_usd"] for e in book.entries if e["kind"] == "charge"}
    transcript = json.loads((dst / "transcript.json").read_text())
    for step in transcript["steps"]:
        if isinstance(step.get("call"), dict) and "micro_usd" in step["call"]:
            step["call"]["micro_usd"] = charges[step["call"]["index"]]
    (dst / "transcript.json").write_text(pretty_json(transcript))
    totals = book.totals()
    c["prices"]["model"] = price
    c["ledger"] = {"entries": book.entries, "head": book.head, "totals": totals}
    c["cost"]["micro_usd"] = totals["charged_micro_usd"]
    c["transcript"]["sha256"] = sha256_hex((dst / "transcript.json").read_bytes())
    c["outputs"]["ledger"]["sha256"] = sha256_hex((dst / "ledger.jsonl").read_bytes())
    if also:
        also(c)
    record["content_sha256"] = content_sha256(c)
    (dst / "record.json").write_text(pretty_json(record))
    return dst / "record.json"


def _half(row):
    return {k: v // 2 for k, v in row.items()}


def _verify(path, project=None):
    args = ["verify", str(path)] + (["--project", str(project)] if project else [])
    return CliRunner().invoke(cli, args)


def test_lowered_charges_with_a_lowered_price_row_are_refused(attempt, tmp_path, project):
    forged = _rebooked(attempt, tmp_path / "f", _half)
    result = _verify(forged, project)
    assert result.exit_code == 1 and "content.prices.model" in result.output, result.output
    assert "is not the row the claim was authorised at" in result.output

    def also_the_plan(c):  # the forger lowers the claim copy's own plan row too: only the project ledger tells
        c["claim"]["plan"]["price"] = dict(c["prices"]["model"])

    forged = _rebooked(attempt, tmp_path / "g", _half, also_the_plan)
    verify_attempt(str(forged))  # self-consistent, and booked by the rules at the (forged) row
    result = _verify(forged, project)
    assert result.exit_code == 1 and "content.claim.plan: the record says" in result.output, result.output
    assert "the claim registered at authorise says" in result.output


def _raise_cap(dst):
    """Raise the claim's inference cap in the record, re-hash the claim and re-chain the ledger to its genesis."""

    def edit(c):
        c["claim"]["cap_micro_usd"] *= 10
        claim = {k: v for k, v in c["claim"].items() if k not in ("sha256", "consumed_at_step", "consumption")}
        c["claim"]["sha256"] = content_sha256(claim)
        prev = genesis(c["claim"]["sha256"])
        for e in c["ledger"]["entries"]:
            e["prev_hash"] = prev
            e["hash"] = content_sha256({k: v for k, v in e.items() if k != "hash"})
            prev = e["hash"]
        c["ledger"]["head"] = {"size": len(c["ledger"]["entries"]), "hash": prev}

    return edit


def test_a_raised_claim_cap_is_caught_only_by_the_project_ledger(attempt, tmp_path, project):
    dst = tmp_path / "raised"
    shutil.copytree(attempt, dst)
    record = json.loads((dst / "record.json").read_text())
    _raise_cap(dst)(record["content"])
    entries = record["content"]["ledger"]["entries"]
    (dst / "ledger.jsonl").write_bytes(b"".join(canonical_json(e) + b"\n" for e in entries))
    record["content"]["outputs"]["ledger"]["sha256"] = sha256_hex((dst / "ledger.jsonl").read_bytes())
    record["content_sha256"] = content_sha256(record["content"])
    (dst / "record.json").write_text(pretty_json(record))
    verify_attempt(str(dst / "record.json"))  # self-consistent: the record's own files cannot show it
    result = _verify(dst / "record.json", project)
    assert result.exit_code == 1 and "content.claim.sha256: not the claim registered at authorise" in result.output


def test_a_rewritten_retained_work_file_is_caught_by_the_settlement(attempt, tmp_path, project):
    def rewrite(c):
        text = json.dumps({"day": 6, "files": {"retained/notes.txt": "day 6: I always knew the future\n"}})
        (tmp_path / "r" / "retained.json").write_text(text)
        c["outputs"]["retained"]["sha256"] = sha256_hex(text.encode())

    shutil.copytree(attempt, tmp_path / "r")
    record = json.loads((tmp_path / "r" / "record.json").read_text())
    rewrite(record["content"])
    record["content_sha256"] = content_sha256(record["content"])
    (tmp_path / "r" / "record.json").write_text(pretty_json(record))
    verify_attempt(str(tmp_path / "r" / "record.json"))  # self-consistent
    result = _verify(tmp_path / "r" / "record.json", project)
    assert result.exit_code == 1 and "not this one (rewritten after it was settled)" in result.output, result.output


def test_a_paid_record_without_its_project_ledger_is_not_called_verified(attempt, tmp_path, monkeypatch):
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(tmp_path / "elsewhere"))
    dst = tmp_path / "attempts" / "a"
    shutil.copytree(attempt, dst)
    result = _verify(dst / "record.json")
    assert result.exit_code == 1 and "a paid attempt is verified against its project ledger" in result.output


def test_a_consumed_claim_does_not_run_again_in_a_new_project_folder(tmp_path, state, project):
    """Held back: delete the local consumed marker, point --project at a new folder, and the claim ran again."""
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
    assert runner.invoke(cli, args + ["--out", str(tmp_path / "a")]).exit_code == 0
    consumed = os.path.join(state, "consumed")
    for name in os.listdir(consumed):
        os.remove(os.path.join(consumed, name))  # same-user tampering
    result = runner.invoke(cli, args + ["--out", str(tmp_path / "b"), "--project", str(tmp_path / "fresh")])
    assert result.exit_code == 1 and "was not authorised in this project" in result.output, result.output
    assert not os.path.exists(tmp_path / "b") and not os.path.exists(tmp_path / "b.partial")
    assert os.listdir(consumed) == []


def test_an_edited_claim_file_is_refused_by_its_registered_sha256(tmp_path, state, project):
    """The claim's sha256 is registered in the project ledger at authorise: a claim whose registry copy was also
    rewritten (same-user tampering) still differs from the project's."""
    from launchers._claims import read_claim

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
    doc = read_claim(str(claim))
    doc["claim"]["cap_tokens"] = 30_000_000
    doc["sha256"] = content_sha256(doc["claim"])
    claim.write_text(pretty_json(doc))
    issued = os.path.join(state, "issued", doc["claim"]["id"] + ".json")
    with open(issued, "w") as fh:
        json.dump(doc, fh)
    result = runner.invoke(
        cli, ["execute", "--claim", str(claim), "--family", "FUND_01", "--seed", "1", "--out", str(tmp_path / "a")]
    )
    assert result.exit_code == 1 and "its sha256 is not the one registered at authorise" in result.output
    assert not os.path.exists(os.path.join(state, "consumed"))


def test_the_published_tables_bind_paid_attempts_to_the_project_ledger(attempt, project):
    """`export` (and `make verify`'s `export --check`) reads the attempts beside a project ledger as settled there;
    an attempt from elsewhere that is no paid one (the mock attempt's throwaway claim) is read as self-consistent."""
    from launchers._export import records_in

    shutil.copytree(attempt, Path(project) / "a")
    shutil.copytree(
        os.path.join(os.path.dirname(__file__), "..", "..", "runs", "attempts", "mock-FUND_01-seed-1"),
        Path(project) / "mock",
    )
    assert [r["content"]["label"] for r, _ in records_in(project)] == ["mock", "model"]
    retained = Path(project) / "a" / "retained.json"
    record = json.loads((Path(project) / "a" / "record.json").read_text())
    retained.write_text(retained.read_text().replace("day", "Day", 1))
    record["content"]["outputs"]["retained"]["sha256"] = sha256_hex(retained.read_bytes())
    record["content_sha256"] = content_sha256(record["content"])
    (Path(project) / "a" / "record.json").write_text(pretty_json(record))
    with pytest.raises(InputError, match="not this one \\(rewritten after it was settled\\)"):
        records_in(project)


def test_a_host_that_died_writing_the_start_leaves_nothing_spent(tmp_path, state):
    folder = tmp_path / "a.partial"
    folder.mkdir()
    (folder / "journal.jsonl").write_text('{"kind": "start", "at": "2026-')  # torn: no whole line
    (folder / "desk.sqlite").write_bytes(b"")
    result = CliRunner().invoke(cli, ["recover", str(folder), "--out", str(tmp_path / "a")])
    assert result.exit_code == 1 and "nothing was spent and the claim was not consumed" in result.output
    assert not folder.exists()
