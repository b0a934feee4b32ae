"""The committed comparisons and certificate: they verify from their evidence,
the held-out list opens its commitment, the certificate recomputes from its
rows, and they are this commit's evaluator's (else `make experiments-recompute`)."""

import json
import os

from experiments import compare as cmp, heldout, observations as obs, shipped
from experiments.certificate import certificate
from tests.conftest import REPO

from .conftest import pyodide_test

RUNS = os.path.join(REPO, "runs")


def load(*parts):
    with open(os.path.join(RUNS, *parts), encoding="utf-8") as fh:
        return json.load(fh)


def test_every_shipped_comparison_recomputes_from_its_evidence():
    for c, _ in shipped.all_comparisons():
        decision = cmp.verify(os.path.join(RUNS, c))
        assert decision["items"]["split"] == "heldout" and decision["items"]["n"] == 1000
        assert decision["heldout"]["revealed"] is True and decision["execution"]["pyodide_sample"]["identical"]
        assert decision["n"] == (1000 if c in shipped.COMPARISONS else decision["sequential"]["stopped_at"])


def test_betting_reaches_the_same_verdicts_with_at_least_4x_fewer_worlds():
    """Issue 18's goal, on the shipped held-out worlds in their committed order: the betting rule's stopping
    point against the first n at which the Hoeffding bound, read at every n, settles the margin."""
    for hoeffding, betting in zip(shipped.COMPARISONS, shipped.BETTING_COMPARISONS):
        h, b = load(hoeffding, "decision.json"), load(betting, "decision.json")
        assert h["verdict"] == b["verdict"] == "supported" and b["method"] == "paired_betting"
        assert h["first_settled_n"] >= 4 * b["n"], (hoeffding, h["first_settled_n"], b["n"])
        assert load(shipped.BETTING_SWEEP, "sweep.json")["sequential"]["comparisons"][b["comparison"]]["n"] == b["n"]


def test_the_heldout_list_opens_its_commitment_and_is_the_items_manifest():
    commitment = load(shipped.HELDOUT_SWEEP, "commitment.json")
    pairs = heldout.check_reveal(load(shipped.HELDOUT_SWEEP, "reveal.json"), commitment, "reveal.json")
    with open(os.path.join(RUNS, shipped.HELDOUT_SWEEP, "items.jsonl"), encoding="utf-8") as fh:
        manifest = [json.loads(x) for x in fh]
    assert [[r["family"], r["seed"]] for r in manifest] == pairs and len(pairs) == 1000
    assert all(s >= 2**32 for _, s in pairs) and all(r["split"] == "heldout" for r in manifest)


def test_the_certificate_recomputes_from_its_rows_and_passes():
    out = os.path.join(RUNS, shipped.CERT_SWEEP)
    sweep = load(shipped.CERT_SWEEP, "sweep.json")
    rows = obs.read_jsonl(os.path.join(out, obs.JSONL))
    with open(os.path.join(out, "items.jsonl"), encoding="utf-8") as fh:
        manifest = [json.loads(x) for x in fh]
    again = certificate("grader", sweep, rows, manifest, shipped.MIN_WORLDS_PER_FAMILY)
    assert again == load(shipped.CERT_SWEEP, "certificate.json")
    assert again["passed"] and all(f["worlds"] >= 1000 for f in again["per_family"])
    assert {r["evaluator_id"] for r in rows} == {sweep["evaluator_id"]}
    assert sorted(sweep["provenance"]["grader"]["mutations"]) == sorted(
        a["name"] for a in sweep["arms"] if a["kind"] == "mutation"
    )


@pyodide_test
def test_the_committed_rows_are_this_commit_s_evaluator_s(bundle_dir):
    stale = "runs/comparisons or runs/certificates is stale: run `make experiments-recompute` and commit them"
    for definition in shipped.sweeps():
        plan, rows, commitment = shipped.plan_of(RUNS, definition)
        from experiments.arms import parse_arms
        from experiments.sweep import prepare

        fixed = prepare(None, plan, rows, parse_arms(definition["arms"]), bundle_dir)
        assert load(definition["dir"], "sweep.json")["evaluator_id"] == fixed["evaluator_id"], stale


def _copy_runs(tmp_path):
    import shutil

    root = tmp_path / "runs"
    for top in ("comparisons", "certificates"):
        shutil.copytree(os.path.join(RUNS, top), root / top)
    return root


def test_make_verify_covers_the_certificate_the_decisions_and_stray_files(tmp_path):
    # `make verify` -> verify-experiments: beyond recomputing the rows, each published file is checked
    # (here against the committed rows themselves; the recomputation is `make verify-experiments`).
    import pytest
    from experiments.errors import ExperimentError

    runs = _copy_runs(tmp_path)
    cert_def = next(d for d in shipped.sweeps() if d["dir"] == shipped.CERT_SWEEP)
    cert_dir = str(runs / shipped.CERT_SWEEP)
    cert_rows = shipped.plan_of(str(runs), cert_def)[1]
    shipped._check_published(str(runs), cert_def, cert_dir, cert_dir, cert_rows, lambda *a: None)  # as committed: fine
    shipped._check_unlisted(str(runs))
    doc = json.loads((runs / shipped.CERT_SWEEP / "certificate.json").read_text())
    doc["met"] += 1
    (runs / shipped.CERT_SWEEP / "certificate.json").write_text(json.dumps(doc, indent=2) + "\n")
    with pytest.raises(ExperimentError, match="certificate.json: differs from the certificate of the verified rows"):
        shipped._check_published(str(runs), cert_def, cert_dir, cert_dir, cert_rows, lambda *a: None)
    held_def = next(d for d in shipped.sweeps() if d["dir"] == shipped.HELDOUT_SWEEP)
    held_dir = str(runs / shipped.HELDOUT_SWEEP)
    held_rows = shipped.plan_of(str(runs), held_def)[1]
    decision = runs / shipped.COMPARISONS[0] / "decision.json"
    doc = json.loads(decision.read_text())
    doc["verdict"] = "not supported"
    decision.write_text(json.dumps(doc, indent=2) + "\n")
    with pytest.raises(ExperimentError, match="decision.json"):
        shipped._check_published(str(runs), held_def, held_dir, held_dir, held_rows, lambda *a: None)
    (runs / shipped.HELDOUT_SWEEP / "notes.txt").write_text("x\n")
    with pytest.raises(ExperimentError, match="heldout-baselines/notes.txt: not part of the shipped experiments"):
        shipped._check_unlisted(str(runs))
    (runs / shipped.HELDOUT_SWEEP / "notes.txt").unlink()
    (runs / "comparisons" / "forged-comparison").mkdir()
    with pytest.raises(ExperimentError, match="comparisons/forged-comparison: not part of the shipped experiments"):
        shipped._check_unlisted(str(runs))


def test_the_published_calibration_is_of_the_shipped_rules_and_keeps_their_promise():
    """The calibration ran the decision code every decision runs (a change to experiments/rules.py means
    `make experiments-calibrate` again), with at least 10,000 null sweeps per rule and shape."""
    import engine
    from experiments import calibration, rules

    doc = load("comparisons", "calibration", "rules-calibration.json")
    with open(os.path.join(REPO, "experiments", "rules.py"), "rb") as fh:
        assert doc["rules_sha256"] == engine.sha256_hex(fh.read()), "run `make experiments-calibrate` and commit it"
    assert doc["sweeps"] >= 10_000 and doc["seed"] == calibration.SEED and len(doc["calibration"]) >= 5
    assert doc["binomial_q95"] == calibration.binomial_q95(doc["sweeps"], 5, 100)
    for shape in doc["calibration"]:
        by = {(r["rule"], r["read"]): r for r in shape["rows"]}
        assert {rule for rule, _ in by} == set(rules.METHODS) and all(r["sweeps"] == doc["sweeps"] for r in by.values())
        for (rule, read), r in by.items():
            if "every 10" not in read:  # each rule used as registered keeps alpha
                assert r["within_alpha"], (shape["shape"], rule, read)
    # and a fixed-n rule read at every 10th world does not: its misuse is on the page, measured
    assert not all(r["within_alpha"] for s in doc["calibration"] for r in s["rows"] if "every 10" in r["read"])
    misuse = next(
        r for r in doc["calibration"][0]["rows"] if r["rule"] == "paired_hoeffding" and "every 10" in r["read"]
    )
    with open(os.path.join(REPO, "site", "comparisons", "method.md"), encoding="utf-8") as fh:
        assert f"says it {float(misuse['rate']) * 100:.1f} % of the time on the widest-variance null" in fh.read()
    for row in doc["power"]["rows"]:
        assert (
            row["worlds"]["paired_betting"]
            < row["worlds"]["paired_empirical_bernstein"]
            <= row["worlds"]["paired_hoeffding"]
        )


def test_a_small_calibration_is_deterministic():
    from experiments import calibration

    one = calibration._null_chunk((calibration.NULL_SHAPES[0][1], "0", 7, 3))
    assert one == calibration._null_chunk((calibration.NULL_SHAPES[0][1], "0", 7, 3))
