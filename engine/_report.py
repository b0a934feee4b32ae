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

A submitted report is assessed against the gold one field by field (see
`assess_report`): credit by the size of each error relative to its base, and
the materiality test for cash and funding.
"""

from ._book import covered, forward_exposure, funding_cost_to_date, open_approval_ids
from ._vocabulary import ASSET_REPORT_KEYS

REPORT_FIELDS_PER_ASSET = ASSET_REPORT_KEYS
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


# -- accuracy and materiality ---------------------------------------------------
#
# A field's error is measured against its base, in basis points: cash against
# the true cash but never less than the desk's minimum buffer (the scale at
# which the parent reads the cash line), an asset's funded and unfunded notional
# against the asset's notional (the two are parts of it, and the true unfunded
# is often zero), every other number against its true value (at least 1). Every
# comparison is an exact integer one: |error| x 10,000 against bps x base.

FIELD_UNITS = 100  # what an exact field earns
MATERIALITY_BPS = 100  # an error over 1 % of its base is material
# (error at most this many bps of the base, units earned); further off earns nothing
CREDIT_BANDS = ((1, 100), (10, 75), (MATERIALITY_BPS, 25))
MATERIAL_FIELDS = ("cash", "funded", "unfunded")  # cash and funding: a material error voids the day


def field_base(name, true_value, scale):
    """The amount a field's error is measured against (scale: min_buffer, notionals);
    None for the list fields, which are right or wrong."""
    if not isinstance(true_value, int):
        return None
    if name == "cash":
        return max(abs(true_value), scale["min_buffer"], 1)
    parts = name.split(".")
    if parts[0] == "assets" and parts[2] in ("funded", "unfunded"):
        return max(scale["notionals"].get(parts[1], 0), abs(true_value), 1)
    return max(abs(true_value), 1)


def error_within(error, base, bps) -> bool:
    """|error| is at most `bps` basis points of `base` (exact, integers only)."""
    return abs(error) * 10_000 <= bps * base


def field_credit(true_value, got, base) -> int:
    """Units a reported value earns: all for exact, less as the error grows."""
    if got is _MISSING:
        return 0
    if got == true_value:
        return FIELD_UNITS
    if not isinstance(got, int) or isinstance(got, bool) or not isinstance(true_value, int):
        return 0  # lists (breaches, approvals) are right or wrong
    for bps, credit in CREDIT_BANDS:
        if error_within(got - true_value, base, bps):
            return credit
    return 0


def is_material_field(name) -> bool:
    return name.split(".")[-1] in MATERIAL_FIELDS


def assess_report(gold, candidate, scale) -> dict:
    """How far a reported day can be relied on, field by field.

    credit: units earned (FIELD_UNITS per gold field; zero for the whole day
    when cash or funding is materially misstated); matched: fields within
    tolerance (1 bp); material: the materially misstated cash/funding fields.
    """
    fields = report_fields(gold)
    credit = matched = 0
    mismatches, material = [], []
    for name, value in fields:
        got = _lookup(candidate, name) if candidate is not None else _MISSING
        base = field_base(name, value, scale)
        earned = field_credit(value, got, base)
        credit += earned
        if earned == FIELD_UNITS:
            matched += 1
        else:
            mismatches.append(name)
        if (is_material_field(name) and isinstance(got, int) and not isinstance(got, bool)
                and not error_within(got - value, base, MATERIALITY_BPS)):
            material.append({"field": name, "reported": got, "true": value,
                             "error_bps": abs(got - value) * 10_000 // base})
    if material:
        credit = 0  # the parent cannot rely on a report that misstates cash or funding
    return {"credit": credit, "units": FIELD_UNITS * len(fields), "matched": matched, "fields": len(fields),
            "mismatches": mismatches, "material": material}


_MISSING = object()


def _lookup(report, name):
    parts = name.split(".")
    if parts[0] == "assets":
        entry = report.get("assets", {}).get(parts[1])
        if not isinstance(entry, dict):
            return _MISSING
        return entry.get(parts[2], _MISSING)
    return report.get(name, _MISSING)
