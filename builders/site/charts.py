"""Altair chart specs for a run page: cash by day and funding actions by day.

The specs are Vega-Lite JSON built here at build time and rendered in the
page by the vendored vega-embed (expression interpreter, no eval, so the CSP
can forbid it). Chart data is display-only and never hashed; amounts are
converted from integer cents to currency units for the axis.
"""

import altair as alt


def cash_chart(days: list) -> dict:
    rows = [{"day": d["day"], "cash": d["cash"] / 100} for d in days if d.get("cash") is not None]
    chart = alt.Chart(alt.Data(values=rows)).mark_line(point=True).encode(
        x=alt.X("day:O", title="Checkpoint day"),
        y=alt.Y("cash:Q", title="Cash after settlement (currency units)"),
        tooltip=[alt.Tooltip("day:O"), alt.Tooltip("cash:Q", format=",.2f")],
    ).properties(width="container", height=220, title="Cash by day")
    return chart.to_dict()


def funding_chart(days: list) -> dict:
    rows = []
    for d in days:
        counts = {}
        for decision in d.get("decisions") or []:
            key = (decision.get("type") or "?", decision.get("decision") or "?")
            counts[key] = counts.get(key, 0) + 1
        for (kind, decision), n in sorted(counts.items()):
            rows.append({"day": d["day"], "action": f"{kind} {decision.lower()}", "count": n})
    if not rows:
        rows = [{"day": d["day"], "action": "no actions", "count": 0} for d in days]
    chart = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("day:O", title="Checkpoint day"),
        y=alt.Y("sum(count):Q", title="Actions", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("action:N", title="Action and decision"),
        tooltip=[alt.Tooltip("day:O"), alt.Tooltip("action:N"), alt.Tooltip("sum(count):Q", title="count")],
    ).properties(width="container", height=220, title="Funding actions by day")
    return chart.to_dict()


def run_charts(content: dict) -> list:
    """[(id, title, spec)] for a run; empty when the run has no settled days."""
    days = content.get("days") or []
    if not days:
        return []
    return [("cash", "Cash by day", cash_chart(days)), ("funding", "Funding actions by day", funding_chart(days))]
