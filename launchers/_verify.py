"""`verify`: an attempt record against its files, its receipts, its ledger and its project ledger.

The hashes (content, transcript, receipts, ledger, retained work) say nothing
was edited; reconciliation says the record tells what the receipts -- the
truth -- hold: the engine replays them from the task's world to the recorded
head, the settled checkpoints and accepted actions are counted from them, the
accepted proposals are the batches in them, the graded result is the one the
engine computes from them; the ledger file rebuilds to the totals and costs
the record states, at the price row the claim was authorised at (or, for the
shipped price table, the table's own row). The first disagreement is a
one-line error.

All of that is self-consistency: someone who can write the attempt's folder
can rewrite it consistently (lower the charges with the price row, raise a
cap in the record's claim copy, rewrite the retained work) and re-hash it.
What such a rewrite cannot match is the project ledger (`bind`): the claim as
registered at `authorise` (its sha256 and content: scope, caps, plan, price
row), its consumption (nonce, attempt), the settlement naming the record's
content sha256, and the freeze it ran under (its price table by sha256, its
price rows). A paid attempt is verified against it; without one, verify says
that a consistent rewrite would not be seen.
"""

import functools
import json
import os

import engine

from . import ATTEMPT_SCHEMA_VERSION, _desk
from ._errors import BudgetHalt, InputError, UsageOverrun
from ._ledger import SANDBOX_CALL, Ledger, load_ledger, step_detail
from ._jsonfile import read_json
from ._record import read_record

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "schemas", "attempt.schema.json")


def _fail(path, message):
    raise InputError(f"{path}: {message}")


def load_receipts(base, record_path):
    try:
        receipts = read_json(os.path.join(base, "receipts.json"), "receipts")
    except InputError as exc:
        _fail(record_path, f"receipts.json unreadable ({exc.format_message()})")
    if not isinstance(receipts, list) or not all(isinstance(r, dict) for r in receipts):
        _fail(record_path, "receipts.json: expected a list of receipts")
    return receipts


def instance_of(task, where):
    try:
        instance = _desk.world(task["family"], task["seed"], task["horizon"])
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
    return jsonschema.Draft202012Validator(read_json(SCHEMA_PATH, "schema"))


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
        _fail(
            record_path,
            f"{where}: not as attempt.schema.json describes ("
            f"{message if len(message) <= 160 else message[:157] + '...'})",
        )


def verify_attempt(record_path, project=None) -> dict:
    """Check a record fully; returns {"record", "receipts", "run", "retained", "instance", "bound"} or raises
    InputError. `project`: a project folder whose ledger (and freeze) the record is bound to (`bind`)."""
    record = read_record(record_path)
    check_shape(record, record_path)
    try:
        found = _verify(record, record_path)
        found["bound"] = bind(record, record_path, project) if project is not None else None
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:  # a shape the schema let through
        _fail(record_path, f"content: malformed ({type(exc).__name__}: {exc})")
    return found


def project_of(record_path, project=None):
    """The project folder to bind a record to: the one named, else $FUNDBOOK_LAUNCH_PROJECT, the folder holding
    the attempt's folder, or runs/attempts/ -- the first that holds a project ledger; None if none does."""
    from ._project import LEDGER_NAME, project_dir

    if project is not None:
        return project
    here = os.path.dirname(os.path.dirname(os.path.abspath(record_path)))
    for folder in (os.environ.get("FUNDBOOK_LAUNCH_PROJECT"), here, project_dir(None)):
        if folder and os.path.exists(os.path.join(folder, LEDGER_NAME)):
            return folder
    return None


def is_local_model(c) -> bool:
    """A model run on this host, free by construction: llama-cpp, or an openai-compatible server on this host
    (its settings say `local_server: 1`, and its claim was planned at zero)."""
    return c["model"]["provider"] == "llama-cpp" or (
        c["model"]["provider"] == "openai-compatible" and (c.get("sampling") or {}).get("local_server") == 1
    )


def _free(c):
    return c["model"]["provider"] == "cache" or is_local_model(c) or c["model"]["id"] == "mock"  # local: this host


def check_prices(c, record_path):
    """The price row the ledger was booked at: free for a cached replay, else the claim's authorised row (records
    from schema version 3 on); and, for the shipped price table (by sha256), that table's own row."""
    from ._prices import load_prices, model_price, table_sha256

    row = (c.get("prices") or {}).get("model")
    plan = (c.get("claim") or {}).get("plan")
    if c.get("schema_version", 0) >= 3 and isinstance(plan, dict):
        want = {k: 0 for k in row} if c["model"]["provider"] == "cache" else plan.get("price")
        if row != want:
            _fail(record_path, f"content.prices.model: {row} is not the row the claim was authorised at ({want})")
    if is_local_model(c):  # a model on this host: free by construction, never from the table
        if not isinstance(row, dict) or any(row.values()):
            _fail(
                record_path,
                f"content.prices.model: {row}: a local ({c['model']['provider']}) attempt is booked at zero",
            )
        return
    shipped = load_prices()
    if c["model"]["provider"] != "cache" and (c.get("prices") or {}).get("table_sha256") == table_sha256(shipped):
        try:
            want = model_price(shipped, c["model"]["id"])
        except InputError:
            _fail(record_path, f"content.prices.table_sha256: the shipped table has no row for {c['model']['id']}")
        if row != want:
            _fail(
                record_path, f"content.prices.model: {row} is not the row of the shipped price table it names ({want})"
            )


def bind(record, record_path, project) -> dict:
    """The record against its project ledger (and freeze): what a consistent rewrite of the attempt's own files
    cannot match. {"ledger": path, "claim_entry": seq, "settle_entry": seq, "freeze": sha or None}."""
    from engine import content_sha256

    from . import _freeze
    from ._project import ProjectLedger

    c = record["content"]
    book = ProjectLedger(project)
    where = f"{book.path}"
    claim = c["claim"]
    cid = claim["id"]
    auth = book.authorised(cid)
    if auth is None:
        _fail(record_path, f"content.claim.id: {where} never authorised claim {cid}")
    if auth["claim_sha256"] != claim["sha256"] or content_sha256(auth.get("claim")) != auth["claim_sha256"]:
        _fail(
            record_path, f"content.claim.sha256: not the claim registered at authorise ({where}, entry {auth['seq']})"
        )
    for key in ("scope", "cap_micro_usd", "cap_tokens", "cap_sandbox_micro_usd", "plan", "partial_budget"):
        if key in claim or c.get("schema_version", 0) >= 3:
            if claim.get(key) != auth["claim"].get(key):
                _fail(
                    record_path,
                    f"content.claim.{key}: the record says {_short(claim.get(key))}, the claim "
                    f"registered at authorise says {_short(auth['claim'].get(key))} ({where}, entry "
                    f"{auth['seq']})",
                )
    opened = book.claim_entry(cid)
    if (
        opened is None
        or opened.get("nonce") != (claim.get("consumption") or {}).get("nonce")
        or opened.get("attempt_id") != c["attempt_id"]
    ):
        _fail(record_path, f"content.claim.consumption: not the consumption {where} holds for claim {cid}")
    settled = book.settlement(cid)
    if settled is None:
        _fail(record_path, f"content_sha256: {where} has not settled claim {cid} (`fundbook-launch recover`)")
    if settled["record_content_sha256"] != record["content_sha256"]:
        _fail(
            record_path,
            f"content_sha256: {where} settled claim {cid} with record "
            f"{settled['record_content_sha256'][:12]}..., not this one (rewritten after it was settled)",
        )
    freeze_sha = None
    if c.get("freeze"):
        path = os.path.join(project, "freeze.json")
        if not os.path.exists(path):
            _fail(record_path, f"content.freeze.sha256: the freeze it ran under is not in {project}")
        doc, entries = _freeze.load(path)
        if doc["content_sha256"] != c["freeze"]["sha256"]:
            _fail(record_path, f"content.freeze.sha256: not {path}")
        prices = c.get("prices") or {}
        if not _free(c):
            frozen_row = (
                _freeze.effective(doc, entries, f"prices.models.{c['model']['id']}")
                if c["model"]["id"] in (doc["content"].get("prices", {}).get("models") or {})
                else None
            )
            if prices.get("model") != frozen_row:
                _fail(record_path, f"content.prices.model: not the row frozen in {path} ({_short(frozen_row)})")
        table = (
            _freeze.effective(doc, entries, "prices.table_sha256")
            if "table_sha256" in (doc["content"].get("prices") or {})
            else None
        )
        if table is not None and prices.get("table_sha256") != table:
            _fail(record_path, f"content.prices.table_sha256: not the price table frozen in {path}")
        freeze_sha = doc["content_sha256"]
    return {
        "ledger": book.path,
        "authorise_entry": auth["seq"],
        "claim_entry": opened["seq"],
        "settle_entry": settled["seq"],
        "freeze": freeze_sha,
    }


def _short(value):
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


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
    check_prices(c, record_path)
    _check_ledger(base, record_path, c)
    retained = None
    if "retained" in (c.get("outputs") or {}):
        retained = read_json(os.path.join(base, c["outputs"]["retained"]["path"]), "retained work")
    return {"record": record, "receipts": receipts, "run": run, "retained": retained, "instance": instance}


def _check_ledger(base, record_path, c):
    claim = c["claim"]
    prices = c.get("prices") or {}
    ledger_ref = (c.get("outputs") or {}).get("ledger")
    if ledger_ref is None:
        if c["ledger"]["entries"]:
            _fail(record_path, "content.ledger: entries without a ledger.jsonl")
        return
    ledger = load_ledger(
        os.path.join(base, ledger_ref["path"]),
        claim["sha256"],
        claim["cap_micro_usd"],
        claim["cap_tokens"],
        prices.get("model") or {},
        cap_sandbox_micro_usd=claim.get("cap_sandbox_micro_usd", 0),
        sandbox_rate=(prices.get("sandbox") or {}).get("micro_usd_per_second", 0),
    )
    if ledger.entries != c["ledger"]["entries"] or ledger.head != c["ledger"]["head"]:
        _fail(record_path, "content.ledger: not the ledger in ledger.jsonl")
    _rederive(ledger, record_path)
    _check_calls(ledger, base, record_path, c)
    totals = ledger.totals()
    if totals != c["ledger"]["totals"]:
        _fail(record_path, "content.ledger.totals: not the totals of the ledger's entries")
    cost = c["cost"]
    for key, want in (
        ("micro_usd", totals["charged_micro_usd"]),
        ("unresolved_micro_usd", totals["unresolved_micro_usd"]),
        ("tokens_in", totals["tokens_in"]),
        ("tokens_out", totals["tokens_out"]),
        ("sandbox_micro_usd", totals["sandbox_charged_micro_usd"]),
        ("sandbox_unresolved_micro_usd", totals["sandbox_unresolved_micro_usd"]),
        ("unresolved_calls", totals["unresolved_calls"]),
        ("prompt_cache_hit_tokens", totals["cached_tokens_in"]),
        ("calls", len({e["call"] for e in ledger.entries if e["account"] == "inference"})),
        (
            "cache_hits",
            sum(
                1
                for e in ledger.entries
                if e["kind"] == "charge" and e["account"] == "inference" and e["note"] == "cache hit"
            ),
        ),
    ):
        if cost.get(key) != want:
            _fail(record_path, f"content.cost.{key}: the record says {cost.get(key)}, the ledger says {want}")
    for key in (
        "cpu_ms",
        "reasoning_tokens",
    ):  # the local sampler's CPU time, a provider's reasoning: in both or neither
        if cost.get(key) != totals.get(key):
            _fail(
                record_path, f"content.cost.{key}: the record says {cost.get(key)}, the ledger says {totals.get(key)}"
            )


def _rederive(ledger, record_path):
    """Book the ledger's inputs (tokens, seconds, notes) again through the Ledger's own rules, against the
    record's prices and the claim's caps: every amount, every release and every cap check must come out the same.
    (The hash chain only says the file is as appended; this says the money was booked as the rules book it.)"""
    again = Ledger(
        ledger.claim_sha256,
        ledger.cap_micro_usd,
        ledger.cap_tokens,
        ledger.price,
        cap_sandbox_micro_usd=ledger.cap_sandbox_micro_usd,
        sandbox_rate=ledger.sandbox_rate,
    )
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
                again.settle(
                    e["call"],
                    e["tokens_in"],
                    e["tokens_out"],
                    e["note"],
                    free=e["note"] == "cache hit",
                    cached_in=e["cached_tokens_in"],
                    detail=step_detail(e),
                )
            elif e["kind"] == "unresolved":
                again.mark_unresolved(e["call"], e["note"])
        except UsageOverrun:
            pass  # booked as the ledger books it (as reported); named below with every other overrun
        except (BudgetHalt, InputError) as exc:
            _fail(
                record_path, f"ledger.jsonl: line {i + 1}: not booked as the ledger books it ({exc.format_message()})"
            )
        for j in range(i, len(again.entries)):  # the entry, and the release settle() books with a charge
            e = ledger.entries[j] if j < len(ledger.entries) else None
            if e is None or again.entries[j] != e:
                _fail(
                    record_path,
                    f"ledger.jsonl: line {j + 1}: not what the record's prices, caps and the "
                    f"ledger's rules book (expected {_brief(again.entries[j])})",
                )
    if len(again.entries) != len(ledger.entries):
        _fail(record_path, f"ledger.jsonl: line {len(again.entries) + 1}: not what the ledger's rules book")
    over = again.overruns()
    if over:  # booked as reported, and never verified silently: an overrun is named with its amount
        more = f" (and {len(over) - 1} more)" if len(over) > 1 else ""
        _fail(record_path, f"ledger.jsonl: usage overrun: {over[0]}{more}")


def _brief(entry):
    return ", ".join(f"{k} {entry[k]}" for k in ("kind", "account", "call", "micro_usd", "tokens_in", "tokens_out"))


def _check_calls(ledger, base, record_path, c):
    """The transcript's answered calls are the ledger's charges (tokens, cache hits, micro-USD)."""
    try:
        steps = read_json(os.path.join(base, c["transcript"]["path"]), "transcript")["steps"]
    except InputError as exc:
        _fail(record_path, f"transcript.json unreadable ({exc.format_message()})")
    except (KeyError, TypeError):
        _fail(record_path, "transcript.json: expected a transcript with steps")
    if not isinstance(steps, list):
        _fail(record_path, "transcript.json: steps: expected a list")
    charges = {e["call"]: e for e in ledger.entries if e["account"] == "inference" and e["kind"] == "charge"}
    answered = set()
    for step in steps:
        call = step.get("call") if isinstance(step, dict) else None
        if not isinstance(call, dict) or "micro_usd" not in call:
            continue
        answered.add(call.get("index"))
        e = charges.get(call.get("index"))
        want = e and {
            "micro_usd": e["micro_usd"],
            "prompt_cache_hit_tokens": e["cached_tokens_in"],
            "cached": e["note"] == "cache hit",
        }
        have = {k: call.get(k) for k in ("micro_usd", "prompt_cache_hit_tokens", "cached")}
        for key in ("cpu_ms", "reasoning_tokens"):  # the local sampler's CPU time, a provider's reasoning
            if e is not None and (key in e or key in call):
                want[key], have[key] = e.get(key), call.get(key)
        if e is not None and not call.get("cached"):
            want.update(tokens_in=e["tokens_in"], tokens_out=e["tokens_out"])
            have.update(tokens_in=call.get("tokens_in"), tokens_out=call.get("tokens_out"))
        if want != have:
            _fail(record_path, f"transcript.json: model call {call.get('index')}: {have} is not the ledger's charge")
    if set(charges) - answered:
        _fail(
            record_path,
            f"transcript.json: the ledger charges calls {sorted(set(charges) - answered)} the transcript does not show",
        )
