"""Candidates: a file of daily batches for one fixture, and how it is graded.

A candidate is `{"format": 1, "fixture_sha256": ..., "instance_id": ...,
"batches": [batch, ...]}` with at most one batch per checkpoint. Grading runs
it through a fresh desk: a checkpoint without a batch is closed unanswered, a
batch the desk rejects (for example a roll of a trade that never came to be)
counts as missing. A candidate whose shape is wrong is MALFORMED; one whose
fixture has no valid reference is UNSCORABLE.
"""

import re

from ._baselines import policy_batch
from ._batch import MAX_ID, MAX_TEXT, check_batch_shape
from ._errors import BatchRejected, DeskError, InputError, field, shown
from ._grade import economics, result_sha256, scored_result, unscored_result
from ._run import Run
from ._world import fixture_sha256, validate_instance

CANDIDATE_FORMAT = 1  # bump when a field changes meaning
CANDIDATE_KEYS = {"format", "fixture_sha256", "instance_id", "label", "batches"}
_HEX64 = re.compile(r"[0-9a-f]{64}")


def play_policy(instance, policy="reference") -> Run:
    """Run a scripted policy through every checkpoint and the carry horizon (no receipts)."""
    run = Run(instance, receipts=False)
    while run.open_day is not None:
        batch = policy_batch(policy, run.packet())
        run.submit(batch)
    run.finalize()
    return run


def played_candidate(instance, policy="reference", label=None):
    """(candidate, run): a scripted policy's candidate and the (scratch, receipt-less)
    run it was played in (every checkpoint submitted, not finalised)."""
    run = Run(instance, receipts=False)
    batches = []
    while run.open_day is not None:
        batch = policy_batch(policy, run.packet())
        run.submit(batch)
        batches.append(batch)
    return {"format": CANDIDATE_FORMAT, "fixture_sha256": run.fixture_sha256, "instance_id": instance["instance_id"],
            "label": label or policy, "batches": batches}, run


def policy_candidate(instance, policy="reference", label=None) -> dict:
    return played_candidate(instance, policy, label)[0]


def gold_candidate(instance) -> dict:
    """The reference plan: the reference policy's actions and reports for every day."""
    return policy_candidate(instance, "reference", "gold")


def check_candidate_shape(candidate, instance):
    if not isinstance(candidate, dict):
        raise BatchRejected("candidate: expected a JSON object with fixture_sha256 and batches")
    extra = sorted(set(candidate) - CANDIDATE_KEYS)
    if extra:
        raise BatchRejected(f"{field('candidate', extra[0])}: unknown field")
    fmt = candidate.get("format")
    if type(fmt) is not int or fmt != CANDIDATE_FORMAT:  # (true == 1 in Python)
        raise BatchRejected(f"candidate.format: expected {CANDIDATE_FORMAT}, got {shown(fmt)} (newer formats are refused)")
    fixture = candidate.get("fixture_sha256")
    if not isinstance(fixture, str) or not _HEX64.fullmatch(fixture):
        raise BatchRejected("candidate.fixture_sha256: expected 64 lowercase hexadecimal characters "
                            "(the sha256 of the fixture it answers)")
    for key, limit in (("instance_id", MAX_ID), ("label", MAX_TEXT)):  # informative, but bounded
        if key in candidate:
            if not isinstance(candidate[key], str):
                raise BatchRejected(f"candidate.{key}: expected a string")
            if len(candidate[key]) > limit:
                raise BatchRejected(f"candidate.{key}: longer than {limit} characters")
    batches = candidate.get("batches")
    if not isinstance(batches, list):
        raise BatchRejected("candidate.batches: expected a list of daily batches")
    horizon = instance["horizon"]
    if len(batches) > horizon:
        raise BatchRejected(f"candidate.batches: {len(batches)} batches for {horizon} checkpoints")
    assets = {a["id"] for a in instance["assets"]}
    days = set()
    for i, batch in enumerate(batches):
        check_batch_shape(batch, where=f"candidate.batches[{i}]")
        for aid in sorted(batch["report"]["assets"]):
            if aid not in assets:
                raise BatchRejected(f"candidate.batches[{i}].report.assets: {shown(aid)} is not an asset of this world")
        day = batch["day"]
        if not 1 <= day <= horizon:
            raise BatchRejected(f"candidate.batches[{i}].day: expected 1..{horizon}, got {day}")
        if day in days:
            raise BatchRejected(f"candidate.batches[{i}].day: a second batch for day {day}")
        days.add(day)


def reference_economics(instance, run=None) -> dict:
    """Cost and tail of the reference plan; UNSCORABLE if the reference is invalid.
    `run` is the reference plan already played and finalised (a sweep plays it once
    for both the gold candidate and these economics); None plays it here."""
    run = play_policy(instance, "reference") if run is None else run
    refused = [d for day in run.days for d in day["decisions"] if d["decision"] != "ACCEPTED"]
    fails = [b for b in run.book["breaches"] if b["code"] == "SETTLEMENT_FAIL"]
    if refused or fails:
        raise DeskError("the reference plan is invalid for this fixture")
    return economics(run)


def grade_candidate(candidate, instance, reference=None) -> dict:
    """Grade a candidate against a fixture: a result with status, verdict and score."""
    return grade_with_run(candidate, instance, reference)[0]


def grade_with_run(candidate, instance, reference=None):
    """(result, run): the run is None when the candidate was never played.

    `reference` is `reference_economics(instance)` computed by the caller, so a
    sweep grading many candidates of one world plays the reference plan once;
    None computes it here. An invalid reference (DeskError) is UNSCORABLE
    either way."""
    try:
        validate_instance(instance)
        fixture = fixture_sha256(instance)
    except InputError as exc:
        return unscored_result("UNSCORABLE", f"reference invalid: {exc.message}"), None
    try:
        check_candidate_shape(candidate, instance)
    except BatchRejected as exc:
        return unscored_result("MALFORMED", exc.message, fixture), None
    if candidate["fixture_sha256"] != fixture:
        return unscored_result("UNSCORABLE", f"no reference for fixture {candidate['fixture_sha256'][:16]}: "
                               f"this evaluator holds {instance['instance_id']} ({fixture[:16]})", fixture), None
    try:
        ref = reference_economics(instance) if reference is None else reference
    except DeskError as exc:
        return unscored_result("UNSCORABLE", exc.message, fixture), None
    run = Run(instance)
    by_day = {b["day"]: b for b in candidate["batches"]}
    rejections = []
    while run.open_day is not None:
        batch = by_day.get(run.open_day)
        if batch is None:
            run.skip()
            continue
        try:
            run.submit(batch)
        except BatchRejected as exc:
            rejections.append({"day": run.open_day, "error": exc.message})
            run.skip()
    run.finalize()
    result = scored_result(run, ref)
    for r in rejections:
        result["days"][r["day"] - 1]["batch"] = "rejected"
        result["days"][r["day"] - 1]["error"] = r["error"]
    run.seal(result_sha256(result))
    result["receipts_head"] = run.head
    return result, run
