"""The sweep's item plan: which worlds it measures (a practice split's families, seeds and episodes, or a
held-out split's commitment), in the form sweep.json and a comparison spec record, and the items manifest rows
it names."""

from . import heldout, items as items_mod
from .errors import ExperimentError
from .seeds import MAX_PRACTICE_SEED, format_seeds, parse_seeds


def practice_plan(families, seeds, episodes=()) -> dict:
    if seeds and max(seeds) > MAX_PRACTICE_SEED:
        raise ExperimentError(
            f"--seeds: {max(seeds)}: practice seeds are at most 2^32-1 (seeds from 2^32 on are the "
            f"held-out split's: run a held-out sweep with --heldout)"
        )
    plan = {"split": "practice", "families": list(families), "seeds": format_seeds(seeds)}
    if episodes:
        plan["episodes"] = list(episodes)
    return plan


def heldout_plan(commitment) -> dict:
    return {
        "split": "heldout",
        "families": commitment["families"],
        "count": commitment["count"],
        "commitment_sha256": commitment["sha256"],
    }


def normal_plan(plan) -> dict:
    if plan.get("split") == "practice":
        return practice_plan(plan["families"], parse_seeds(plan["seeds"]), plan.get("episodes", ()))
    return dict(plan)


def plan_rows(plan, secret=None, commitment=None) -> list:
    """The items manifest rows of a plan (a held-out plan needs the secret that opens its commitment)."""
    if plan["split"] == "practice":
        items = items_mod.practice_items(plan["families"], parse_seeds(plan["seeds"]), plan.get("episodes", ()))
        return items_mod.manifest_rows(items, items_mod.PRACTICE)
    if secret is None:
        raise ExperimentError("a held-out sweep needs --secret-file (the secret behind the commitment)")
    pairs = heldout.open_commitment(secret, commitment, "commitment.json")
    return items_mod.manifest_rows(items_mod.heldout_items(pairs), items_mod.HELDOUT)
