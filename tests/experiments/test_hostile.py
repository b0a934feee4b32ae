"""Hostile inputs to `fundbook sweep`, `compare` and `heldout commit`: every one
is a one-line error with the documented exit code, loses nothing, and a
`--verify` that says "verified" covers the comparison folder's own files."""

import json
import os
import shutil

import pytest

import engine
from experiments import heldout
from experiments.decide import check_spec
from experiments.errors import ExperimentError

from .conftest import invoke, one_line_error, pyodide_test, write_spec
from .test_compare import copy_study, edit_json

SECRET = "ab" * 32


def freeze_error(directory, text):
    directory.mkdir(exist_ok=True)
    (directory / "spec.json").write_text(text)
    code, out, err = invoke("compare", directory, "--freeze")
    assert code == 1 and not (directory / "freeze.json").exists()
    return one_line_error(err)


def test_hostile_specs_are_one_line_errors(tmp_path):
    spec = write_spec(tmp_path / "ok")
    text = json.dumps(spec)
    assert "nested deeper than 64" in freeze_error(tmp_path / "a", "[" * 100_000 + "]" * 100_000)
    assert "duplicate name" in freeze_error(tmp_path / "b", text[:-1] + ', "margin": "-9"}')
    episodes = dict(spec, items=dict(spec["items"], episodes=5))
    assert "items.episodes: expected names" in freeze_error(tmp_path / "c", json.dumps(episodes))
    assert "spec.json.name: expected" in freeze_error(tmp_path / "d", json.dumps(dict(spec, name="ref\n")))
    assert "spec.json.version: expected 1 or 2" in freeze_error(tmp_path / "e", json.dumps(dict(spec, version=True)))
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "spec.json").write_bytes(b'{"name": "\xff"}')
    code, out, err = invoke("compare", tmp_path / "f", "--freeze")
    assert code == 1 and "not UTF-8 text" in one_line_error(err)


def test_spec_numbers_stay_within_the_exact_arithmetic():
    spec = {
        "version": 1,
        "name": "n",
        "estimand": "e",
        "unit": "items",
        "arms": {"a": 1, "b": -1},
        "seeds": [0],
        "items": {"split": "practice", "families": ["FUND_01"], "seeds": "1"},
        "metric": "score",
        "bounds": [0, 100],
        "margin": "0",
        "alpha": "0.05",
        "method": "paired_hoeffding",
    }
    check_spec(spec)
    with pytest.raises(ExperimentError, match=r"bounds\[1\]: expected an integer or a decimal string"):
        check_spec(dict(spec, bounds=["0", "1" + "0" * 400]))  # was a decimal.InvalidOperation traceback in compare
    with pytest.raises(ExperimentError, match=r"below 10\^30"):
        check_spec(dict(spec, bounds=["-9999999999999999", "9999999999999999"], arms={"a": 10**14, "b": -(10**14)}))
    with pytest.raises(ExperimentError, match="items.count"):
        check_spec(
            dict(
                spec, items={"split": "heldout", "families": ["FUND_01"], "count": True, "commitment_sha256": "a" * 64}
            )
        )
    with pytest.raises(ExperimentError, match="commitment_sha256"):
        check_spec(
            dict(
                spec,
                items={"split": "heldout", "families": ["FUND_01"], "count": 1, "commitment_sha256": "a" * 64 + "\n"},
            )
        )


def test_heldout_commit_checks_everything_before_it_writes_a_secret(tmp_path):
    secret, blocker = tmp_path / "secret", tmp_path / "file"
    blocker.write_text("x")
    code, out, err = invoke("heldout", "commit", "--secret-file", secret, "--count", 2, "--out", blocker)
    assert code == 64 and "never rewritten" in one_line_error(err) and not secret.exists()
    code, out, err = invoke("heldout", "commit", "--secret-file", secret, "--count", 2, "--out", blocker / "c.json")
    assert code == 1 and "cannot create the folder" in one_line_error(err) and not secret.exists()
    code, out, err = invoke(
        "heldout",
        "commit",
        "--secret-file",
        secret,
        "--count",
        2,
        "--family",
        "FUND_01",
        "--family",
        "FUND_01",
        "--out",
        tmp_path / "c.json",
    )
    assert code == 1 and "distinct names" in one_line_error(err) and not secret.exists()
    code, out, err = invoke(
        "heldout", "commit", "--secret-file", blocker / "k", "--count", 2, "--out", tmp_path / "c.json"
    )
    assert code == 1 and "cannot write the held-out secret" in one_line_error(err)
    assert not (tmp_path / "c.json").exists()
    code, out, err = invoke("heldout", "commit", "--secret-file", secret, "--count", "١", "--out", tmp_path / "c.json")
    assert code == 64 and "ASCII digits" in one_line_error(err)
    for name, data in (("utf", b"\xff\xfe"), ("int", b'{"secret": 5}'), ("nl", (SECRET + "\n").encode() + b"x")):
        (tmp_path / name).write_bytes(data)
        code, out, err = invoke(
            "heldout", "commit", "--secret-file", tmp_path / name, "--count", 2, "--out", tmp_path / f"c-{name}.json"
        )
        assert code == 1 and "64 lowercase hex" in one_line_error(err)


def test_a_commitment_names_a_bounded_split():
    doc = heldout.commit(SECRET, ["FUND_01"], 2)
    heldout.check_commitment_doc(doc, "c")
    for bad in (
        dict(doc, count=2**53 - 1),
        dict(doc, count=True),
        dict(doc, families=5),
        dict(doc, sha256=doc["sha256"] + "\n"),
    ):
        with pytest.raises(ExperimentError, match="count|families|sha256"):
            heldout.check_commitment_doc(bad, "c")  # (2^53-1 worlds was drawn, forever)
    with pytest.raises(ExperimentError, match="64 lowercase hex"):
        heldout.salt(SECRET + "\n")


@pyodide_test
def test_verify_covers_the_comparison_folders_own_files(practice_study, tmp_path):
    cmp_dir, _ = copy_study(practice_study, tmp_path / "a")
    # A forger keeps the real decision under another name, points the evidence at it and publishes another verdict.
    shutil.copy(cmp_dir / "decision.json", cmp_dir / "kept.json")
    edit_json(cmp_dir / "decision.json", lambda d: d.update(verdict="supported", confidence="strong"))
    edit_json(
        cmp_dir / "evidence.json", lambda e: [f.update(path="kept.json") for f in e["files"] if f["kind"] == "decision"]
    )
    code, out, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "files[9].path: the decision is decision.json in the comparison folder" in one_line_error(err)

    cmp_dir, _ = copy_study(practice_study, tmp_path / "b")
    edit_json(cmp_dir / "evidence.json", lambda e: e["files"].append(dict(e["files"][0])))
    code, out, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "files[10].kind: spec is listed twice" in one_line_error(err)

    for files, message in (
        ([1], "files[0]: expected an object"),
        ([{"kind": ["spec"]}], "files[0]: expected"),
        ([{"name": "x", "kind": "other", "path": "x", "sha256": "0"}], "not a kind of evidence"),
        ([{"name": "x", "kind": "items", "path": "x\u0000", "sha256": "0"}], "not a file name"),
    ):
        (cmp_dir / "evidence.json").write_text(json.dumps({"schema": "fundbook.evidence/1", "files": files}))
        code, out, err = invoke("compare", cmp_dir, "--verify")
        assert code == 1 and message in one_line_error(err)
    (cmp_dir / "evidence.json").write_text("[]")
    code, out, err = invoke("compare", cmp_dir, "--verify")
    assert code == 1 and "evidence.json: expected a JSON object" in one_line_error(err)


@pyodide_test
def test_compare_refuses_a_malformed_sweep_manifest_and_writes_nothing_half(practice_study, tmp_path):
    for change, message in (
        (lambda s: s.update(comparisons=5), "comparisons: expected a list"),
        (lambda s: s.pop("provenance"), "provenance: expected an object"),
        (lambda s: s.update(items=[]), "items: expected an object"),
    ):
        cmp_dir, sweep_dir = copy_study(practice_study, tmp_path / message[:5])
        edit_json(sweep_dir / "sweep.json", change)
        code, out, err = invoke("compare", cmp_dir, "--sweep", sweep_dir)
        assert code == 1 and f"sweep manifest: {message}" in one_line_error(err)
    cmp_dir, sweep_dir = copy_study(practice_study, tmp_path / "dir")
    os.remove(cmp_dir / "decision.json")
    os.remove(cmp_dir / "evidence.json")
    os.mkdir(cmp_dir / "evidence.json")
    code, out, err = invoke("compare", cmp_dir, "--sweep", sweep_dir)
    assert code == 1 and "evidence.json: cannot write" in one_line_error(err)
    assert sorted(os.listdir(cmp_dir)) == [
        "deviations.json",
        "evidence.json",
        "freeze.json",
        "result.json",
        "rules.py",
        "spec.json",
    ]  # result.json: the copy's, from its first decision


def small_sweep(out, bundle_dir, *extra):
    return invoke(
        "sweep",
        "--out",
        out,
        "--family",
        "FUND_01",
        "--seeds",
        "1",
        "--arm",
        "baseline:reference",
        "--arm",
        "gold",
        "--bundle",
        bundle_dir,
        "--pyodide-sample",
        0,
        "--no-progress",
        *extra,
    )


def test_sweep_output_and_worker_errors(tmp_path, bundle_dir):
    (tmp_path / "file").write_text("x")
    code, out, err = small_sweep(tmp_path / "file" / "sub", bundle_dir)
    assert code == 1 and "file/sub: cannot create the folder (Not a directory)" in one_line_error(err)
    code, out, err = small_sweep(tmp_path / "s", bundle_dir, "--workers", "١")
    assert code == 64 and "ASCII digits" in one_line_error(err)
    os.makedirs(tmp_path / "p" / "observations.partial.jsonl")
    code, out, err = small_sweep(tmp_path / "p", bundle_dir)
    assert code == 1 and "observations.partial.jsonl: is a directory" in one_line_error(err)


def test_a_resumed_sweep_refuses_damaged_rows_and_skips_a_torn_partial(tmp_path, bundle_dir):
    fresh = tmp_path / "fresh"
    assert small_sweep(fresh, bundle_dir)[0] == 0
    want = (fresh / "observations.jsonl").read_bytes()
    eid = json.loads((fresh / "sweep.json").read_text())["evaluator_id"]
    lines = want.splitlines(keepends=True)
    damaged = {
        "twice": (want + lines[0], "the rows of item FUND_01/seed-1"),  # was 2 rows for one metric
        "short": (b"".join(lines[:3] + lines[4:]), "the rows of item FUND_01/seed-1"),  # an arm with a metric missing
        "huge": (want.replace(b'"value":1}', b'"value":' + b"9" * 30 + b"}", 1), "an integer outside"),  # was pyarrow's
    }
    for name, (data, needle) in damaged.items():
        out = tmp_path / name
        shutil.copytree(fresh, out)
        (out / "observations.jsonl").write_bytes(data)
        code, _, err = small_sweep(out, bundle_dir)
        assert code == 1 and needle in one_line_error(err), name
        assert (out / "observations.jsonl").read_bytes() == data  # refused, nothing rewritten
    out = tmp_path / "partial"
    shutil.copytree(fresh, out)
    os.remove(out / "observations.jsonl")
    (out / "observations.partial.jsonl").write_text(
        "\n".join(
            json.dumps(e)
            for e in (
                {"item_id": 5, "evaluator_id": eid, "values": 7},  # each was a traceback
                {"item_id": "FUND_01/seed-1", "evaluator_id": eid, "values": [[]]},
                {"item_id": "FUND_01/seed-1", "evaluator_id": eid},
            )
        )
        + "\n"
    )
    code, _, err = small_sweep(out, bundle_dir)
    assert code == 1 and "neither observations.jsonl nor observations.partial.jsonl holds" in one_line_error(err)
    out = tmp_path / "torn"
    shutil.copytree(fresh, out)
    os.remove(out / "observations.jsonl")
    os.remove(out / "sweep.json")
    journal = (out / "journal.jsonl").read_bytes().splitlines(keepends=True)
    (out / "journal.jsonl").write_bytes(b"".join(journal[:-1]) + journal[-1][:40])  # an interrupted last write
    code, _, err = small_sweep(out, bundle_dir)
    assert code == 0 and (out / "observations.jsonl").read_bytes() == want, err
    assert engine.sha256_hex(want) == json.loads((out / "sweep.json").read_text())["files"]["observations.jsonl"]
