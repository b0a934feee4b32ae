"""What a kept log says of the grade besides each sample's score -- the header's results and metric, the epoch
reductions, a .eval log's sample summaries (what Inspect View lists) -- must be the engine's grade of the
re-derived samples, or the log is refused: a kept log claims nothing fundbook did not recompute."""

import json
import math
from fractions import Fraction

import engine
from engine import shown

from .._errors import InputError  # the launcher's: also the engine's InputError

from ._read import member_bytes
from ._replay import SCORER


def _near(logged, exact) -> bool:
    """A logged number (Inspect's float) equal to an exact value to nine places; NaN, infinity or not a number:
    never."""
    if isinstance(logged, bool) or not isinstance(logged, (int, float)) or not math.isfinite(logged):
        return False
    return abs(Fraction(logged) - exact) <= Fraction(1, 10**9) * max(1, abs(exact))


def _epoch_means(values) -> dict:
    """{sample id: exact mean of its epochs' points} (Inspect's default epoch reducer is the mean)."""
    by = {}
    for (sid, _), v in values.items():
        by.setdefault(sid, []).append(v)
    return {sid: Fraction(sum(vs), len(vs)) for sid, vs in by.items()}


def header_checks(label, log, values, summaries):
    """values: {(sample id, epoch): points the engine gave}. The header's results (samples, the one score, its one
    metric), the reductions and the kept summaries must be the engine's grade: the kept log says nothing else."""

    def no(field, detail):
        raise InputError(f"{label}: {field}: {detail} (the engine's grade of the re-derived samples differs)")

    means = _epoch_means(values)
    mean = sum(means.values(), Fraction(0)) / len(means)
    results = log.results
    if results is None:
        no("results", "expected the eval's results")
    if results.total_samples != len(values) or results.completed_samples != len(values):
        no(
            "results.total_samples",
            f"expected {len(values)} samples scored, the header says "
            f"{shown(results.total_samples)} ({shown(results.completed_samples)} completed)",
        )
    scores = results.scores or []
    if len(scores) != 1 or scores[0].name != SCORER or scores[0].scorer != SCORER:
        no("results.scores", f"expected one score, {SCORER}, got {shown([s.name for s in scores])}")
    metrics = scores[0].metrics or {}
    if sorted(metrics) != ["mean"] or not _near(metrics["mean"].value, mean):
        got = {k: getattr(v, "value", None) for k, v in metrics.items()}
        no(
            "results.scores.desk_grade.metrics",
            f"expected mean {float(mean)!r} of the re-derived samples, got {shown(got, 80)}",
        )
    for red in log.reductions or []:
        if red.scorer != SCORER:
            no("reductions", f"expected the reductions of {SCORER}, got {shown(red.scorer)}")
        got = {str(s.sample_id): s for s in red.samples}
        if sorted(got) != sorted(means):
            no("reductions", f"expected the samples {shown(sorted(means), 80)}, got {shown(sorted(got), 80)}")
        for sid, s in got.items():
            if not _near(s.value, means[sid]) or s.explanation is not None:
                no(
                    f"reductions.{SCORER}[{shown(sid)}]",
                    f"expected value {float(means[sid])!r} and no explanation, "
                    f"got {shown(s.value)}, explanation {shown(s.explanation)}",
                )
    for where, doc in summaries:
        if not isinstance(doc, list):
            no(where, "expected a list of sample summaries")
        for entry in doc:
            key = (str(entry.get("id")), entry.get("epoch")) if isinstance(entry, dict) else None
            score = ((entry.get("scores") or {}) if isinstance(entry, dict) else {}).get(SCORER)
            if (
                key not in values
                or not isinstance(score, dict)
                or not _near(score.get("value"), Fraction(values[key]))
                or score.get("explanation") is not None
            ):
                no(
                    where,
                    f"expected each summary's {SCORER} to be its sample's re-derived score with no "
                    f"explanation, got {shown(entry, 80)}",
                )


def summaries(label, loaded):
    """[(member, parsed)] of a .eval log's sample summaries (summaries.json and the journal's), bounded reads."""
    out = []
    for info, offset in loaded.entries:
        name = info.filename
        if name == "summaries.json" or (name.startswith("_journal/summaries/") and name.endswith(".json")):
            where = f"zip member {name}"
            try:
                text = member_bytes(label, loaded.data, info, offset).decode("utf-8")
                doc = json.loads(text) if engine.depth_ok(text) else None
            except (UnicodeDecodeError, ValueError, RecursionError):
                doc = None
            if doc is None:
                raise InputError(
                    f"{label}: {where}: expected Inspect's sample summaries (JSON text, nested at most "
                    f"{engine.MAX_DEPTH} levels)"
                )
            out.append((where, doc))
    return out
