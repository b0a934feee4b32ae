"""The attempt pages: the Attempts register's view of an attempt, and one transcript page per retained
attempt (a worker's steps by checkpoint, or an Inspect-imported log), with the figures its verify checks
(attempt.js) and how the one rule (builders/counting.py) counts it. pages.py assembles these with the
other generated pages."""

import json

from . import counted, fmt, leaderboard, records, register
from . import transcript as trajectory
from .figures import Figures
from .run_pages import _check_id


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
    # The page names pages.py, the generator that assembles it (generated_pages); kept so no page byte changes.
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
    generated = (  # names pages.py, as transcript_page's does
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
