"""The decision cache's canonical export (cache.jsonl), replay and re-derivation from it, and the CPU time the
local sampler charges: scripted answers at the sampler seam (no model), forged and hostile files refused."""

import json
import os
import pathlib
import shutil

import pytest
from click.testing import CliRunner

from engine import canonical_json, pretty_json, sha256_hex, content_sha256
from fundbook.cli.launch import cli
from launchers._errors import InputError
from launchers._rederive import rederive
from launchers._sampler_cache import CacheSampler, read_export
from launchers._verify import verify_attempt

from .test_hostile import forge
from .test_llama_prompt import Scripted, _do_nothing, COMPACT


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A compact-prompt attempt whose every call went through an in-memory decision cache (made once)."""
    from tests.launchers.specs import execute_kw as execute
    from launchers._claims import Grant, authorise
    from launchers._controller import Limits
    from launchers._prices import load_prices
    from launchers._sandbox_local import LocalSandbox

    root = tmp_path_factory.mktemp("cache")
    state, claim = str(root / "state"), str(root / "claim.json")
    authorise(
        claim,
        "FUND_02",
        "public-practice",
        "scripted",
        0,
        10**8,
        1,
        grant=Grant(state=state, local=True, project=str(root / "project")),
    )
    record = execute(
        claim_path=claim,
        out=str(root / "attempt"),
        family="FUND_02",
        seed=1,
        split="public-practice",
        model="scripted",
        sampler_name="llama-cpp",
        sandbox_name="local",
        make_sampler=lambda m: CacheSampler(None, m, inner=Scripted(_do_nothing)),
        make_sandbox=LocalSandbox,
        prices=load_prices(),
        limits=Limits(),
        horizon=6,
        state=state,
        project=str(root / "project"),
        sampling=dict(COMPACT),
    )
    return record, str(root / "attempt")


def test_an_attempt_exports_the_answers_it_used_and_replays_from_its_own_folder(recorded, tmp_path, state):
    record, out = recorded
    c = record["content"]
    path = os.path.join(out, "cache.jsonl")
    data = pathlib.Path(path).read_bytes()
    assert c["outputs"]["cache"] == {"path": "cache.jsonl", "sha256": sha256_hex(data)}
    lines = data.splitlines()
    assert len(lines) == c["cost"]["calls"] == 6
    rows = [json.loads(line) for line in lines]
    assert [canonical_json(r) for r in rows] == lines  # canonical JSON, a line each
    assert [(r["cache_key"], json.dumps(r["sampling"], sort_keys=True)) for r in rows] == sorted(
        (r["cache_key"], json.dumps(r["sampling"], sort_keys=True)) for r in rows
    )
    assert all(r["sampling"] == COMPACT for r in rows)
    # `--replay-of DIR` reads DIR/cache.jsonl by default: every call a hit, nothing spent, the same receipts head
    from launchers._claims import Grant, authorise

    claim = str(tmp_path / "replay-claim.json")
    authorise(
        claim,
        "FUND_02",
        "public-practice",
        "scripted",
        0,
        10**8,
        1,
        grant=Grant(state=state, local=True, project=str(tmp_path / "project")),
    )
    result = CliRunner().invoke(
        cli,
        [
            "execute",
            "--claim",
            claim,
            "--out",
            str(tmp_path / "replay"),
            "--sampler",
            "cache",
            "--replay-of",
            out,
            "--state",
            state,
            "--project",
            str(tmp_path / "project"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "6/6 calls from the cache, 0 micro-USD; receipts head matches" in result.output
    assert rederive(os.path.join(out, "record.json"))["answers"] == 6


def test_a_forged_answer_in_the_cache_does_not_rederive(recorded, tmp_path):
    _, out = recorded
    lines = pathlib.Path(out, "cache.jsonl").read_bytes().splitlines()
    row = json.loads(lines[0])
    row["text"] = row["text"] + " "  # the same batch (the worker strips the answer), other bytes
    forged_lines = b"".join(canonical_json(json.loads(x)) + b"\n" for x in [canonical_json(row)] + lines[1:])

    def reseal(c):
        c["outputs"]["cache"]["sha256"] = sha256_hex(forged_lines)

    dst = tmp_path / "forged"
    shutil.copytree(out, dst)
    (dst / "cache.jsonl").write_bytes(forged_lines)
    with pytest.raises(InputError, match="outputs.cache.sha256: cache.jsonl does not match"):
        verify_attempt(str(dst / "record.json"))
    record = json.loads((dst / "record.json").read_text())
    reseal(record["content"])
    record["content_sha256"] = content_sha256(record["content"])
    (dst / "record.json").write_text(pretty_json(record))
    verify_attempt(str(dst / "record.json"))  # consistent hashes: only replaying the answers finds the forgery
    with pytest.raises(InputError, match="model answer .* differs"):
        rederive(str(dst / "record.json"))


def _line(**change):
    row = {
        "cache_hit_tokens": 0,
        "cache_key": "k" * 64,
        "model": "m",
        "sampling": {"seed": 0},
        "stop_reason": "stop",
        "text": "{}",
        "tokens_in": 1,
        "tokens_out": 1,
    }
    row.update(change)
    return canonical_json(row) + b"\n"


@pytest.mark.parametrize(
    "data, message",
    [
        (b'{"cache_key": 1}\n', "expected an object with exactly"),
        (_line().replace(b",", b", ", 1), "not the canonical JSON an export writes"),
        (_line() + _line(), "a second answer for request kkkkkkkkkkkk under the same settings"),
        (_line(tokens_in=-1), "tokens_in: expected a non-negative integer"),
        (
            _line().replace(b'"tokens_out":1', b'"tokens_out":1152921504606846976'),
            "tokens_out: expected a non-negative",
        ),
        (_line(text=5), "text: expected a string"),
        (_line(sampling=[]), "sampling: expected an object"),
        (_line().replace(b'"seed":0', b'"seed":NaN'), "not canonical JSON"),
        (_line().replace(b'"seed":0', b'"seed":0.5'), "not canonical JSON"),
        (b"\xff\xfe\n", "not a JSON object in UTF-8"),
        (b"[" * 10000 + b"]" * 10000 + b"\n", "not a JSON object in UTF-8"),
    ],
)
def test_a_hostile_export_is_refused_in_one_line(tmp_path, data, message):
    path = tmp_path / "cache.jsonl"
    path.write_bytes(data)
    with pytest.raises(InputError, match=message) as err:
        read_export(str(path))
    assert str(path) in err.value.format_message() and "\n" not in err.value.format_message()


def test_an_export_that_is_not_a_regular_file_or_is_written_to_is_refused(tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_export(str(fifo))
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(InputError, match="not a regular file"):
        read_export(str(tmp_path / "dir.jsonl"))
    with pytest.raises(InputError, match="read-only"):
        CacheSampler(str(tmp_path / "new.jsonl"), "m", inner=Scripted(_do_nothing))


def test_cpu_time_is_charged_with_each_call_and_a_forged_figure_is_found(recorded, tmp_path):
    record, out = recorded
    c = record["content"]
    charges = [e for e in c["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"]
    assert [e["cpu_ms"] for e in charges] == [7] * 6 and c["cost"]["cpu_ms"] == 42
    with open(os.path.join(out, "transcript.json")) as fh:
        assert [s["call"]["cpu_ms"] for s in json.load(fh)["steps"] if s["role"] == "model"] == [7] * 6

    def cost(c):
        c["cost"]["cpu_ms"] = 1

    with pytest.raises(InputError, match="content.cost.cpu_ms: the record says 1, the ledger says 42"):
        verify_attempt(str(forge(pathlib.Path(out), tmp_path / "a", edit=cost)))

    def ledger(bodies):
        next(b for b in bodies if b["kind"] == "charge")["cpu_ms"] = 1

    def totals(c):
        c["ledger"]["totals"]["cpu_ms"] = 36
        c["cost"]["cpu_ms"] = 36

    with pytest.raises(InputError, match="model call 1: .* is not the ledger's charge"):
        verify_attempt(str(forge(pathlib.Path(out), tmp_path / "b", edit=totals, ledger_edit=ledger)))

    def on_a_reservation(bodies):
        bodies[0]["cpu_ms"] = 5

    with pytest.raises(InputError, match="ledger.jsonl: line 1: not what the record's prices"):
        verify_attempt(str(forge(pathlib.Path(out), tmp_path / "c", ledger_edit=on_a_reservation)))


def _stopped_at_the_first_call(root):
    """A local-model attempt the operator stopped (Ctrl-C) while its first call was evaluating: no answer."""
    from tests.launchers.specs import execute_kw as execute
    from launchers._claims import Grant, authorise
    from launchers._controller import Limits
    from launchers._prices import load_prices
    from launchers._sandbox_local import LocalSandbox

    class Stopped(Scripted):
        def sample(self, prepared, deadline_s):
            raise KeyboardInterrupt()

    state, claim = str(root / "state"), str(root / "claim.json")
    authorise(
        claim,
        "FUND_02",
        "public-practice",
        "scripted",
        0,
        10**8,
        1,
        grant=Grant(state=state, local=True, project=str(root / "project")),
    )
    record = execute(
        claim_path=claim,
        out=str(root / "stopped"),
        family="FUND_02",
        seed=1,
        split="public-practice",
        model="scripted",
        sampler_name="llama-cpp",
        sandbox_name="local",
        make_sampler=lambda m: CacheSampler(None, m, inner=Stopped(_do_nothing)),
        make_sandbox=LocalSandbox,
        prices=load_prices(),
        limits=Limits(),
        horizon=6,
        state=state,
        project=str(root / "project"),
        sampling=dict(COMPACT),
    )
    return record, root / "stopped"


def test_an_attempt_stopped_before_its_first_answer_rederives_with_none(tmp_path):
    record, out = _stopped_at_the_first_call(tmp_path)
    assert record["content"]["termination"]["status"] == "operator"
    assert (out / "cache.jsonl").read_bytes() == b"" and read_export(out / "cache.jsonl") == []
    done = rederive(str(out / "record.json"))
    assert (done["answers"], done["status"], done.get("nothing")) == (0, "operator", None)
    from launchers._export import call_rows  # the call it never saw answered is still a row of calls.parquet

    rows = call_rows(record, json.loads((out / "transcript.json").read_text()))
    assert [(r["call"], r["outcome"], r["tokens_in"]) for r in rows] == [(1, "unresolved", None)]


def test_a_recovered_attempt_without_answers_has_nothing_to_rederive_and_a_forged_one_is_refused(tmp_path):
    """`recover` writes no cache.jsonl (the host's in-memory store died with it). With no answered call and no
    accepted batch there is nothing a model said to replay; a record that claims an answered call (or an
    accepted batch) without its cache cannot be re-derived and is refused."""
    _, out = _stopped_at_the_first_call(tmp_path)

    def recovered(c, accepted=False):
        c["termination"] = {
            "status": "incomplete_execution",
            "limit": "infrastructure",
            "worker_exit_code": None,
            "reason": "the host controller stopped mid-attempt",
        }
        c["outputs"].pop("cache")
        if accepted:  # its one call said answered (an answer nothing could replay)
            c["cost"]["unresolved_calls"] = []

    forge(out, tmp_path / "recovered", edit=recovered)
    os.remove(tmp_path / "recovered" / "cache.jsonl")
    done = rederive(str(tmp_path / "recovered" / "record.json"))
    assert (done["answers"], done["nothing"]) == (0, True)
    forge(out, tmp_path / "claims-a-batch", edit=lambda c: recovered(c, accepted=True))
    os.remove(tmp_path / "claims-a-batch" / "cache.jsonl")
    with pytest.raises(InputError, match=r"unresolved_calls: the record says \[\], the ledger says \[1\]"):
        rederive(str(tmp_path / "claims-a-batch" / "record.json"))  # its ledger shows the call was never answered
    completed = tmp_path / "completed-without-cache"
    forge(out, completed, edit=lambda c: c["outputs"].pop("cache"))
    os.remove(completed / "cache.jsonl")
    with pytest.raises(InputError, match="no cache.jsonl, so the attempt cannot be re-derived"):
        rederive(str(completed / "record.json"))  # not a recovered attempt: its answers are owed
