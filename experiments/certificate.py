"""The grader's certificate: on every world of a certification sweep, gold is
SCORED, QUALIFIED, 100/100 and every mutation that can be built for the world
gives exactly its expected outcome. The certificate counts, per family and per
mutation, how many worlds were checked and how many met the expectation; it
passes only when every one did, and it names the evaluator id its rows carry.
Mutations are read from the engine (engine.MUTATIONS), so a new one is
certified as soon as it exists.
"""

from .errors import ExperimentError
from .items import family_of

CERTIFICATE_SCHEMA = "fundbook.certificate/1"
CLAIM = (
    "gold is SCORED, QUALIFIED and 100/100, and every applicable mutation gives its expected outcome, "
    "on every world of the sweep"
)
MAX_LISTED_FAILURES = 20


def certificate(name, sweep, rows, manifest, min_worlds_per_family) -> dict:
    eid = sweep["evaluator_id"]
    arms = [a["name"] for a in sweep["arms"]]
    if "gold" not in arms:
        raise ExperimentError(f"certificate {name}: the sweep has no gold arm")
    tally, failures = {}, []
    worlds = {}
    for r in manifest:
        worlds[family_of(r["item_id"])] = worlds.get(family_of(r["item_id"]), 0) + 1
    for row in rows:
        if row["evaluator_id"] != eid:
            raise ExperimentError(
                f"certificate {name}: a row of evaluator {row['evaluator_id'][:16]} in a sweep of {eid[:16]}"
            )
        if row["metric"] != "expected_met":
            continue
        fam = family_of(row["item_id"])
        t = tally.setdefault(fam, {}).setdefault(row["arm"], {"applicable": 0, "met": 0})
        if row["value"] is None:
            continue
        t["applicable"] += 1
        t["met"] += row["value"]
        if row["value"] != 1 and len(failures) < MAX_LISTED_FAILURES:
            failures.append({"item_id": row["item_id"], "arm": row["arm"]})
    per_family = []
    for fam in sorted(worlds):
        arms_t = tally.get(fam, {})
        per_family.append(
            {
                "family": fam,
                "worlds": worlds[fam],
                "arms": {a: arms_t.get(a, {"applicable": 0, "met": 0}) for a in arms},
            }
        )
    checked = sum(t["applicable"] for f in tally.values() for t in f.values())
    met = sum(t["met"] for f in tally.values() for t in f.values())
    enough = all(f["worlds"] >= min_worlds_per_family for f in per_family)
    gold_all = all(f["arms"]["gold"]["applicable"] == f["worlds"] for f in per_family)
    return {
        "schema": CERTIFICATE_SCHEMA,
        "name": name,
        "claim": CLAIM,
        "evaluator_id": eid,
        "engine": sweep["provenance"]["engine"],
        "mutations": sweep["provenance"]["grader"]["mutations"],
        "items": sweep["items"],
        "worlds": len(manifest),
        "min_worlds_per_family": min_worlds_per_family,
        "checked": checked,
        "met": met,
        "passed": checked == met and enough and gold_all and bool(per_family),
        "per_family": per_family,
        "failures": failures,
        "execution": sweep["execution"],
        "files": sweep["files"],
    }
