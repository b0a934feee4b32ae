"""Generated pages: the run register (register.py), one page per run, the
attempts record and one transcript page per attempt (transcript.py groups its
steps by checkpoint), rendered from runs/ with Jinja2 templates.

Every `{{ }}` goes through escape.finalize (HTML specials, Markdown and line
breaks as character references, invisible characters by code point), inside
raw HTML blocks that Markdown leaves alone: text written by a model (or anyone
else) is shown as text, never interpreted as HTML or Markdown. Figures a
reader relies on are rendered by figures.Figures, so that verify can check them.
"""

import json
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from . import comparisons, counted, escape, fmt, leaderboard, records, register, scale, unscored
from . import transcript as trajectory
from .charts import run_charts
from .figures import Figures
from .records import SiteInputError

TEMPLATES = Path(__file__).parent / "templates"


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        finalize=escape.finalize,
    )
    env.globals.update(
        money=fmt.money,
        short=fmt.short,
        compact=fmt.compact,
        json_island=escape.json_island,
        article=article,
        usd=fmt.usd,
        count=fmt.count,
        decimal=fmt.decimal,
    )
    env.tests["list"] = lambda value: isinstance(value, list)
    return env


def article(word) -> str:
    """ "An" before a vowel sound as written ("an adversarial"), else "A"."""
    return "An" if str(word)[:1].lower() in "aeiou" and str(word)[:1] else "A"


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


def _whole(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _attempt_view(attempt):
    c = attempt.content
    _check_id(attempt.attempt_id, f"{attempt.folder}/record.json: content.attempt_id")
    term = c.get("termination") if isinstance(c.get("termination"), dict) else {}
    result = c.get("result") if isinstance(c.get("result"), dict) else {}
    score = result.get("score")
    model = c.get("model") if isinstance(c.get("model"), dict) else {}
    cost_text, cost_detail = fmt.inspect_cost_texts(c) if counted.is_inspect(c) else fmt.cost_texts(c)
    volatile = attempt.record.get("volatile") if isinstance(attempt.record.get("volatile"), dict) else {}
    started = counted.started_of(attempt) or ""
    end_status, end_reason = counted.end_of(c)
    return {
        "attempt_id": attempt.attempt_id,
        "label": c.get("label"),
        "model": f"{model.get('provider', '?')}:{model.get('id', '?')}",
        "harness": leaderboard.harness_of(c),
        "status": end_status,
        "reason": end_reason,
        "accepted_actions": c.get("accepted_actions", 0),
        "settled_days": c.get("settled_days", 0),
        "score": fmt.score_text(score) if isinstance(score, dict) else "no score",
        "cost": cost_text,
        "cost_detail": cost_detail,
        "machinery": not leaderboard.is_real_model(c),
        "date": started[:10] or "undated",
        "started": started,
        "result": result,
        "term": term,
        "volatile": volatile,
    }


def attempts_page(env, pub) -> str:
    return register.attempts_page(env, pub, _attempt_view)  # the Attempts register (register.py)


def _attempt_files(pub, attempt):
    """Downloadable files of an attempt, as links relative to its transcript page."""
    folder = pub.runs_dir / attempt.folder.split("/", 1)[1]
    return [
        (p.name, f"../../{attempt.folder}/{p.name}")
        for p in sorted(folder.iterdir())
        if p.is_file() and p.suffix in records.PUBLISHED_SUFFIXES and fmt.SAFE_ID.match(p.name)
    ]


def counted_root(counts) -> dict:
    """The `counted` root of an attempt page's figures: how the one rule (builders/counting.py) counts it.
    attempt.js `countedRoot` derives the same object in the reader's browser from the tries' records."""
    got = counts["score"] or {}
    return {
        "world": counts["world"],
        "try": counts["try"],
        "tries": counts["tries"],
        "counted": counts["counted"],
        "counted_id": counts["counted_id"],
        "points": got.get("points"),
        "status": got.get("status"),
        "verdict": got.get("verdict"),
        "gates": got.get("gates") or [],
        "source": got.get("source"),
    }


def attempt_figures(attempt, counts) -> Figures:
    """The figures of an attempt page: the record's content, the record itself (its volatile start and
    duration) and how the one rule counts it."""
    return Figures({"content": attempt.content, "record": attempt.record, "counted": counted_root(counts)})


def _tries_urls(pub, counts) -> str:
    """The records of the agent's tries of this world, for the verify (which derives the counted root from them)."""
    folders = {a.attempt_id: a.folder for a in pub.attempts}
    return json.dumps([f"../../{folders[aid]}/record.json" for aid in counts["tries_ids"]])


def _note(c, transcript, term):
    """(the attempt's note, its path in the record or None for the transcript's own note)."""
    if c.get("note"):
        return c["note"], ["content", "note"]
    if term.get("note"):
        return term["note"], ["content", "termination", "note"]
    return transcript.get("note"), None


def _why(reasons) -> str:
    said = []
    if any("/breaches/" in r for r in reasons):
        said.append("its breaches held a SETTLEMENT_FAIL")
    if any("open_approvals" in r for r in reasons):
        said.append("it named an approval opened that day")
    return " and ".join(said) or "; ".join(reasons)


def erratum_view(entry):
    """What an attempt page says of the grammar-1 erratum (None: the attempt is not in it)."""
    if entry is None:
        return None
    bound = entry.get("bound")
    return {
        "days": [{"day": d["day"], "why": _why(d.get("reasons") or [])} for d in entry["inexpressible_days"]],
        "points": entry.get("points"),
        "bound": bound,
    }


def transcript_page(env, pub, attempt) -> str:
    if attempt.inspect:
        return inspect_page(env, pub, attempt)
    view = _attempt_view(attempt)
    transcript = attempt.transcript if isinstance(attempt.transcript, dict) else {}
    result = view["result"]
    groups = trajectory.checkpoints(transcript, result)
    score = result.get("score") if isinstance(result.get("score"), dict) else {}
    comps = score.get("components") if isinstance(score.get("components"), dict) else {}
    c = attempt.content
    rec_sha = fmt.short(attempt.record["content_sha256"])
    tr_sha = fmt.short((c.get("transcript") or {}).get("sha256") if isinstance(c.get("transcript"), dict) else None)
    # The attempt's own start time dates it; the build's fixed SOURCE_DATE_EPOCH is no date of anything.
    when = (
        f"for the attempt started on {view['date']} (UTC, from the record's volatile.started)"
        if view["started"]
        else "for an attempt whose record carries no start time"
    )
    generated = (
        f"Rendered by builders/site/pages.py from {attempt.folder}/record.json (content sha256 "
        f"{rec_sha}…) and {attempt.folder}/transcript.json (sha256 {tr_sha}…), {when}. Every step is "
        f"shown in full; model-written text is escaped and shown as plain text."
    )
    note, note_path = _note(c, transcript, view["term"])
    counts = counted.counting_map(pub)[attempt.attempt_id]
    steps = transcript.get("steps") if isinstance(transcript.get("steps"), list) else []
    calls = _whole((c.get("cost") or {}).get("calls") if isinstance(c.get("cost"), dict) else None) or 0
    answered = sum(1 for s in steps if isinstance(s, dict) and s.get("role") == "model")
    # "Verify this attempt in your browser" (site/assets/desk/attempt.js): for an attempt with its receipts beside it
    receipts = (c.get("outputs") or {}).get("receipts") if isinstance(c.get("outputs"), dict) else None
    verify_url = (
        f"../../{attempt.folder}/record.json"
        if isinstance(receipts, dict) and receipts.get("path") == "receipts.json" and pub.verify_js
        else None
    )
    status_path = ["content", "result", "status"] if result.get("status") else ["content", "termination", "status"]
    return env.get_template("transcript.md.j2").render(
        counts=counts,
        counted=_counted_line(counts),
        unanswered=max(0, calls - answered),
        a=attempt,
        fig=attempt_figures(attempt, counts),
        tries=_tries_urls(pub, counts),
        scored=bool(result.get("score")),
        groups=groups,
        step_count=sum(len(g["steps"]) for g in groups),
        machinery=not leaderboard.is_real_model(c),
        days=sum(1 for g in groups if g["day"] is not None),
        errors=sum(g["errors"] for g in groups),
        refusals=sum(g["refusals"] for g in groups),
        status_path=status_path,
        status_class=str(result.get("status") or view["status"]).lower(),
        label=view["label"],
        note=note,
        note_path=note_path,
        components=sorted(comps),
        accepted_actions=view["accepted_actions"],
        summary=fmt.readable_units(trajectory.text_of(transcript.get("summary") or "")),
        generated=generated,
        files=_attempt_files(pub, attempt),
        erratum=erratum_view(pub.erratum_of(attempt.attempt_id)),
        verify_url=verify_url,
        graded=isinstance(c.get("result"), dict),
        description=f"Transcript of model attempt {attempt.attempt_id}: {view['status']}, {view['reason']}.",
    )


def inspect_page(env, pub, attempt) -> str:
    """The page of an Inspect-imported attempt: what fundbook established (the accepted batches re-executed
    through the bundle: legal moves, these receipts, this grade) apart from what is only as Inspect logged it
    (the model, the provider, that a model wrote these messages at all), as figures its verify checks
    (site/assets/desk/attempt.js), then the log's messages from transcript.json by checkpoint, every string as
    data, with the worker transcript's reading aids (transcript.py `inspect_checkpoints`)."""
    view = _attempt_view(attempt)
    c = attempt.content
    ins = c["inspect"]
    transcript = attempt.transcript if isinstance(attempt.transcript, dict) else {}
    groups = trajectory.inspect_checkpoints(transcript, c.get("result"))
    counts = counted.counting_map(pub)[attempt.attempt_id]
    rec_sha = fmt.short(attempt.record["content_sha256"])
    tr_sha = fmt.short(c["transcript"]["sha256"])
    generated = (
        f"Rendered by builders/site/pages.py from {attempt.folder}/record.json (content sha256 {rec_sha}…, "
        f"held to the importer's checks by builders/inspect_records.py) and {attempt.folder}/transcript.json "
        f"(sha256 {tr_sha}…), for the eval Inspect created on {view['date']}. Every message is shown in "
        f"full, as text."
    )
    logged = json.dumps(
        {
            "task_args": ins.get("task_args"),
            "generate_config": ins.get("generate_config"),
            "limit": ins.get("limit"),
            "usage": ins.get("usage"),
            "usage_note": ins.get("usage_note"),
        },
        indent=2,
        sort_keys=True,
        ensure_ascii=False,
    )
    task = c["task"]
    got = counts["score"]
    score = c["result"].get("score") if isinstance(c.get("result"), dict) else None
    comps = score.get("components") if isinstance(score, dict) and isinstance(score.get("components"), dict) else {}
    steps = [s for g in groups for s in g["steps"]]
    return env.get_template("inspect_attempt.md.j2").render(
        a=attempt,
        label=view["label"],
        ins=ins,
        counts=counts,
        counted=_counted_line(counts),
        groups=groups,
        step_count=len(steps),
        invalid=sum(1 for s in steps if s["invalid"]),
        errors=sum(g["errors"] for g in groups),
        components=sorted(comps),
        logged=logged,
        fig=attempt_figures(attempt, counts),
        tries=_tries_urls(pub, counts),
        generated=generated,
        verify_url=f"../../{attempt.folder}/record.json" if pub.verify_js else None,
        files=_attempt_files(pub, attempt),
        per_call=any(s["usage"] or s["time"] for s in steps),
        description=f"Inspect-imported attempt {attempt.attempt_id} of {view['model']} on {task['family']} seed "
        f"{task['seed']}: {got['points'] if got else 'not counted'}"
        f"{'/100' if got else ''}, {c['result'].get('status')}.",
    )


def _counted_line(counts) -> dict:
    """What the transcript's head says of the attempt under the one rule (builders/counting.py)."""
    from builders import counting

    got = counts["score"]
    out = {
        "rule": counting.RULE,
        "world": counts["world"],
        "try": counts["try"],
        "tries": counts["tries"],
        "counted": counts["counted"],
        "counted_id": counts["counted_id"],
    }
    if got:
        out.update(
            points=got["points"],
            status=got["status"],
            verdict=got["verdict"] or "no verdict",
            gates=got["gates"],
            engine=got["source"] == "engine",
        )
    return out


def generated_pages(pub) -> dict:
    """{src_uri: markdown} for every page built from runs/."""
    env = environment()
    pages = {"runs/index.md": register_page(env, pub), "attempts/index.md": attempts_page(env, pub)}
    for run in pub.runs:
        pages[f"runs/{run.run_id}/index.md"] = run_page(env, pub, run)
    for attempt in pub.attempts:
        if attempt.transcript is not None:
            pages[f"attempts/{attempt.attempt_id}/index.md"] = transcript_page(env, pub, attempt)
    pages.update(comparisons.generated_pages(env, pub))
    from . import cards, outcomes, studies  # runs/studies/: pre-registered studies of real agents and their state

    pages["studies/index.md"] = studies.page(env, pub)
    pages.update(outcomes.generated_pages(env, pub))  # each study's outcomes per world
    pages.update(cards.generated_pages(env, pub))  # a model card per set of weights
    return pages


def page_titles(pub) -> dict:
    """{src_uri: (title, [key figures])} for generated pages, used by the OG cards."""
    titles = {
        "runs/index.md": ("Run register", [f"{len(pub.runs)} runs"]),
        "attempts/index.md": ("Attempts", [f"{len(pub.attempts)} retained attempts"]),
    }
    for attempt in pub.attempts:
        if attempt.transcript is not None:
            view = _attempt_view(attempt)
            titles[f"attempts/{attempt.attempt_id}/index.md"] = (
                f"Transcript {attempt.attempt_id}",
                [str(view["status"]), str(view["reason"]), view["score"]],
            )
    titles.update(comparisons.page_titles(pub))
    from . import cards, outcomes, studies

    titles.update(outcomes.titles(pub))
    titles.update(cards.titles(pub))
    found = studies.studies(pub.runs_dir, pub.attempts)
    titles["studies/index.md"] = (
        "Studies",
        [f"{len(found)} pre-registered", *(f"{s['name']}: {s['state']}, {s['worlds']} worlds" for s in found[:2])],
    )
    return titles
