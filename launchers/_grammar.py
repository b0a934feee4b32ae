"""The grammar of one checkpoint's answer (grammar 2), built from the day's desk view and the engine's vocabulary.

A JSON Schema (2020-12) of today's batch, which the local sampler hands to
llama.cpp's converter (`LlamaGrammar.from_json_schema`) and the HTTP samplers
send in portable form (launchers/_sampler_api.py), so a small model's answer
always parses: the day is a constant, every id is an enum of the ids the view
shows, and lists are capped. Action ids are constants by position (a1, a2, ...),
so they are unique by construction.

Every code and key comes from `engine.vocabulary()`, never from a copy (grammar 1
typed its breach codes by hand, missed SETTLEMENT_FAIL, and could not state the
truth on many days: launchers/_grammar_v1.py, kept for its erratum). What the
truthful report of a day can hold is expressible by construction:
- breaches: any of the engine's breach codes, and at most one a settled day,
  so at most `day` of them by today's close;
- open_approvals: the open approvals the view shows, plus the ids the day's
  own ESCALATEs would open (the view's `approvals_requested` + 1, + 2, ...,
  one per action the grammar allows);
- assets: exactly the live positions of the `project` tool's no-action report
  (which assets are live does not depend on the day's actions: exits and
  settlements are scheduled).
tests/launchers/test_grammar_truth.py shows it as a property over reachable
states, with the reference policy's batches.

What the grammar leaves out, and why it costs a truthful player nothing (the
contract page says the same): notes (the batch's and an ESCALATE's: never
scored); more than MAX_ACTIONS actions a day (the reference policy, which earns
every point of cost and protection, never needs more than 3 a day on any
published world); ids of entities the view does not list (the view lists up to
20 of each kind; the reference never uses another). Integer bounds are the
engine's to check (the converter ignores `minimum`), as are unique ids in
general and every rule of the desk. A refused answer is recorded like any other.

Pure: the same view gives the same schema, byte for byte (its sha256 is what
the freeze and the record pin, with GRAMMAR_VERSION).
"""

import engine
from engine import canonical_json, sha256_hex

GRAMMAR_VERSION = "fundbook.desk-grammar/2"  # bump with any change to the schema this module builds
MAX_ACTIONS = 4            # actions a day the grammar allows (the engine allows 50; the reference needs 3)
MAX_ENUM = 50              # ids of one kind the grammar lists (the view shows at most 20)
VOCABULARY = engine.vocabulary()
MAX_ID = VOCABULARY["limits"]["max_id"]  # the engine's id length limit: longer ids are never offered
BREACH_CODES = tuple(VOCABULARY["breach_codes"])
AUTHORITY_KINDS = tuple(VOCABULARY["authority_kinds"])
COUNTERPARTY_KINDS = tuple(VOCABULARY["counterparty_kinds"])
EXECUTABLE = tuple(VOCABULARY["executable_types"])
ASSET_REPORT_KEYS = tuple(VOCABULARY["asset_report_keys"])
OPEN = tuple(VOCABULARY["open_approval_statuses"])
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


# What fills each id field of an action: the view's entries of that kind (approvals: the approved ones).
ID_SOURCES = {"asset": ("assets", None), "quote": ("quotes", None), "trade": ("trades", None),
              "counterparty": ("counterparties", None), "approval": ("approvals", "approved")}


def _variants(action_type, ids, nested=None):
    """[fields schema (no id/type)] of one action type, built from the vocabulary: each id field an enum of the
    view's ids (none to offer: no variant), integers typed, the authority kind an enum of the kinds, an optional
    id field given and left out (one variant each way), a note never written (it is never scored)."""
    spec = VOCABULARY["actions"][action_type]
    out = [{}]
    for name, kind in spec["fields"].items():
        if name in ("note", "kind"):
            continue
        if name in ID_SOURCES:
            if not ids[name]:
                if name in spec["optional"]:
                    continue
                return []
            given = [dict(f, **{name: _enum(ids[name])}) for f in out]
            out = given + (out if name in spec["optional"] else [])
        elif name == "action":
            if not nested:
                return []
            out = [dict(f, action=nested[0] if len(nested) == 1 else {"anyOf": nested}) for f in out]
        elif kind == "integer":
            out = [dict(f, **{name: POSITIVE if name in spec["positive"] else INTEGER}) for f in out]
    if "kind" in spec["fields"]:  # the authority kind: any kind with a counterparty, the kinds needing none without
        out = [dict(f, kind=_enum([k for k in AUTHORITY_KINDS if "counterparty" in f or k not in COUNTERPARTY_KINDS]))
               for f in out]
    return out


def _action_kinds(view):
    """[(type, fields schema)] of the actions the view makes possible, in the vocabulary's order."""
    ids = {name: _ids(view.get(key), (lambda e, s=status: e.get("status") == s) if status else (lambda e: True))
           for name, (key, status) in ID_SOURCES.items()}
    nested = [_object({"type": {"const": t}, **f}) for t in EXECUTABLE for f in _variants(t, ids)]
    return [(t, f) for t in VOCABULARY["action_types"] for f in _variants(t, ids, nested)]


def _order(fields):
    """ESCALATE's kind first, as the prompt names it (the rest in the vocabulary's order)."""
    return dict(sorted(fields.items(), key=lambda kv: kv[0] != "kind"))


def _actions(view):
    kinds = _action_kinds(view)

    def at(i):
        variants = [_object({"id": {"const": f"a{i + 1}"}, "type": {"const": name}, **_order(fields)})
                    for name, fields in kinds]
        return variants[0] if len(variants) == 1 else {"anyOf": variants}
    lengths = [{"const": []}] + [{"type": "array", "prefixItems": [at(i) for i in range(n)], "items": False,
                                  "minItems": n} for n in range(1, MAX_ACTIONS + 1)]
    return {"anyOf": lengths}


def _approval_ids(view):
    """The open approvals the view shows, then the ids today's accepted ESCALATEs would open (one an action)."""
    shown = _ids(view.get("approvals"), lambda a: a.get("status") in OPEN)
    requested = view.get("approvals_requested")
    if type(requested) is int and 0 <= requested < 10**6:
        shown += [engine.approval_id(requested + k) for k in range(1, MAX_ACTIONS + 1)
                  if engine.approval_id(requested + k) not in shown]
    return shown


def _report(view, day):
    projected = view.get("report_if_no_action")
    if isinstance(projected, dict) and isinstance(projected.get("assets"), dict):
        live = [k for k in sorted(projected["assets"]) if isinstance(k, str) and 0 < len(k) <= MAX_ID][:MAX_ENUM]
    else:  # no projection: the view's positions that have not exited
        live = _ids(view.get("assets"), lambda a: a.get("status") != "exited")
    approvals = _approval_ids(view)
    breach = _object({"day": INTEGER, "code": _enum(BREACH_CODES)})
    per_day = VOCABULARY["breaches_per_day"]
    return _object({
        "cash": INTEGER, "funding_cost_to_date": INTEGER,
        "breaches": {"type": "array", "items": breach, "maxItems": per_day * max(day, 0)},
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
            **_object({"day": {"const": day}, "actions": _actions(view), "report": _report(view, day)})}


def schema_sha256(schema) -> str:
    return sha256_hex(canonical_json(schema))
