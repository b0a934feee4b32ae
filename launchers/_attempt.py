"""`execute` and `recover`: one attempt, from claim consumption to the retained record.

Order matters: the output directory is checked first, then the inputs (refusing
costs nothing), then the claim is consumed (step 0) before any adapter is built,
so a crash at any later point leaves the claim consumed and the allowance not
renewed. The attempt lives in `<out>.partial/` while it runs: the ledger, the
journal and the desk history are appended there as things happen. The record
is assembled from those files -- by `execute` when the controller returns, or
by `recover` when the host died mid-attempt -- and the directory is renamed to
`<out>`.
"""

import os
import platform
import shutil

import engine

from . import ATTEMPT_SCHEMA_VERSION
from ._claims import consume
from ._controller import Controller, Limits
from ._errors import InputError, LaunchError, OutputExists
from ._journal import Journal, now_iso, parse_iso, read_journal
from ._ledger import Ledger, load_ledger
from ._prices import model_price
from ._provenance import code_revision, packages
from ._record import summary_text, transcript_doc, write_attempt
from ._staging import NEVER_STAGED

LABELS = {"mock": "mock", "cache": "cached replay", "tinker": "model"}
FREE = {"input_micro_usd_per_mtok": 0, "output_micro_usd_per_mtok": 0}
RECOVERED_END = {"status": "infrastructure_interruption", "limit": "infrastructure", "worker_exit_code": None,
                 "reason": "the host controller stopped mid-attempt; the record was recovered from its partial directory"}


def check_out_dir(out):
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise OutputExists(f"{out}: exists and is not empty (an attempt needs a new output directory)")
    if os.path.exists(out + ".partial"):
        raise OutputExists(f"{out}.partial: an unfinished attempt is in the way (`fundbook-launch recover` it)")


def execute(*, claim_path, out, family, seed, split, model, sampler_name, sandbox_name, make_sampler, make_sandbox,
            prices, limits: Limits, horizon=20, attempt_id=None, state=None):
    """Run one attempt. `make_sampler(model)` / `make_sandbox()` build the adapters after the claim is consumed."""
    check_out_dir(out)
    try:
        instance = engine.with_horizon(engine.generate(family, seed), horizon)
    except ValueError as exc:
        raise InputError(f"--family/--seed: {exc}")
    except engine.DeskError as exc:
        raise InputError(f"--horizon: {exc.message}")
    price = FREE if sampler_name == "mock" else model_price(prices, model)
    claim_doc = consume(claim_path, family, split, model, state=state)  # step 0: nothing is spent before this
    claim = claim_doc["claim"]
    attempt_id = attempt_id or f"{LABELS[sampler_name].split()[0]}-{family}-seed-{seed}-{claim['id'][4:12]}"
    tmp = out + ".partial"
    os.makedirs(tmp, mode=0o700)
    journal = Journal(os.path.join(tmp, "journal.jsonl"))
    journal.write("start", {
        "attempt_id": attempt_id, "label": LABELS[sampler_name], "sampler": sampler_name, "sandbox": sandbox_name,
        "model": model, "price": price, "limits": vars(limits),
        "task": {"version": engine.ENGINE_VERSION, "family": family, "seed": seed, "split": split,
                 "instance_id": instance["instance_id"], "fixture_sha256": engine.fixture_sha256(instance),
                 "horizon": instance["horizon"]},
        "claim": {"id": claim["id"], "scope": claim["scope"], "cap_micro_usd": claim["cap_micro_usd"],
                  "cap_tokens": claim["cap_tokens"], "sha256": claim_doc["sha256"], "consumed_at_step": 0},
        "claim_expires": claim["expires"], "code": code_revision(), "packages": packages(),
        "host": f"{platform.system()} {platform.machine()} python {platform.python_version()}"})
    ledger = Ledger(claim_doc["sha256"], claim["cap_micro_usd"], claim["cap_tokens"], price,
                    path=os.path.join(tmp, "ledger.jsonl"))
    sampler = sandbox = None
    try:
        sampler = make_sampler(model)
        sandbox = make_sandbox()
    except LaunchError as exc:
        journal.write("end", {"termination": {"status": "infrastructure_interruption", "limit": "infrastructure",
                                              "reason": f"adapter setup failed: {exc.format_message()}",
                                              "worker_exit_code": None}})
    except KeyboardInterrupt:
        journal.write("end", {"termination": {"status": "operator", "reason": "stopped by the operator (interrupt)",
                                              "limit": "operator", "worker_exit_code": None}})
    if sampler is not None and sandbox is not None:
        journal.write("adapters", {"provider": sampler.provider, "sampling": sampler.sampling,
                                   "network": sandbox.network, "worker_env_keys": sandbox.worker_env_keys()})
        Controller(instance, sampler, sandbox, ledger, limits, os.path.join(tmp, "desk.sqlite"), journal).run()
    return finish(tmp, out)


def recover(partial, out):
    """Assemble the record of an attempt whose host died, from its partial directory."""
    if not os.path.isdir(partial) or not os.path.exists(os.path.join(partial, "journal.jsonl")):
        raise InputError(f"{partial}: not an unfinished attempt (no journal.jsonl)")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise OutputExists(f"{out}: exists and is not empty")
    return finish(partial, out, recovered=True)


def _last(events, kind):
    found = [body for k, _, body in events if k == kind]
    return found[-1] if found else None


def _desk(tmp):
    path = os.path.join(tmp, "desk.sqlite")
    if not os.path.exists(path):
        return [], None
    try:
        run = engine.History(path).load()[1]
    except engine.DeskError:
        return [], None
    return run.receipts, run.head


def assemble(tmp, recovered=False):
    """Build and write the record from the partial directory's files; returns it."""
    events = read_journal(os.path.join(tmp, "journal.jsonl"))
    start = events[0][2]
    adapters = _last(events, "adapters") or {}
    end_event = _last(events, "end")
    end = end_event["termination"] if end_event else dict(RECOVERED_END)
    steps = [body for k, _, body in events if k == "step"]
    proposals = [body for k, _, body in events if k == "proposal"]
    result = _last(events, "result")
    claim = start["claim"]
    ledger_path = os.path.join(tmp, "ledger.jsonl")
    if os.path.exists(ledger_path):
        ledger = load_ledger(ledger_path, claim["sha256"], claim["cap_micro_usd"], claim["cap_tokens"], start["price"],
                             tolerate_torn_tail=recovered)
    else:
        ledger = Ledger(claim["sha256"], claim["cap_micro_usd"], claim["cap_tokens"], start["price"])
    receipts, head = _desk(tmp)
    totals = ledger.totals()
    accepted = [p for p in proposals if p.get("outcome") == "accepted"]
    cost = {"micro_usd": totals["charged_micro_usd"], "tokens_in": totals["tokens_in"], "tokens_out": totals["tokens_out"],
            "unresolved_micro_usd": totals["unresolved_micro_usd"], "unresolved_calls": totals["unresolved_calls"],
            "calls": len({e["call"] for e in ledger.entries}),
            "cache_hits": sum(1 for e in ledger.entries if e["kind"] == "charge" and e["note"] == "cache hit")}
    accepted_actions = sum(1 for p in accepted for d in p.get("decisions", []) if d.get("decision") == "ACCEPTED")
    summary = summary_text(end, result, accepted_actions, len(accepted), cost)
    limits = start["limits"]
    content = {
        "schema_version": ATTEMPT_SCHEMA_VERSION, "attempt_id": start["attempt_id"], "kind": "model-attempt",
        "label": start["label"], "execution_path": "model worker",
        "model": {"id": start["model"], "provider": adapters.get("provider", start["sampler"])},
        "sampling": dict(adapters.get("sampling") or {}, max_tokens_per_call=limits["max_tokens_per_call"]),
        "code": start["code"], "packages": start["packages"], "task": start["task"],
        "information_boundary": {
            "sandbox": start["sandbox"], "network": adapters.get("network"), "staged": _last(events, "staged") or [],
            "worker_env_keys": adapters.get("worker_env_keys", []),
            "never_staged": ["engine/" + m for m in NEVER_STAGED],
            "model_calls": "made by the host controller; the worker holds no keys and sees no ledger"},
        "claim": claim, "limits": limits,
        "ledger": {"entries": ledger.entries, "head": ledger.head, "totals": totals},
        "termination": end, "proposals": proposals,
        "invalid_artefacts": sum(1 for s in steps for t in s["tool_calls"] if t["name"] == "validate_artefact"),
        "receipts_head": result["receipts_head"] if result else head,
        "result": result, "accepted_actions": accepted_actions, "settled_days": len(accepted), "cost": cost,
        "summary": summary,
    }
    started, finished = events[0][1], events[-1][1]
    volatile = {"started": started, "finished": finished if not recovered else now_iso(),
                "duration_ms": int((parse_iso(finished) - parse_iso(started)).total_seconds() * 1000),
                "host": start["host"], "claim_expires": start["claim_expires"],
                "worker_stderr_tail": (end_event or {}).get("worker_stderr", ""), "recovered": recovered}
    return write_attempt(tmp, content, volatile, transcript_doc(start["attempt_id"], steps, summary), receipts)


def finish(tmp, out, recovered=False):
    record = assemble(tmp, recovered)
    for name in ("desk.sqlite", "journal.jsonl"):  # their content is in the record, transcript and receipts
        path = os.path.join(tmp, name)
        if os.path.exists(path):
            os.remove(path)
    if os.path.isdir(out):
        os.rmdir(out)  # checked empty
    shutil.move(tmp, out)
    return record
