"""Grading: status, then the qualification verdict with named gates, then an
integer score out of a fixed 100.

Score components (integer points, floor division, never a float):
  report_accuracy     40 x matched fields / all gold fields of all checkpoints
                      (a missing day scores zero for its fields)
  funding_cost        30 x reference all-in cost / candidate all-in cost, at most 30
  maturity_protection 30 x (U - T) / (U - T_ref), clipped to 0..30
All-in cost is the interest paid on funding trades plus the parent treasury's
charge for carrying unfunded positions (the realised tail at the desk's
treasury rate). U is the tail of a desk that funds nothing, T the candidate's
realised tail, T_ref the reference plan's.
"""

from ._book import realized_tail, total_interest, unfunded_tail
from ._canon import engine_sha256
from ._report import compare_reports
from ._units import charge_on_cent_days

RESULT_FORMAT = 1  # bump when a field below changes meaning
DENOMINATOR = 100
REPORT_POINTS, COST_POINTS, PROTECTION_POINTS = 40, 30, 30
COVERAGE_NUMERATOR, COVERAGE_DENOMINATOR = 9, 10  # accepted batches on >= 90 % of checkpoints

GATES = ("no_settlement_failure", "no_false_full_protection", "checkpoint_coverage")


def economics(run) -> dict:
    """Realised cost and tail of a finalised run."""
    book = run.book
    tail = realized_tail(book)
    interest = total_interest(book)
    treasury = charge_on_cent_days(tail, book["desk"]["treasury_rate_bps"])
    return {"interest": interest, "treasury_charge": treasury, "all_in_cost": interest + treasury,
            "realized_tail": tail, "unfunded_tail": unfunded_tail(book)}


def _gates(run):
    fails = [b for b in run.book["breaches"] if b["code"] == "SETTLEMENT_FAIL"]
    false_zero = []
    for day in run.days:
        report = day["report"]
        if report is None:
            continue
        for aid, gold in sorted(day["gold_report"]["assets"].items()):
            claimed = report["assets"].get(aid)
            if gold["tail_cent_days"] > 0 and isinstance(claimed, dict) and claimed.get("tail_cent_days") == 0:
                false_zero.append(f"day {day['day']} {aid}")
    accepted = sum(1 for d in run.days if d["batch"] == "accepted")
    needed = -(-run.horizon * COVERAGE_NUMERATOR // COVERAGE_DENOMINATOR)
    return [
        {"gate": "no_settlement_failure", "passed": not fails,
         "detail": "no settlement failure" if not fails else
         "cash below zero on day " + ", ".join(str(b["day"]) for b in fails)},
        {"gate": "no_false_full_protection", "passed": not false_zero,
         "detail": "no zero-tail claim while a tail exists" if not false_zero else
         "reported zero tail while a tail existed: " + "; ".join(false_zero[:5]) + (" ..." if len(false_zero) > 5 else "")},
        {"gate": "checkpoint_coverage", "passed": accepted >= needed,
         "detail": f"accepted batches on {accepted} of {run.horizon} checkpoints (at least {needed} needed)"},
    ]


def score(run, reference_economics) -> dict:
    matched = total = 0
    for day in run.days:
        m, t, _ = compare_reports(day["gold_report"], day["report"])
        matched += m
        total += t
    report_points = REPORT_POINTS * matched // total if total else REPORT_POINTS
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
            "report_accuracy": {"points": report_points, "max": REPORT_POINTS, "matched_fields": matched, "fields": total},
            "funding_cost": {"points": cost_points, "max": COST_POINTS, "all_in_cost": cost,
                             "reference_all_in_cost": ref_cost, "interest": mine["interest"],
                             "treasury_charge": mine["treasury_charge"]},
            "maturity_protection": {"points": protection, "max": PROTECTION_POINTS, "realized_tail": t,
                                    "reference_realized_tail": t_ref, "unfunded_tail": u},
        },
    }


def day_outcomes(run):
    out = []
    for day in run.days:
        m, t, _ = compare_reports(day["gold_report"], day["report"])
        out.append({"day": day["day"], "batch": day["batch"], "accepted": day["accepted"], "refused": day["refused"],
                    "decisions": day["decisions"], "cash": day["cash"], "breaches": day["breaches"],
                    "report_matched": m if day["report"] is not None else 0, "report_fields": t})
    return out


def scored_result(run, reference_economics) -> dict:
    gates = _gates(run)
    verdict = "QUALIFIED" if all(g["passed"] for g in gates) else "NOT_QUALIFIED"
    return {
        "format": RESULT_FORMAT,
        "status": "SCORED",
        "verdict": verdict,
        "gates": gates,
        "score": score(run, reference_economics),
        "instance_id": run.instance["instance_id"],
        "fixture_sha256": run.fixture_sha256,
        "horizon": run.horizon,
        "days": day_outcomes(run),
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
