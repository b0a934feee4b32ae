"""The JSON Schema of submit_batch's and project's arguments, built from the engine's vocabulary.

Inspect checks every tool call against its tool's parameter schema before the
tool runs, so this schema is what the Inspect task accepts. It is the same for
every day (Inspect's tools are fixed for a sample), so where the answer grammar
(launchers/_grammar.py) enumerates the day's ids, this one types them: any id
of the engine's length, any of the engine's breach codes, action types and
authority kinds. Every truthful report and every batch the reference policy
plays fits it (tests/launchers/test_grammar_truth.py). Pure standard library.
"""

import engine

V = engine.vocabulary()
MAX_ID, MAX_TEXT, MAX_ACTIONS = V["limits"]["max_id"], V["limits"]["max_text"], V["limits"]["max_actions"]
INTEGER = {"type": "integer"}
ID = {"type": "string", "minLength": 1, "maxLength": MAX_ID}


def _object(properties, required=None):
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


def _action(action_type, nested=False):
    spec = V["actions"][action_type]
    props = {} if nested else {"id": dict(ID, description="Unique within the batch.")}
    props["type"] = {"type": "string", "enum": [action_type]}
    for name, kind in spec["fields"].items():
        if name == "kind":
            props[name] = {"type": "string", "enum": list(V["authority_kinds"])}
        elif name == "note":
            props[name] = {"type": "string", "maxLength": MAX_TEXT}
        elif name == "action":
            props[name] = {"anyOf": [_action(t, nested=True) for t in V["executable_types"]]}
        elif kind == "integer":
            props[name] = dict(INTEGER, minimum=1) if name in spec["positive"] else INTEGER
        else:
            props[name] = ID
    return _object(props, [k for k in props if k not in spec["optional"]])


def actions_schema() -> dict:
    return {
        "type": "array",
        "items": {"anyOf": [_action(t) for t in V["action_types"]]},
        "description": f"At most {MAX_ACTIONS} actions, each with a unique string id.",
    }


def report_schema() -> dict:
    asset = _object({k: INTEGER for k in V["asset_report_keys"]})
    breach = _object({"day": INTEGER, "code": {"type": "string", "enum": list(V["breach_codes"])}})
    fields = {
        "cash": INTEGER,
        "assets": {
            "type": "object",
            "properties": {},
            "additionalProperties": asset,
            "description": "Every asset not exited, by id.",
        },
        "funding_cost_to_date": INTEGER,
        "breaches": {"type": "array", "items": breach},
        "open_approvals": {"type": "array", "items": ID},
    }
    return _object({k: fields[k] for k in V["report_keys"]})


def submit_batch_parameters() -> dict:
    return _object({"day": INTEGER, "report": report_schema(), "actions": actions_schema()})


def project_parameters() -> dict:
    return _object({"actions": actions_schema()})
