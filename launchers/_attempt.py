"""`execute`: one attempt, from claim consumption to the retained record.

Order matters: the output directory is checked first (refusing costs nothing),
then the claim is consumed (step 0) before any adapter is built, so a crash at
any later point leaves the claim consumed and the allowance not renewed. The
attempt is assembled in `<out>.partial/` (the live ledger is appended there as
calls happen) and renamed to `<out>` at the end; a host that dies mid-attempt
leaves the partial directory with its ledger as evidence.
"""

import datetime
import os
import platform
import shutil
import time

import engine

from . import ATTEMPT_SCHEMA_VERSION
from ._claims import consume
from ._controller import Controller, Limits
from ._errors import InputError, LaunchError, OutputExists
from ._ledger import Ledger
from ._prices import model_price
from ._provenance import code_revision, packages
from ._record import summary_text, transcript_doc, write_attempt
from ._staging import NEVER_STAGED

LABELS = {"mock": "mock", "cache": "cached replay", "tinker": "model"}


def check_out_dir(out):
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise OutputExists(f"{out}: exists and is not empty (an attempt needs a new output directory)")
    if os.path.exists(out + ".partial"):
        raise OutputExists(f"{out}.partial: an earlier attempt's partial directory is in the way; keep or move it")


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def execute(*, claim_path, out, family, seed, split, model, sampler_name, sandbox_name, make_sampler, make_sandbox,
            prices, limits: Limits, horizon=20, attempt_id=None, state=None):
    """Run one attempt. `make_sampler(model)` / `make_sandbox()` build the adapters after the claim is consumed."""
    check_out_dir(out)
    # inputs are checked before the claim is consumed: a refusal here spends nothing
    try:
        instance = engine.with_horizon(engine.generate(family, seed), horizon)
    except ValueError as exc:
        raise InputError(f"--family/--seed: {exc}")
    except engine.DeskError as exc:
        raise InputError(f"--horizon: {exc.message}")
    price = model_price(prices, model) if sampler_name != "mock" else {"input_micro_usd_per_mtok": 0,
                                                                      "output_micro_usd_per_mtok": 0}
    claim_doc = consume(claim_path, family, split, model, state=state)  # step 0: nothing is spent before this
    claim = claim_doc["claim"]
    started, t0 = _now(), time.monotonic()
    attempt_id = attempt_id or f"{LABELS[sampler_name].split()[0]}-{family}-seed-{seed}-{claim['id'][4:12]}"
    tmp = out + ".partial"
    os.makedirs(tmp, mode=0o700)
    ledger = Ledger(claim_doc["sha256"], claim["cap_micro_usd"], claim["cap_tokens"], price,
                    path=os.path.join(tmp, "ledger.jsonl"))
    controller = None
    sampler = sandbox = None
    try:
        sampler = make_sampler(model)
        sandbox = make_sandbox()
    except LaunchError as exc:
        end = {"status": "infrastructure_interruption", "reason": f"adapter setup failed: {exc.format_message()}",
               "limit": "infrastructure", "worker_exit_code": None}
    except KeyboardInterrupt:
        end = {"status": "operator", "reason": "stopped by the operator (interrupt)", "limit": "operator",
               "worker_exit_code": None}
    if sampler is not None and sandbox is not None:
        controller = Controller(instance, sampler, sandbox, ledger, limits, os.path.join(tmp, "desk.sqlite"))
        end = controller.run()
    totals = ledger.totals()
    steps = controller.steps if controller else []
    result = controller.result if controller else None
    cost = {"micro_usd": totals["charged_micro_usd"], "tokens_in": totals["tokens_in"], "tokens_out": totals["tokens_out"],
            "unresolved_micro_usd": totals["unresolved_micro_usd"], "unresolved_calls": totals["unresolved_calls"],
            "calls": controller.calls if controller else 0, "cache_hits": controller.cache_hits if controller else 0}
    accepted = controller.accepted_actions if controller else 0
    settled = controller.settled_days if controller else 0
    summary = summary_text(end, result, accepted, settled, cost)
    receipts, head = controller.receipts() if controller else ([], None)
    content = {
        "schema_version": ATTEMPT_SCHEMA_VERSION, "attempt_id": attempt_id, "kind": "model-attempt",
        "label": LABELS[sampler_name], "execution_path": "model worker",
        "model": {"id": model, "provider": getattr(sampler, "provider", sampler_name)},
        "sampling": dict(getattr(sampler, "sampling", {}), max_tokens_per_call=limits.max_tokens_per_call),
        "code": code_revision(), "packages": packages(),
        "task": {"version": engine.ENGINE_VERSION, "family": family, "seed": seed, "split": split,
                 "instance_id": instance["instance_id"], "fixture_sha256": engine.fixture_sha256(instance),
                 "horizon": instance["horizon"]},
        "information_boundary": {
            "sandbox": sandbox_name, "network": getattr(sandbox, "network", None),
            "staged": controller.staged if controller else [],
            "worker_env_keys": sandbox.worker_env_keys() if sandbox else [],
            "never_staged": ["engine/" + m for m in NEVER_STAGED],
            "model_calls": "made by the host controller; the worker holds no keys and sees no ledger"},
        "claim": {"id": claim["id"], "scope": claim["scope"], "cap_micro_usd": claim["cap_micro_usd"],
                  "cap_tokens": claim["cap_tokens"], "sha256": claim_doc["sha256"], "consumed_at_step": 0},
        "limits": {"worker_seconds": limits.worker_seconds, "call_deadline_s": limits.call_deadline_s,
                   "max_tokens_per_call": limits.max_tokens_per_call, "max_calls": limits.max_calls},
        "ledger": {"entries": ledger.entries, "head": ledger.head, "totals": totals},
        "termination": end,
        "proposals": controller.proposals if controller else [],
        "invalid_artefacts": controller.invalid if controller else 0,
        "receipts_head": result["receipts_head"] if result else head,
        "result": result, "accepted_actions": accepted, "settled_days": settled, "cost": cost, "summary": summary,
    }
    volatile = {"started": started, "finished": _now(), "duration_ms": int((time.monotonic() - t0) * 1000),
                "host": f"{platform.system()} {platform.machine()} python {platform.python_version()}",
                "claim_expires": claim["expires"],
                "worker_stderr_tail": controller.worker_stderr if controller else ""}
    transcript = transcript_doc(attempt_id, steps, summary)
    if os.path.exists(os.path.join(tmp, "desk.sqlite")):
        os.remove(os.path.join(tmp, "desk.sqlite"))  # its receipts are kept as receipts.json
    record = write_attempt(tmp, content, volatile, transcript, receipts)
    if os.path.isdir(out):
        os.rmdir(out)  # checked empty above
    shutil.move(tmp, out)
    return record

