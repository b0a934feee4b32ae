"""A study's frozen tier plan (launchers/_tiers.py): read and checked, and reported tier by tier from the model
arm's records (status.json's `tiers`)."""

import os

from .errors import ExperimentError


def tier_plan(study_dir, doc):
    """The study's frozen tier plan (None without one), checked."""
    if "tiers" not in doc:
        return None
    from launchers import LaunchError
    from launchers import read_json
    from launchers import check_plan

    path = os.path.join(study_dir, doc["tiers"])
    try:
        return check_plan(read_json(path, "the tier plan", 4 * 1024 * 1024), path)
    except LaunchError as exc:
        raise ExperimentError(exc.format_message())


def tier_report(study_dir, doc, arm_list, done):
    """The plan tier by tier from the model arm's records (what ran, what was cut): status.json's `tiers`."""
    plan = tier_plan(study_dir, doc)
    if plan is None:
        return None
    from launchers import reconcile_tiers as reconcile
    from .arm_model import spent

    state = reconcile(plan, spent([a for a in arm_list if a["kind"] == "model"]))
    return {
        "overrun_bps": plan["overrun_bps"],
        "sd_table": plan["sd_table"],
        "total_budget": state["total_budget"],
        "total_spent": state["total_spent"],
        "tiers": [
            {
                k: r[k]
                for k in (
                    "name",
                    "budget_micro_usd",
                    "spent_micro_usd",
                    "cumulative_budget",
                    "cumulative_spent",
                    "over_bps",
                    "complete",
                    "ran",
                    "cut",
                    "action",
                )
            }
            for r in state["tiers"]
        ],
    }
