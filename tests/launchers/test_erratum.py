"""The grammar-1 erratum (launchers/_erratum.py, experiments/erratum.py): a day is named when grammar 1 could not
state its truthful report, the bound is the grade with the truth on those days, the file is recomputed byte for
byte, and the figures the site states are the file's."""

import json
import os

import pytest

import engine
from experiments import erratum as study_erratum
from launchers import _erratum
from launchers._errors import InputError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PUBLISHED = os.path.join(ROOT, "runs", "errata", "grammar-1.json")


def _attempt(tmp_path, family="FUND_04", seed=1, lie_on=(1,), name="a1", policy="do-nothing"):
    """A record decoded under grammar 1 that plays a scripted policy and reports the truth, except on `lie_on` days,
    where it reports no breach (what grammar 1 forced when the truth held a SETTLEMENT_FAIL)."""
    instance = engine.with_horizon(engine.generate(family, seed), 20)
    run = engine.Run(instance)
    proposals = []
    while run.open_day is not None:
        packet = run.packet()
        actions = engine.policy_batch(policy, packet)["actions"]
        report = engine.project(packet, actions)["report"]
        if packet["day"] in lie_on:
            report = dict(report, breaches=[])
        batch = {"day": packet["day"], "actions": actions, "report": report}
        run.submit(batch)
        proposals.append({"day": packet["day"], "outcome": "accepted", "batch": batch})
    result = engine.session.finalize_and_grade(run)
    content = {
        "attempt_id": name,
        "model": {"id": "m"},
        "task": {"family": family, "seed": seed, "horizon": 20},
        "termination": {"status": "completed"},
        "sampling": {"grammar": _erratum.GRAMMAR_1},
        "salt": None,
        "result": result,
        "proposals": proposals,
        "settled_days": 20,
    }
    folder = tmp_path / name
    folder.mkdir()
    (folder / "record.json").write_text(json.dumps({"content": content}))
    return folder / "record.json", instance, proposals, result


def test_a_settlement_failure_day_is_named_and_the_bound_is_the_grade_with_the_truth(tmp_path):
    path, instance, proposals, result = _attempt(tmp_path)
    entry = _erratum.attempt_erratum(str(path))
    assert [d["day"] for d in entry["inexpressible_days"]] == [1]
    assert entry["inexpressible_days"][0]["reasons"] == [
        "report/breaches/0/code: 'SETTLEMENT_FAIL' is not one of ['BUFFER_BREACH']"
    ]
    truthful = engine.Run(instance)
    for p in proposals:  # the same play with the truth on day 1: what the bound must grade to
        batch = (
            dict(p["batch"], report=engine.project(truthful.packet(), [])["report"]) if p["day"] == 1 else p["batch"]
        )
        truthful.submit(batch)
    want = engine.session.finalize_and_grade(truthful)
    assert entry["points"] == result["score"]["points"]
    assert entry["bound"] == {
        "points": want["score"]["points"],
        "verdict": want["verdict"],
        "withheld_at_most": want["score"]["points"] - result["score"]["points"],
    }
    assert entry["bound"]["withheld_at_most"] > 0


def test_a_truthful_day_grammar_1_could_state_is_not_named(tmp_path):
    path, *_ = _attempt(tmp_path, family="FUND_01", seed=1, lie_on=(), policy="reference")
    assert _erratum.attempt_erratum(str(path))["inexpressible_days"] == []


def test_a_record_whose_result_is_not_what_its_batches_grade_to_is_refused_by_name(tmp_path):
    path, *_ = _attempt(tmp_path)
    rec = json.loads(path.read_text())
    rec["content"]["result"]["score"]["points"] += 7
    path.write_text(json.dumps(rec))
    with pytest.raises(InputError, match=r"record.json: content.result: the replayed batches grade to \d+/100"):
        _erratum.attempt_erratum(str(path))


def test_only_attempts_decoded_under_grammar_1_are_examined(tmp_path):
    _attempt(tmp_path, name="a1")
    path, *_ = _attempt(tmp_path, name="a2")
    rec = json.loads(path.read_text())
    rec["content"]["sampling"]["grammar"] = "fundbook.desk-grammar/2"
    path.write_text(json.dumps(rec))
    doc = _erratum.erratum(str(tmp_path))
    assert [a["attempt_id"] for a in doc["attempts"]] == ["a1"]
    assert doc["summary"]["attempts"] == 1 and doc["summary"]["inexpressible_days"] == 1


def test_check_refuses_an_edited_erratum_and_a_stray_file(tmp_path, capsys):
    folder = tmp_path / "errata"
    folder.mkdir()
    target = folder / "grammar-1.json"
    with open(PUBLISHED, "rb") as fh:
        published = fh.read()
    edited = json.loads(published)
    edited["attempts"][0]["bound"]["withheld_at_most"] = 0
    target.write_bytes(json.dumps(edited).encode())
    assert study_erratum.main(["check", str(target)]) == 1
    assert "differs from the erratum this checkout computes" in capsys.readouterr().err
    target.write_bytes(published)
    (folder / "grammar-2.json").write_text("{}")
    assert study_erratum.main(["check", str(target)]) == 1
    assert "grammar-2.json: no erratum names this file" in capsys.readouterr().err


def test_the_figures_the_site_states_are_the_erratums():
    with open(PUBLISHED, encoding="utf-8") as fh:
        doc = json.load(fh)
    with open(os.path.join(ROOT, "site", "limitations.md"), encoding="utf-8") as fh:
        page = " ".join(fh.read().split())
    s = doc["summary"]
    days = [d for a in doc["attempts"] for d in a["inexpressible_days"]]
    breach = sum(1 for d in days if any("/breaches/" in r for r in d["reasons"]))
    approvals = sum(1 for d in days if any("open_approvals" in r for r in d["reasons"]))
    withheld = [a["bound"]["withheld_at_most"] for a in doc["attempts"] if a["bound"]]
    scored = sum(1 for a in doc["attempts"] if a["bound"])
    assert scored == s["with_inexpressible_days"]  # every attempt with a result had such a day
    assert f"Of the {s['attempts']} attempts decoded under grammar 1, the {scored} with a result" in page
    assert f"{s['inexpressible_days']} days in all, {breach} whose truthful breaches" in page
    assert f"and {approvals} whose truthful open approvals" in page
    assert f"At most {min(withheld)} to {max(withheld)} points an attempt, {s['withheld_at_most']} in all" in page
    assert all(a["bound"]["verdict"] == a["verdict"] for a in doc["attempts"] if a["bound"])
    study = doc["studies"][0]["comparisons"]
    sc, dn = study["smollm2-vs-shortest-cheapest"], study["smollm2-vs-do-nothing"]
    assert (sc["verdict_changes"], dn["verdict_changes"]) == (False, True)
    assert f"stops at n = {sc['with_bound']['n']} instead of {sc['as_run']['n']}" in page
    assert f"(wealth against {float(dn['with_bound']['wealth_against']):.2f}, short of 20)" in page
    assert f"within the {doc['studies'][0]['worlds']} worlds measured" in page
