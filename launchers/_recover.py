"""The end of an attempt: the record assembled from the partial folder's files, the project ledger settled, the
folder renamed (`finish`), and `recover` for an attempt whose host died, from whichever step boundary it died
at (`_crash.BOUNDARIES`): a folder that never consumed its claim is cleared, a record already written is
settled and moved, anything else is assembled as an `incomplete_execution`."""

import os
import shutil

import engine

from . import ATTEMPT_SCHEMA_VERSION, _desk
from ._claims import marker_state
from ._crash import boundary
from ._errors import InputError, LaunchError, OutputExists
from ._journal import STATUS_NAME, Journal, now_iso, parse_iso, read_journal, write_status
from ._jsonfile import fsync_dir
from ._ledger import Ledger, load_ledger
from ._lock import LOCK_NAME, AttemptLock
from ._project import ProjectLedger
from ._record import read_record, summary_text, transcript_doc, write_attempt
from ._staging import NEVER_STAGED_PATHS

RECOVERED_END = {
    "status": "incomplete_execution",
    "limit": "infrastructure",
    "worker_exit_code": None,
    "reason": "the host controller stopped mid-attempt (it died, or lost its power); the record was "
    "recovered from its partial directory",
}
WORKING_FILES = ("desk.sqlite", "journal.jsonl", STATUS_NAME)


class NothingSpent(LaunchError):
    """`recover` found an attempt that never consumed its claim: its folder is cleared, the claim still usable."""


def what(exc):
    """An exception as one line of a message."""
    return exc.format_message() if isinstance(exc, LaunchError) else f"{type(exc).__name__}: {exc}"


def _clear(partial, lock, why):
    lock.release()
    shutil.rmtree(partial, ignore_errors=True)
    raise NothingSpent(f"{partial}: {why}: nothing was spent and the claim was not consumed; the folder was removed")


def recover(partial, out, project=None, state=None):
    """Finish an attempt whose host died, from its partial directory (refused while it is live), from whichever
    step boundary the host died at: clear a folder that never consumed its claim (NothingSpent); settle and move a
    record already written; otherwise assemble the record (an `incomplete_execution`) and settle it."""
    if not os.path.isdir(partial):
        raise InputError(f"{partial}: not an unfinished attempt (no such folder)")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise OutputExists(f"{out}: exists and is not empty")
    lock = AttemptLock(partial).acquire()
    journal_path = os.path.join(partial, "journal.jsonl")
    if _complete_record(partial) is not None:  # the host died after record.json was in place
        return finish(partial, out, recovered=True, lock=lock, project=project)
    if not os.path.exists(journal_path):
        _clear(partial, lock, "the host stopped before the attempt's start was journaled")
    try:
        events = read_journal(journal_path)
    except InputError:
        if not _has_whole_line(journal_path):  # the host died writing the start: the claim was never touched
            _clear(partial, lock, "the host stopped while the attempt's start was being journaled")
        lock.release()
        raise
    start = events[0][2]
    claim = start["claim"]
    journal = Journal(journal_path)
    if not any(kind == "consumed" for kind, _, _ in events):
        root = state or start.get("state_dir")
        found = marker_state(root, claim["id"], claim["consumption"]["nonce"]) if root else "ours"
        if found != "ours":
            _clear(
                partial,
                lock,
                "the host stopped before the claim was consumed"
                + (" (another attempt consumed it)" if found == "theirs" else ""),
            )
        journal.write("consumed", {"nonce": claim["consumption"]["nonce"], "recovered": True})
    folder = project or (_last(events, "project") or {}).get("dir") or start.get("project_dir")
    if _last(events, "project") is None and folder:
        doc = {"claim": claim, "sha256": claim["sha256"], "consumption": claim["consumption"]}
        entry = ProjectLedger(folder).open_claim(doc, start["attempt_id"], None, recovering=True)
        journal.write(
            "project", {"dir": os.path.abspath(folder), "seq": entry["seq"], "hash": entry["hash"], "recovered": True}
        )
        events = read_journal(journal_path)
    left = _sandbox_info(events)
    if start.get("sandbox") == "modal" and left.get("app_created") and not left.get("app_stopped"):
        from ._sandbox_modal import stop_leftovers  # leave no app behind that the launcher created

        journal.write("sandbox", stop_leftovers(left))
    return finish(partial, out, recovered=True, lock=lock, project=folder)


def _has_whole_line(path):
    from ._jsonfile import read_head

    head = read_head(path, 1 << 20)
    return head is None or b"\n" in head


def _complete_record(folder):
    path = os.path.join(folder, "record.json")
    if not os.path.exists(path):
        return None
    try:
        return read_record(path)
    except InputError:
        return None


def _last(events, kind):
    found = [body for k, _, body in events if k == kind]
    return found[-1] if found else None


def _sandbox_info(events):
    """The latest word on the sandbox: its start, the end of the attempt, or a later clean-up by `recover`."""
    info = {}
    for kind, _, body in events:
        if kind == "sandbox":
            info = body
        elif kind == "end" and body.get("sandbox"):
            info = body["sandbox"]
    return info


def _desk_state(tmp, salt):
    """(receipts, head, result) from the desk history; the result when the run was finalised."""
    path = os.path.join(tmp, "desk.sqlite")
    if not os.path.exists(path):
        return [], None, None
    try:
        status, result, run = engine.History(path).result()
    except engine.DeskError:
        return [], None, None
    return run.receipts, run.head, result if status == "finalized" else None


def _proposals(events, receipts, offset):
    """The proposals as journaled, each answered from the journal or -- for one the host died on before journaling
    the desk's answer (it writes ahead) -- from the receipts."""
    answered = {body["index"]: body for k, _, body in events if k == "proposal"}
    batches = [r for r in receipts if r["kind"] == "BATCH"][offset:]
    out, committed = [], 0
    for k, _, intent in events:
        if k != "submit":
            continue
        p = answered.get(intent["index"])
        if p is None:
            p = dict(intent)
            if committed < len(batches) and engine.content_sha256(batches[committed]["payload"]["batch"]) == intent.get(
                "batch_sha256"
            ):
                p.update(
                    outcome="accepted",
                    decisions=_desk.decisions_after(receipts, offset + committed),
                    reconciled="from the receipts (the host stopped before journaling the desk's answer)",
                )
            else:
                p.update(
                    outcome="not_committed",
                    message="the host stopped before the desk answered; the receipts hold no such batch",
                )
        if p.get("outcome") == "accepted":
            committed += 1
        out.append(p)
    return out


def assemble(tmp, recovered=False):
    """Build and write the record from the partial directory's files; returns it."""
    events = read_journal(os.path.join(tmp, "journal.jsonl"))
    start = events[0][2]
    adapters = _last(events, "adapters") or {}
    end_event = _last(events, "end")
    end = end_event["termination"] if end_event else dict(RECOVERED_END)
    steps = [body for k, _, body in events if k == "step"]
    retained = _last(events, "retained")
    claim = start["claim"]
    ledger_path = os.path.join(tmp, "ledger.jsonl")
    caps = dict(cap_sandbox_micro_usd=claim["cap_sandbox_micro_usd"], sandbox_rate=start["sandbox_rate"])
    if os.path.exists(ledger_path):
        ledger = load_ledger(
            ledger_path,
            claim["sha256"],
            claim["cap_micro_usd"],
            claim["cap_tokens"],
            start["price"],
            tolerate_torn_tail=recovered,
            **caps,
        )
        if recovered:
            _complete_ledger(ledger, steps)
    else:
        ledger = Ledger(claim["sha256"], claim["cap_micro_usd"], claim["cap_tokens"], start["price"], **caps)
    receipts, head, desk_result = _desk_state(tmp, start["salt"])
    if not receipts and any(
        k == "result" or (k == "proposal" and body.get("outcome") == "accepted") for k, _, body in events
    ):
        raise InputError(
            f"{tmp}: desk.sqlite is missing or unreadable, yet the journal says batches were committed: "
            f"the receipts cannot be rebuilt (no record is written over a history it cannot show)"
        )
    offset = (start.get("resumed_from") or {}).get("settled_days", 0)
    proposals = _proposals(events, receipts, offset)
    result = _last(events, "result") or desk_result
    if result is not None and end["status"] != "completed":
        # The run was finalised and graded before the stop or failure arrived: the receipts say the
        # attempt completed (verify holds completed <=> result); the reason keeps what came after.
        end = dict(
            end,
            status="completed",
            limit=None,
            reason=f"every checkpoint closed; the run is finalised; then {end['reason']}",
        )
    counted = _desk.counts(receipts)
    totals = ledger.totals()
    cost = {
        "micro_usd": totals["charged_micro_usd"],
        "tokens_in": totals["tokens_in"],
        "tokens_out": totals["tokens_out"],
        "prompt_cache_hit_tokens": totals["cached_tokens_in"],
        "unresolved_micro_usd": totals["unresolved_micro_usd"],
        "unresolved_calls": totals["unresolved_calls"],
        "calls": len({e["call"] for e in ledger.entries if e["account"] == "inference"}),
        "cache_hits": sum(1 for e in ledger.entries if e["kind"] == "charge" and e["note"] == "cache hit"),
        "sandbox_micro_usd": totals["sandbox_charged_micro_usd"],
        "sandbox_unresolved_micro_usd": totals["sandbox_unresolved_micro_usd"],
        **({"cpu_ms": totals["cpu_ms"]} if "cpu_ms" in totals else {}),  # the local sampler's CPU time
        **({"reasoning_tokens": totals["reasoning_tokens"]} if "reasoning_tokens" in totals else {}),
        "projection": bool(start.get("projection")),
    }
    if result is None and end["status"] == "completed":
        end = dict(RECOVERED_END, reason="the worker ended but the run was never finalised")
    summary = summary_text(end, result, counted["accepted_actions"], counted["settled_days"], cost)
    limits = start["limits"]
    end_sampling = (end_event or {}).get("sampling")
    sampling = end_sampling if end_sampling is not None else adapters.get("sampling")
    receipts_head = result["receipts_head"] if result else head
    replay_of = start.get("replay_of")
    if replay_of is not None:
        replay_of = dict(replay_of, head_matches=receipts_head == replay_of["receipts_head"])
    content = {
        "schema_version": ATTEMPT_SCHEMA_VERSION,
        "attempt_id": start["attempt_id"],
        "kind": "model-attempt",
        "label": start["label"],
        "execution_path": "model worker",
        "model": {"id": start["model"], "provider": adapters.get("provider", start["sampler"])},
        "sampling": dict(sampling or {}, max_tokens_per_call=limits["max_tokens_per_call"]),
        "config": start["config"],
        "config_hash": engine.content_sha256(start["config"]),
        "code": start["code"],
        "packages": start["packages"],
        "engine": start["engine"],
        "prompt": start["prompt"],
        "output_schema": start["output_schema"],
        "worker": start["worker"],
        "prices": {
            "model": start["price"],
            "sandbox": {"name": start["sandbox"], "micro_usd_per_second": start["sandbox_rate"]},
            "table_sha256": start["prices_table_sha256"],
        },
        "command_line": start["command_line"],
        "freeze": start["freeze"],
        "task": start["task"],
        "salt": start["salt"],
        "information_boundary": {
            "sandbox": start["sandbox"],
            "network": adapters.get("network"),
            "staged": _last(events, "staged") or [],
            "worker_env_keys": adapters.get("worker_env_keys", []),
            "never_staged": list(NEVER_STAGED_PATHS),
            "model_calls": "made by the host controller; the worker holds no keys and sees no ledger",
        },
        "sandbox": _sandbox_info(events),
        "service": (end_event or {}).get("service"),
        "claim": claim,
        "project": _project_ref(_last(events, "project")),
        "limits": limits,
        "ledger": {"entries": ledger.entries, "head": ledger.head, "totals": totals},
        "termination": end,
        "proposals": proposals,
        "invalid_artefacts": sum(1 for s in steps for t in s["tool_calls"] if t["name"] == "validate_artefact"),
        "receipts_head": receipts_head,
        "result": result,
        "accepted_actions": counted["accepted_actions"],
        "settled_days": counted["settled_days"],
        "cost": cost,
        "resumed_from": start.get("resumed_from"),
        "replay_of": replay_of,
        "summary": summary,
        "role": start.get("role") or ("confirmatory" if start["freeze"] else None),
    }
    started, finished = events[0][1], events[-1][1]
    volatile = {
        "started": started,
        "finished": finished if not recovered else now_iso(),
        "duration_ms": int((parse_iso(finished) - parse_iso(started)).total_seconds() * 1000),
        "host": start["host"],
        "claim_expires": start["claim_expires"],
        "worker_stderr_tail": (end_event or {}).get("worker_stderr", ""),
        "recovered": recovered,
        "sandbox_seconds": (end_event or {}).get("sandbox_seconds"),
        "calls_ms": [body["ms"] for k, _, body in events if k == "latency"],
        "backoff": [body for k, _, body in events if k == "backoff"],
        "host_preflight": start.get("host_preflight"),
    }
    return write_attempt(
        tmp, content, volatile, transcript_doc(start["attempt_id"], steps, summary), receipts, retained=retained
    )


def _complete_ledger(ledger, steps):
    """A dead host's half-done settlements booked (Ledger.complete, from the journal's answered calls) and
    ledger.jsonl made exactly the entries, in one rename: a record is never written over a ledger whose charge has
    no release, or an answer the ledger never charged. A `recover` killed here leaves the old file or the new one;
    run again, it completes the same entries."""
    answered = {
        s["call"]["index"]: s["call"]
        for s in steps
        if s.get("role") == "model" and isinstance(s.get("call"), dict) and "micro_usd" in s["call"]
    }
    path = ledger.path
    ledger.path = None  # booked in memory, then the whole file replaced
    ledger.complete(answered)
    ledger.path = path
    with open(path, "rb") as fh:
        on_disk = fh.read()
    if on_disk != b"".join(engine.canonical_json(e) + b"\n" for e in ledger.entries):
        ledger.rewrite()
        fsync_dir(os.path.dirname(path))
    boundary("recover:after-ledger")


def _project_ref(entry):
    """The project ledger entry that opened this attempt's claim (its folder is the operator's, not recorded)."""
    return None if entry is None else {"seq": entry["seq"], "hash": entry["hash"]}


def finish(tmp, out, recovered=False, lock=None, project=None):
    """Write the record, settle the project ledger, remove the working files, rename the folder -- in that order,
    each step durable before the next, so a death between any two is finished by `recover`."""
    record = _complete_record(tmp)
    journal_path = os.path.join(tmp, "journal.jsonl")
    if project is None and os.path.exists(journal_path):
        try:
            project = (_last(read_journal(journal_path), "project") or {}).get("dir")
        except InputError:
            project = None
    try:
        if record is None:
            if os.path.exists(journal_path):
                write_status(tmp, "ending")
            record = assemble(tmp, recovered)
        boundary("record:after-record")
        if project:
            book = ProjectLedger(project)
            if book.claim_entry(record["content"]["claim"]["id"]) is not None:
                book.settle(record)
        boundary("record:after-settle")
    except Exception as exc:
        if lock is not None:
            lock.release()
        raise LaunchError(
            f"{tmp}: the record could not be {'settled' if record else 'assembled'} "
            f"({what(exc)}); the attempt's files stay there for `fundbook-launch recover`"
        ) from None
    for name in WORKING_FILES:  # their content is in the record, transcript and receipts
        path = os.path.join(tmp, name)
        if os.path.exists(path):
            os.remove(path)
        if name == "desk.sqlite":
            boundary("record:after-desk-removed")
    if lock is not None:
        lock.release(remove=True)
    elif os.path.exists(os.path.join(tmp, LOCK_NAME)):
        os.remove(os.path.join(tmp, LOCK_NAME))
    fsync_dir(tmp)
    boundary("record:after-cleanup")
    if os.path.isdir(out):
        os.rmdir(out)  # checked empty
    os.rename(tmp, out)
    fsync_dir(os.path.dirname(os.path.abspath(out)))
    boundary("record:after-rename")
    return record
