"""The current-parent report: the book as it stands once day d has settled.

`gold_report` is the engine's own computation of every field, from the settled
book. A desk computes the same numbers from its packet with the calculation
tools (see `_tools.py`), which run this very code on a book rebuilt from the
packet.

Fields (all integers; money in cents):
  cash                   cash after the close of day d
  assets.<id>.funded     notional funded over the night after day d
  assets.<id>.unfunded   settled notional not funded over that night
  assets.<id>.maturity_gap_days  calendar days from the night of d to exit
                         on which the asset is not fully funded by trades agreed so far
  assets.<id>.tail_cent_days     the same, weighted by the unfunded cents
  funding_cost_to_date   interest accrued on all started trades to day d
  breaches               every breach so far, as {day, code}
  open_approvals         ids of approvals pending or approved and unconsumed
Assets listed: committed by day d and not exited by its close.
"""

from ._book import covered, forward_exposure, funding_cost_to_date, open_approval_ids

REPORT_FIELDS_PER_ASSET = ("funded", "unfunded", "maturity_gap_days", "tail_cent_days")
REPORT_SCALAR_FIELDS = ("cash", "funding_cost_to_date", "breaches", "open_approvals")


def reported_assets(book):
    return [aid for aid in sorted(book["assets"]) if book["assets"][aid]["status"] != "exited"]


def gold_report(book, day) -> dict:
    assets = {}
    for aid in reported_assets(book):
        asset = book["assets"][aid]
        funded = min(asset["notional"], covered(book, aid, day))
        unfunded = asset["notional"] - funded if asset["settle_day"] <= day else 0
        gap, tail = forward_exposure(book, aid, day)
        assets[aid] = {"funded": funded, "unfunded": unfunded, "maturity_gap_days": gap, "tail_cent_days": tail}
    return {
        "cash": book["cash"],
        "assets": assets,
        "funding_cost_to_date": funding_cost_to_date(book, day),
        "breaches": [dict(b) for b in book["breaches"]],
        "open_approvals": open_approval_ids(book),
    }


def report_fields(report):
    """The scored fields of a report as (name, value) pairs, in a fixed order."""
    out = [(name, report[name]) for name in REPORT_SCALAR_FIELDS]
    for aid in sorted(report["assets"]):
        for name in REPORT_FIELDS_PER_ASSET:
            out.append((f"assets.{aid}.{name}", report["assets"][aid][name]))
    return out


def compare_reports(gold, candidate):
    """(matched, total, mismatches) over the gold report's fields."""
    matched = 0
    mismatches = []
    fields = report_fields(gold)
    for name, value in fields:
        got = _lookup(candidate, name) if candidate is not None else _MISSING
        if got == value and got is not _MISSING:
            matched += 1
        else:
            mismatches.append(name)
    return matched, len(fields), mismatches


_MISSING = object()


def _lookup(report, name):
    parts = name.split(".")
    if parts[0] == "assets":
        entry = report.get("assets", {}).get(parts[1])
        if not isinstance(entry, dict):
            return _MISSING
        return entry.get(parts[2], _MISSING)
    return report.get(name, _MISSING)
