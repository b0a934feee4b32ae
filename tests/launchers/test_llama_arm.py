"""The model arm in a sweep (experiments/arm_model.py), with scripted answers at the sampler seam in place of
the model: one recorded attempt per item, the same observation rows and evaluator id as every other arm, read
back on resume, produced one item at a time, and the intervention policy applied."""

import json
import os
import shutil

import pytest

from launchers import Given

from experiments import arm_model, items as items_mod
from experiments.arms import parse_arms
from experiments.errors import ExperimentError
from experiments.sweep import Running, run_sweep
from launchers._sampler_cache import CacheSampler

from .conftest import REPO
from .test_llama_prompt import COMPACT, Scripted, _do_nothing

BUNDLE = os.path.join(REPO, "build", "engine")
ROWS = [
    {"kind": "family", "family": "FUND_02", "seed": 1, "horizon": 6},
    {"kind": "family", "family": "FUND_01", "seed": 16, "horizon": 2},
]


class FakeLocal(Scripted):
    provider = "llama-cpp"  # stands in for the local sampler at its seam: the launcher path is the real one


@pytest.fixture
def arm(tmp_path, monkeypatch):
    """`model:llama-cpp:F` whose factory answers like a desk that copies the no-action report (a do-nothing desk)."""
    made = []

    def factory(model_file):
        sampling = dict(COMPACT, model_sha256="0" * 64)

        def build(model):
            made.append(FakeLocal(_do_nothing))
            made[-1].sampling = dict(sampling)  # as the real provider's sampler records its settings
            return CacheSampler(None, model, inner=made[-1])

        return Given("llama-cpp", build, sampling, model_id="tiny-model")

    monkeypatch.setattr(arm_model, "_factory", factory)
    monkeypatch.setenv(arm_model.ATTEMPTS_ENV, str(tmp_path / "attempts"))
    return made


def _sweep(tmp_path, specs, **kw):
    rows = items_mod.manifest_rows(ROWS, items_mod.PRACTICE)
    plan = {"split": "practice", "families": ["FUND_01", "FUND_02"], "seeds": "1"}
    return run_sweep(
        str(tmp_path / "sweep"),
        plan,
        rows,
        parse_arms(specs),
        BUNDLE,
        running=Running(sample_size=0, progress=False),
        **kw,
    ), rows


def _rows(tmp_path):
    with open(tmp_path / "sweep" / "observations.jsonl") as fh:
        return [json.loads(line) for line in fh]


def test_the_model_arm_records_an_attempt_per_item_and_gives_the_rows_of_what_it_did(arm, tmp_path):
    doc, rows = _sweep(tmp_path, ["model:llama-cpp:/models/tiny.gguf", "baseline:do-nothing"])
    name = doc["arms"][0]["name"]
    assert name.startswith("model:tiny-model:") and doc["arms"][0]["config_hash"].startswith(name.rsplit(":")[-1])
    obs = _rows(tmp_path)
    assert {r["evaluator_id"] for r in obs} == {doc["evaluator_id"]}
    by_arm = {}
    for r in obs:
        by_arm.setdefault(r["arm"], []).append((r["item_id"], r["metric"], r["value"]))
    assert by_arm[name] == by_arm["baseline:do-nothing"]  # a desk that does nothing and reports truly: the baseline
    folders = sorted(os.listdir(tmp_path / "attempts"))  # the attempts alone: no claim or ledger of theirs published
    assert len(folders) == 2 and all(f.startswith("tiny-model-") for f in folders)
    usage = doc["volatile"]["usage"][name]
    assert [usage[r["item_id"]]["status"] for r in rows] == ["completed", "completed"]
    assert len(arm) == 2  # one attempt each, in the sweep's order
    # a new sweep folder over the same items: the recorded attempts are read back, never run again
    shutil.rmtree(tmp_path / "sweep")
    _sweep(tmp_path, ["model:llama-cpp:/models/tiny.gguf", "baseline:do-nothing"])
    assert len(arm) == 2 and _rows(tmp_path) == obs


def test_an_interrupted_attempt_is_kept_the_sweep_stops_and_the_item_is_tried_once_more_on_resume(
    arm, tmp_path, monkeypatch
):
    from launchers import _attempt

    real = _attempt.Controller.run
    calls = {"n": 0}

    def stop_first(self):
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt()  # Ctrl-C in the first attempt: its record ends `operator`
        return real(self)

    monkeypatch.setattr(_attempt.Controller, "run", stop_first)
    spec = parse_arms(["model:llama-cpp:/models/tiny.gguf"])[0]
    row = items_mod.manifest_rows(ROWS[:1], items_mod.PRACTICE)[0]
    first, second = arm_model.attempt_ids(spec, row)
    with pytest.raises(ExperimentError, match=rf"stopped by the operator \({first} is kept\): run the sweep again"):
        arm_model.attempt_for(spec, row)  # the stop stops the sweep: no second try in the stopped process
    assert sorted(os.listdir(tmp_path / "attempts")) == [first]
    record, path = arm_model.attempt_for(spec, row)  # the sweep run again: the kept attempt, then the next try
    with open(tmp_path / "attempts" / first / "record.json") as fh:
        assert json.load(fh)["content"]["termination"]["status"] == "operator"
    assert path.endswith(os.path.join(second, "record.json"))
    assert record["content"]["termination"]["status"] == "completed"


def test_an_attempt_recorded_under_another_configuration_or_edited_is_never_reused(arm, tmp_path):
    spec = parse_arms(["model:llama-cpp:/models/tiny.gguf"])[0]
    row = items_mod.manifest_rows(ROWS[1:], items_mod.PRACTICE)[0]
    _, path = arm_model.attempt_for(spec, row)
    other = dict(spec, config_hash="f" * 64)
    os.rename(os.path.dirname(path), os.path.join(tmp_path / "attempts", arm_model.attempt_ids(other, row)[0]))
    with pytest.raises(ExperimentError, match="recorded under another configuration"):
        arm_model.attempt_for(other, row)
    moved = os.path.join(tmp_path / "attempts", arm_model.attempt_ids(other, row)[0], "record.json")
    with open(moved) as fh:
        text = fh.read()
    with open(moved, "w") as fh:
        fh.write(text.replace('"settled_days": 2', '"settled_days": 1'))
    with pytest.raises(ExperimentError, match="does not verify"):
        arm_model.attempt_for(other, row)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("model:tinker:/m.gguf", "expected model:llama-cpp:<GGUF file>"),
        ("model:llama-cpp:", "expected model:llama-cpp:<GGUF file>"),
    ],
)
def test_a_malformed_model_arm_is_one_line(spec, message):
    with pytest.raises(ExperimentError, match=message):
        parse_arms([spec])


def test_a_missing_model_file_is_refused_before_the_sweep_runs(tmp_path):
    with pytest.raises(ExperimentError, match="no such file"):
        parse_arms([f"model:llama-cpp:{tmp_path / 'absent.gguf'}"])
