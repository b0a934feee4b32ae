"""The launcher's use of the desk: a salted history, rebuilding one from its
receipts (to continue an interrupted attempt) and what the receipts say.

The receipts are the truth about an attempt: how many checkpoints were
settled with a batch and how many actions were accepted are counted from them,
never from the controller's memory. The world commitment's secret salt is
generated here, kept host-side while the attempt runs and written into the
record when it ends, so a cached replay or a continuation can rebuild the
same chain.
"""

import secrets

import engine

from ._errors import InputError


def world(family, seed, horizon):
    """The world a task names (family, seed, horizon), as the engine generates it: the one way a task record, a
    command line or a logged sample becomes a world. The engine's refusals pass through (ValueError for a family
    or seed it does not know, engine.DeskError for a horizon)."""
    return engine.with_horizon(engine.generate(family, seed), horizon)


def new_salt():
    """A fresh secret salt for the world commitment (32 bytes, hex), revealed in the record at the end."""
    return secrets.token_hex(32)


def init_history(history, instance, horizon, salt):
    return history.init(instance, horizon, salt)


def replay(instance, receipts, head, salt):
    return engine.replay(instance, receipts, head, salt)


def rebuild(history, instance, horizon, salt, receipts, head):
    """Re-apply a settled history through the desk runtime (batches submitted, skipped checkpoints advanced)
    into a new history file; refuses unless it reaches the recorded head. Returns the run."""
    init_history(history, instance, horizon, salt)
    for r in receipts:
        if r["kind"] == "BATCH":
            history.submit(r["payload"]["batch"])
        elif r["kind"] == "CLOSE" and r["payload"].get("phase") == "checkpoint" and not r["payload"].get("batch"):
            history.advance()
        elif r["kind"] == "FINAL":
            raise InputError("the attempt's run is finalised: there is nothing to continue")
    run = history.load()[1]
    if run.head != head:
        raise InputError(
            f"rebuilding the settled history reached {run.head['hash'][:12]} at size {run.head['size']}, "
            f"the record says {head['hash'][:12]} at size {head['size']}"
        )
    return run


def counts(receipts) -> dict:
    """What the receipts say was settled: checkpoints with a batch, actions accepted and refused, the batches."""
    batches = [r for r in receipts if r["kind"] == "BATCH"]
    actions = [r for r in receipts if r["kind"] == "ACTION"]
    return {
        "settled_days": len(batches),
        "accepted_actions": sum(1 for r in actions if r["payload"].get("decision") == "ACCEPTED"),
        "refused_actions": sum(1 for r in actions if r["payload"].get("decision") != "ACCEPTED"),
        "batches": [(r["day"], engine.content_sha256(r["payload"]["batch"])) for r in batches],
        "skipped_days": [
            r["day"]
            for r in receipts
            if r["kind"] == "CLOSE" and r["payload"].get("phase") == "checkpoint" and not r["payload"].get("batch")
        ],
        "finalised": any(r["kind"] == "FINAL" for r in receipts),
    }


def decisions_after(receipts, batch_index):
    """The ACTION decisions that follow the `batch_index`-th BATCH receipt (for a proposal the journal never answered)."""
    seen, out = -1, []
    for r in receipts:
        if r["kind"] == "BATCH":
            seen += 1
            if seen > batch_index:
                break
            continue
        if seen == batch_index and r["kind"] == "ACTION":
            p = r["payload"]
            out.append(
                {
                    "action": p["action"].get("id"),
                    "type": p.get("type"),
                    "decision": p.get("decision"),
                    "reason": p.get("reason"),
                }
            )
    return out
