"""The shape of a daily batch and of the report inside it.

A batch that fails any check here is *rejected* whole: nothing changes. Each
message names the field and what was expected, for a one-line error.
"""

from ._canon import _dumps
from ._errors import BatchRejected, field, shown

from ._vocabulary import (ACTION_FIELDS, ACTION_TYPES, AUTHORITY_KINDS, EXECUTABLE_TYPES, MAX_ACTIONS,  # noqa: F401
                          MAX_BATCH_BYTES, MAX_ID, MAX_REPORT_ASSETS, MAX_REPORT_LIST, MAX_TEXT, OPTIONAL_FIELDS)
from ._vocabulary import ASSET_REPORT_KEYS, BATCH_KEYS as _BATCH_KEYS, REPORT_KEYS as _REPORT_KEYS

# The names (and the limits, documented on the contract page) come from the vocabulary's one owner.
BATCH_KEYS = set(_BATCH_KEYS)
REPORT_KEYS = set(_REPORT_KEYS)
OPTIONAL = {t: set(keys) for t, keys in OPTIONAL_FIELDS.items()}


MAX_INT = 2**53 - 1  # hashed content stays within the interoperable JSON integer range


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _type_name(kind):
    return {int: "integer", str: "string", dict: "object", list: "array"}[kind]


def _check_type(value, kind, where):
    ok = _is_int(value) if kind is int else isinstance(value, kind)
    if not ok:
        raise BatchRejected(f"{where}: expected {_type_name(kind)}, got {type(value).__name__}")
    if kind is int and abs(value) > MAX_INT:
        raise BatchRejected(f"{where}: expected an integer within +-(2^53-1), got {value}")


def check_report(report, where="batch.report"):
    if not isinstance(report, dict):
        raise BatchRejected(f"{where}: expected an object")
    extra = sorted(set(report) - REPORT_KEYS)
    if extra:
        raise BatchRejected(f"{field(where, extra[0])}: unknown field (expected {sorted(REPORT_KEYS)})")
    for key in sorted(REPORT_KEYS):
        if key not in report:
            raise BatchRejected(f"{where}.{key}: missing")
    _check_type(report["cash"], int, where + ".cash")
    _check_type(report["funding_cost_to_date"], int, where + ".funding_cost_to_date")
    assets = report["assets"]
    _check_type(assets, dict, where + ".assets")
    for aid in sorted(assets):
        if len(aid) > MAX_ID:
            raise BatchRejected(f"{where}.assets: a key longer than {MAX_ID} characters")
        entry = assets[aid]
        if type(entry) is dict and len(entry) == len(ASSET_REPORT_KEYS) and all(
                type(entry.get(k)) is int and -MAX_INT <= entry[k] <= MAX_INT for k in ASSET_REPORT_KEYS):
            continue  # the usual case, checked without building any message
        _check_type(entry, dict, field(where + ".assets", aid))
        for key in sorted(entry):
            if key not in ASSET_REPORT_KEYS:
                raise BatchRejected(f"{field(field(where + '.assets', aid), key)}: unknown field (expected {list(ASSET_REPORT_KEYS)})")
        for key in ASSET_REPORT_KEYS:
            if key not in entry:
                raise BatchRejected(f"{field(where + '.assets', aid)}.{key}: missing")
            _check_type(entry[key], int, f"{field(where + '.assets', aid)}.{key}")
    if len(assets) > MAX_REPORT_ASSETS:
        raise BatchRejected(f"{where}.assets: more than {MAX_REPORT_ASSETS} entries")
    _check_type(report["breaches"], list, where + ".breaches")
    _check_type(report["open_approvals"], list, where + ".open_approvals")
    for key in ("breaches", "open_approvals"):
        if len(report[key]) > MAX_REPORT_LIST:
            raise BatchRejected(f"{where}.{key}: more than {MAX_REPORT_LIST} entries")
    for i, b in enumerate(report["breaches"]):
        w = f"{where}.breaches[{i}]"
        _check_type(b, dict, w)
        if set(b) != {"day", "code"}:
            raise BatchRejected(f"{w}: expected exactly the fields day and code")
        _check_type(b["day"], int, w + ".day")
        _check_type(b["code"], str, w + ".code")
        if len(b["code"]) > MAX_ID:
            raise BatchRejected(f"{w}.code: longer than {MAX_ID} characters")
    for i, a in enumerate(report["open_approvals"]):
        _check_type(a, str, f"{where}.open_approvals[{i}]")
        if len(a) > MAX_ID:
            raise BatchRejected(f"{where}.open_approvals[{i}]: longer than {MAX_ID} characters")


def check_action_shape(action, where, nested=False):
    _check_type(action, dict, where)
    atype = action.get("type")
    allowed = EXECUTABLE_TYPES if nested else ACTION_TYPES
    if atype not in allowed:
        raise BatchRejected(f"{where}.type: expected one of {list(allowed)}, got {shown(atype)}")
    fields = ACTION_FIELDS[atype]
    common = {"type"} if nested else {"type", "id"}
    for key in sorted(action):
        if key not in fields and key not in common:
            raise BatchRejected(f"{field(where, key)}: unknown field for {atype}")
    if not nested:
        _check_type(action.get("id"), str, where + ".id")
        if not 1 <= len(action["id"]) <= MAX_ID:
            raise BatchRejected(f"{where}.id: expected 1..{MAX_ID} characters")
    optional = OPTIONAL.get(atype, set())
    for key, kind in fields.items():
        if key not in action:
            if key in optional:
                continue
            raise BatchRejected(f"{where}.{key}: missing (required for {atype})")
        _check_type(action[key], kind, f"{where}.{key}")
        if kind is str and len(action[key]) > MAX_TEXT:
            raise BatchRejected(f"{where}.{key}: longer than {MAX_TEXT} characters")
    if atype == "FUND" and action["notional"] <= 0:
        raise BatchRejected(f"{where}.notional: expected a positive amount of cents")
    if atype == "ESCALATE":
        if action["kind"] not in AUTHORITY_KINDS:
            raise BatchRejected(f"{where}.kind: expected one of {list(AUTHORITY_KINDS)}")
        if action["amount"] <= 0:
            raise BatchRejected(f"{where}.amount: expected a positive amount")
        if action["kind"] == "capacity" and "counterparty" not in action:
            raise BatchRejected(f"{where}.counterparty: missing (required for a capacity request)")
    if atype == "EXECUTE":
        check_action_shape(action["action"], where + ".action", nested=True)


def check_batch_shape(batch, where="batch"):
    """Schema only (types, fields, unique ids); day and references are checked by the desk."""
    if not isinstance(batch, dict):
        raise BatchRejected(f"{where}: expected a JSON object with day, report and actions")
    extra = sorted(set(batch) - BATCH_KEYS)
    if extra:
        raise BatchRejected(f"{field(where, extra[0])}: unknown field (expected day, report, actions, note)")
    for key in ("day", "report", "actions"):
        if key not in batch:
            raise BatchRejected(f"{where}.{key}: missing")
    _check_type(batch["day"], int, where + ".day")
    if "note" in batch:
        _check_type(batch["note"], str, where + ".note")
        if len(batch["note"]) > MAX_TEXT:
            raise BatchRejected(f"{where}.note: longer than {MAX_TEXT} characters")
    check_report(batch["report"], where + ".report")
    actions = batch["actions"]
    _check_type(actions, list, where + ".actions")
    if len(actions) > MAX_ACTIONS:
        raise BatchRejected(f"{where}.actions: at most {MAX_ACTIONS} actions a day")
    seen = set()
    for i, action in enumerate(actions):
        check_action_shape(action, f"{where}.actions[{i}]")
        if action["id"] in seen:
            raise BatchRejected(f"{where}.actions[{i}].id: duplicate action id {shown(action['id'])}")
        seen.add(action["id"])
    try:  # the byte size of its canonical JSON (same characters, another order)
        size = len(_dumps(batch).encode("utf-8"))
    except UnicodeEncodeError:
        raise BatchRejected(f"{where}: a lone surrogate is not Unicode text") from None
    if size > MAX_BATCH_BYTES:
        raise BatchRejected(f"{where}: {size} bytes of canonical JSON is over the {MAX_BATCH_BYTES}-byte limit")
