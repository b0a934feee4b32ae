"""Generated pages: the run register, one page per run, the attempts record and
one transcript page per attempt, rendered from runs/ with Jinja2 templates.

Every value reaches the page through an autoescaping environment, inside raw
HTML blocks that Markdown leaves alone: text written by a model (or anyone
else) is shown as text, never interpreted as HTML or Markdown.
"""

import datetime
import json
import os
from pathlib import Path

from markupsafe import Markup
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from . import comparisons, fmt
from .charts import run_charts
from .parquet import table_links
from . import records
from .records import SiteInputError

TEMPLATES = Path(__file__).parent / "templates"
FOLD_LINES = 30          # tool output longer than this is folded (never cut)
FOLD_CHARS = 3000


def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True,
                      default_for_string=True), undefined=StrictUndefined, keep_trailing_newline=True)
    env.globals.update(money=fmt.money, short=fmt.short, shell=fmt.shell, compact=compact, spec_json=spec_json)
    return env


def compact(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(", ", ": "), ensure_ascii=False)


def spec_json(spec) -> str:
    # A <script type="application/json"> data island is raw text to the HTML
    # parser (entities are not decoded), so it is marked safe; "<", ">" and "&"
    # are JSON-escaped instead so that no "</script>" can end it early.
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)


def build_date() -> str:
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0") or 0)
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%d")


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


def _read_output(runs_dir: Path, outputs, key):
    out = (outputs or {}).get(key)
    if not out:
        return None, None
    rel = out["path"]
    path = runs_dir / (rel.split("/", 1)[1] if rel.startswith("runs/") else rel)
    if not path.is_file():
        raise SiteInputError(f"{rel}: file not found (named by the record's outputs.{key})")
    return path, out


def run_page(env, pub, run) -> str:
    c = run.content
    _check_id(run.run_id, f"{run.record_path}: content.run_id")
    receipts_path, _ = _read_output(pub.runs_dir, c.get("outputs"), "receipts")
    receipts = json.loads(receipts_path.read_text(encoding="utf-8")) if receipts_path else []
    if isinstance(receipts, dict):  # fundbook.receipts/1: {schema, run_id, receipts_head, receipts}
        receipts = receipts.get("receipts", [])
    trace_path, trace_out = _read_output(pub.runs_dir, c.get("outputs"), "trace")
    trace = None
    if trace_path:
        trace = trace_path.read_text(encoding="utf-8")
        try:
            trace = json.dumps(json.loads(trace), indent=2, ensure_ascii=False, sort_keys=True)
        except json.JSONDecodeError:
            pass
    eng = c.get("engine") or {}
    hashes = [("record content_sha256", run.record["content_sha256"]),
              ("record file sha256", run.entry.get("file_sha256")),
              ("index entry hash", run.entry.get("hash")),
              ("fixture sha256", c.get("fixture_sha256")),
              ("input sha256", c.get("input_sha256")),
              ("result sha256", c.get("result_sha256")),
              ("receipts head", f"{c['receipts_head']['hash']} (size {c['receipts_head']['size']})"),
              ("engine bundle sha256", eng.get("bundle_sha256")),
              ("engine manifest sha256", eng.get("manifest_sha256")),
              ("engine version", eng.get("engine_version")),
              ("Pyodide / Python", f"{eng.get('pyodide_version')} / {eng.get('python_version')}")]
    for key, out in sorted((c.get("outputs") or {}).items()):
        hashes.append((f"{key} file sha256", out.get("sha256")))
    downloads = [("Run record (JSON)", run.record_path, run.entry.get("file_sha256"))]
    for key, out in sorted((c.get("outputs") or {}).items()):
        downloads.append((f"{key.capitalize()} (JSON)", out["path"], out.get("sha256")))
    downloads.append(("Per-day outcomes (Parquet)", f"runs/parquet/{run.run_id}.parquet", None))
    expected, observed = c.get("expected") or {}, c.get("observed") or {}
    description = (f"{c['kind']} run {run.run_id}: {c['status']}, {c.get('verdict') or 'no verdict'}, "
                   f"{fmt.score_text(c.get('score'))}")
    return env.get_template("run.md.j2").render(
        r=run, c=c, root="../../", fixture_label=fmt.fixture_label(c.get("fixture")),
        duration=fmt.duration(run.duration_ms), kind_note=KIND_NOTES.get(c["kind"], ""),
        eo_keys=sorted(set(expected) | set(observed)), charts=run_charts(c), receipts=receipts,
        command=c.get("command") or {}, trace_path=(trace_out or {}).get("path"), trace=trace, trace_lines=(trace or "").count("\n") + 1, hashes=hashes, downloads=downloads,
        verify_js=pub.verify_js, description=description)


def register_rows(pub):
    rows = []
    for run in pub.runs:
        c = run.content
        score = c.get("score")
        ms = run.duration_ms
        if ms is None:
            ms = ((pub.index.get("volatile") or {}).get("durations_ms") or {}).get(run.run_id)
        rows.append({
            "run_id": run.run_id, "href": f"{run.run_id}/", "kind": c["kind"],
            "fixture": fmt.fixture_label(c.get("fixture")), "status": c["status"],
            "verdict": c.get("verdict") or "none", "score": fmt.score_text(score),
            "points": score["points"] if score else -1, "fixture_sha256": c.get("fixture_sha256"),
            "bundle_sha256": (c.get("engine") or {}).get("bundle_sha256"),
            "execution_path": c.get("execution_path"), "duration": fmt.duration(ms),
            "duration_sort": ms if ms is not None else -1})
    return rows


def register_page(env, pub) -> str:
    rows = register_rows(pub)
    filters = [(col, sorted({r[col] for r in rows})) for col in ("kind", "status", "verdict")]
    return env.get_template("register.md.j2").render(
        runs=pub.runs, rows=rows, filters=filters, head=pub.index["head"], tables=table_links(pub),
        description=f"All {len(rows)} published runs with status, verdict, score and hashes.")


def _attempt_view(attempt):
    c = attempt.content
    _check_id(attempt.attempt_id, f"{attempt.folder}/record.json: content.attempt_id")
    term = c.get("termination") or {}
    cost = c.get("cost") or {}
    result = c.get("result") or {}
    score = result.get("score")
    cost_text = fmt.micro_usd(cost.get("micro_usd"))
    if cost.get("unresolved_micro_usd"):
        cost_text += f" + {fmt.micro_usd(cost['unresolved_micro_usd'])} unresolved"
    model = c.get("model") or {}
    started = (attempt.record.get("volatile") or {}).get("started") or ""
    return {
        "attempt_id": attempt.attempt_id, "label": c.get("label"),
        "model": f"{model.get('provider', '?')}:{model.get('id', '?')}",
        "status": term.get("status", "unknown"), "reason": term.get("reason") or term.get("limit") or "—",
        "accepted_actions": c.get("accepted_actions", 0), "settled_days": c.get("settled_days", 0),
        "score": fmt.score_text(score), "cost": cost_text, "date": started[:10] or "undated",
        "started": started, "result": result, "term": term, "volatile": attempt.record.get("volatile") or {},
    }


def attempts_page(env, pub) -> str:
    rows = []
    for attempt in pub.attempts:
        view = _attempt_view(attempt)
        view["href"] = f"{attempt.attempt_id}/" if attempt.transcript is not None else None
        rows.append(view)
    rows.sort(key=lambda r: (r["started"], r["attempt_id"]), reverse=True)
    return env.get_template("attempts.md.j2").render(
        rows=rows, description=f"{len(rows)} retained model attempts, failed ones included.")


def _fold(output: str):
    text = output if isinstance(output, str) else json.dumps(output, indent=2, ensure_ascii=False)
    lines = text.count("\n") + 1
    folded = lines > FOLD_LINES or len(text) > FOLD_CHARS
    first = text.strip().splitlines()[0] if text.strip() else ""
    return {"output": text, "lines": lines, "chars": len(text), "folded": folded,
            "preview": first[:120] + ("…" if len(first) > 120 else "")}


def _attempt_files(pub, attempt):
    """Downloadable files of an attempt, as links relative to its transcript page."""
    folder = pub.runs_dir / attempt.folder.split("/", 1)[1]
    return [(p.name, f"../../{attempt.folder}/{p.name}") for p in sorted(folder.iterdir())
            if p.is_file() and p.suffix in records.PUBLISHED_SUFFIXES]


def transcript_page(env, pub, attempt) -> str:
    view = _attempt_view(attempt)
    transcript = attempt.transcript or {}
    steps = []
    for i, step in enumerate(transcript.get("steps") or []):
        role = str(step.get("role", "?"))
        calls = []
        for call in step.get("tool_calls") or []:
            args = call.get("arguments")
            calls.append({"name": str(call.get("name", "?")), "exit_code": call.get("exit_code"),
                          "arguments": args if isinstance(args, str) else json.dumps(args, indent=2,
                                                                                     ensure_ascii=False),
                          **_fold(call.get("output") if call.get("output") is not None else "")})
        steps.append({"index": step.get("index", i), "role": role,
                      "role_class": role if role in ("model", "tool", "evaluator") else "other",
                      "text": step.get("text") or "", "tool_calls": calls})
    result = view["result"]
    components = []
    for name, comp in sorted(((result.get("score") or {}).get("components") or {}).items()):
        components.append((name, f"{comp.get('points')}/{comp.get('max')}" if isinstance(comp, dict) else comp))
    ms = view["volatile"].get("duration_ms")
    c = attempt.content
    rec_sha = fmt.short(attempt.record["content_sha256"])
    tr_sha = fmt.short((c.get("transcript") or {}).get("sha256"))
    generated = (f"Generated on {build_date()} (SOURCE_DATE_EPOCH) by builders/site/pages.py from "
                 f"{attempt.folder}/record.json (content sha256 {rec_sha}…) and "
                 f"{attempt.folder}/transcript.json (sha256 {tr_sha}…). Every step is shown in full; "
                 f"model-written text is escaped and shown as plain text.")
    note = c.get("note") or transcript.get("note") or view["term"].get("note")
    status = result.get("status") or view["status"]
    return env.get_template("transcript.md.j2").render(
        a=attempt, model=view["model"], score=fmt.score_text(result.get("score")) if result.get("score") else None,
        steps=steps, duration=fmt.duration(ms), status=status, status_class=str(status).lower(),
        label=view["label"], note=note, components=components, end_reason=view["reason"],
        accepted_actions=view["accepted_actions"], settled_days=view["settled_days"], cost=view["cost"],
        summary=transcript.get("summary") or "", generated=generated, files=_attempt_files(pub, attempt),
        description=f"Transcript of model attempt {attempt.attempt_id}: {view['status']}, {view['reason']}.")


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
    return pages


def page_titles(pub) -> dict:
    """{src_uri: (title, [key figures])} for generated pages, used by the OG cards."""
    titles = {"runs/index.md": ("Run register", [f"{len(pub.runs)} runs"]),
              "attempts/index.md": ("Attempts", [f"{len(pub.attempts)} retained attempts"])}
    for attempt in pub.attempts:
        if attempt.transcript is not None:
            view = _attempt_view(attempt)
            titles[f"attempts/{attempt.attempt_id}/index.md"] = (
                f"Transcript {attempt.attempt_id}", [view["status"], view["reason"], view["score"]])
    titles.update(comparisons.page_titles(pub))
    return titles
