"""The grammar of one checkpoint's answer, built from what the day's desk view shows.

A JSON Schema (2020-12) of today's batch, which the local sampler hands to
llama.cpp's converter (`LlamaGrammar.from_json_schema`), so a small model's
answer always parses: the day is a constant, the report's asset keys are the
live positions (those the `project` tool reports), every id is an enum of the
ids the view shows, and lists are capped. Action ids are constants by position
(a1, a2, ...), so they are unique by construction.

What a grammar cannot hold is left to the worker and the engine, which check
it as they check any batch: integer bounds (the converter ignores `minimum`; a
notional of 0 or past 2^53-1 parses), duplicate keys and unique ids in general,
and every rule of the desk (eligibility, headroom, tenor, cash). A refused
answer is recorded like any other.

Pure: the same view gives the same schema, byte for byte (its sha256 is what
the freeze and the record pin, with GRAMMAR_VERSION).
"""

from engine import canonical_json, sha256_hex

GRAMMAR_VERSION = "fundbook.desk-grammar/1"  # bump with any change to the schema this module builds
MAX_ACTIONS = 4            # actions a day the grammar allows (the engine allows 50)
MAX_ENUM = 50              # ids of one kind the grammar lists (the view shows at most 20)
MAX_ID = 64                # the engine's id length limit: longer ids are never offered
EXTRA_BREACHES = 2         # report.breaches: at most the view's breaches plus this many
BREACH_CODES = ("BUFFER_BREACH",)  # the engine's breach codes (engine/_settle.py)
AUTHORITY_KINDS = ("capacity", "tenor", "buffer")
ASSET_REPORT_KEYS = ("funded", "unfunded", "maturity_gap_days", "tail_cent_days")
INTEGER = {"type": "integer"}
POSITIVE = {"type": "integer", "minimum": 1}   # kept for readers: llama.cpp's converter ignores it


def _ids(entries, keep=lambda e: True):
    out = []
    for e in entries if isinstance(entries, list) else []:
        if isinstance(e, dict) and isinstance(e.get("id"), str) and 0 < len(e["id"]) <= MAX_ID and keep(e) \
                and e["id"] not in out:
            out.append(e["id"])
    return out[:MAX_ENUM]


def _object(properties):
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _enum(values):
    return {"enum": list(values)}


def _action_kinds(view):
    """{type: fields schema (no id/type)} for the actions the view makes possible."""
    assets = _ids(view.get("assets"))
    quotes = _ids(view.get("quotes"))
    trades = _ids(view.get("trades"))
    parties = _ids(view.get("counterparties"))
    approved = _ids(view.get("approvals"), lambda a: a.get("status") == "approved")
    kinds = {}
    if assets and quotes:
        kinds["FUND"] = {"asset": _enum(assets), "quote": _enum(quotes), "notional": POSITIVE}
    if trades and quotes:
        kinds["ROLL"] = {"trade": _enum(trades), "quote": _enum(quotes)}
    if trades:
        kinds["REPAY"] = {"trade": _enum(trades)}
    if parties:
        kinds["ESCALATE"] = {"kind": {"const": "capacity"}, "amount": POSITIVE, "counterparty": _enum(parties)}
    kinds["ESCALATE/limit"] = {"kind": _enum(AUTHORITY_KINDS[1:]), "amount": POSITIVE}
    nested = [_object({"type": {"const": t}, **kinds[t]}) for t in ("FUND", "ROLL") if t in kinds]
    if approved and nested:
        kinds["EXECUTE"] = {"approval": _enum(approved), "action": nested[0] if len(nested) == 1 else {"anyOf": nested}}
    return kinds


def _actions(view):
    kinds = _action_kinds(view)

    def at(i):
        variants = [_object({"id": {"const": f"a{i + 1}"}, "type": {"const": name.split("/")[0]}, **fields})
                    for name, fields in kinds.items()]
        return variants[0] if len(variants) == 1 else {"anyOf": variants}
    lengths = [{"const": []}] + [{"type": "array", "prefixItems": [at(i) for i in range(n)], "items": False,
                                  "minItems": n} for n in range(1, MAX_ACTIONS + 1)]
    return {"anyOf": lengths}


def _report(view):
    projected = view.get("report_if_no_action")
    if isinstance(projected, dict) and isinstance(projected.get("assets"), dict):
        live = [k for k in sorted(projected["assets"]) if isinstance(k, str) and 0 < len(k) <= MAX_ID][:MAX_ENUM]
    else:  # no projection: the view's positions that have not exited
        live = _ids(view.get("assets"), lambda a: a.get("status") != "exited")
    approvals = _ids(view.get("approvals"), lambda a: a.get("status") in ("pending", "approved"))
    shown = view.get("breaches") if isinstance(view.get("breaches"), list) else []
    codes = list(BREACH_CODES) + sorted({b["code"] for b in shown if isinstance(b, dict) and isinstance(b.get("code"), str)
                                         and 0 < len(b["code"]) <= MAX_ID} - set(BREACH_CODES))
    breach = _object({"day": INTEGER, "code": _enum(codes)})
    return _object({
        "cash": INTEGER, "funding_cost_to_date": INTEGER,
        "breaches": {"type": "array", "items": breach, "maxItems": min(len(shown), MAX_ENUM) + EXTRA_BREACHES},
        "open_approvals": {"type": "array", "items": _enum(approvals), "maxItems": len(approvals)}
        if approvals else {"const": []},
        "assets": _object({aid: _object({k: INTEGER for k in ASSET_REPORT_KEYS}) for aid in live}),
    })


def batch_schema(view) -> dict:
    """The JSON Schema of today's batch for a desk view (prompt.view)."""
    day = view.get("day") if isinstance(view, dict) else None
    if not isinstance(day, int) or isinstance(day, bool):
        raise ValueError("the desk view has no integer day")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": f"fundbook batch, day {day}",
            **_object({"day": {"const": day}, "actions": _actions(view), "report": _report(view)})}


def schema_sha256(schema) -> str:
    return sha256_hex(canonical_json(schema))
