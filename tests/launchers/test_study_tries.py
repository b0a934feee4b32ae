"""A study's worlds bind their tries (issue 32, item 6), on a copy of the published attempts: world 14
(FUND_02/seed-4713063772447979) was stopped by the operator and tried once more (`.2`, completed). Swapping
the two tries' folders, or deleting the stopped try and renaming the retry into its place, passed `make
verify-study` before; each is now refused by name, as is a try missing before its retry and a try after a
world's attempt ended for good."""

import json
import os
import shutil

import pytest

from experiments import arm_model, study, study_files
from experiments.arms import parse_arms
from experiments.errors import ExperimentError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STUDY = os.path.join(REPO, "runs", "studies", "smollm2-heldout")
ATTEMPTS = os.path.join(REPO, "runs", "attempts")
WORLD = "FUND_02/seed-4713063772447979"
FIRST = "SmolLM2-135M-Instruct.Q4_1-9a55afd8-FUND_02-seed-4713063772447979"
RETRY = FIRST + ".2"
FINAL = "SmolLM2-135M-Instruct.Q4_1-9a55afd8-FUND_01-seed-950255633613416"  # world 1: one try, completed


@pytest.fixture
def attempts(tmp_path, monkeypatch):
    """A copy of the published attempts folder, the one the model arm reads."""
    copy = tmp_path / "attempts"
    shutil.copytree(ATTEMPTS, copy)
    monkeypatch.setenv(arm_model.ATTEMPTS_ENV, str(copy))
    return copy


def _arm_and_row(world):
    doc = study.load(STUDY)
    recorded = study._recorded(os.path.join(STUDY, doc["sweep"]), doc)
    arm = parse_arms([doc["arms"][0]], recorded)[0]
    with open(os.path.join(STUDY, doc["sweep"], "items.jsonl")) as fh:
        row = next(r for r in map(json.loads, fh) if r["item_id"] == world)
    return dict(arm, read_only=True), row


def _swap(a, b):
    tmp = a.parent / "swap"
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)


def test_the_published_world_reads_its_retry_and_lists_both_tries(attempts):
    arm, row = _arm_and_row(WORLD)
    record, path = arm_model.attempt_for(arm, row)
    assert (record["content"]["attempt_id"], path) == (RETRY, str(attempts / RETRY / "record.json"))
    assert [i for i, _ in arm_model.tries(arm, row)] == [FIRST, RETRY]


def test_two_tries_swapped_are_refused_by_name(attempts):
    _swap(attempts / FIRST, attempts / RETRY)
    arm, row = _arm_and_row(WORLD)
    with pytest.raises(ExperimentError) as err:
        arm_model.attempt_for(arm, row)
    assert str(err.value) == (
        f"{attempts}/{FIRST}/record.json: the record is attempt '{RETRY}', read from the folder "
        f"of try {FIRST}: each try is kept in its own folder under its own id (two tries "
        f"swapped, or a try renamed into another's place)"
    )


def test_a_retry_renamed_into_the_place_of_its_deleted_first_try_is_refused(attempts):
    shutil.rmtree(attempts / FIRST)
    (attempts / RETRY).rename(attempts / FIRST)
    arm, row = _arm_and_row(WORLD)
    with pytest.raises(ExperimentError, match=f"the record is attempt '{RETRY}', read from the folder of try {FIRST}"):
        arm_model.attempt_for(arm, row)


def test_a_deleted_first_try_is_named(attempts):
    shutil.rmtree(attempts / FIRST)
    arm, row = _arm_and_row(WORLD)
    with pytest.raises(ExperimentError) as err:
        arm_model.attempt_for(arm, row)
    assert str(err.value) == (
        f"{attempts}/{FIRST}: item {WORLD}'s try {FIRST} is missing, but its later try {RETRY} "
        f"is present: every try of a world is kept"
    )


def test_a_try_after_a_world_s_attempt_ended_for_good_is_refused(attempts):
    arm, row = _arm_and_row("FUND_01/seed-950255633613416")
    shutil.copytree(attempts / FINAL, attempts / (FINAL + ".2"))
    with pytest.raises(ExperimentError) as err:
        arm_model.attempt_for(arm, row)
    assert str(err.value).startswith(
        f"{attempts}/{FINAL}.2: a try of item FUND_01/seed-950255633613416 after its try {FINAL} ended completed: "
    )


@pytest.mark.long
@pytest.mark.parametrize("tamper", ["swap", "rename"])
def test_verify_study_refuses_the_tampered_tries(attempts, tamper, capsys):
    """The whole `make verify-study` path (python -m experiments.study verify) on the tampered copy: exit 1,
    the try named (this passed before issue 32)."""
    if tamper == "swap":
        _swap(attempts / FIRST, attempts / RETRY)
    else:
        shutil.rmtree(attempts / FIRST)
        (attempts / RETRY).rename(attempts / FIRST)
    assert study.main(["verify", STUDY]) == 1
    err = capsys.readouterr().err
    assert f"/{FIRST}/record.json: the record is attempt '{RETRY}'" in err and len(err.strip().splitlines()) == 1


def test_the_published_evidence_lists_every_try_and_inputs_every_world():
    """Both decisions' evidence list the files of the 28 tries of the 26 measured worlds (worlds 14 and 20 tried
    twice), each with its sha256; inputs.json names all 26 worlds (it named the last session's 13)."""
    with open(os.path.join(STUDY, "sweep", "inputs.json")) as fh:
        assert [len(v) for v in json.load(fh).values()] == [26]
    for comparison in ("smollm2-vs-do-nothing", "smollm2-vs-shortest-cheapest"):
        with open(os.path.join(STUDY, comparison, "evidence.json")) as fh:
            listed = [f for f in json.load(fh)["files"] if f["kind"] == "attempt"]
        folders = sorted({f["path"].split("/")[-2] for f in listed})
        assert len(folders) == 28 and FIRST in folders and RETRY in folders
        assert all(f["path"].startswith("../../../attempts/") and len(f["sha256"]) == 64 for f in listed)
        assert len(listed) == sum(len(os.listdir(os.path.join(ATTEMPTS, d))) for d in folders)


def test_an_attempt_file_the_evidence_does_not_list_is_named(attempts):
    (attempts / RETRY / "notes.json").write_text("{}")
    tries = study._tries(STUDY)
    with pytest.raises(
        ExperimentError,
        match=f"evidence.json: does not list the study's attempt files as they are "
        f"\\(first difference: {RETRY}/notes.json, sha256 44136fa355b3678a\\)",
    ):
        study_files.check_attempts(
            os.path.join(STUDY, study.load(STUDY)["sweep"]), os.path.join(STUDY, "smollm2-vs-do-nothing"), tries
        )
    (attempts / RETRY / "notes.json").unlink()
    ledger = attempts / FIRST / "ledger.jsonl"
    ledger.write_bytes(ledger.read_bytes() + b"\n")  # a stopped try's file edited: its own record refuses it
    with pytest.raises(ExperimentError, match=f"{FIRST}/record.json: the recorded attempt does not verify .*ledger"):
        study._tries(STUDY)


def test_the_status_lists_each_world_s_tries_and_verify_requires_them():
    """status.json (committed, required byte for byte by verify-study) lists each world's tries: worlds 14 and
    20 their stopped first try and its retry, every other world its one try."""
    with open(os.path.join(STUDY, "status.json")) as fh:
        worlds = json.load(fh)["per_world"]
    tries = {w["item_id"]: w["tries"] for w in worlds}
    assert tries[WORLD] == [FIRST, RETRY]
    assert sorted(len(t) for t in tries.values()) == [1] * 24 + [2, 2]
