"""A resumed sweep's reuse: the rows measured before and journalled, read back and checked against the journal
(never re-signed), and a seeded sample of the reused worlds recomputed on host."""

import os

from . import arms as arms_mod
from . import executors, items as items_mod, observations as obs, pyodide, work
from .errors import ExperimentError
from .journal import JOURNAL, rows_sha256

RESUME_RECHECK = 4  # reused items recomputed on host when a sweep resumes


def _arm_metrics(arm_kind) -> list:
    """The metrics a run writes for one arm of this kind on one world, in row order (experiments/work.py:
    the certification arms measure expected_met; every other arm the result metrics with the engine's gates).
    Kept here, not in work.py, whose bytes are part of the evaluator id."""
    if arm_kind in ("gold", "mutation"):
        return ["expected_met"]
    return ["scored", "qualified", "score", "funding_cost"] + [f"gate:{name}" for name in work.GATES]


def _expected(arm_list) -> dict:
    return {a["name"]: [[a["name"], work.REPLICATE_SEED, m] for m in _arm_metrics(a["kind"])] for a in arm_list}


def _grouped(pairs) -> dict:
    """{item_id: {arm: [values]}} from (item_id, [[arm, seed, metric, value], ...]) pairs."""
    out = {}
    for iid, values in pairs:
        arms = out.setdefault(iid, {})
        for value in values:
            arms.setdefault(value[0], []).append(value)
    return out


def reusable(out, eid, journal, arm_list) -> dict:
    """{item_id: {arm: values}} measured before and journalled: every (item, arm) the journal lists is
    read back from observations.jsonl or the partial file and must hash to its journal entry; rows edited
    after they were written, or rows the journal does not list, stop the sweep (never re-signed)."""
    path = os.path.join(out, obs.JSONL)
    finished = {}
    if os.path.lexists(path):
        rows = obs.read_jsonl(path)
        other = next((r for r in rows if r["evaluator_id"] != eid), None)
        if other is not None:
            raise ExperimentError(
                f"{path}: holds a row of evaluator {other['evaluator_id'][:16]}, the journal is {eid[:16]}'s"
            )
        finished = _grouped((r["item_id"], [[r["arm"], r["seed"], r["metric"], r["value"]]]) for r in rows)
    partial = _grouped(obs.Partial(os.path.join(out, obs.PARTIAL)).entries(eid))
    expected = _expected(arm_list)
    done = {}
    for (iid, arm), (index, entry) in sorted(journal.covered.items(), key=lambda kv: kv[1][0]):
        if iid in done and arm in done[iid]:
            continue
        source = finished if all(a in finished.get(iid, {}) for a in entry["arms"]) else partial
        got = source.get(iid, {})
        if not all(a in got for a in entry["arms"]):
            raise ExperimentError(
                f"{journal.path} line {index + 1}: lists rows of item {iid} that neither "
                f"{obs.JSONL} nor {obs.PARTIAL} holds: use a new sweep folder"
            )
        values = [v for a in entry["arms"] for v in got[a]]
        if rows_sha256(obs.rows_for(iid, values, eid)) != entry["rows_sha256"]:
            name = obs.JSONL if source is finished else obs.PARTIAL
            raise ExperimentError(
                f"{os.path.join(out, name)}: the rows of item {iid} (arms {', '.join(entry['arms'])}) "
                f"are not the ones journalled at {JOURNAL} line {index + 1}: edited after they "
                f"were written; refusing to reuse them"
            )
        for a in entry["arms"]:
            if a in expected and [v[:3] for v in got[a]] != expected[a]:
                raise ExperimentError(
                    f"{journal.path} line {index + 1}: the rows of item {iid}, arm {a} are not "
                    f"the metrics this arm writes"
                )
            done.setdefault(iid, {})[a] = got[a]
    unlisted = [(iid, a) for iid, arms in finished.items() for a in arms if (iid, a) not in journal.covered]
    if unlisted:
        raise ExperimentError(
            f"{path}: rows of item {unlisted[0][0]}, arm {unlisted[0][1]} that {JOURNAL} does not "
            f"list: refusing to reuse them"
        )
    return done


def _recheck_reused(done, rows, arm_list, eid):
    """Recompute a seeded sample of the reused items on host and require their journalled values."""
    ids = [r["item_id"] for r in rows if all(a["name"] in done.get(r["item_id"], {}) for a in arm_list)]
    arms = [a for a in arm_list if arms_mod.recheckable(a)]
    if not ids or not arms:
        return []
    picked = pyodide.select_sample(ids, RESUME_RECHECK, pyodide.default_seed(eid))
    by_id = {r["item_id"]: r for r in rows}
    for iid in picked:
        row = by_id[iid]
        got = executors.host_run(
            {"row": row, "item": items_mod.item_of(row), "fixture_sha256": row["fixture_sha256"], "arms": arms}
        )["values"]
        want = [v for a in arms for v in done[iid][a["name"]]]
        if got != want:
            raise ExperimentError(
                f"sweep: item {iid} recomputes to other values than the rows this sweep reuses: "
                f"the folder's rows are not this evaluator's output; use a new folder"
            )
    return picked
