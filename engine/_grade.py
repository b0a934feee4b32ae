"""Grading: status, then the qualification verdict with named gates, then an
integer score out of a fixed 100.

Gates (every one must pass for QUALIFIED):
  no_settlement_failure     cash never under zero at a close
  no_false_full_protection  no report understates a position's maturity gap or
                            tail, or leaves out a position that has one
  no_material_misstatement  no report misstates cash or funding by more than
                            the materiality threshold (see `_report.py`)
  checkpoint_coverage       an accepted batch on at least 90 % of checkpoints

Score components (integer points, floor division, never a float):
  report_accuracy     40 x credit earned / credit possible, over every gold
                      field of every checkpoint: 100 units a field, fewer as
                      the error grows relative to its base, none for a day
                      whose cash or funding is materially misstated (a
                      missing day scores zero for its fields)
  funding_cost        30 x reference all-in cost / candidate all-in cost, at most 30
  maturity_protection 30 x (U - T) / (U - T_ref), clipped to 0..30
All-in cost is the interest paid on funding trades plus the parent treasury's
charge for carrying unfunded positions (the realised tail at the desk's
treasury rate). U is the tail of a desk that funds nothing, T the candidate's
realised tail, T_ref the reference plan's.
"""

from ._book import realized_tail, total_interest, unfunded_tail
from ._canon import engine_sha256
from ._report import MATERIALITY_BPS, assess_report
from ._units import charge_on_cent_days

RESULT_FORMAT = 2  # bump when a field below changes meaning
DENOMINATOR = 100
REPORT_POINTS, COST_POINTS, PROTECTION_POINTS = 40, 30, 30
COVERAGE_NUMERATOR, COVERAGE_DENOMINATOR = 9, 10  # accepted batches on >= 90 % of checkpoints

GATES = ("no_settlement_failure", "no_false_full_protection", "no_material_misstatement", "checkpoint_coverage")
DETAIL_LIMIT = 5  # findings named in a gate's detail


def economics(run) -> dict:
    """Realised cost and tail of a finalised run."""
    book = run.book
    tail = realized_tail(book)
    interest = total_interest(book)
    treasury = charge_on_cent_days(tail, book["desk"]["treasury_rate_bps"])
    return {"interest": interest, "treasury_charge": treasury, "all_in_cost": interest + treasury,
            "realized_tail": tail, "unfunded_tail": unfunded_tail(book)}


def report_scale(run) -> dict:
    """What report errors are measured against (see `_report.field_base`)."""
    book = run.book
    return {"min_buffer": book["desk"]["min_buffer"],
            "notionals": {aid: book["assets"][aid]["notional"] for aid in sorted(book["assets"])}}


def assessments(run):
    """Per checkpoint, the report assessment (see `_report.assess_report`)."""
    scale = report_scale(run)
    return [assess_report(day["gold_report"], day["report"], scale) for day in run.days]


def false_protection(day) -> list:
    """Findings on one reported day: an exposed position left out, or its gap or
    tail understated. Overstating is conservative and only costs accuracy."""
    report = day["report"]
    if report is None:
        return []
    found = []
    for aid, gold in sorted(day["gold_report"]["assets"].items()):
        if gold["tail_cent_days"] <= 0 and gold["maturity_gap_days"] <= 0:
            continue
        claimed = report["assets"].get(aid)
        if not isinstance(claimed, dict):
            found.append(f"day {day['day']} {aid} left out (gap {gold['maturity_gap_days']} days)")
            continue
        for name, unit in (("maturity_gap_days", "days"), ("tail_cent_days", "cent-days")):
            got = claimed.get(name)
            if gold[name] > 0 and not (isinstance(got, int) and not isinstance(got, bool) and got >= gold[name]):
                found.append(f"day {day['day']} {aid} {name} {got} < {gold[name]} {unit}")
    return found


def _listed(findings):
    shown = "; ".join(findings[:DETAIL_LIMIT])
    return shown + (f" (and {len(findings) - DETAIL_LIMIT} more)" if len(findings) > DETAIL_LIMIT else "")


def _gates(run, assessed):
    fails = [b for b in run.book["breaches"] if b["code"] == "SETTLEMENT_FAIL"]
    understated = [f for day in run.days for f in false_protection(day)]
    material = [f"day {day['day']} {m['field']} {m['reported']} vs {m['true']} ({m['error_bps']} bps)"
                for day, a in zip(run.days, assessed) for m in a["material"]]
    accepted = sum(1 for d in run.days if d["batch"] == "accepted")
    needed = -(-run.horizon * COVERAGE_NUMERATOR // COVERAGE_DENOMINATOR)
    return [
        {"gate": "no_settlement_failure", "passed": not fails,
         "detail": "no settlement failure" if not fails else
         "cash below zero on day " + ", ".join(str(b["day"]) for b in fails)},
        {"gate": "no_false_full_protection", "passed": not understated,
         "detail": "no report understates a gap or tail or leaves out an exposed position" if not understated else
         "understated or omitted exposure: " + _listed(understated)},
        {"gate": "no_material_misstatement", "passed": not material,
         "detail": f"no cash or funding figure off by more than {MATERIALITY_BPS} bps of its base" if not material else
         "material misstatement: " + _listed(material)},
        {"gate": "checkpoint_coverage", "passed": accepted >= needed,
         "detail": f"accepted batches on {accepted} of {run.horizon} checkpoints (at least {needed} needed)"},
    ]


def score(run, reference_economics, assessed=None) -> dict:
    assessed = assessments(run) if assessed is None else assessed
    credit = sum(a["credit"] for a in assessed)
    units = sum(a["units"] for a in assessed)
    matched = sum(a["matched"] for a in assessed)
    total = sum(a["fields"] for a in assessed)
    report_points = REPORT_POINTS * credit // units if units else REPORT_POINTS
    mine = economics(run)
    ref_cost, cost = reference_economics["all_in_cost"], mine["all_in_cost"]
    cost_points = COST_POINTS if cost <= ref_cost else COST_POINTS * ref_cost // cost
    u, t, t_ref = mine["unfunded_tail"], mine["realized_tail"], reference_economics["realized_tail"]
    if u > t_ref:
        protection = max(0, min(PROTECTION_POINTS, PROTECTION_POINTS * (u - t) // (u - t_ref)))
    else:
        protection = PROTECTION_POINTS if t <= t_ref else 0
    return {
        "points": report_points + cost_points + protection,
        "denominator": DENOMINATOR,
        "components": {
            "report_accuracy": {"points": report_points, "max": REPORT_POINTS, "credit": credit, "credit_max": units,
                                "matched_fields": matched, "fields": total,
                                "materially_misstated_days": sum(1 for a in assessed if a["material"])},
            "funding_cost": {"points": cost_points, "max": COST_POINTS, "all_in_cost": cost,
                             "reference_all_in_cost": ref_cost, "interest": mine["interest"],
                             "treasury_charge": mine["treasury_charge"]},
            "maturity_protection": {"points": protection, "max": PROTECTION_POINTS, "realized_tail": t,
                                    "reference_realized_tail": t_ref, "unfunded_tail": u},
        },
    }


def day_outcomes(run, assessed=None):
    assessed = assessments(run) if assessed is None else assessed
    out = []
    for day, a in zip(run.days, assessed):
        reported = day["report"] is not None
        out.append({"day": day["day"], "batch": day["batch"], "accepted": day["accepted"], "refused": day["refused"],
                    "decisions": day["decisions"], "cash": day["cash"], "breaches": day["breaches"],
                    "report_matched": a["matched"] if reported else 0, "report_fields": a["fields"],
                    "report_credit": a["credit"], "report_credit_max": a["units"],
                    "material": [m["field"] for m in a["material"]]})
    return out


def scored_result(run, reference_economics) -> dict:
    assessed = assessments(run)
    gates = _gates(run, assessed)
    verdict = "QUALIFIED" if all(g["passed"] for g in gates) else "NOT_QUALIFIED"
    return {
        "format": RESULT_FORMAT,
        "status": "SCORED",
        "verdict": verdict,
        "gates": gates,
        "score": score(run, reference_economics, assessed),
        "instance_id": run.instance["instance_id"],
        "fixture_sha256": run.fixture_sha256,
        "horizon": run.horizon,
        "days": day_outcomes(run, assessed),
        "economics": economics(run),
        "receipts_head": run.head,
    }


def unscored_result(status, message, fixture=None) -> dict:
    return {"format": RESULT_FORMAT, "status": status, "verdict": None, "gates": [], "score": None,
            "error": message, "fixture_sha256": fixture}


def result_sha256(result) -> str:
    return engine_sha256(result)


def exit_code_for(result) -> int:
    return {"SCORED": 0, "MALFORMED": 1, "UNSCORABLE": 2}.get(result["status"], 1)


def score_text(result) -> str:
    """'73/100', never a bare ratio."""
    if result.get("score") is None:
        return "no score"
    return f"{result['score']['points']}/{result['score']['denominator']}"
