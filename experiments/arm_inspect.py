"""The `inspect:<LOG>` arm: an Inspect AI log of inspect_fundbook/desk as candidates, one per world.

The log is imported in memory exactly as `fundbook inspect import` imports it
(launchers/inspect: every check, every model turn replayed, every engine call
answered again by the bundle in Pyodide); a log that fails is refused, never
half-read. Each sample's candidate is the batches the desk accepted, in day
order, graded afresh by the sweep like any arm's; the days the model left
without a batch are missing batches. Two models' logs over the same worlds
are paired by world (fixture_sha256), so `fundbook compare` draws a
pre-registered decision between them, the anytime-valid rule included.
"""

import hashlib
import json

import engine

from .errors import ExperimentError


class InspectLogIndex:
    """The re-executed samples of one Inspect log, by the world they answer."""

    def __init__(self, path):
        from launchers.inspect import prepare

        try:
            planned = prepare([path])
        except engine.InputError as exc:
            raise ExperimentError(f"inspect:{exc.message}")
        with open(path, "rb") as fh:
            sha = hashlib.sha256(fh.read()).hexdigest()
        self.by_fixture = {}
        for label, sample, attempt, blobs, moves in planned:
            content = json.loads(blobs["record.json"])["content"]
            task = content["task"]
            if task["fixture_sha256"] in self.by_fixture:
                raise ExperimentError(
                    f"inspect:{path}: sample {sample}: a second sample of {task['instance_id']} "
                    f"(one per world: run one epoch)"
                )
            candidate = {
                "format": 1,
                "fixture_sha256": task["fixture_sha256"],
                "instance_id": task["instance_id"],
                "label": attempt,
                "batches": [m["batch"] for m in moves if "batch" in m],
            }
            self.by_fixture[task["fixture_sha256"]] = (candidate, sha)
