"""The comparisons a sweep serves: each frozen spec read and checked against the sweep's items and arms, what
sweep.json records of it, and its entry in the journal before any of its rows."""

import json
import os

import engine

from .errors import ExperimentError
from .files import read_file
from .jsondoc import read_doc
from .plans import normal_plan


def frozen_comparison(directory, plan, arm_names) -> dict:
    from .decide import check_frozen

    freeze, freeze_bytes = read_doc(
        os.path.join(directory, "freeze.json"), "the freeze record (`fundbook compare DIR --freeze`)"
    )
    spec_bytes = read_file(os.path.join(directory, "spec.json"), "a comparison spec")
    spec = check_frozen(spec_bytes, freeze, directory)
    if normal_plan(spec["items"]) != normal_plan(plan):
        raise ExperimentError(
            f"{directory}/spec.json: items {json.dumps(spec['items'], sort_keys=True)} are not "
            f"this sweep's {json.dumps(plan, sort_keys=True)}"
        )
    missing = sorted(set(spec["arms"]) - set(arm_names))
    if missing:
        raise ExperimentError(f"{directory}/spec.json: arm {missing[0]} is not in this sweep")
    return {
        "name": spec["name"],
        "spec_sha256": freeze["spec_sha256"],
        "frozen_on": freeze["frozen_on"],
        "freeze_sha256": engine.sha256_hex(freeze_bytes),
        "spec": spec,
        "dir": directory,
    }


def public_comparison(c) -> dict:
    """What sweep.json records about a served comparison."""
    return {k: c[k] for k in ("name", "spec_sha256", "frozen_on", "freeze_sha256")}


def serve(journal, served):
    """Record each served comparison in the journal before any of its rows: a comparison already
    recorded is fine; one whose arms have rows here already was frozen too late and is refused."""
    for c in served:
        if c["spec_sha256"] in journal.served:
            recorded = journal.served[c["spec_sha256"]][1]
            if recorded["freeze_sha256"] != c["freeze_sha256"]:
                raise ExperimentError(
                    f"{c['dir']}/freeze.json: not the freeze this sweep recorded for {c['name']} "
                    f"(sha256 {recorded['freeze_sha256'][:16]} on {recorded['frozen_on']}): "
                    f"frozen again after the sweep began"
                )
            continue
        line = journal.first_row_line(set(c["spec"]["arms"]))
        if line is not None:
            raise ExperimentError(
                f"{c['dir']}: this sweep measured its arms before the spec was recorded here "
                f"({journal.path} line {line + 1}): a spec frozen after any of its rows existed "
                f"cannot use them -- run it in a new sweep folder"
            )
        journal.append(
            {
                "entry": "serve",
                "comparison": c["name"],
                "spec_sha256": c["spec_sha256"],
                "freeze_sha256": c["freeze_sha256"],
                "frozen_on": c["frozen_on"],
            }
        )
