"""The pilot's figures and criteria (launchers/_pilot.py) over the published local-model attempts: real
llama-cpp records, judged exactly as a paid pilot's are -- validity from the worker's invalid artefacts,
failures from unresolved calls, cost against a zero estimate, budget halts -- and the latency from volatile."""

import glob
import json
import os

import pytest

from launchers import _pilot

from .conftest import REPO


def _local_records():
    out = []
    for path in sorted(glob.glob(os.path.join(REPO, "runs", "attempts", "*", "record.json"))):
        with open(path) as fh:
            record = json.load(fh)
        c = record["content"]
        if c["model"]["provider"] == "llama-cpp" and c.get("schema_version", 0) >= 3:
            out.append(record)
    return out


def test_the_pilot_judges_real_local_model_records():
    records = _local_records()
    if not records:
        pytest.fail("no published llama-cpp attempt of schema 3 in runs/attempts")
    model = records[0]["content"]["model"]["id"]
    terms = _pilot.terms({model: 0}, 2000, 300, 1)
    # every published attempt: a call an operator stop (or a host's death) left unanswered is a failed call
    everything = _pilot.figures(records)
    unanswered = sum(len(r["content"]["cost"]["unresolved_calls"]) for r in records)
    assert (everything["calls"], everything["failed_calls"]) == (
        sum(r["content"]["cost"]["calls"] for r in records),
        unanswered,
    )
    # the completed ones, as a pilot of completed attempts would be judged
    records = [r for r in records if r["content"]["termination"]["status"] == "completed"]
    figs = _pilot.figures(records)
    calls = sum(r["content"]["cost"]["calls"] for r in records)
    invalid = sum(r["content"]["invalid_artefacts"] for r in records)
    assert (figs["attempts"], figs["calls"], figs["failed_calls"]) == (len(records), calls, 0)
    assert figs["validity_bps"] == (calls - invalid) * 10000 // calls and figs["committed_micro_usd"] == 0
    verdicts = {c["criterion"]: (c["result"], c["value"]) for c in _pilot.judge(figs, terms, model)}
    assert verdicts["cost"] == ("PASS", 0) and verdicts["failures"] == ("PASS", 0)
    assert verdicts["budget_halts"] == ("PASS", 0)
    assert verdicts["validity"][0] == ("PASS" if figs["validity_bps"] >= 8000 else "FAIL")
    lat = _pilot.latency(records)
    assert lat["calls"] == calls and lat["p50_ms"] <= lat["p90_ms"] <= lat["max_ms"]
