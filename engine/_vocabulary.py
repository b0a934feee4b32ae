"""The desk's vocabulary: every code, type and key a batch, a report or a decision uses.

One owner. The engine's own checks (_batch, _rules, _settle, _packet, _report)
read these names from here, and everything outside the engine that must speak
the desk's language -- the answer grammar and the portable schema the model
path decodes under, the Inspect task's tools, the contract page -- builds
from `vocabulary()`, never from a copy: a code the engine can book is a code
an answer can state.
"""

ACTION_TYPES = ("FUND", "ROLL", "REPAY", "ESCALATE", "EXECUTE")
EXECUTABLE_TYPES = ("FUND", "ROLL")      # what an EXECUTE may carry under approved authority
AUTHORITY_KINDS = ("capacity", "tenor", "buffer")
COUNTERPARTY_KINDS = ("capacity",)       # the authority kinds that must name a counterparty (any may)
ACTION_FIELDS = {
    # type: {field: kind}; "id" and "type" are common to all
    "FUND": {"asset": str, "quote": str, "notional": int},
    "ROLL": {"trade": str, "quote": str},
    "REPAY": {"trade": str},
    "ESCALATE": {"kind": str, "amount": int, "counterparty": str, "note": str},
    "EXECUTE": {"approval": str, "action": dict},
}
OPTIONAL_FIELDS = {"ESCALATE": ("counterparty", "note")}
POSITIVE_FIELDS = {"FUND": ("notional",), "ESCALATE": ("amount",)}  # integers a batch must give above zero

REASON_CODES = ("TIMING", "TITLE", "CAPACITY", "CASH", "AUTHORITY")  # why an accepted-shape action is refused
SETTLEMENT_FAIL, BUFFER_BREACH = "SETTLEMENT_FAIL", "BUFFER_BREACH"
BREACH_CODES = (SETTLEMENT_FAIL, BUFFER_BREACH)  # at most one a settled day (cash below zero, else below buffer)

BATCH_KEYS = ("day", "report", "actions", "note")
REPORT_KEYS = ("cash", "assets", "funding_cost_to_date", "breaches", "open_approvals")
ASSET_REPORT_KEYS = ("funded", "unfunded", "maturity_gap_days", "tail_cent_days")
BREACH_KEYS = ("day", "code")

APPROVAL_STATUSES = ("pending", "approved", "denied", "expired", "consumed")
OPEN_APPROVAL_STATUSES = ("pending", "approved")  # what report.open_approvals lists
APPROVAL_ID = "AP%03d"  # the n-th approval the desk requests (n from 1), one per accepted ESCALATE

# Limits (documented on the contract page): a batch is at most MAX_BATCH_BYTES of canonical JSON, so nothing a
# desk sends can bloat the history or the packets that carry earlier receipts.
MAX_BATCH_BYTES = 64 * 1024  # one day's batch, note included
MAX_ACTIONS = 50
MAX_ID = 64
MAX_TEXT = 2000          # characters in any string field, the note included
MAX_REPORT_ASSETS = 50   # entries in report.assets (a world has at most 50 assets)
MAX_REPORT_LIST = 200    # entries in report.breaches and report.open_approvals

VOCABULARY_FORMAT = 1  # bump when a name below changes meaning or goes away


def approval_id(n: int) -> str:
    """The id of the n-th approval a desk requests (n from 1)."""
    return APPROVAL_ID % n


def vocabulary() -> dict:
    """The vocabulary as plain JSON data (a fresh copy each call: nobody can edit the engine's)."""
    kinds = {int: "integer", str: "string", dict: "object"}
    return {
        "format": VOCABULARY_FORMAT,
        "action_types": list(ACTION_TYPES),
        "actions": {t: {"fields": {k: kinds[v] for k, v in ACTION_FIELDS[t].items()},
                        "optional": list(OPTIONAL_FIELDS.get(t, ())), "positive": list(POSITIVE_FIELDS.get(t, ()))}
                    for t in ACTION_TYPES},
        "executable_types": list(EXECUTABLE_TYPES),
        "authority_kinds": list(AUTHORITY_KINDS),
        "counterparty_kinds": list(COUNTERPARTY_KINDS),
        "reason_codes": list(REASON_CODES),
        "breach_codes": list(BREACH_CODES),
        "breaches_per_day": 1,
        "batch_keys": list(BATCH_KEYS),
        "report_keys": list(REPORT_KEYS),
        "asset_report_keys": list(ASSET_REPORT_KEYS),
        "breach_keys": list(BREACH_KEYS),
        "approval_statuses": list(APPROVAL_STATUSES),
        "open_approval_statuses": list(OPEN_APPROVAL_STATUSES),
        "approval_id": APPROVAL_ID,
        "limits": {"max_batch_bytes": MAX_BATCH_BYTES, "max_actions": MAX_ACTIONS, "max_id": MAX_ID,
                   "max_text": MAX_TEXT, "max_report_assets": MAX_REPORT_ASSETS, "max_report_list": MAX_REPORT_LIST},
    }
