"""Sequential sweeps: a sweep serving only betting rules runs the committed order and stops where the
rules stop -- nothing after that world is measured -- records where and why, resumes mid-sequence,
gives the same files at 1 and 2 workers, and its decision recomputes the stop from the rows."""

import json
import os

import pytest

from experiments import executors, observations as obs
from experiments.errors import ExperimentError

from .conftest import invoke, one_line_error, write_spec
from .test_compare import edit_json

BET = {"name": "paired_betting", "bet": "agrapa", "truncation": "0.75"}
ITEMS = {"split": "practice", "families": ["FUND_01", "FUND_03"], "seeds": "1..20"}
ARMS = ["--arm", "baseline:reference", "--arm", "baseline:shortest-cheapest"]


def betting_study(root, name="bet", max_n=40):
    cmp_dir = root / name
    write_spec(cmp_dir, version=2, name=name, items=ITEMS, method=BET, stopping={"max_n": max_n, "futility": None})
    assert invoke("compare", cmp_dir, "--freeze")[0] == 0
    return cmp_dir


def run(out, bundle_dir, cmp_dir, *extra):
    return invoke(
        "sweep",
        "--out",
        out,
        "--family",
        "FUND_01",
        "--family",
        "FUND_03",
        "--seeds",
        "1..20",
        *ARMS,
        "--bundle",
        bundle_dir,
        "--pyodide-sample",
        0,
        "--no-progress",
        "--comparison",
        cmp_dir,
        *extra,
    )


def files(out):
    return {n: (out / n).read_bytes() for n in ("items.jsonl", obs.JSONL, obs.PARQUET, "journal.jsonl")}


@pytest.fixture(scope="module")
def stopped(bundle_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("sequential")
    cmp_dir = betting_study(root)
    code, out, err = run(root / "sweep", bundle_dir, cmp_dir)
    assert code == 0, err
    return {"root": root, "cmp": cmp_dir, "sweep": root / "sweep", "stdout": out}


def test_it_stops_where_the_rule_stops_and_says_why(stopped):
    doc = json.loads((stopped["sweep"] / "sweep.json").read_text())
    seq = doc["sequential"]
    n = seq["n"]
    assert seq["comparisons"]["bet"] == {
        "n": n,
        "verdict": "supported",
        "reason": "the wealth for the claim reached 1/alpha",
    }
    assert seq["reason"] == "every served comparison's rule stopped" and 2 <= n < 40
    assert doc["counts"] == {"items": 40, "measured": n, "arms": 2, "rows": n * 2 * 8}
    ids = [json.loads(x)["item_id"] for x in (stopped["sweep"] / "items.jsonl").read_text().splitlines()]
    rows = obs.read_jsonl(stopped["sweep"] / obs.JSONL)
    assert sorted({r["item_id"] for r in rows}, key=ids.index) == ids[:n]  # the committed order's first n
    journal = [json.loads(x) for x in (stopped["sweep"] / "journal.jsonl").read_text().splitlines()]
    assert [e["entry"] for e in journal] == ["start", "serve"] + ["rows"] * n + ["stop"]
    assert journal[-1]["n"] == n and f"stopped after {n} worlds" in stopped["stdout"]


def test_its_decision_recomputes_the_stop_and_refuses_a_forged_one(stopped, tmp_path):
    code, out, err = invoke("compare", stopped["cmp"], "--sweep", stopped["sweep"], "--json")
    assert code == 0, err
    d = json.loads(out)
    seq = json.loads((stopped["sweep"] / "sweep.json").read_text())["sequential"]
    assert d["method"] == "paired_betting" and d["n"] == seq["n"] == d["sequential"]["stopped_at"]
    assert d["verdict"] == "supported" and float(d["lower_bound"]) > 0 and d["valid_at"].startswith("every n")
    assert invoke("compare", stopped["cmp"], "--verify")[0] == 0
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(stopped["root"], root)
    edit_json(root / "sweep" / "sweep.json", lambda s: s["sequential"]["comparisons"]["bet"].update(n=seq["n"] - 1))
    with pytest.raises(ExperimentError, match="sweep manifest records bet stopping at n"):
        from experiments import compare as cmp

        blobs = {
            k: (root / "bet" / p).read_bytes()
            for k, p in (("spec", "spec.json"), ("freeze", "freeze.json"), ("deviations", "deviations.json"))
        }
        blobs["rules"] = cmp.rules_source()
        for kind, name in cmp.SWEEP_FILES[:5]:
            blobs[kind] = (root / "sweep" / name).read_bytes()
        cmp.compute_decision(blobs)


def test_nothing_after_the_stop_runs_and_a_resume_continues_mid_sequence(stopped, bundle_dir, tmp_path, monkeypatch):
    n = json.loads((stopped["sweep"] / "sweep.json").read_text())["sequential"]["n"]
    seen, real = [], executors.host_run

    def interrupted(task):
        if len(seen) == 5:
            raise KeyboardInterrupt  # an operator's ^C after five worlds
        seen.append(task["row"]["item_id"])
        return real(task)

    monkeypatch.setattr(executors, "host_run", interrupted)
    out = tmp_path / "sweep"
    code, _, err = run(out, bundle_dir, stopped["cmp"])
    assert code == 1 and "aborted" in err  # the interrupt is one line; the five finished worlds are kept
    assert len(seen) == 5 and not (out / "sweep.json").exists()
    seen.clear()
    monkeypatch.setattr(executors, "host_run", lambda task: seen.append(task["row"]["item_id"]) or real(task))
    code, _, err = run(out, bundle_dir, stopped["cmp"])
    assert code == 0, err
    # the resume computed only the worlds from the sixth to the stop (plus the reused sample it re-checked)
    doc = json.loads((out / "sweep.json").read_text())
    rechecked = doc["volatile"]["resume_rechecked"]
    assert len([i for i in seen if i not in rechecked]) == n - 5 and len(rechecked) == 4
    assert files(out) == files(stopped["sweep"])


def test_two_workers_give_the_same_files(stopped, bundle_dir, tmp_path):
    code, _, err = run(tmp_path / "two", bundle_dir, stopped["cmp"], "--workers", 2)
    assert code == 0, err
    assert files(tmp_path / "two") == files(stopped["sweep"])


def test_a_fixed_n_comparison_beside_it_makes_the_sweep_run_every_world_and_modal_is_refused(
    stopped, bundle_dir, tmp_path
):
    from experiments import sequential
    from experiments.decide import parse_spec

    betting = {"name": "bet", "spec": parse_spec((stopped["cmp"] / "spec.json").read_bytes())}
    fixed = {"name": "h", "spec": write_spec(tmp_path / "h", items=ITEMS)}
    assert [m.name for m in sequential.monitors_for([betting])] == ["bet"]
    assert sequential.monitors_for([betting, fixed]) == []
    code, _, err = run(tmp_path / "m", bundle_dir, stopped["cmp"], "--executor", "modal")
    assert code == 1 and "a sequential sweep" in one_line_error(err)
    assert not os.path.exists(tmp_path / "m")  # refused before anything was written
