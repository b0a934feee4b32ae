"""The charts of a comparison page (Vega-Lite specs built with Altair): the estimate and its band as n
grows for a fixed-n rule, and the wealth processes of a betting rule."""

import altair as alt


def bound_chart(decision) -> dict:
    """The estimate and its two-sided band (lower and upper bounds) as n grows, against the margin."""
    margin = float(decision["margin"])
    rows = [
        {"n": p["n"], "estimate": float(p["estimate"]), "lower": float(p["lower"]), "upper": float(p["upper"])}
        for p in decision["series"]
    ]
    base = alt.Chart(alt.Data(values=rows)).encode(x=alt.X("n:Q", title="Worlds (n, in sweep order)"))
    band = base.mark_area(opacity=0.25).encode(
        y=alt.Y("lower:Q", title=f"Paired difference in {decision['metric']} (metric units)"),
        y2="upper:Q",
        tooltip=[alt.Tooltip("n:Q"), alt.Tooltip("lower:Q", format=".3f"), alt.Tooltip("upper:Q", format=".3f")],
    )
    line = base.mark_line().encode(
        y="estimate:Q", tooltip=[alt.Tooltip("n:Q"), alt.Tooltip("estimate:Q", format=".3f")]
    )
    lower = base.mark_line(strokeDash=[4, 3]).encode(y="lower:Q")
    rule = alt.Chart(alt.Data(values=[{"margin": margin}])).mark_rule(color="#b00020").encode(y="margin:Q")
    chart = alt.layer(band, line, lower, rule).properties(
        width="container", height=260, title="Estimate, lower and upper bound as n grows (red: the margin)"
    )
    return chart.to_dict()


def wealth_chart(decision) -> dict:
    """Both wealth processes of a betting rule over the worlds in sweep order, on a log scale, against the
    threshold 1/alpha (and the futility line when one was pre-registered)."""
    seq = decision["sequential"]
    rows = []
    for p in seq["path"]:
        rows.append({"n": p["n"], "wealth": max(float(p["for"]), 1e-300), "side": "for the claim"})
        rows.append({"n": p["n"], "wealth": max(float(p["against"]), 1e-300), "side": "against the claim"})
    base = alt.Chart(alt.Data(values=rows)).encode(x=alt.X("n:Q", title="Worlds (n, in the committed order)"))
    lines = base.mark_line(point=len(seq["path"]) <= 60).encode(
        y=alt.Y("wealth:Q", scale=alt.Scale(type="log"), title="Wealth (log scale; starts at 1)"),
        color=alt.Color(
            "side:N",
            title=None,
            scale=alt.Scale(domain=["for the claim", "against the claim"], range=["#1b5e20", "#6a1b9a"]),
        ),
        tooltip=[alt.Tooltip("n:Q"), alt.Tooltip("side:N"), alt.Tooltip("wealth:Q", format=".4g")],
    )
    marks = [{"y": float(seq["threshold"]), "what": f"1/alpha = {seq['threshold']}"}]
    if seq.get("futility"):
        marks.append({"y": float(seq["futility"]), "what": f"futility {seq['futility']}"})
    rule = (
        alt.Chart(alt.Data(values=marks))
        .mark_rule(color="#b00020", strokeDash=[4, 3])
        .encode(y="y:Q", tooltip=[alt.Tooltip("what:N")])
    )
    chart = alt.layer(lines, rule).properties(
        width="container", height=260, title="Wealth for and against the claim as n grows (red: the threshold)"
    )
    return chart.to_dict()
