"""The score scale of a world: what doing nothing and what the reference plan
score on the same episode or family seed, so that a reader can place any
run's score between the two (doing nothing can score near 50 while its cash
is negative for most of the days)."""

import json

POLICIES = ("do-nothing", "reference")


def world_key(content) -> str | None:
    """The world a run was played in: an episode, or a family and seed."""
    fixture = content.get("fixture") if isinstance(content, dict) else None
    if not isinstance(fixture, dict):
        return None
    if "episode" in fixture:
        return json.dumps(["episode", fixture["episode"]])
    if "family" in fixture:
        return json.dumps(["family", fixture["family"], fixture.get("seed")])
    return None


def scale_policy(content) -> str | None:
    """ "do-nothing" or "reference" when this run sets one end of its world's scale."""
    fixture = content.get("fixture") if isinstance(content.get("fixture"), dict) else {}
    if content.get("kind") == "reference":
        return "reference"
    if content.get("kind") == "baseline" and fixture.get("policy") in POLICIES:
        return fixture["policy"]
    return None


def world_scores(runs) -> dict:
    """{world key: {policy: run id}} for every world with a do-nothing or reference run."""
    out = {}
    for run in runs:
        key, policy = world_key(run.content), scale_policy(run.content)
        if key is not None and policy is not None:
            out.setdefault(key, {}).setdefault(policy, run.run_id)
    return out
