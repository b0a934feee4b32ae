"""Sweeps: rows, resume, executors (local pool, Modal with only the remote call
replaced) giving byte-identical files, host arms, and the sampled Pyodide re-execution."""

import json
import os
import shutil

import modal
import pytest
from modal._serialization import deserialize, serialize

import engine
from experiments import executors, observations as obs
from experiments.arms import parse_arms
from experiments.errors import ExperimentError
from experiments.sweep import Running, plan_rows, practice_plan, run_sweep

from .conftest import BASELINES, pyodide_test

PLAN = practice_plan(["FUND_01", "FUND_04"], [1, 2, 3])


def sweep(out, bundle_dir, arms=BASELINES, plan=PLAN, **kw):
    kw.setdefault("sample_size", 0)
    kw.setdefault("progress", False)
    running = Running(**{k: kw.pop(k) for k in list(kw) if k in Running.__dataclass_fields__})
    return run_sweep(str(out), plan, plan_rows(plan), parse_arms(arms), bundle_dir, running=running, **kw)


def files(out):
    return {n: (out / n).read_bytes() for n in ("items.jsonl", obs.JSONL, obs.PARQUET)}


@pyodide_test
def test_rows_are_complete_ordered_and_integer(tmp_path, bundle_dir):
    doc = sweep(tmp_path / "s", bundle_dir)
    rows = obs.read_jsonl(tmp_path / "s" / obs.JSONL)
    assert doc["counts"] == {"items": 6, "measured": 6, "arms": 3, "rows": len(rows)}
    assert {r["evaluator_id"] for r in rows} == {doc["evaluator_id"]}
    assert [r["item_id"] for r in rows[:: len(rows) // 6]] == [
        "FUND_01/seed-1",
        "FUND_04/seed-1",
        "FUND_01/seed-2",
        "FUND_04/seed-2",
        "FUND_01/seed-3",
        "FUND_04/seed-3",
    ]
    assert all(r["value"] is None or type(r["value"]) is int for r in rows)
    assert doc["execution"]["pyodide_sample"]["identical"] is None
    manifest = [json.loads(x) for x in (tmp_path / "s" / "items.jsonl").read_text().splitlines()]
    assert manifest[0]["fixture_sha256"] == engine.fixture_sha256(engine.generate("FUND_01", 1))
    for name, sha in doc["files"].items():
        assert engine.sha256_hex((tmp_path / "s" / name).read_bytes()) == sha
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "s" / obs.PARQUET).to_pylist() == rows


@pyodide_test
def test_one_worker_two_workers_and_modal_write_the_same_bytes(tmp_path, bundle_dir, monkeypatch):
    sweep(tmp_path / "one", bundle_dir, workers=1)
    sweep(tmp_path / "two", bundle_dir, workers=2)
    calls = []

    def local_remote_map(app, function, chunks):
        """Only the remote call is replaced: the real App and Function, inputs and outputs through
        modal's own serializer, the function body run by Function.local."""
        assert isinstance(app, modal.App) and isinstance(function, modal.Function)
        assert function._spec_.cpu == executors.MODAL_CPU and function._spec_.memory == executors.MODAL_MEMORY_MIB
        for chunk in chunks:
            calls.append(len(chunk))
            out = function.local(deserialize(serialize(chunk), None))
            yield deserialize(serialize(out), None)

    monkeypatch.setattr(executors, "remote_map", local_remote_map)
    doc = sweep(tmp_path / "modal", bundle_dir, executor="modal")
    assert calls == [6] and doc["execution"]["executor"] == "modal"
    assert files(tmp_path / "one") == files(tmp_path / "two") == files(tmp_path / "modal")


@pyodide_test
def test_a_modal_container_with_other_engine_sources_is_refused(tmp_path, bundle_dir, monkeypatch):
    def drifted(app, function, chunks):
        for chunk in chunks:
            out = function.local(chunk)
            out["sources"]["engine/_grade.py"] = "0" * 64
            yield out

    monkeypatch.setattr(executors, "remote_map", drifted)
    with pytest.raises(ExperimentError, match="container's engine sources differ .* engine/_grade.py"):
        sweep(tmp_path / "m", bundle_dir, executor="modal")
    assert not os.path.exists(tmp_path / "m" / obs.JSONL)


@pyodide_test
def test_resume_skips_what_was_journalled_under_the_same_evaluator(tmp_path, bundle_dir, monkeypatch):
    full = sweep(tmp_path / "ref", bundle_dir)
    out = tmp_path / "resume"
    real = executors.host_run
    seen = []

    def interrupted(task):
        if len(seen) == 2:
            raise KeyboardInterrupt  # the operator stops the sweep after two worlds
        seen.append(task["row"]["item_id"])
        return real(task)

    monkeypatch.setattr(executors, "host_run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sweep(out, bundle_dir)
    partial = obs.Partial(out / obs.PARTIAL)
    partial.append("FUND_01/seed-3", [["baseline:reference", 0, "score", 1]], "another-evaluator")
    with open(out / obs.PARTIAL, "ab") as fh:
        fh.write(b'{"item_id": "FUND_04/seed-3", "evalu')  # torn by the interrupt
    done, seen = seen[:], []
    monkeypatch.setattr(executors, "host_run", lambda task: seen.append(task["row"]["item_id"]) or real(task))
    doc = sweep(out, bundle_dir)
    rechecked = doc["volatile"]["resume_rechecked"]
    assert sorted(rechecked) == sorted(done)  # what it reused, recomputed on host and compared first
    assert sorted(i for i in seen if i not in rechecked) == sorted(
        {"FUND_01/seed-1", "FUND_04/seed-1", "FUND_01/seed-2", "FUND_04/seed-2", "FUND_01/seed-3", "FUND_04/seed-3"}
        - set(done)
    )
    assert doc["volatile"]["items_computed"] == 4 and doc["evaluator_id"] == full["evaluator_id"]
    assert files(out) == files(tmp_path / "ref") and not os.path.exists(out / obs.PARTIAL)
    arms_run = []
    monkeypatch.setattr(
        executors, "host_run", lambda task: arms_run.append([a["name"] for a in task["arms"]]) or real(task)
    )
    sweep(out, bundle_dir, arms=BASELINES + ["gold"])  # a new arm: only it is computed, the rest read back
    assert [a for a in arms_run if a == ["gold"]] == [["gold"]] * 6
    with pytest.raises(ExperimentError, match="give every arm again"):
        sweep(out, bundle_dir, arms=BASELINES)


@pyodide_test
def test_host_arms_files_attempts_and_the_mock_worker(tmp_path, bundle_dir):
    plan = practice_plan(["FUND_01"], [1, 2])
    cands = tmp_path / "cands" / "FUND_01"
    cands.mkdir(parents=True)
    instance = engine.generate("FUND_01", 1)
    (cands / "seed-1.json").write_text(json.dumps(engine.gold_candidate(instance)))
    attempts = str(tmp_path / "attempts")  # the committed mock attempt alone (runs/attempts also holds model attempts)
    shutil.copytree(
        os.path.join(os.path.dirname(__file__), "..", "..", "runs", "attempts", "mock-FUND_01-seed-1"),
        os.path.join(attempts, "mock-FUND_01-seed-1"),
    )
    doc = sweep(
        tmp_path / "s",
        bundle_dir,
        plan=plan,
        sample_size=2,
        arms=["mine=files:" + str(tmp_path / "cands"), "attempts:" + attempts, "mock-worker"],
    )
    rows = obs.read_jsonl(tmp_path / "s" / obs.JSONL)
    score = {(r["item_id"], r["arm"]): r["value"] for r in rows if r["metric"] == "score"}
    assert score[("FUND_01/seed-1", "mine")] == 100 and score[("FUND_01/seed-2", "mine")] == 0
    assert score[("FUND_01/seed-1", "attempts:attempts")] == 100  # the committed mock attempt, graded afresh
    assert score[("FUND_01/seed-2", "attempts:attempts")] == 0  # no attempt for this world: a MISSING row
    assert score[("FUND_01/seed-1", "mock-worker")] == 100
    inputs = json.loads((tmp_path / "s" / "inputs.json").read_text())
    assert inputs["mine"]["FUND_01/seed-2"] is None and len(inputs["mine"]["FUND_01/seed-1"]) == 64
    assert doc["execution"]["pyodide_sample"]["identical"] is True
    assert doc["volatile"]["usage"]["mock-worker"]["FUND_01/seed-1"]["tokens_in"] > 0


@pyodide_test
def test_a_pyodide_divergence_stops_the_sweep_naming_the_row(tmp_path, bundle_dir, monkeypatch):
    from experiments import pyodide as pyo

    real = pyo.run_in_pyodide

    def diverging(bundle, tasks):
        out = real(bundle, tasks)
        out["results"][0]["values"][2][3] += 1
        return out

    monkeypatch.setattr(pyo, "run_in_pyodide", diverging)
    with pytest.raises(ExperimentError) as err:
        sweep(tmp_path / "s", bundle_dir, sample_size=1, sample_seed=5)
    assert "differs from host CPython at row 2" in err.value.message
    assert not os.path.exists(tmp_path / "s" / obs.JSONL) and os.path.exists(tmp_path / "s" / obs.PARTIAL)


def test_the_sample_is_seeded_and_reproducible():
    from experiments.pyodide import select_sample

    ids = [f"FUND_01/seed-{i}" for i in range(1, 101)]
    a = select_sample(ids, 8, 7)
    assert a == select_sample(ids, 8, 7) and len(set(a)) == 8 and a != select_sample(ids, 8, 8)
    assert a == sorted(a, key=ids.index)


def test_unreadable_candidate_files_are_graded_malformed(tmp_path):
    from experiments.executors import host_prepare
    from experiments import work

    (tmp_path / "FUND_02").mkdir()
    (tmp_path / "FUND_02" / "seed-4.json").write_bytes(b"\xff\xfe not json")
    arm = parse_arms([f"x=files:{tmp_path}"])[0]
    row = plan_rows(practice_plan(["FUND_02"], [4]))[0]
    prepared = host_prepare(
        {
            "row": row,
            "item": {"kind": "family", "family": "FUND_02", "seed": 4},
            "fixture_sha256": row["fixture_sha256"],
            "arms": [arm],
        }
    )
    values = work.run_task(prepared["graded"])["values"]
    assert ["x", 0, "scored", 0] in values and ["x", 0, "funding_cost", None] in values
    assert len(prepared["inputs"]["x"]["sha256"]) == 64


@pytest.mark.parametrize(
    "arms,needle",
    [
        (["baseline:best"], "expected baseline:<"),
        (["mutation:M99"], "expected mutation:<one of"),
        (["files:/no/such/dir"], "is not a folder"),
        (["gold", "gold"], "given twice"),
        ([], "at least one arm"),
        (["bad name=gold"], "an arm name is"),
        (["telepathy"], "expected baseline:<policy>"),
    ],
)
def test_arm_errors(arms, needle):
    with pytest.raises(ExperimentError, match=needle):
        parse_arms(arms)


@pyodide_test
def test_a_modal_failure_is_one_line_and_the_sweep_resumes(tmp_path, bundle_dir, monkeypatch):

    def failing(app, function, chunks):
        yield function.local(chunks[0][:3])
        raise ConnectionError("lost the container\nmore detail")

    monkeypatch.setattr(executors, "remote_map", failing)
    with pytest.raises(ExperimentError) as err:
        sweep(tmp_path / "m", bundle_dir, executor="modal")
    assert err.value.message.startswith("modal: the sweep stopped (ConnectionError: lost the container)")
    assert len((tmp_path / "m" / obs.PARTIAL).read_text().splitlines()) == 3
    seen = []
    real = executors.host_run
    monkeypatch.setattr(executors, "host_run", lambda task: seen.append(task["row"]["item_id"]) or real(task))
    doc = sweep(tmp_path / "m", bundle_dir)  # resumed locally: only the three items Modal never returned
    rechecked = doc["volatile"]["resume_rechecked"]
    assert len(rechecked) == 3 and len([i for i in seen if i not in rechecked]) == 3


@pyodide_test
def test_an_engine_exception_stops_the_sweep_naming_item_and_arm(tmp_path, bundle_dir, monkeypatch):
    def broken(name, instance, gold=None):
        raise KeyError("quotes")

    monkeypatch.setattr(engine, "mutate", broken)
    with pytest.raises(ExperimentError) as err:
        sweep(tmp_path / "s", bundle_dir, arms=["mutation:M1_stale_quote"])
    assert err.value.message.startswith(
        "sweep stopped: item FUND_01/seed-1, arm M1_stale_quote: the engine raised KeyError: 'quotes'"
    )
