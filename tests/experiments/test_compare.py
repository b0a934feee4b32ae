"""Comparisons end to end through the CLI: freeze, sweep, decide, verify; and
every way a decision could be forged or go stale is refused."""

import json
import os
import shutil

import pytest

from experiments import compare as cmp
from experiments.errors import ExperimentError

from .conftest import BASELINES, invoke, one_line_error, pyodide_test, write_spec


def copy_study(study, tmp_path):
    root = tmp_path / "study"
    shutil.copytree(study["root"], root)
    return root / "cmp", root / "sweep"


def edit_json(path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


@pyodide_test
def test_the_decision_and_its_evidence(practice_study):
    d = json.loads((practice_study["cmp"] / "decision.json").read_text())
    assert d["verdict"] in ("supported", "inconclusive", "not supported") and d["n"] == 6
    assert d["execution"]["pyodide_sample"]["identical"] is True and d["limits"] == []
    evidence = json.loads((practice_study["cmp"] / "evidence.json").read_text())
    kinds = [f["kind"] for f in evidence["files"]]
    assert kinds == [
        "spec",
        "freeze",
        "deviations",
        "rules",
        "sweep_manifest",
        "journal",
        "items",
        "observations",
        "observations_parquet",
        "decision",
    ]
    assert (practice_study["cmp"] / "rules.py").read_bytes() == cmp.rules_source()
    assert d["rules_sha256"] == __import__("engine").sha256_hex(cmp.rules_source())
    assert d["order"]["served_at_line"] == 2 and d["order"]["first_row_line"] == 3
    assert set(d["report"]) == {"n", "per_arm_mean", "mean_difference", "se", "se_clustered", "clusters", "correlation"}
    code, out, err = invoke("compare", practice_study["cmp"], "--verify")
    assert code == 0 and "verified" in out, err


@pyodide_test
def test_verify_recomputes_from_evidence_and_names_what_was_tampered(practice_study, tmp_path):
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path)
    obs_path = sweep_dir / "observations.jsonl"
    lines = obs_path.read_text().splitlines()
    row = json.loads(lines[2])
    row["value"] = 0 if row["value"] else 100
    obs_path.write_text(
        "\n".join(lines[:2] + [json.dumps(row, sort_keys=True, separators=(",", ":"))] + lines[3:]) + "\n"
    )
    code, out, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "observations.jsonl: sha256" in one_line_error(err)

    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path / "b")
    edit_json(cmp_dir / "decision.json", lambda d: d.update(verdict="supported", lower_bound="99.000000000"))
    code, out, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "decision.json: sha256" in one_line_error(err)

    # A forger who also rewrites the evidence hash still meets the recomputation.
    import engine

    data = (cmp_dir / "decision.json").read_bytes()
    edit_json(
        cmp_dir / "evidence.json",
        lambda e: [f.update(sha256=engine.sha256_hex(data)) for f in e["files"] if f["kind"] == "decision"],
    )
    code, out, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "differs from the decision recomputed from the evidence at $.lower_bound" in one_line_error(
        err
    )


@pyodide_test
def test_a_spec_changed_after_freezing_is_refused(practice_study, tmp_path):
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path)
    edit_json(cmp_dir / "spec.json", lambda s: s.update(margin="-5"))
    code, out, err = invoke("compare", cmp_dir, "--sweep", sweep_dir)
    assert code == 1 and "changed after freezing" in one_line_error(err)
    code, out, err = invoke("compare", cmp_dir, "--freeze")
    assert code == 1 and "changed after freezing" in one_line_error(err)


@pyodide_test
def test_a_spec_frozen_after_the_sweep_cannot_use_it(practice_study, tmp_path):
    late = tmp_path / "late"
    write_spec(late, name="late-spec", margin="-1")
    assert invoke("compare", late, "--freeze")[0] == 0
    code, out, err = invoke("compare", late, "--sweep", practice_study["sweep"])
    assert code == 1 and "does not record spec" in one_line_error(err)


@pyodide_test
def test_rows_of_another_evaluator_are_never_compared(practice_study, tmp_path):
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path)
    blobs = {
        k: (cmp_dir / p).read_bytes()
        for k, p in (("spec", "spec.json"), ("freeze", "freeze.json"), ("deviations", "deviations.json"))
    }
    blobs["rules"] = cmp.rules_source()
    for kind, name in (
        ("sweep_manifest", "sweep.json"),
        ("items", "items.jsonl"),
        ("observations_parquet", "observations.parquet"),
        ("journal", "journal.jsonl"),
    ):
        blobs[kind] = (sweep_dir / name).read_bytes()
    lines = (sweep_dir / "observations.jsonl").read_text().splitlines()
    row = json.loads(lines[0])
    row["evaluator_id"] = "f" * 64
    blobs["observations"] = (
        "\n".join([json.dumps(row, sort_keys=True, separators=(",", ":"))] + lines[1:]) + "\n"
    ).encode()
    import engine

    sweep = json.loads(blobs["sweep_manifest"])
    sweep["files"]["observations.jsonl"] = engine.sha256_hex(blobs["observations"])
    blobs["sweep_manifest"] = json.dumps(sweep).encode()
    with pytest.raises(ExperimentError, match="parquet does not hold the same rows|never compared|journalled"):
        cmp.compute_decision(blobs)


@pyodide_test
def test_deviations_are_dated_and_lower_the_confidence(practice_study, tmp_path):
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path)
    edit_json(
        cmp_dir / "deviations.json",
        lambda d: d["deviations"].append(
            {
                "date": "2026-03-01",
                "field": "items",
                "original": "seeds 1..3",
                "effective": "seeds 1..3",
                "reason": "a recorded example",
            }
        ),
    )
    code, out, err = invoke("compare", cmp_dir, "--sweep", sweep_dir, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["confidence"] == "weak" and d["limits"] == ["1 deviation(s) from the frozen spec"]
    edit_json(cmp_dir / "deviations.json", lambda d: d["deviations"].append({"date": "yesterday"}))
    code, out, err = invoke("compare", cmp_dir, "--sweep", sweep_dir)
    assert code == 1 and "deviations[1]" in one_line_error(err)


@pyodide_test
def test_a_heldout_study_end_to_end(bundle_dir, tmp_path):
    secret, sweep_dir, cmp_dir = tmp_path / "secret", tmp_path / "sweep", tmp_path / "cmp"
    code, out, err = invoke(
        "heldout",
        "commit",
        "--secret-file",
        secret,
        "--family",
        "FUND_02",
        "--count",
        4,
        "--out",
        sweep_dir / "commitment.json",
    )
    assert code == 0 and "keep it private" in out and oct(os.stat(secret).st_mode & 0o777) == "0o600"
    commitment = json.loads((sweep_dir / "commitment.json").read_text())
    write_spec(
        cmp_dir,
        items={"split": "heldout", "families": ["FUND_02"], "count": 4, "commitment_sha256": commitment["sha256"]},
    )
    assert invoke("compare", cmp_dir, "--freeze")[0] == 0
    arms = [a for arm in BASELINES[:2] for a in ("--arm", arm)]
    base = [
        "sweep",
        "--out",
        sweep_dir,
        "--heldout",
        "--secret-file",
        secret,
        *arms,
        "--bundle",
        bundle_dir,
        "--no-progress",
        "--pyodide-sample",
        1,
    ]
    code, out, err = invoke(*base, "--comparison", cmp_dir)
    assert code == 1 and "feasibility pilot is published" in one_line_error(err)
    code, out, err = invoke(*base, "--pilot", 4, "--comparison", cmp_dir)
    assert code == 0 and "projection for 4 items" in out, err
    feas = json.loads((sweep_dir / "feasibility.json").read_text())
    assert feas["pilot"]["split"] == "practice" and feas["pilot"]["seeds"] == "1..4"
    assert all(isinstance(v, int) for a in feas["per_arm"].values() for v in a.values())
    other = tmp_path / "other"
    other.write_text("33" * 32)
    code, out, err = invoke(*[other if x == secret else x for x in base], "--comparison", cmp_dir)
    assert code == 1 and "does not open the commitment" in one_line_error(err)
    code, out, err = invoke(*base, "--comparison", cmp_dir)
    assert code == 0, err
    code, out, err = invoke("compare", cmp_dir, "--sweep", sweep_dir)
    assert code == 1 and "pass --secret-file" in one_line_error(err)
    code, out, err = invoke("compare", cmp_dir, "--sweep", sweep_dir, "--secret-file", secret)
    assert code == 0, err
    reveal = json.loads((sweep_dir / "reveal.json").read_text())
    assert reveal["secret"] == secret.read_text().strip()
    decision = json.loads((cmp_dir / "decision.json").read_text())
    assert decision["heldout"]["revealed"] is True and decision["n"] == 4
    feas = json.loads((sweep_dir / "feasibility.json").read_text())
    assert set(feas["power"]["ref-vs-sc"]["worlds_needed"]) == {
        "paired_hoeffding",
        "paired_empirical_bernstein",
        "paired_betting",
    }
    assert invoke("compare", cmp_dir, "--verify")[0] == 0
    edit_json(sweep_dir / "reveal.json", lambda r: r.update(secret="44" * 32))
    code, out, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "reveal.json: sha256" in one_line_error(err)


def test_cli_usage_and_input_errors(tmp_path):
    code, out, err = invoke("sweep", "--out", tmp_path / "s", "--arm", "gold")
    assert code == 64 and "give --seeds" in err
    code, out, err = invoke("sweep", "--out", tmp_path / "s", "--arm", "gold", "--seeds", "9..1")
    assert code == 64 and "first <= last" in one_line_error(err)
    code, out, err = invoke("families", "--output", tmp_path / "f", "--seeds", "1..3", "--family", "FUND_04")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == [f"FUND_04/seed-{i}" for i in (1, 2, 3)]
    code, out, err = invoke("sweep", "--out", tmp_path / "s", "--arm", "gold", "--seeds", "1", "--bundle", tmp_path)
    assert code == 1 and "engine bundle" in one_line_error(err)
    code, out, err = invoke("compare", tmp_path)
    assert code == 64 and "exactly one of" in err
    code, out, err = invoke("compare", tmp_path, "--freeze")
    assert code == 1 and "spec.json: no such file" in one_line_error(err)
    (tmp_path / "spec.json").write_text("{not json")
    code, out, err = invoke("compare", tmp_path, "--freeze")
    assert code == 1 and "not valid JSON" in one_line_error(err)
    code, out, err = invoke("compare", tmp_path, "--verify")
    assert code == 1 and "evidence.json: no such file" in one_line_error(err)
    code, out, err = invoke("sweep", "--out", tmp_path / "h", "--arm", "gold", "--heldout")
    assert code == 1 and "commitment.json: no such file" in one_line_error(err)
    (tmp_path / "c.json").write_text("{}")
    code, out, err = invoke(
        "heldout", "commit", "--secret-file", tmp_path / "k", "--count", 2, "--out", tmp_path / "c.json"
    )
    assert code == 64 and "never rewritten" in err
