"""The run pages: one page per run under runs/<run_id>/ (its figures, receipts, trace, downloads and, for a
baseline, the world's score scale), the run register's entry point, and what a run's figures are read from
(`run_roots`, mirrored by checks.js). pages.py assembles these with the other generated pages."""

import json
from pathlib import Path

from markupsafe import Markup

from . import fmt, records, register, scale, unscored
from .charts import run_charts
from .figures import Figures
from .records import SiteInputError


def _check_id(value, label):
    if not isinstance(value, str) or not fmt.SAFE_ID.match(value):
        raise SiteInputError(f"{label}: expected an id of letters, digits, '.', '_' or '-', got {value!r}")
    return value


KIND_NOTES = {
    "reference": "The gold candidate of a hand-authored episode: it must come out SCORED, QUALIFIED, 100/100.",
    "adversarial": "A constructed bad candidate with a stated expected outcome; it passes when the grader "
    "observes exactly that outcome.",
    "baseline": "A scripted policy on a practice family, run to give the score scale a meaning. It is not a model.",
    "model-attempt": "Proposals written by a model worker and judged by the evaluator.",
}
# What the "Expected and observed" section says a fixture with an expected outcome is for.
EXPECTATION_NOTES = {
    "reference": "The reference fixture states the outcome its gold candidate must reach: it checks that the "
    "engine grades its own plan in full, not that any model can.",
    "adversarial": "This fixture is a constructed adverse candidate: it tests the grader, not a model.",
}


def _read_output(runs_dir: Path, outputs, key):
    out = (outputs or {}).get(key) if isinstance(outputs, dict) else None
    if not out:
        return None, None
    label = f"outputs.{key}.path"
    if not isinstance(out, dict):
        raise SiteInputError(f"{label}: expected {{path, sha256}}")
    path = records.resolve_published(runs_dir, out.get("path"), label)
    if not path.is_file():
        raise SiteInputError(f"{out['path']}: file not found (named by the record's {label})")
    return path, out


def _receipts(runs_dir, content):
    path, _ = _read_output(runs_dir, content.get("outputs"), "receipts")
    if not path:
        return []
    receipts = records.load_json(path, f"receipts of {content.get('run_id')}")
    if isinstance(receipts, dict):  # fundbook.receipts/1: {schema, run_id, receipts_head, receipts}
        receipts = receipts.get("receipts", [])
    return receipts if isinstance(receipts, list) else []


def run_roots(run, pub, receipts=None) -> dict:
    """What a run's figures are read from: checks.js builds the same roots from the re-executed record."""
    return {
        "content": run.content,
        "record": run.record,
        "entry": run.entry,
        "index": pub.index,
        "receipts": receipts if receipts is not None else [],
    }


def run_page(env, pub, run) -> str:
    c = run.content
    _check_id(run.run_id, f"{run.record_path}: content.run_id")
    receipts = _receipts(pub.runs_dir, c)
    trace_path, trace_out = _read_output(pub.runs_dir, c.get("outputs"), "trace")
    trace = None
    if trace_path:
        trace = trace_path.read_text(encoding="utf-8", errors="replace")
        try:
            trace = json.dumps(json.loads(trace), indent=2, ensure_ascii=False, sort_keys=True)
        except ValueError:
            pass
    outputs = c.get("outputs") if isinstance(c.get("outputs"), dict) else {}
    downloads = [("Run record (JSON)", run.record_path, ["entry", "file_sha256"])]
    for key, out in sorted(outputs.items()):
        if isinstance(out, dict) and out.get("path"):
            records.resolve_published(pub.runs_dir, out["path"], f"outputs.{key}.path")
            downloads.append((f"{key.capitalize()} (JSON)", out["path"], ["content", "outputs", key, "sha256"]))
    downloads.append(("Per-day outcomes (Parquet)", f"runs/parquet/{run.run_id}.parquet", None))
    expected, observed = c.get("expected"), c.get("observed")
    eo_keys = sorted(
        set(expected if isinstance(expected, dict) else {}) | set(observed if isinstance(observed, dict) else {})
    )
    description = (
        f"{c.get('kind')} run {run.run_id}: {c.get('status')}, {c.get('verdict') or 'no verdict'}, "
        f"{fmt.score_text(c.get('score'))}"
    )
    days = c.get("days") if isinstance(c.get("days"), list) else []
    fig = Figures(run_roots(run, pub, receipts))
    low = marked_day_ranges(fig, days)
    captions = {
        "cash": "cash after each day's settlement; the dashed red line is zero"
        + (
            Markup(", and the red points are the days below it (") + low + Markup(")")
            if low
            else ", and cash never went below it"
        ),
        "funding": "actions accepted and refused each day, every checkpoint on the axis (a gap is a day "
        "without an action)",
    }
    input_out = outputs.get("input") if isinstance(outputs.get("input"), dict) else {}
    return env.get_template("run.md.j2").render(
        scale=_scale(pub, run),
        world=fmt.fixture_label(
            {k: v for k, v in (c.get("fixture") or {}).items() if k != "policy"}
            if isinstance(c.get("fixture"), dict)
            else None
        ),
        unscored_status=c.get("status") if c.get("status") in unscored.UNSCORED else None,
        reason=unscored.reason(pub.runs_dir, c),
        input_path=input_out.get("path") or "",
        below_zero=low,
        captions=captions,
        r=run,
        c=c,
        root="../../",
        fig=fig,
        kind_note=KIND_NOTES.get(c.get("kind"), ""),
        expectation_note=EXPECTATION_NOTES.get(c.get("kind"), "This fixture states an expected outcome."),
        eo_keys=eo_keys,
        charts=run_charts(c),
        receipts=receipts,
        outputs=outputs,
        trace_path=(trace_out or {}).get("path"),
        trace=trace,
        trace_lines=(trace or "").count("\n") + 1,
        downloads=downloads,
        verify_js=pub.verify_js,
        description=description,
    )


def marked_day_ranges(fig, days) -> Markup:
    """The days whose cash closed below zero as `day_ranges` words them, each day number a mark of its
    record value (so verify checks the note and the chart caption too); empty when none."""
    low = [
        i
        for i, d in enumerate(days)
        if isinstance(d, dict)
        and isinstance(d.get("cash"), int)
        and not isinstance(d.get("cash"), bool)
        and d["cash"] < 0
        and isinstance(d.get("day"), int)
    ]
    if not low:
        return Markup("")
    spans = []
    for i in low:
        if spans and days[i]["day"] == days[spans[-1][1]]["day"] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])

    def day(i):
        return fig(["content", "days", i, "day"])

    parts = [day(a) + Markup("–") + day(b) if b != a else day(a) for a, b in spans]
    word = "day" if len(parts) == 1 and spans[0][0] == spans[0][1] else "days"
    if len(parts) > 1:
        return Markup(f"{word} ") + Markup(", ").join(parts[:-1]) + Markup(" and ") + parts[-1]
    return Markup(f"{word} ") + parts[0]


def day_ranges(days) -> str:
    """[6, 7, 8, 10] -> "days 6–8 and 10"; "" for none."""
    spans = []
    for d in days:
        if spans and d == spans[-1][1] + 1:
            spans[-1][1] = d
        else:
            spans.append([d, d])
    parts = [f"{a}–{b}" if b > a else str(a) for a, b in spans]
    if not parts:
        return ""
    word = "day" if len(parts) == 1 and "–" not in parts[0] else "days"
    return f"{word} {', '.join(parts[:-1])} and {parts[-1]}" if len(parts) > 1 else f"{word} {parts[0]}"


def _scale(pub, run) -> list:
    """[(label, href, Figures or None)] for a baseline's page: the same world's do-nothing and
    reference runs, then this run (unless it is one of the two)."""
    c = run.content
    if c.get("kind") != "baseline":
        return []
    found = scale.world_scores(pub.runs).get(scale.world_key(c)) or {}
    by_id = {r.run_id: r for r in pub.runs}
    out = []
    for policy in scale.POLICIES:
        rid = found.get(policy)
        if rid == run.run_id:
            out.append((f"{policy} (this run)", None, Figures(run_roots(run, pub))))
        else:
            out.append(
                (
                    policy,
                    f"../{rid}/" if rid else None,
                    Figures(run_roots(by_id[rid], pub), run_id=rid) if rid else None,
                )
            )
    if run.run_id not in found.values():
        out.append(("this run", None, Figures(run_roots(run, pub))))
    return out


def register_page(env, pub) -> str:
    return register.page(env, pub, run_roots)
