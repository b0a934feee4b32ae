"""`verify`: an attempt record against its files, its receipts and its ledger.

The hashes (content, transcript, receipts, ledger, retained work) say nothing
was edited; reconciliation says the record tells what the receipts -- the
truth -- hold: the engine replays them from the task's world to the recorded
head, the settled checkpoints and accepted actions are counted from them, the
accepted proposals are the batches in them, the graded result is the one the
engine computes from them; and the ledger file rebuilds to the totals and
costs the record states. The first disagreement is a one-line error.
"""

import json
import os

import engine

from . import _desk
from ._errors import InputError
from ._ledger import load_ledger
from ._record import read_record


def _fail(path, message):
    raise InputError(f"{path}: {message}")


def load_receipts(base, record_path):
    try:
        with open(os.path.join(base, "receipts.json"), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        _fail(record_path, f"receipts.json unreadable ({exc})")


def instance_of(task, where):
    try:
        instance = engine.with_horizon(engine.generate(task["family"], task["seed"]), task["horizon"])
    except (KeyError, TypeError, ValueError, engine.DeskError) as exc:
        _fail(where, f"content.task: not a world the engine generates ({exc})")
    if engine.fixture_sha256(instance) != task.get("fixture_sha256"):
        _fail(where, "content.task.fixture_sha256: not the world this engine generates for the task")
    return instance


def verify_attempt(record_path) -> dict:
    """Check a record fully; returns {"record", "receipts", "run", "retained"} or raises InputError."""
    record = read_record(record_path)
    c = record["content"]
    base = os.path.dirname(os.path.abspath(record_path))
    receipts = load_receipts(base, record_path)
    instance = instance_of(c["task"], record_path)
    head = c.get("receipts_head")
    if head is None:
        if receipts:
            _fail(record_path, "content.receipts_head: missing, but receipts.json holds a desk history")
        run = None
    else:
        try:
            run = _desk.replay(instance, receipts, head, c.get("salt"))
        except engine.DeskError as exc:
            _fail(record_path, f"receipts.json does not replay to content.receipts_head ({exc.message})")
        if run.head != head:
            _fail(record_path, f"content.receipts_head: the receipts reach {run.head}")
    counted = _desk.counts(receipts)
    for key in ("settled_days", "accepted_actions"):
        if c.get(key) != counted[key]:
            _fail(record_path, f"content.{key}: the record says {c.get(key)}, the receipts say {counted[key]}")
    offset = (c.get("resumed_from") or {}).get("settled_days", 0)
    accepted = [p.get("batch_sha256") for p in c["proposals"] if p.get("outcome") == "accepted"]
    if accepted != [sha for _, sha in counted["batches"][offset:]]:
        _fail(record_path, "content.proposals: the accepted proposals are not the batches in the receipts")
    result = c.get("result")
    if run is not None and run.finalized:
        want = {k: v for k, v in engine.final_result(run).items() if k != "receipts_head"}
        if result is None or {k: v for k, v in result.items() if k != "receipts_head"} != want:
            _fail(record_path, "content.result: not the result the engine grades from the receipts")
    elif result is not None:
        _fail(record_path, "content.result: the receipts hold no finalised run")
    if (c["termination"]["status"] == "completed") != (result is not None):
        _fail(record_path, "content.termination.status: only a completed attempt carries a result")
    _check_ledger(base, record_path, c)
    retained = None
    if "retained" in (c.get("outputs") or {}):
        with open(os.path.join(base, c["outputs"]["retained"]["path"]), encoding="utf-8") as fh:
            retained = json.load(fh)
    return {"record": record, "receipts": receipts, "run": run, "retained": retained, "instance": instance}


def _check_ledger(base, record_path, c):
    claim = c["claim"]
    prices = c.get("prices") or {}
    ledger_ref = (c.get("outputs") or {}).get("ledger")
    if ledger_ref is None:
        if c["ledger"]["entries"]:
            _fail(record_path, "content.ledger: entries without a ledger.jsonl")
        return
    ledger = load_ledger(os.path.join(base, ledger_ref["path"]), claim["sha256"], claim["cap_micro_usd"],
                         claim["cap_tokens"], prices.get("model") or {}, cap_sandbox_micro_usd=claim.get(
                             "cap_sandbox_micro_usd", 0), sandbox_rate=(prices.get("sandbox") or {}).get(
                             "micro_usd_per_second", 0))
    if ledger.entries != c["ledger"]["entries"] or ledger.head != c["ledger"]["head"]:
        _fail(record_path, "content.ledger: not the ledger in ledger.jsonl")
    totals = ledger.totals()
    if totals != c["ledger"]["totals"]:
        _fail(record_path, "content.ledger.totals: not the totals of the ledger's entries")
    cost = c["cost"]
    for key, want in (("micro_usd", totals["charged_micro_usd"]), ("unresolved_micro_usd", totals["unresolved_micro_usd"]),
                      ("tokens_in", totals["tokens_in"]), ("tokens_out", totals["tokens_out"]),
                      ("sandbox_micro_usd", totals["sandbox_charged_micro_usd"])):
        if cost.get(key) != want:
            _fail(record_path, f"content.cost.{key}: the record says {cost.get(key)}, the ledger says {want}")
