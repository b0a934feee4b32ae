"""Altair chart specs for a run page: cash by day and funding actions by day.

The specs are Vega-Lite JSON built here at build time and rendered in the
page by the vendored vega-embed (expression interpreter, no eval, so the CSP
can forbid it). Chart data is display-only and never hashed; amounts are
converted from integer cents to currency units for the axis. The data rows
are what verify re-derives (site/assets/desk/checks.js cashRows and
fundingRows): the layers and scales below only change how they are drawn.
"""

import altair as alt

BELOW_ZERO = "#b91c1c"
LINE = "#1d4ed8"


def _days(days: list) -> list:
    """Every checkpoint day of the run, in order, with or without actions."""
    return sorted({d["day"] for d in days if isinstance(d.get("day"), int)})


def cash_chart(days: list) -> dict:
    rows = [{"day": d["day"], "cash": d["cash"] / 100} for d in days if d.get("cash") is not None]
    x = alt.X("day:O", title="Checkpoint day", scale=alt.Scale(domain=_days(days)), axis=alt.Axis(labelAngle=0))
    base = alt.Chart()
    y_title = "Cash after settlement (currency units)"
    line = base.mark_line(color=LINE).encode(x=x, y=alt.Y("cash:Q", title=y_title, scale=alt.Scale(zero=True)))
    # a day that closes below zero is a settlement failure: its point is red and larger
    points = base.mark_point(filled=True).encode(
        x=x,
        y="cash:Q",
        color=alt.condition("datum.cash < 0", alt.value(BELOW_ZERO), alt.value(LINE)),
        size=alt.condition("datum.cash < 0", alt.value(90), alt.value(30)),
        tooltip=[alt.Tooltip("day:O"), alt.Tooltip("cash:Q", format=",.2f")],
    )
    # the zero line: one rule from its own one-row data (decoration, so aria off: no unnamed image);
    # the runs' rows stay the chart's top-level data, which verify compares
    zero = (
        alt.Chart(alt.Data(values=[{"zero": 0}]))
        .mark_rule(color=BELOW_ZERO, strokeDash=[4, 3], aria=False)
        .encode(y=alt.Y("zero:Q", title=y_title))
    )
    chart = alt.layer(zero, line, points, data=alt.Data(values=rows)).properties(
        width="container", height=220, title="Cash by day"
    )
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
    # every day on the axis, so a run of quiet days shows as the gap it is
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            x=alt.X("day:O", title="Checkpoint day", scale=alt.Scale(domain=_days(days)), axis=alt.Axis(labelAngle=0)),
            # counts are whole: integer ticks ("0", never "0.000000" on a run without an action)
            y=alt.Y("sum(count):Q", title="Actions", axis=alt.Axis(tickMinStep=1, format="d")),
            color=alt.Color("action:N", title="Action and decision"),
            tooltip=[alt.Tooltip("day:O"), alt.Tooltip("action:N"), alt.Tooltip("sum(count):Q", title="count")],
        )
        .properties(width="container", height=220, title="Funding actions by day")
    )
    return chart.to_dict()


def below_zero(days: list) -> list:
    """The days whose cash after settlement is negative."""
    return [d["day"] for d in days if isinstance(d.get("cash"), int) and d["cash"] < 0]


def run_charts(content: dict) -> list:
    """[(id, title, spec)] for a run; empty when the run has no settled days."""
    days = content.get("days") or []
    if not days:
        return []
    return [("cash", "Cash by day", cash_chart(days)), ("funding", "Funding actions by day", funding_chart(days))]
