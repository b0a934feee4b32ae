"""Replay: rebuild a run from its world and its receipts alone, and verify.

First the chain itself is checked (sequence, links, hashes, and the head if one
is given). Then the desk is re-run from the world, feeding it the batches found
in the BATCH receipts and closing unanswered days where CLOSE receipts say so;
every receipt it produces must equal the stored one. The first difference is
named by sequence number, kind and field.
"""

from ._candidate import reference_economics
from ._errors import BatchRejected, DeskError, ReplayMismatch
from ._grade import result_sha256, scored_result, unscored_result
from ._receipts import compare_receipts, verify_chain
from ._run import Run
from ._commitment import public_salt, world_commitment
from ._world import fixture_sha256


def final_result(run):
    """The graded result of a finalised run (UNSCORABLE if its reference is invalid)."""
    try:
        ref = reference_economics(run.instance)
    except DeskError as exc:
        return unscored_result("UNSCORABLE", exc.message, run.fixture_sha256)
    return scored_result(run, ref)


def finalize_and_grade(run):
    """Close the run (remaining checkpoints unanswered, then the carry horizon),
    grade it and seal the result into the chain; returns the result with its head."""
    run.finalize()
    result = final_result(run)
    run.seal(result_sha256(result))
    result["receipts_head"] = run.head
    return result


def replay(instance, stored, expected_head=None, salt=None) -> Run:
    """Rebuild and verify; returns the rebuilt run (state equal to the runtime's).

    `salt` is the run's world-commitment salt (None: the public salt)."""
    fixture = fixture_sha256(instance)
    verify_chain(stored, world_commitment(fixture, public_salt(fixture) if salt is None else salt), expected_head)
    run = Run(instance, salt)
    pos = compare_receipts(run.receipts, stored, 0)
    while pos < len(stored):
        before = len(run.receipts)
        r = stored[pos]
        if run.open_day is not None:
            if r["kind"] == "BATCH" and r["day"] == run.open_day:
                if "batch" not in r["payload"]:
                    raise ReplayMismatch(f"receipt {r['seq']} (BATCH, day {r['day']}): payload.batch: missing",
                                         seq=r["seq"], field="payload.batch")
                try:
                    run.submit(r["payload"]["batch"])
                except BatchRejected as exc:
                    raise ReplayMismatch(f"receipt {r['seq']} (BATCH, day {r['day']}): the desk rejects this batch: {exc.message}",
                                         seq=r["seq"], field="payload.batch")
            elif r["kind"] in ("FLOW", "BREACH", "CLOSE") and r["day"] == run.open_day:
                run.skip()  # the day was closed without a batch: its flows come first
            else:
                raise ReplayMismatch(f"receipt {r['seq']} ({r['kind']}, day {r['day']}): the desk expects a batch or a close for day {run.open_day}",
                                     seq=r["seq"], field="kind")
        elif not run.finalized:
            run.finalize()
        elif r["kind"] == "FINAL":
            run.sealed_result = final_result(run)  # as graded before the seal: `result` compares it
            run.seal(result_sha256(run.sealed_result))
        else:
            raise ReplayMismatch(f"receipt {r['seq']} ({r['kind']}): nothing follows the FINAL receipt", seq=r["seq"], field="kind")
        pos = compare_receipts(run.receipts[before:], stored, pos)
    return run
