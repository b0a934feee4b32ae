"""Sections of written pages that are generated from the records, so they
cannot go stale: the home page's overview of what the publication holds
(Altair charts of outcomes and scores by kind and policy, drawn by the
vendored vega-embed like the run pages' charts) and the Limitations page's
dated status (runtime and attempts).

A written page asks for a section with an HTML comment on a line of its own,
`<!-- fundbook:overview -->`, `<!-- fundbook:status -->` (the dated status) or
`<!-- fundbook:model-results -->` (what the page says about model results).
"""

import re
from collections import Counter

import altair as alt

from . import fmt
from .records import SiteInputError

PLACEHOLDER = re.compile(r"^<!-- fundbook:(?P<name>[a-z-]+) -->$", re.M)
OUTCOME_ORDER = ["SCORED · QUALIFIED", "SCORED · NOT_QUALIFIED", "MALFORMED", "UNSCORABLE"]


def group_of(content) -> str:
    """The overview's row: the kind, split by policy for baselines."""
    kind = str(content.get("kind"))
    fixture = content.get("fixture") if isinstance(content.get("fixture"), dict) else {}
    return f"{kind} · {fixture['policy']}" if kind == "baseline" and fixture.get("policy") else kind


def outcome_of(status, verdict) -> str:
    return f"{status} · {verdict}" if verdict else str(status)


def overview_rows(pub) -> list:
    rows = []
    for run in pub.runs:
        c = run.content
        score = c.get("score") if isinstance(c.get("score"), dict) else {}
        rows.append({"run": run.run_id, "group": group_of(c), "outcome": outcome_of(c.get("status"), c.get("verdict")),
                     "points": score.get("points") if isinstance(score.get("points"), int) else None})
    for attempt in pub.attempts:
        c = attempt.content
        result = c.get("result") if isinstance(c.get("result"), dict) else {}
        term = c.get("termination") if isinstance(c.get("termination"), dict) else {}
        score = result.get("score") if isinstance(result.get("score"), dict) else {}
        label = f"model attempt · {c['label']}" if c.get("label") else "model attempt"
        status = result.get("status") or f"ended: {term.get('status', 'unknown')}"
        rows.append({"run": attempt.attempt_id, "group": label, "outcome": outcome_of(status, result.get("verdict")),
                     "points": score.get("points") if isinstance(score.get("points"), int) else None})
    return rows


def overview_charts(pub) -> list:
    """[(id, title, spec)]: outcomes counted by group, and every score by group."""
    rows = overview_rows(pub)
    if not rows:
        return []
    groups = sorted({r["group"] for r in rows})
    outcomes = OUTCOME_ORDER + sorted({r["outcome"] for r in rows} - set(OUTCOME_ORDER))
    y = alt.Y("group:N", title=None, sort=groups)
    counts = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("count():Q", title="Runs", axis=alt.Axis(tickMinStep=1)), y=y,
        color=alt.Color("outcome:N", title="Status · verdict", sort=outcomes),
        tooltip=[alt.Tooltip("group:N", title="kind"), alt.Tooltip("outcome:N"), alt.Tooltip("count():Q", title="runs")],
    ).properties(width="container", height=28 * len(groups) + 20, title="Outcomes by kind and policy")
    scored = [r for r in rows if r["points"] is not None]
    points = alt.Chart(alt.Data(values=scored or [{"group": g, "points": None, "run": "", "outcome": ""}
                                                  for g in groups])).mark_tick(thickness=2, size=18).encode(
        x=alt.X("points:Q", title="Score (points out of 100)", scale=alt.Scale(domain=[0, 100])), y=y,
        color=alt.Color("outcome:N", title="Status · verdict", sort=outcomes),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("points:Q"), alt.Tooltip("outcome:N")],
    ).properties(width="container", height=28 * len(groups) + 20, title="Scores by kind and policy")
    return [("overview-outcomes", "Outcomes by kind and policy", counts.to_dict()),
            ("overview-scores", "Scores by kind and policy", points.to_dict())]


def status_view(pub) -> dict:
    """The Limitations page's status: its date, the runtime of the runs, the attempts."""
    built = ((pub.index.get("volatile") or {}).get("built") if isinstance(pub.index.get("volatile"), dict) else None)
    dates = [built[:10]] if isinstance(built, str) and built[:4].isdigit() else []
    for attempt in pub.attempts:
        started = (attempt.record.get("volatile") or {}).get("started") \
            if isinstance(attempt.record.get("volatile"), dict) else None
        if isinstance(started, str) and started[:4].isdigit():
            dates.append(started[:10])
    runtimes = Counter()
    for run in pub.runs:
        eng = run.content.get("engine") if isinstance(run.content.get("engine"), dict) else {}
        runtimes[(str(run.content.get("execution_path")), str(eng.get("engine_version")),
                  fmt.short(eng.get("bundle_sha256") if isinstance(eng.get("bundle_sha256"), str) else None),
                  str(eng.get("pyodide_version")), str(eng.get("python_version")))] += 1
    attempts = Counter()
    model_results = 0
    for attempt in pub.attempts:
        c = attempt.content
        term = c.get("termination") if isinstance(c.get("termination"), dict) else {}
        label = str(c.get("label") or "model")
        attempts[(label, str(term.get("status", "unknown")))] += 1
        if label != "mock" and isinstance(c.get("result"), dict):
            model_results += 1
    return {"date": max(dates) if dates else None, "runs": len(pub.runs), "runtimes": sorted(runtimes.items()),
            "attempts": sorted(attempts.items()), "attempt_count": len(pub.attempts),
            "mock_count": sum(n for (label, _), n in attempts.items() if label == "mock"),
            "model_results": model_results}


def fill(markdown: str, src_uri: str, pub, env, root: str) -> str:
    """`markdown` with each placeholder replaced by its generated section."""
    def section(m):
        name = m.group("name")
        if name == "overview":
            return env.get_template("overview.md.j2").render(charts=overview_charts(pub), root=root,
                                                             runs=len(pub.runs), attempts=len(pub.attempts))
        if name in ("status", "model-results"):
            return env.get_template(f"{name.replace('-', '_')}.md.j2").render(s=status_view(pub))
        raise SiteInputError(f"{src_uri}: unknown generated section <!-- fundbook:{name} -->")
    return PLACEHOLDER.sub(section, markdown)
