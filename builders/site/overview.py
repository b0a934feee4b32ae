"""Sections of written pages that are generated from the records, so they
cannot go stale: the home page's status line and leaderboard (leaderboard.py:
one row per agent, the mock drawn apart, and an Altair chart of the agents'
mean scores with their intervals, drawn by the vendored vega-embed like the
run pages' charts) and the Limitations page's dated status (runtime and
attempts).

A written page asks for a section with an HTML comment on a line of its own:
`<!-- fundbook:status-line -->`, `<!-- fundbook:leaderboard -->`,
`<!-- fundbook:headline -->` (the result in one sentence),
`<!-- fundbook:status -->` (the dated status),
`<!-- fundbook:model-results -->` (what the page says about model results) or
`<!-- fundbook:engine-files -->` (the bundle zip's, its manifest's and its provenance's
files, with the zip's sha256, which its own manifest cannot hold).
"""

import re
from collections import Counter

import altair as alt

from builders import counting

from . import fmt, glossary, intervals, leaderboard, weights
from .figures import Figures
from .records import SiteInputError

PLACEHOLDER = re.compile(r"^<!-- fundbook:(?P<name>[a-z-]+) -->$", re.M)
EMPTY = {
    "Models": "No real model has a result yet. The first attempts, by an open-weights model run locally "
    "(llama.cpp), are listed here with their transcripts once their records are published.",
    "Practitioners": "No practitioner session has been imported yet (runs/practitioners/ is empty): the practice "
    "desk's study mode records one only with the participant's consent.",
    "Scripted baselines": "The publication holds no baseline run.",
}
SERIES_COLOURS = {
    "this row": "#1d4ed8",
    "do-nothing": "#b91c1c",
    "shortest-cheapest": "#a16207",
    "reference": "#15803d",
}
CHART_LABEL = "Mean score of each ranked model row, points out of 100, with its simultaneous band"


def board_chart(doc) -> dict | None:
    """Each ranked model row's mean and simultaneous band, the scripted baselines' means on its own worlds beside
    it (leaderboard.chart_rows); None when no row is ranked."""
    rows = leaderboard.chart_rows(doc)
    if not rows:
        return None
    order = list(dict.fromkeys(r["row"] for r in rows))
    series = list(SERIES_COLOURS)
    colour = alt.Color(
        "series:N",
        title="Mean on the row's worlds",
        scale=alt.Scale(domain=series, range=list(SERIES_COLOURS.values())),
    )
    base = alt.Chart(alt.Data(values=rows)).encode(
        y=alt.Y("row:N", title=None, sort=order, axis=alt.Axis(labelLimit=320))
    )
    bands = (
        base.transform_filter(alt.datum.series == "this row")
        .mark_rule(strokeWidth=3, aria=False)
        .encode(
            x=alt.X("lower:Q", title="Mean score (points out of 100)", scale=alt.Scale(domain=[0, 100])),
            x2="upper:Q",
            color=colour,
        )
    )
    dots = base.mark_point(filled=True, size=90).encode(
        x="mean:Q",
        color=colour,
        shape=alt.Shape("series:N", title="Mean on the row's worlds", scale=alt.Scale(domain=series)),
        tooltip=[
            alt.Tooltip("row:N"),
            alt.Tooltip("series:N"),
            alt.Tooltip("mean:Q", title="mean score"),
            alt.Tooltip("lower:Q"),
            alt.Tooltip("upper:Q"),
        ],
    )
    return (
        alt.layer(bands, dots)
        .properties(width="container", height=44 * len(order) + 40, title=CHART_LABEL)
        .configure_legend(orient="bottom")
        .to_dict()
    )


def home_sections(pub) -> dict:
    board = leaderboard.board(pub)
    doc = leaderboard.document(pub)
    groups = [(label, rows, EMPTY[label]) for label, rows in board["groups"]]
    return {
        "board": board,
        "groups": groups,
        "doc": doc,
        "chart": board_chart(doc),
        "fig": Figures(leaderboard.figure_root(doc)),
    }


def status_view(pub) -> dict:
    """The Limitations page's status: its date, the runtime of the runs, the attempts."""
    dates = []
    for run in pub.runs:  # when each published run was executed (its volatile part)
        finished = (
            (run.record.get("volatile") or {}).get("finished") if isinstance(run.record.get("volatile"), dict) else None
        )
        if isinstance(finished, str) and finished[:4].isdigit():
            dates.append(finished[:10])
    from .counted import end_of, started_of

    for attempt in pub.attempts:
        started = started_of(attempt)  # an Inspect attempt: the eval's creation time as Inspect logged it
        if isinstance(started, str) and started[:4].isdigit():
            dates.append(started[:10])
    runtimes = Counter()
    for run in pub.runs:
        eng = run.content.get("engine") if isinstance(run.content.get("engine"), dict) else {}
        runtimes[
            (
                str(run.content.get("execution_path")),
                str(eng.get("engine_version")),
                fmt.short(eng.get("bundle_sha256") if isinstance(eng.get("bundle_sha256"), str) else None),
                str(eng.get("pyodide_version")),
                str(eng.get("python_version")),
            )
        ] += 1
    attempts = Counter()
    model_results = 0
    for attempt in pub.attempts:
        c = attempt.content
        label = str(c.get("label") or "model")
        attempts[(label, str(end_of(c)[0]))] += 1
        if leaderboard.is_real_model(c) and isinstance(c.get("result"), dict):
            model_results += 1
    from .counted import counting_map

    counts = [c for aid, c in counting_map(pub).items() if c["counted"] and c["agent"].startswith("model:")]
    real = [a for a in pub.attempts if leaderboard.is_real_model(a.content)]
    names = [h["name"] for h in leaderboard.board(pub)["models"]]  # models counted by their weights
    heldout = sum(
        1
        for a in pub.attempts
        if a.attempt_id in {c["counted_id"] for c in counts} and (a.content.get("task") or {}).get("split") == "heldout"
    )
    return {
        "date": max(dates) if dates else None,
        "runs": len(pub.runs),
        "runtimes": sorted(runtimes.items()),
        "model_attempt_count": len(real),
        "model_names": names,
        "model_worlds": len(counts),
        "heldout_worlds": heldout,
        "attempts": sorted(attempts.items()),
        "attempt_count": len(pub.attempts),
        "mock_count": sum(n for (label, _), n in attempts.items() if label == "mock"),
        "model_results": model_results,
    }


def fill(markdown: str, src_uri: str, pub, env, root: str) -> str:
    """`markdown` with each placeholder replaced by its generated section."""
    home = {}

    def section(m):
        name = m.group("name")
        if name == "headline":  # the result in one sentence, from the same rows as the leaderboard and its JSON
            h = leaderboard.board(pub)["headline"]
            fig = Figures({"headline": h})
            text = leaderboard.headline_text(h, lambda key, format="text": fig(["headline", key], format))
            return env.get_template("headline.md.j2").render(text=text, root=root, verify=h.get("model") is not None)
        if name in ("status-line", "leaderboard"):
            if "sections" not in home:
                home["sections"] = home_sections(pub)
            h = home["sections"]
            if name == "status-line":
                return env.get_template("status_line.md.j2").render(
                    s=h["board"]["status"], preliminary_below=leaderboard.PRELIMINARY_BELOW, root=root
                )
            columns = [(key, label, text) for key, (label, text) in glossary.BOARD.items()]
            return env.get_template("leaderboard.md.j2").render(
                groups=h["groups"],
                models=h["board"]["models"],
                machinery=h["board"]["machinery"],
                chart=h["chart"],
                chart_label=CHART_LABEL,
                columns=columns,
                root=root,
                rule=counting.RULE,
                fig=h["fig"],
                sim=h["doc"]["simultaneous"],
                basis=weights.SHORT,
                rate_method=intervals.RATE_METHOD,
                mean_method=intervals.MEAN_METHOD,
                preliminary_below=leaderboard.PRELIMINARY_BELOW,
            )
        if name == "engine-files":  # the bundle zip's own sha256 beside its manifest's (it cannot be in it)
            engine = pub.index.get("engine") if isinstance(pub.index.get("engine"), dict) else {}
            return env.get_template("engine_files.md.j2").render(engine=engine, root=root)
        if name in ("status", "model-results"):
            return env.get_template(f"{name.replace('-', '_')}.md.j2").render(s=status_view(pub))
        raise SiteInputError(f"{src_uri}: unknown generated section <!-- fundbook:{name} -->")

    return PLACEHOLDER.sub(section, markdown)
