"""A study that spans sessions (experiments/study.py) with the model arm answered at the sampler seam: paused
between attempts, its state read from the journalled worlds only, verified by recomputing them from the recorded
attempts, refused when status.json or a journalled row is edited, and resumed to where its rule stops."""

import json
import os
import re
import shutil

import pytest

from experiments import compare, heldout, study, sweep as sweep_mod
from experiments.errors import ExperimentError

from .test_llama_arm import BUNDLE, arm  # noqa: F401 (the fixture: a scripted do-nothing desk as the model)

SECRET = "cd" * 32


def _spec(name, other, max_n):
    return {
        "alpha": "0.05",
        "arms": None,
        "bounds": [0, 100],
        "estimand": f"tiny minus {other}",
        "items": None,
        "margin": "0",
        "method": {"bet": "agrapa", "name": "paired_betting", "truncation": "0.75"},
        "metric": "score",
        "name": name,
        "question": f"Does tiny beat {other}?",
        "seeds": [0],
        "stopping": {"futility": None, "max_n": max_n},
        "unit": "items",
        "version": 2,
    }


@pytest.fixture
def folder(tmp_path, monkeypatch, arm):  # noqa: F811
    """A study over a 3-world commitment: the do-nothing desk against do-nothing and shortest-cheapest."""
    monkeypatch.setattr(study, "ROOT", str(tmp_path))
    monkeypatch.setattr(sweep_mod, "_check_feasibility", lambda out, eid, *made: None)  # the pilot is tested on its own
    commitment = heldout.commit(SECRET, ["FUND_01", "FUND_02"], 3, date="2026-12-01")
    root = tmp_path / "study"
    (root / "sweep").mkdir(parents=True)
    (root / "sweep" / "commitment.json").write_text(json.dumps(commitment))
    heldout.write_secret(str(tmp_path / "secret.txt"), SECRET)
    items = {
        "commitment_sha256": commitment["sha256"],
        "count": 3,
        "families": ["FUND_01", "FUND_02"],
        "split": "heldout",
    }
    parsed = __import__("experiments.arms", fromlist=["parse_arms"]).parse_arms(["model:llama-cpp:/m/tiny.gguf"])
    name = parsed[0]["name"]
    for comp, other in (("vs-do-nothing", "do-nothing"), ("vs-shortest-cheapest", "shortest-cheapest")):
        spec = _spec(comp, other, 2)
        spec["items"] = items
        spec["arms"] = {name: 1, f"baseline:{other}": -1}
        (root / comp).mkdir()
        (root / comp / "spec.json").write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
        compare.freeze(str(root / comp), date="2026-12-01")
    (root / "study.json").write_text(
        json.dumps(
            {
                "schema": study.SCHEMA,
                "name": "tiny",
                "sweep": "sweep",
                "secret_file": "secret.txt",
                "arms": ["model:llama-cpp:/m/tiny.gguf", "baseline:do-nothing", "baseline:shortest-cheapest"],
                "comparisons": ["vs-do-nothing", "vs-shortest-cheapest"],
            }
        )
    )
    return root, name


def test_a_paused_study_shows_its_state_verifies_refuses_edits_and_resumes_to_its_stop(folder, tmp_path, monkeypatch):
    root, name = folder
    pause = tmp_path / "PAUSE"
    monkeypatch.setenv("FUNDBOOK_ARM_PAUSE", str(pause))
    calls = {"n": 0}
    real = study.executors.host_run

    def one_then_pause(task):  # the operator pauses while the first world's attempt runs
        calls["n"] += 1
        out = real(task)
        pause.write_text("")
        return out

    monkeypatch.setattr(sweep_mod.executors, "host_run", one_then_pause)
    with pytest.raises(ExperimentError, match="paused before item"):
        study.run(str(root), BUNDLE, progress=False)
    assert not (root / "sweep" / "sweep.json").exists()
    written = json.loads((root / "status.json").read_text())  # by the run, as its first world finished
    assert (written["state"], written["worlds"]) == ("running", 1)
    doc = study.write_status(str(root), BUNDLE)
    assert doc == written
    assert (doc["state"], doc["worlds"], doc["planned_max"], doc["completed_arms"]) == ("running", 1, 2, [])
    first = doc["per_world"][0]
    assert first["score"][name] == first["score"]["baseline:do-nothing"]  # the scripted desk does nothing
    assert {c: s["n"] for c, s in doc["comparisons"].items()} == {"vs-do-nothing": 1, "vs-shortest-cheapest": 1}
    assert all(s["verdict"] is None and s["threshold"] == "20" for s in doc["comparisons"].values())
    assert study.verify(str(root), BUNDLE, log=lambda m: None)["worlds"] == 1
    (root / "vs-do-nothing" / "notes.txt").write_text("")  # a file no part of the study accounts for
    with pytest.raises(ExperimentError, match=r"vs-do-nothing/notes.txt: not part of the study"):
        study.verify(str(root), BUNDLE, log=lambda m: None)
    (root / "vs-do-nothing" / "notes.txt").unlink()
    assert study.main(["decide", str(root), "--bundle", BUNDLE]) == 1  # nothing to decide before the rules stop
    with pytest.raises(ExperimentError, match="the sweep has not stopped"):
        study.decide(str(root))

    # a forged state: status.json edited, or a journalled row edited, is found
    good = (root / "status.json").read_bytes()
    forged = json.loads(good)
    forged["comparisons"]["vs-do-nothing"]["wealth_for"] = "25"
    (root / "status.json").write_text(json.dumps(forged, indent=2, sort_keys=True) + "\n")
    with pytest.raises(ExperimentError, match="status.json: differs"):
        study.verify(str(root), BUNDLE, log=lambda m: None)
    (root / "status.json").write_bytes(good)
    partial = root / "sweep" / "observations.partial.jsonl"
    saved = partial.read_bytes()
    entry = json.loads(saved.splitlines()[0])
    entry["values"] = [[a, s, m, 100 if m == "score" and a == name else v] for a, s, m, v in entry["values"]]
    partial.write_text(json.dumps(entry) + "\n")
    with pytest.raises(ExperimentError, match="edited after they were written"):
        study.status(str(root), BUNDLE)
    partial.write_bytes(saved)

    # resumed: the second world is played and both rules stop at max_n 2; the recorded first attempt is read back
    pause.unlink()
    monkeypatch.setattr(sweep_mod.executors, "host_run", real)
    study.run(str(root), BUNDLE, progress=False)
    done = study.write_status(str(root), BUNDLE)
    assert (done["state"], done["worlds"]) == ("stopped", 2)
    assert done["completed_arms"] == sorted([name, "baseline:do-nothing", "baseline:shortest-cheapest"])
    assert all(s["verdict"] == "inconclusive" and s["n"] == 2 for s in done["comparisons"].values())
    assert json.loads((root / "sweep" / "sweep.json").read_text())["sequential"]["n"] == 2
    assert len([d for d in os.listdir(tmp_path / "attempts")]) == 2
    with pytest.raises(ExperimentError, match="has no decision.json"):  # stopped, but not yet decided
        study.verify(str(root), BUNDLE, log=lambda m: None)
    # a crash at each rename of the decision's files (rules.py, decision.json, evidence.json): deciding again
    # finishes it, and what verify then reads is whole
    real_replace = os.replace
    for crash_after in range(3):
        done = {"n": 0}

        def crashing(src, dst, _k=crash_after, _d=done):
            if _d["n"] == _k:
                raise KeyboardInterrupt("killed between renames")
            _d["n"] += 1
            return real_replace(src, dst)

        monkeypatch.setattr(sweep_mod.os, "replace", crashing)
        with pytest.raises(KeyboardInterrupt):
            study.decide(str(root))
        monkeypatch.setattr(sweep_mod.os, "replace", real_replace)
    assert not [p for p in root.rglob("*") if ".tmp-" in p.name]  # the interrupted writes left no temporary file
    assert study.main(["decide", str(root), "--bundle", BUNDLE]) == 0
    for comp in ("vs-do-nothing", "vs-shortest-cheapest"):
        decision = json.loads((root / comp / "decision.json").read_text())
        assert (decision["verdict"], decision["n"]) == ("inconclusive", 2)
        assert decision["heldout"]["revealed"] is True and (root / comp / "evidence.json").exists()
    assert (root / "sweep" / "reveal.json").exists()
    said = []
    assert study.verify(str(root), BUNDLE, log=said.append)["state"] == "stopped"
    assert said[-1].endswith("(stopped); vs-do-nothing inconclusive at n 2, vs-shortest-cheapest inconclusive at n 2")
    (root / "sweep" / "observations.partial.jsonl").write_text("")  # a stopped sweep keeps no partial rows
    with pytest.raises(ExperimentError, match=r"sweep/observations.partial.jsonl: not part of the study"):
        study.verify(str(root), BUNDLE, log=lambda m: None)
    (root / "sweep" / "observations.partial.jsonl").unlink()
    # a host without the model's library verifies the stopped study from the manifest's configuration of the arm
    from experiments import arm_model
    from experiments.errors import NotInstalled

    def missing(model_file):
        raise NotInstalled("the llama-cpp-python library is not installed: `make local`")

    monkeypatch.setattr(arm_model, "_factory", missing)
    assert study.verify(str(root), BUNDLE, log=lambda m: None)["state"] == "stopped"
    manifest = root / "sweep" / "sweep.json"
    kept = manifest.read_bytes()
    doc = json.loads(kept)
    doc["arms"][0]["configuration"]["sampling"]["temperature_milli"] = 700  # another configuration, same name
    manifest.write_text(json.dumps(doc))
    with pytest.raises(ExperimentError, match="does not hash to the arm it names"):
        study.verify(str(root), BUNDLE, log=lambda m: None)
    doc["arms"][0]["config_hash"] = __import__("engine").content_sha256(doc["arms"][0]["configuration"])
    manifest.write_text(json.dumps(doc))  # its hash re-computed: the name (the hash's prefix) no longer fits
    with pytest.raises(ExperimentError, match="does not hash to the arm it names"):
        study.verify(str(root), BUNDLE, log=lambda m: None)
    doc["arms"][0]["name"] = f"model:tiny-model:{doc['arms'][0]['config_hash'][:12]}"
    manifest.write_text(json.dumps(doc))  # renamed to fit: not the arm the frozen comparisons name
    with pytest.raises(ExperimentError, match="spec.json: arm model:tiny-model:[0-9a-f]{12} is not in this sweep"):
        study.verify(str(root), BUNDLE, log=lambda m: None)
    doc["arms"][0]["configuration"]["sampling"]["temperature_milli"] = 0.5  # not canonical: refused in one line
    manifest.write_text(json.dumps(doc))
    with pytest.raises(ExperimentError, match=r"configuration: .*floats are not allowed"):
        study.verify(str(root), BUNDLE, log=lambda m: None)
    manifest.write_bytes(kept)
    attempts = tmp_path / "attempts"
    first = sorted(attempts.iterdir())[0]
    first.rename(tmp_path / "aside")  # a missing attempt is an error, never a model run
    with pytest.raises(ExperimentError, match="is not recorded"):
        study.verify(str(root), BUNDLE, log=lambda m: None)
    (tmp_path / "aside").rename(first)

    # a decision edited after it was drawn is found by its own evidence check
    path = root / "vs-do-nothing" / "decision.json"
    good = path.read_bytes()
    path.write_bytes(good.replace(b'"inconclusive"', b'"supported"', 1))
    with pytest.raises(ExperimentError, match="sha256"):
        study.verify(str(root), BUNDLE, log=lambda m: None)
    path.write_bytes(good)


def test_an_arm_is_complete_once_every_comparison_it_serves_has_stopped(folder):
    root, name = folder
    spec = json.loads((root / "vs-do-nothing" / "spec.json").read_text())
    spec["stopping"]["max_n"] = 1  # this comparison stops after the first world, the other after the second
    (root / "vs-do-nothing" / "spec.json").write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n")
    (root / "vs-do-nothing" / "freeze.json").unlink()
    compare.freeze(str(root / "vs-do-nothing"), date="2026-12-01")
    states = []
    real = study.write_status

    def kept(*args):
        states.append(real(*args))
        return states[-1]

    study_run = study.run
    import unittest.mock as mock

    with mock.patch.object(study, "write_status", kept):
        study_run(str(root), BUNDLE, progress=False)
    # world 1: vs-do-nothing has stopped, so do-nothing's rows are final; the model and shortest-cheapest still serve
    # vs-shortest-cheapest, which stops at world 2 (then every arm is complete)
    assert [(s["worlds"], s["completed_arms"]) for s in states] == [
        (1, ["baseline:do-nothing"]),
        (2, sorted([name, "baseline:do-nothing", "baseline:shortest-cheapest"])),
    ]


@pytest.mark.parametrize("alpha, ok", [("0.2", True), ("0.25", True), ("0.19", False)])
def test_a_stated_family_wise_error_must_cover_both_directions_of_every_decision(folder, alpha, ok):
    root, _ = folder  # two comparisons at alpha 0.05: the union bound over both directions gives 0.2
    doc = json.loads((root / "study.json").read_text())
    doc["family_wise"] = {"alpha": alpha, "correction": "Bonferroni"}
    (root / "study.json").write_text(json.dumps(doc))
    if ok:
        assert study.family_wise(str(root), study.load(str(root)))["bound"] == "1/5"
        assert study.status(str(root), BUNDLE)["family_wise"]["alpha"] == alpha
    else:
        with pytest.raises(
            ExperimentError,
            match=r"family_wise.alpha: 0.19 is less than twice the comparisons' "
            r"alphas summed \(1/5\)",
        ):
            study.status(str(root), BUNDLE)


def test_a_study_definition_is_read_strictly(folder):
    root, _ = folder
    doc = json.loads((root / "study.json").read_text())
    for key, value, match in (
        ("secret_file", "/etc/passwd", "secret_file: expected a relative path"),
        ("sweep", "../x", "sweep: expected a relative path"),
        ("arms", [], "arms: expected a non-empty list"),
    ):
        (root / "study.json").write_text(json.dumps(dict(doc, **{key: value})))
        with pytest.raises(ExperimentError, match=match):
            study.load(str(root))
    (root / "study.json").write_text(json.dumps(dict(doc, extra=1)))
    with pytest.raises(ExperimentError, match="exactly"):
        study.load(str(root))
    shutil.rmtree(root / "sweep")
    (root / "study.json").write_text(json.dumps(doc))
    with pytest.raises(ExperimentError):
        study.status(str(root), BUNDLE)


def test_a_pilot_effect_below_the_margin_gets_the_worlds_for_the_verdict_against():
    """The pilot's power says how many worlds the opposite verdict ("not supported") needs when the effect is
    below the margin -- the figure a study of a weak agent is sized by -- not only the unreachable "supported"."""
    from experiments import feasibility

    spec = {
        "alpha": "0.05",
        "arms": {"a": 1, "b": -1},
        "bounds": [0, 100],
        "margin": "0",
        "metric": "score",
        "method": {"bet": "agrapa", "name": "paired_betting", "truncation": "0.75"},
        "seeds": [0],
        "stopping": {"futility": None, "max_n": 1000},
        "name": "x",
        "unit": "items",
    }
    ids = [f"w{i}" for i in range(6)]
    values = {(i, arm, 0): v for n, i in enumerate(ids) for arm, v in (("a", 20 + n % 3), ("b", 45))}
    below = feasibility.pilot_power(spec, ids, values)
    assert below["worlds_needed"]["paired_betting"]["worlds"] is None  # "supported" is out of reach
    against = below["worlds_needed_against"]
    assert 2 <= against["paired_betting"]["worlds"] <= against["paired_hoeffding"]["worlds"] <= 1000
    mirrored = {(i, "b" if arm == "a" else "a", s): v for (i, arm, s), v in values.items()}
    above = feasibility.pilot_power(spec, ids, mirrored)
    assert "worlds_needed_against" not in above
    assert above["worlds_needed"] == against  # the mirror image: the same worlds for the verdict it can reach


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["bogus", "x"], 64, "error: argument command: invalid choice: 'bogus'"),
        ([], 64, "error: the following arguments are required: command, study"),
        (
            ["status", "/no/such\nstudy"],
            1,
            "error: /no/such\\nstudy/study.json: no such file (a study definition expected)",
        ),
        (["run", "x", "--workers", "0"], 64, "error: argument --workers: expected a whole number from 1 to 8, got '0'"),
        (["run", "x", "--workers", "two"], 64, "error: argument --workers: expected a whole number from 1 to 8"),
        (["run", "x", "--workers", "\u00b9"], 64, "error: argument --workers: expected a whole number from 1 to 8"),
        (["status", "x", "--workers", "2"], 64, "error: --workers: only `run` runs worlds"),
    ],
)
def test_the_study_command_line_fails_in_one_line(argv, code, message, capsys):
    try:
        got = study.main(argv)
    except SystemExit as exc:
        got = exc.code
    err = capsys.readouterr().err
    assert got == code and err.startswith(message) and len(err.strip().splitlines()) == 1, err


def test_run_puts_as_many_worlds_under_way_as_workers_asks(monkeypatch):
    seen = []
    monkeypatch.setattr(study, "run", lambda d, b, workers: seen.append(workers) or {})
    monkeypatch.setattr(study, "write_status", lambda d, b: {"state": "running", "comparisons": {}})
    assert study.main(["run", "somewhere", "--workers", "2"]) == 0
    assert study.main(["run", "somewhere"]) == 0
    assert seen == [2, 1]


@pytest.mark.long  # a study still running rebuilds its model arm from the packaged model (make local: test-long)
def test_the_shipped_study_verifies_in_a_fresh_process_and_exits_with_its_line():
    """`python -m experiments.study verify` on the published study: its one line on stdout (flushed before the
    process leaves without the interpreter's teardown), nothing on stderr, exit 0."""
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run(
        [sys.executable, "-m", "experiments.study", "verify", "runs/studies/smollm2-heldout"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr[-2000:]
    with open(os.path.join(repo, "runs/studies/smollm2-heldout/sweep/sweep.json"), encoding="utf-8") as fh:
        as_run = json.load(fh)["evaluator_id"]
    assert re.fullmatch(
        rf"verify-study: smollm2-heldout: 26 journalled worlds recomputed from their records \(run under evaluator "
        rf"{as_run[:12]}; this checkout's engine, evaluator [0-9a-f]{{12}}, gives every value again\); "
        rf"status.json matches \(stopped\); smollm2-vs-do-nothing not supported at n 26, "
        rf"smollm2-vs-shortest-cheapest not supported at n 12\n",
        done.stdout,
    ), done.stdout


def test_a_study_with_a_tier_plan_runs_only_what_it_holds_and_shows_it_tier_by_tier(folder, tmp_path):
    """The study runner admits every new model attempt through its frozen tier plan (launchers/_tiers.py): the
    first world is tier T1, the second is not planned, so the sweep stops before running it (nothing is added);
    status.json shows the plan tier by tier from the records (a local model spends nothing: no cut)."""
    root, name = folder
    _, _, _, rows, arm_list, _, _, _ = study._setup(str(root), BUNDLE)
    first, model = rows[0], arm_list[0]["model"]
    plan = {
        "schema": "fundbook.tier-plan/1",
        "overrun_bps": 1000,
        "sd_table": {"score": "10.0"},
        "tiers": [
            {
                "name": "T1",
                "cells": [
                    {
                        "name": "first",
                        "model": model,
                        "family": first["family"],
                        "seeds": [first["seed"]],
                        "micro_usd_per_seed": 0,
                        "keep_at_least": 1,
                    }
                ],
            }
        ],
        "sacrifice": [],
    }
    (root / "tiers.json").write_text(json.dumps(plan))
    definition = json.loads((root / "study.json").read_text())
    (root / "study.json").write_text(json.dumps(dict(definition, tiers="tiers.json")))
    with pytest.raises(
        ExperimentError,
        match=f"item {rows[1]['item_id']}: the study's tier plan: {model} "
        f"{rows[1]['family']} seed {rows[1]['seed']} is not in the frozen tier "
        f"plan \\(nothing is added after the freeze\\): the sweep stops here",
    ):
        study.run(str(root), BUNDLE, progress=False)
    doc = study.write_status(str(root), BUNDLE)
    assert doc["worlds"] == 1 and doc["tiers"] == {
        "overrun_bps": 1000,
        "sd_table": {"score": "10.0"},
        "total_budget": 0,
        "total_spent": 0,
        "tiers": [
            {
                "name": "T1",
                "budget_micro_usd": 0,
                "spent_micro_usd": 0,
                "cumulative_budget": 0,
                "cumulative_spent": 0,
                "over_bps": 0,
                "complete": True,
                "ran": {"first": [first["seed"]]},
                "cut": {},
                "action": None,
            }
        ],
    }
    assert study.verify(str(root), BUNDLE, log=lambda m: None)["worlds"] == 1  # tiers.json is part of the study
    (root / "study.json").write_text(json.dumps(dict(definition, tiers="../x.json")))
    with pytest.raises(ExperimentError, match="tiers: expected the name of a tier plan file in the study folder"):
        study.load(str(root))


def test_a_study_not_started_verifies_what_it_froze_and_its_dated_deviations(tmp_path):
    shipped = os.path.join(os.path.dirname(__file__), "..", "..", "runs", "studies", "smollm2-gemma-heldout")
    root = tmp_path / "study"
    frozen = ["study.json", "README.md", "sweep/commitment.json"] + [
        f"{c}/{f}" for c in study.load(shipped)["comparisons"] for f in ("spec.json", "freeze.json", "deviations.json")
    ]
    for rel in frozen:  # what it froze before its first world, whatever has been played since
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(os.path.join(shipped, rel), root / rel)
    assert study.verify(str(root), BUNDLE, log=lambda m: None) == {
        "name": "smollm2-gemma-heldout",
        "state": "not started",
        "worlds": 0,
    }
    dev = root / "smollm2-vs-gemma" / "deviations.json"
    entries = json.loads(dev.read_text())["deviations"]
    assert [e["field"].split(":")[0] for e in entries] == ["execution", "execution"]  # recorded before world 3
    for bad, message in (
        ("", r"smollm2-vs-gemma/deviations.json"),
        ('{"schema": "fundbook.deviations/1", "deviations": [{"date": "2026-12-07"}]}', r"deviations\[0\]: expected"),
        ('{"schema": "fundbook.deviations/1", "deviations": "none"}', r"expected \{schema"),
    ):
        dev.write_text(bad)
        with pytest.raises(ExperimentError, match=message):
            study.verify(str(root), BUNDLE, log=lambda m: None)
