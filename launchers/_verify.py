"""`verify`: an attempt record against its files, its receipts and its ledger.

The hashes (content, transcript, receipts, ledger, retained work) say nothing
was edited; reconciliation says the record tells what the receipts -- the
truth -- hold: the engine replays them from the task's world to the recorded
head, the settled checkpoints and accepted actions are counted from them, the
accepted proposals are the batches in them, the graded result is the one the
engine computes from them; and the ledger file rebuilds to the totals and
costs the record states. The first disagreement is a one-line error.
"""

import functools
import json
import os

import engine

from . import ATTEMPT_SCHEMA_VERSION, _desk
from ._errors import BudgetHalt, InputError
from ._ledger import SANDBOX_CALL, Ledger, load_ledger
from ._record import read_record

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "schemas", "attempt.schema.json")


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


@functools.lru_cache(maxsize=1)
def _validator():
    try:
        import jsonschema
    except ImportError:  # a runtime without the dev extras: the checks below still refuse a malformed record
        return None
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        return jsonschema.Draft202012Validator(json.load(fh))


def check_shape(record, record_path):
    """The record against its published schema (current schema version): a wrong type is a one-line error."""
    validator = _validator()
    if validator is None or record["content"].get("schema_version") != ATTEMPT_SCHEMA_VERSION:
        return
    import jsonschema
    error = jsonschema.exceptions.best_match(validator.iter_errors(record))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "record"
        message = " ".join(error.message.split())
        _fail(record_path, f"{where}: not as attempt.schema.json describes ("
                           f"{message if len(message) <= 160 else message[:157] + '...'})")


def verify_attempt(record_path) -> dict:
    """Check a record fully; returns {"record", "receipts", "run", "retained"} or raises InputError."""
    record = read_record(record_path)
    check_shape(record, record_path)
    try:
        return _verify(record, record_path)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:  # a shape the schema let through
        _fail(record_path, f"content: malformed ({type(exc).__name__}: {exc})")


def _verify(record, record_path) -> dict:
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
    _rederive(ledger, record_path)
    _check_calls(ledger, base, record_path, c)
    totals = ledger.totals()
    if totals != c["ledger"]["totals"]:
        _fail(record_path, "content.ledger.totals: not the totals of the ledger's entries")
    cost = c["cost"]
    for key, want in (("micro_usd", totals["charged_micro_usd"]), ("unresolved_micro_usd", totals["unresolved_micro_usd"]),
                      ("tokens_in", totals["tokens_in"]), ("tokens_out", totals["tokens_out"]),
                      ("sandbox_micro_usd", totals["sandbox_charged_micro_usd"]),
                      ("sandbox_unresolved_micro_usd", totals["sandbox_unresolved_micro_usd"]),
                      ("unresolved_calls", totals["unresolved_calls"]),
                      ("prompt_cache_hit_tokens", totals["cached_tokens_in"]),
                      ("calls", len({e["call"] for e in ledger.entries if e["account"] == "inference"})),
                      ("cache_hits", sum(1 for e in ledger.entries if e["kind"] == "charge"
                                         and e["account"] == "inference" and e["note"] == "cache hit"))):
        if cost.get(key) != want:
            _fail(record_path, f"content.cost.{key}: the record says {cost.get(key)}, the ledger says {want}")
    if cost.get("cpu_ms") != totals.get("cpu_ms"):  # the local sampler's CPU time: present in both or neither
        _fail(record_path, f"content.cost.cpu_ms: the record says {cost.get('cpu_ms')}, the ledger says "
                           f"{totals.get('cpu_ms')}")


def _rederive(ledger, record_path):
    """Book the ledger's inputs (tokens, seconds, notes) again through the Ledger's own rules, against the
    record's prices and the claim's caps: every amount, every release and every cap check must come out the same.
    (The hash chain only says the file is as appended; this says the money was booked as the rules book it.)"""
    again = Ledger(ledger.claim_sha256, ledger.cap_micro_usd, ledger.cap_tokens, ledger.price,
                   cap_sandbox_micro_usd=ledger.cap_sandbox_micro_usd, sandbox_rate=ledger.sandbox_rate)
    rate = ledger.sandbox_rate
    for i, e in enumerate(ledger.entries):
        if len(again.entries) > i:  # the release settle() already booked
            continue
        try:
            if e["account"] == "sandbox":
                if e["call"] != SANDBOX_CALL:
                    raise InputError(f"sandbox call {e['call']}: expected {SANDBOX_CALL}")
                seconds = -(-e["micro_usd"] // rate) if rate else 0
                if e["kind"] == "reserve":
                    seconds = int(str(e["note"]).split(" s limit")[0]) if e["note"].endswith(" s limit") else seconds
                    again.reserve_sandbox(seconds)
                elif e["kind"] == "charge":
                    again.settle_sandbox(seconds)
                elif e["kind"] == "unresolved":
                    again.mark_unresolved(e["call"], e["note"], account="sandbox")
            elif e["kind"] == "reserve":
                again.reserve(e["call"], e["tokens_in"], e["tokens_out"], free=e["note"] == "cache hit")
            elif e["kind"] == "charge":
                again.settle(e["call"], e["tokens_in"], e["tokens_out"], e["note"], free=e["note"] == "cache hit",
                             cached_in=e["cached_tokens_in"], cpu_ms=e.get("cpu_ms"))
            elif e["kind"] == "unresolved":
                again.mark_unresolved(e["call"], e["note"])
        except (BudgetHalt, InputError) as exc:
            _fail(record_path, f"ledger.jsonl: line {i + 1}: not booked as the ledger books it ({exc.format_message()})")
        for j in range(i, len(again.entries)):  # the entry, and the release settle() books with a charge
            e = ledger.entries[j] if j < len(ledger.entries) else None
            if e is None or again.entries[j] != e:
                _fail(record_path, f"ledger.jsonl: line {j + 1}: not what the record's prices, caps and the "
                                   f"ledger's rules book (expected {_brief(again.entries[j])})")
    if len(again.entries) != len(ledger.entries):
        _fail(record_path, f"ledger.jsonl: line {len(again.entries) + 1}: not what the ledger's rules book")


def _brief(entry):
    return ", ".join(f"{k} {entry[k]}" for k in ("kind", "account", "call", "micro_usd", "tokens_in", "tokens_out"))


def _check_calls(ledger, base, record_path, c):
    """The transcript's answered calls are the ledger's charges (tokens, cache hits, micro-USD)."""
    try:
        with open(os.path.join(base, c["transcript"]["path"]), encoding="utf-8") as fh:
            steps = json.load(fh)["steps"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        _fail(record_path, f"transcript.json unreadable ({exc})")
    charges = {e["call"]: e for e in ledger.entries if e["account"] == "inference" and e["kind"] == "charge"}
    answered = set()
    for step in steps:
        call = step.get("call") if isinstance(step, dict) else None
        if not isinstance(call, dict) or "micro_usd" not in call:
            continue
        answered.add(call.get("index"))
        e = charges.get(call.get("index"))
        want = e and {"micro_usd": e["micro_usd"], "prompt_cache_hit_tokens": e["cached_tokens_in"],
                      "cached": e["note"] == "cache hit"}
        have = {k: call.get(k) for k in ("micro_usd", "prompt_cache_hit_tokens", "cached")}
        if e is not None and ("cpu_ms" in e or "cpu_ms" in call):  # the local sampler's CPU time, step and charge
            want["cpu_ms"], have["cpu_ms"] = e.get("cpu_ms"), call.get("cpu_ms")
        if e is not None and not call.get("cached"):
            want.update(tokens_in=e["tokens_in"], tokens_out=e["tokens_out"])
            have.update(tokens_in=call.get("tokens_in"), tokens_out=call.get("tokens_out"))
        if want != have:
            _fail(record_path, f"transcript.json: model call {call.get('index')}: {have} is not the ledger's charge")
    if set(charges) - answered:
        _fail(record_path, f"transcript.json: the ledger charges calls {sorted(set(charges) - answered)} the "
                           f"transcript does not show")
