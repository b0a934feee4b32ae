"""The build stage on a miniature of the shipped layout: first build computes
(pilot, held-out sweep, certificate), the second reuses the committed rows and
re-checks a fresh sample, an edited committed file stops it, and
verify-experiments recomputes the bytes."""

import json

import pytest

from experiments import shipped
from experiments.errors import ExperimentError
from experiments.sweep import pretty

from .conftest import invoke, pyodide_test, write_spec


@pytest.fixture
def mini(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    monkeypatch.setattr(shipped, "FAMILIES", ("FUND_01", "FUND_03"))
    monkeypatch.setattr(shipped, "CERT_SEEDS", "1..2")
    monkeypatch.setattr(shipped, "MIN_WORLDS_PER_FAMILY", 2)
    monkeypatch.setattr(shipped, "PILOT_ITEMS", 2)
    monkeypatch.setattr(shipped, "RECHECK_ITEMS", 1)
    monkeypatch.setattr(shipped, "COMPARISONS", ("comparisons/a-vs-b",))
    monkeypatch.setattr(shipped, "BETTING_COMPARISONS", ("comparisons/a-vs-b-betting",))
    sweep_dir = runs / shipped.HELDOUT_SWEEP
    code, out, err = invoke(
        "heldout",
        "commit",
        "--secret-file",
        tmp_path / "secret",
        "--family",
        "FUND_01",
        "--family",
        "FUND_03",
        "--count",
        4,
        "--out",
        sweep_dir / "commitment.json",
    )
    assert code == 0, err
    commitment = json.loads((sweep_dir / "commitment.json").read_text())
    write_spec(
        runs / "comparisons/a-vs-b",
        name="a-vs-b",
        items={
            "split": "heldout",
            "families": ["FUND_01", "FUND_03"],
            "count": 4,
            "commitment_sha256": commitment["sha256"],
        },
    )
    assert invoke("compare", runs / "comparisons/a-vs-b", "--freeze")[0] == 0
    write_spec(
        runs / "comparisons/a-vs-b-betting",
        name="a-vs-b-betting",
        version=2,
        items={
            "split": "heldout",
            "families": ["FUND_01", "FUND_03"],
            "count": 4,
            "commitment_sha256": commitment["sha256"],
        },
        method={"name": "paired_betting", "bet": "agrapa", "truncation": "0.75"},
        stopping={"max_n": 4, "futility": None},
    )
    assert invoke("compare", runs / "comparisons/a-vs-b-betting", "--freeze")[0] == 0
    (runs / shipped.BETTING_SWEEP).mkdir(parents=True)
    (runs / shipped.BETTING_SWEEP / "commitment.json").write_bytes((sweep_dir / "commitment.json").read_bytes())
    monkeypatch.setenv("FUNDBOOK_HELDOUT_SECRET", str(tmp_path / "secret"))
    return runs


@pyodide_test
def test_compute_then_reuse_then_refuse_an_edit_then_verify(mini, bundle_dir, tmp_path):
    kw = {
        "runs_dir": str(mini),
        "bundle_dir": bundle_dir,
        "check_dir": str(tmp_path / "checks"),
        "progress": False,
        "log": lambda *a: None,
    }
    from experiments import compare as cmp

    with pytest.raises(ExperimentError, match="pass --secret-file"):
        shipped.build(**kw)  # the comparison reveals the held-out list: a secret in the environment is not a reveal
    assert (mini / shipped.HELDOUT_SWEEP / "feasibility.json").is_file()  # the pilot came before the sweep
    assert all((mini / d / "sweep.json").is_file() for d in (shipped.HELDOUT_SWEEP, shipped.CERT_SWEEP))
    from experiments import heldout

    commitment = json.loads((mini / shipped.HELDOUT_SWEEP / "commitment.json").read_text())
    for sweep_dir in (shipped.HELDOUT_SWEEP, shipped.BETTING_SWEEP):
        reveal = mini / sweep_dir / "reveal.json"
        reveal.write_bytes(pretty(heldout.reveal((tmp_path / "secret").read_text().strip(), commitment)))
    first = shipped.build(**kw, seed=1)
    assert all(v["reused"] for v in first["sweeps"].values())  # computed by the build that stopped at the reveal
    assert first["certificate"]["passed"] and first["comparisons"]["comparisons/a-vs-b"]["evidence_verified"]
    assert first["comparisons"]["comparisons/a-vs-b-betting"]["method"] == "paired_betting"
    assert first["decisions_in_pyodide"] == {
        "decisions": 2,
        "identical": True,
        "pyodide_version": first["recheck"]["pyodide_version"],
        "rules_sha256": __import__("engine").sha256_hex(
            (__import__("pathlib").Path(shipped.ROOT) / "experiments" / "rules.py").read_bytes()
        ),
    }
    before = {p: p.read_bytes() for p in mini.rglob("*") if p.is_file()}
    second = shipped.build(**kw, seed=2)
    assert all(v["reused"] for v in second["sweeps"].values()) and second["recheck"]["seed"] == 2
    assert {p: p.read_bytes() for p in mini.rglob("*") if p.is_file()} == before  # a reuse rewrites nothing
    assert json.loads((tmp_path / "checks" / "checks.json").read_text())["recheck"]["seed"] == 2
    assert cmp.verify(str(mini / "comparisons/a-vs-b"))["n"] == 4
    assert shipped.verify(str(mini), bundle_dir, log=lambda *a: None, progress=False) == [
        shipped.HELDOUT_SWEEP,
        shipped.BETTING_SWEEP,
        shipped.CERT_SWEEP,
    ]

    path = mini / shipped.CERT_SWEEP / "observations.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"value":1', b'"value":0', 1))
    with pytest.raises(ExperimentError, match=r"observations.jsonl: sha256 differs .* \(a committed file was edited\)"):
        shipped.build(**kw)
    with pytest.raises(ExperimentError, match="observations.jsonl: differs from a fresh recomputation at line 1"):
        shipped.verify(str(mini), bundle_dir, log=lambda *a: None, progress=False)
