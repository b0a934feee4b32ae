"""The held-back findings of the hostile suite that was run against main (issue 18, point 7),
each fixed and each pinned here by a test that fails on the code before the fix: a spec frozen
after its sweep, a resumed sweep signing an edited row, `files:` and `attempts:` arms trusting what
`grade` and `verify` refuse, tracebacks and hangs on hostile files, the Parquet read that aborted
at exit, the commitment's unhashed fields and held-out seeds in a practice sweep, and the
evidence size and row limits."""

import json
import os

import pytest

import engine
from experiments import compare as cmp, heldout
from experiments.errors import ExperimentError

from .conftest import invoke, one_line_error, pyodide_test, write_spec
from .test_compare import copy_study, edit_json

ARMS = ["--arm", "baseline:reference", "--arm", "baseline:shortest-cheapest"]


def sweep(out, bundle_dir, *extra, seeds="1..2"):
    return invoke(
        "sweep",
        "--out",
        out,
        "--family",
        "FUND_01",
        "--seeds",
        seeds,
        *ARMS,
        "--bundle",
        bundle_dir,
        "--pyodide-sample",
        0,
        "--no-progress",
        *extra,
    )


def study_spec(directory, **over):
    return write_spec(directory, **{"items": {"split": "practice", "families": ["FUND_01"], "seeds": "1..2"}, **over})


def test_a_spec_frozen_after_its_sweep_cannot_use_it(tmp_path, bundle_dir):
    out, cmp_dir = tmp_path / "sweep", tmp_path / "cmp"
    assert sweep(out, bundle_dir)[0] == 0  # 1. sweep first
    study_spec(cmp_dir)
    assert invoke("compare", cmp_dir, "--freeze")[0] == 0  # 2. freeze afterwards
    manifest = (out / "sweep.json").read_bytes()
    code, _, err = sweep(out, bundle_dir, "--comparison", cmp_dir)  # 3. re-run "serving" it: every row reused
    assert code == 1 and "a spec frozen after any of its rows existed cannot use them" in one_line_error(err)
    assert (out / "sweep.json").read_bytes() == manifest  # nothing recorded as "frozen before it ran"
    code, _, err = invoke("compare", cmp_dir, "--sweep", out)
    assert code == 1 and "does not record spec" in one_line_error(err)


def test_a_resumed_sweep_refuses_an_edited_observation_instead_of_signing_it(tmp_path, bundle_dir):
    out = tmp_path / "sweep"
    assert sweep(out, bundle_dir)[0] == 0
    path = out / "observations.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    target = next(r for r in rows if r["arm"] == "baseline:shortest-cheapest" and r["metric"] == "score")
    target["value"] = 100 if target["value"] != 100 else 99  # a hand edit (the finding: 49 -> 100)
    path.write_text("".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in rows))
    edited, manifest = path.read_bytes(), (out / "sweep.json").read_bytes()
    code, _, err = sweep(out, bundle_dir)
    assert code == 1 and "edited after they were written; refusing to reuse them" in one_line_error(err)
    assert path.read_bytes() == edited and (out / "sweep.json").read_bytes() == manifest  # not re-signed


def _gold_text(family, seed):
    return json.dumps(engine.gold_candidate(engine.generate(family, seed)))


def test_a_files_arm_reads_candidates_exactly_as_grade_does(tmp_path, bundle_dir):
    root = tmp_path / "cands" / "FUND_01"
    root.mkdir(parents=True)
    gold = _gold_text("FUND_01", 1)
    hostile = {
        1: '{"format": 1, ' + gold[1:],  # a duplicate name
        2: gold.replace('"batches"', '"label": "\\ud800", "batches"', 1),  # a lone surrogate
        3: "[" * 100_000 + "]" * 100_000,
    }  # was a RecursionError traceback
    from fundbook.cli._common import read_json  # the reader `fundbook grade` uses

    for seed, text in hostile.items():
        (root / f"seed-{seed}.json").write_text(text)
        with pytest.raises(engine.InputError):
            read_json(root / f"seed-{seed}.json", "a candidate")  # `fundbook grade` refuses each one
    out = tmp_path / "sweep"
    code, _, err = invoke(
        "sweep",
        "--out",
        out,
        "--family",
        "FUND_01",
        "--seeds",
        "1..3",
        "--arm",
        f"mine=files:{tmp_path / 'cands'}",
        "--bundle",
        bundle_dir,
        "--pyodide-sample",
        0,
        "--no-progress",
    )
    assert code == 0, err
    score = {
        r["item_id"]: r["value"]
        for r in map(json.loads, (out / "observations.jsonl").read_text().splitlines())
        if r["metric"] == "score"
    }
    assert score == {"FUND_01/seed-1": 0, "FUND_01/seed-2": 0, "FUND_01/seed-3": 0}  # MALFORMED rows, not 100


def test_an_attempts_arm_counts_only_verified_records(tmp_path, bundle_dir):
    instance = engine.generate("FUND_01", 1)
    folder = tmp_path / "attempts" / "forged"
    folder.mkdir(parents=True)
    task = {
        "instance_id": "FUND_01/seed-1",
        "family": "FUND_01",
        "seed": 1,
        "horizon": 20,
        "split": "public-practice",
        "fixture_sha256": engine.fixture_sha256(instance),
    }
    proposals = [{"outcome": "accepted", "batch": b} for b in engine.gold_candidate(instance)["batches"]]
    record = {"schema": "fundbook.attempt/1", "content": {"task": task, "proposals": proposals}}
    (folder / "record.json").write_text(json.dumps(record))  # hand-written, never verified
    args = (
        "sweep",
        "--out",
        tmp_path / "s",
        "--family",
        "FUND_01",
        "--seeds",
        "1",
        "--arm",
        f"attempts:{tmp_path / 'attempts'}",
        "--bundle",
        bundle_dir,
        "--pyodide-sample",
        0,
        "--no-progress",
    )
    code, _, err = invoke(*args)
    assert code == 1 and "is not a verified attempt" in one_line_error(err)
    record["content"]["task"] = {}  # was a KeyError traceback
    (folder / "record.json").write_text(json.dumps(record))
    code, _, err = invoke(*args)
    assert code == 1 and "is not a verified attempt" in one_line_error(err)
    assert not (tmp_path / "s" / "observations.jsonl").exists()


@pyodide_test
@pytest.mark.timeout(60)
def test_fifos_are_refused_at_once_never_waited_on(practice_study, tmp_path):
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    os.mkfifo(spec_dir / "spec.json")
    code, _, err = invoke("compare", spec_dir, "--freeze")
    assert code == 1 and "spec.json: not a regular file" in one_line_error(err)
    os.mkfifo(tmp_path / "secret")
    code, _, err = invoke(
        "heldout", "commit", "--secret-file", tmp_path / "secret", "--count", 2, "--out", tmp_path / "c.json"
    )
    assert code == 1 and "64 lowercase hex" in one_line_error(err)  # a pipe nothing writes to reads as empty
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path / "a")
    os.remove(sweep_dir / "observations.parquet")
    os.mkfifo(sweep_dir / "observations.parquet")  # an evidence file
    code, _, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "observations.parquet: not a regular file" in one_line_error(err)
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path / "b")
    os.mkfifo(tmp_path / "b" / "study" / "elsewhere")  # an evidence path
    edit_json(
        cmp_dir / "evidence.json", lambda e: [f.update(path="../elsewhere") for f in e["files"] if f["kind"] == "items"]
    )
    code, _, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "elsewhere: not a regular file" in one_line_error(err)


def test_parquet_is_read_from_an_arrow_buffer_on_one_thread(monkeypatch, tmp_path):
    """The SIGABRT at exit (2 of 30 runs of `compare --verify`, and a bare read through io.BytesIO): Arrow's
    read-ahead threads, reading through a Python file object, still at work when the interpreter exits; then
    (issue 32, about 1 in 30 under load) the worker of Arrow's pool that pq.read_table's dataset scanner starts
    even with use_threads=False. The file is read from an Arrow buffer by ParquetFile.read, which starts no
    thread (counted in a fresh process; `make bench-exit` runs the command N times)."""
    import subprocess
    import sys
    import pyarrow as pa
    import pyarrow.parquet as pq
    from experiments import bench
    from experiments import observations as obs

    rows = [{"item_id": "W1", "arm": "a", "seed": 0, "metric": "score", "value": 7, "evaluator_id": "e"}]
    data = obs.parquet_bytes(rows)
    seen = []
    real = pq.ParquetFile

    def spy(source, *args, **kwargs):
        seen.append((type(source), kwargs.get("pre_buffer", True)))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", spy)
    monkeypatch.setattr(pq, "read_table", lambda *a, **k: pytest.fail("read_table starts a pool thread"))
    cmp._check_parquet(data, rows, "evidence")
    assert seen == [(pa.BufferReader, False)]
    path = tmp_path / "o.parquet"
    path.write_bytes(data)
    counts = subprocess.run(
        [sys.executable, "-c", bench._THREADS.format(path=str(path))], capture_output=True, text=True, check=True
    ).stdout.split()
    base, after_read_table, after_file = map(int, counts)
    assert after_file == base and after_read_table == base + 1


def test_the_commitment_s_unhashed_fields_and_practice_seeds(tmp_path, bundle_dir):
    doc = heldout.commit("ab" * 32, ["FUND_01"], 2)
    heldout.check_commitment_doc(doc, "c")
    for bad, field in (
        (dict(doc, seed_range=[1, 2**53 - 1]), "seed_range"),
        (dict(doc, scheme="sha1 of the list"), "scheme"),
    ):
        with pytest.raises(ExperimentError, match=field):
            heldout.check_commitment_doc(bad, "c")  # was accepted: the sha256 covers neither
    code, _, err = invoke(
        "sweep",
        "--out",
        tmp_path / "s",
        "--family",
        "FUND_01",
        "--seeds",
        str(2**32),
        "--arm",
        "baseline:do-nothing",
        "--bundle",
        bundle_dir,
        "--pyodide-sample",
        0,
        "--no-progress",
    )
    assert code == 1 and "practice seeds are at most 2^32-1" in one_line_error(err)


@pyodide_test
def test_evidence_files_have_size_and_row_limits(practice_study, tmp_path, monkeypatch):
    from experiments import observations as obs

    cmp_dir, _ = copy_study(practice_study, tmp_path)
    monkeypatch.setattr(cmp, "MAX_DOC_BYTES", 1000)
    code, _, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "more than the 1000-byte limit" in one_line_error(err)
    monkeypatch.setattr(cmp, "MAX_DOC_BYTES", 16 << 20)
    monkeypatch.setattr(obs, "MAX_OBSERVATION_ROWS", 10)
    code, _, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "lines is over the 10-line limit for an observations file" in one_line_error(err)


@pytest.mark.timeout(30)
def test_a_practitioners_arm_reads_its_records_as_strictly_as_the_other_arms(tmp_path):
    """The merged practitioners: arm read a record's files with open() and json.loads: a FIFO as its
    receipts file hung the sweep, a record nested 100,000 deep was a RecursionError traceback and a
    duplicate name was taken silently (the held-back findings again, in the newest arm)."""
    from experiments.arm_practitioners import RECORD_SCHEMA, PractitionerIndex

    folder = tmp_path / "p" / "one"
    folder.mkdir(parents=True)
    outputs = {k: {"path": f"{k}.json", "sha256": "0" * 64} for k in ("receipts", "submission")}
    content = {"kind": "practitioner-attempt", "outputs": outputs}
    record = {"schema": RECORD_SCHEMA, "content": content, "content_sha256": engine.content_sha256(content)}
    (folder / "record.json").write_text(json.dumps(record))
    os.mkfifo(folder / "receipts.json")  # was: open() waits for a writer
    with pytest.raises(ExperimentError, match=r"receipts\.json: not a regular file"):
        PractitionerIndex(tmp_path / "p")
    for text, said in (
        ("[" * 100_000 + "]" * 100_000, "nested deeper than"),  # was: RecursionError
        (json.dumps(record)[:-1] + ', "schema": "x"}', "duplicate name 'schema'"),
    ):
        (folder / "record.json").write_text(text)
        with pytest.raises(ExperimentError, match=said):
            PractitionerIndex(tmp_path / "p")


def test_the_command_line_leaves_with_its_code_and_its_output_once_arrow_is_loaded():
    """fundbook's entry point leaves without the interpreter's teardown once Arrow is loaded (fundbook/cli/
    _common.py leave): the exit code and every line of output survive, through a pipe too."""
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    fundbook = os.path.join(os.path.dirname(sys.executable), "fundbook")
    ok = subprocess.run(
        [fundbook, "compare", "runs/comparisons/reference-vs-shortest-cheapest-betting", "--verify"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (ok.returncode, ok.stderr) == (0, "")
    assert ok.stdout.splitlines()[-1] == "  verified: the decision recomputes from the evidence files and their sha256"
    bad = subprocess.run(
        [fundbook, "compare", "runs/comparisons/no-such", "--verify"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and bad.stderr.startswith("error: runs/comparisons/no-such/evidence.json: ")
