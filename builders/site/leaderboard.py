"""The home page's answer: what exists (the status line) and one leaderboard
row per agent, published as leaderboard.json and leaderboard.csv from the same
rows (`board`, then `document`): the page and the files cannot disagree.

An agent is whoever wrote the candidates: a model (its attempt records,
grouped by provider, model id and harness: one path to a set of weights, the
paths to one set grouped under one heading, ranking.py), a practitioner cohort (the desk's
imported sessions in runs/practitioners/, grouped by cohort) or a scripted
baseline (the baseline runs, grouped by policy). The mock sampler is none of
these: its attempts test the launcher, so they are a machinery row drawn
apart, never ranked and never charted.

Each row has one observation per world (n = distinct worlds): for a model,
the attempt the one rule counts (builders/counting.py: the last try, whatever
its end; one without a result scores what the engine grades for the batches
the desk accepted from it), for a baseline its run of that world. Rates and
means carry 95 % intervals over worlds (intervals.py); fewer than
PRELIMINARY_BELOW worlds is labelled preliminary. A model's row also carries
the scripted baselines graded on the same worlds (free: the engine plays
them), so rows on different worlds are never the only comparison.

The model rows are ranked by mean score with bands that hold simultaneously
across the board (bands.py, at `simultaneous.alpha`); a preliminary row is
listed after the ranked ones, unranked and out of the chart.
"""

import json
from fractions import Fraction

from builders import counting

from . import fmt, intervals, ranking, weights
from .records import SiteInputError
from .counted import (
    attempt_score,
    counted_attempts,
    inspect_usage,
    is_inspect,
    is_real_model,
    model_key,  # noqa: F401
    policy_points,
    started_of,
)
from .agents import (
    HARNESSES,
    KIND_LABELS,
    POLICY_NOTES,
    PRELIMINARY_BELOW,
    SIDE_POLICIES,
    Agent,  # noqa: F401
    _baseline_agents,
    _date,
    _dict,
    _model_agents,
    _practitioner_agents,
    _started_date,
    comparison_arms,
    cost_text,
    harness_of,
    order_start,
    side_by_side,
)


def board(pub) -> dict:
    """{"groups": [(kind label, [rows])], "machinery": [rows], "status": {...}, "headline": {...}}: the home
    page's leaderboard and leaderboard.json/.csv (`document`, `csv_text`) both come from this (computed once a
    publication)."""
    cached = getattr(pub, "_board", None)
    if cached is not None:
        return cached
    models, machinery = _model_agents(pub)
    practitioners = _practitioner_agents(pub)
    baselines = _baseline_agents(pub)
    arms = comparison_arms(pub.runs_dir)
    for agent in models + practitioners + baselines + machinery:
        found = sorted({(slug, tuple(others)) for arm in agent.arms for slug, others in arms.get(arm, [])})
        labels = [
            ("vs " + ", ".join(o.split(":", 1)[-1] for o in others) if others else f"comparison {slug}")
            for slug, others in found
        ]
        # two comparisons against the same arms (a fixed-n one and a betting one) are told apart by their name
        agent.links += [
            (text if labels.count(text) == 1 else f"{text} ({slug})", f"comparisons/{slug}/")
            for text, (slug, _) in zip(labels, found)
        ]
    model_rows, ranked, heads = ranking.apply([a.row() for a in models], pub, PRELIMINARY_BELOW)
    groups = [
        ("Models", model_rows),
        ("Practitioners", [a.row() for a in practitioners]),
        ("Scripted baselines", [a.row() for a in baselines]),
    ]
    for row in groups[0][1]:
        row["side"] = side_by_side(row)
    out = {
        "groups": groups,
        "models": heads,
        "ranking": ranked,
        "machinery": [a.row() for a in machinery],
        "status": status(pub, models, heads),
    }
    out["headline"] = headline(groups)
    try:
        pub._board = out
    except AttributeError:
        pass
    return out


def _mean(values) -> Fraction:
    return Fraction(sum(values), len(values))


NO_MODEL = (
    "No model has a result yet: the rows below are the scripted baselines and the practitioners, who give "
    "the score scale its meaning."
)


def headline(groups) -> dict:
    """The result in one sentence, from the rows: the best model's mean over its worlds against doing nothing and
    the reference policy on the same worlds, and how often it qualified. The best is the highest mean among the
    rows that are not preliminary (all rows when every one is). The figures are fields (the home page marks each
    one, site/assets/fundbook/headline.js recomputes them); `headline_text` words them."""
    models = [r for r in dict(groups)["Models"] if r["n"]]
    if not models:
        out = {"model": None}
        out["text"] = headline_text(out)
        return out
    # sorted by mean score, highest first; a row over fewer than PRELIMINARY_BELOW worlds is not ranked while a
    # fuller one exists (one lucky world must not become "the best model")
    ranked = [r for r in models if not r["preliminary"]] or models
    best = ranked[0]
    same = [r for r in best["same_worlds"] if all(r[p] is not None for p in SIDE_POLICIES)]
    n = best["worlds"]
    out = {
        "model": best["key"],
        "name": best["name"],
        "worlds": n,
        "denominator": 100,
        "mean": _tenths(_mean([c["score"] for c in best["counted"]])),
        "qualified": sum(1 for c in best["counted"] if c["qualified"]),
    }
    if same:
        nothing = _mean([r["do-nothing"] for r in same])
        reference = _mean([r["reference"] for r in same])
        model_same = _mean([r["model"] for r in same])
        out.update(
            {
                "same": len(same),
                "model_same": _tenths(model_same),
                "do_nothing": _tenths(nothing),
                "reference": _tenths(reference),
                "direction": "below" if model_same < nothing else "above" if model_same > nothing else "level with",
                "reference_direction": (
                    "below" if model_same < reference else "level with" if model_same == reference else "above"
                ),
            }
        )
    passed = len(models) - len(ranked)
    if passed:
        out.update({"preliminary_not_ranked": passed, "preliminary_below": PRELIMINARY_BELOW})
    out["text"] = headline_text(out)
    return out


def headline_text(h, say=None):
    """The headline's sentence from its fields; `say(key, format)` writes a field (plain text by default, a mark
    on the home page: overview.py), so the page and leaderboard.json's text are one wording."""
    from markupsafe import Markup
    from .escape import escape

    plain = say is None
    say = say or (lambda key, format="text": fmt.figure_text(h[key], format))
    if h.get("model") is None:
        return NO_MODEL
    n = h["worlds"]
    parts = [
        "The best model so far, ",
        say("name"),
        ", scored a mean of ",
        say("mean"),
        " points out of ",
        say("denominator"),
        " over ",
        say("worlds", "number"),
        f" world{'s' if n != 1 else ''}",
    ]
    if "same" in h:
        if h["same"] != n:
            parts += [" (on the ", say("same", "number"), " of them the engine could replay: ", say("model_same"), ")"]
        parts += [
            ": ",
            say("direction"),
            " doing nothing on the same worlds (",
            say("do_nothing"),
            ") and ",
            say("reference_direction"),
            " the reference policy (",
            say("reference"),
            ")",
        ]
    parts += [". It qualified on ", say("qualified", "number"), " of ", say("worlds", "number"), "."]
    if "preliminary_not_ranked" in h:
        passed = h["preliminary_not_ranked"]
        parts += [
            " ",
            say("preliminary_not_ranked", "number"),
            f" other model row{'s' if passed != 1 else ''}, over fewer than ",
            say("preliminary_below"),
            f" worlds, {'are' if passed != 1 else 'is'} preliminary and not ranked here.",
        ]
    if plain:
        return "".join(parts)
    return Markup("").join(p if isinstance(p, Markup) else escape(p) for p in parts)


def _tenths(x: Fraction) -> str:
    return intervals._tenths(intervals._round_tenths(x))


def document(pub) -> dict:
    """leaderboard.json: every row's figures and the attempts it counted, so a reader or a script can recompute
    each figure (intervals.py's methods) from the counted scores."""
    b = board(pub)
    rows = []
    for label, group in list(b["groups"]) + [("Machinery tests", b["machinery"])]:
        for r in group:
            row = {
                "group": label,
                "key": r["key"],
                "kind": r["kind"],
                "name": r["name"],
                "provider": r["provider"] or None,
                "harness": r["harness"] or None,
                "worlds": r["worlds"],
                "attempts": r["attempts"],
                "qualified": r["rate"],
                "mean": r["mean"],
                "ended_without_result": r["ended_without_result"],
                "counted": r["counted"],
                "same_worlds": r["same_worlds"],
                "same_worlds_means": {label: m for label, m in r.get("side") or []},
            }
            if r["kind"] in ("model", "machinery"):  # every attempt of the row: the verify applies the rule to them
                row["attempt_ids"] = sorted(r["attempt_ids"])
            if r["kind"] == "model":
                row.update({k: r[k] for k in MODEL_FIELDS})
            rows.append(row)
    rk = b["ranking"]
    return {
        "schema": SCHEMA,
        "rule": counting.RULE,
        "rule_source": counting.RULE_SOURCE,
        "intervals": {"qualified": intervals.RATE_METHOD, "mean": intervals.MEAN_METHOD},
        "preliminary_below": PRELIMINARY_BELOW,
        "headline": b["headline"]["text"],
        "simultaneous": {
            "method": rk["method"],
            "alpha": rk["alpha"],
            "ranked": rk["ranked"],
            "per_end_alpha": rk["per_end_alpha"],
            "guarantee": GUARANTEE,
            "code": ranking.code(),
        },
        "models": [
            {
                "weights": h["weights"],
                "name": h["name"],
                "tuning": h["tuning"],
                "base": h["base"],
                "card": h["card"],
                "rows": [r["key"] for r in h["rows"]],
            }
            for h in b["models"]
        ],
        "packaged": weights.table(),
        "weights_basis": dict(weights.BASIS),
        "rows": rows,
    }


SCHEMA = "fundbook.leaderboard/2"
# what a model row states beyond the other rows (ranking.py, bands.py, weights.py)
MODEL_FIELDS = (
    "weights",
    "weights_basis",
    "model_id",
    "model",
    "tuning",
    "base",
    "card",
    "preliminary",
    "rank",
    "band",
    "rank_band",
    "erratum",
)
GUARANTEE = (
    "With probability at least 1 - alpha, every ranked row's band holds its true mean score, at every number "
    "of worlds at once (each band is two one-sided confidence sequences at alpha / (2K), valid at every n by "
    "Ville's inequality, joined by the union bound over the 2K ends), and so every rank band holds its true "
    "rank."
)


def figure_root(doc) -> dict:
    """The root the home page's board marks point into (["board", "rows", key, ...], ["board", "models", weights,
    ...]): leaderboard.json keyed by row and by weights. site/assets/fundbook/board.js builds the same root from the
    document it recomputes."""
    return {
        "board": {
            "rows": {r["key"]: r for r in doc["rows"]},
            "models": {m["weights"]: m for m in doc["models"]},
            "preliminary_below": doc["preliminary_below"],
            "simultaneous": doc["simultaneous"],
        }
    }


def _number(text):
    return float(text)  # display only: a chart's position (the table prints the exact digits)


def chart_rows(doc) -> list:
    """The chart's data: each ranked model row's mean and simultaneous band, and the scripted baselines' means on
    the row's own worlds (board.js `chartRows` gives the same rows from the recomputed document)."""
    out = []
    for r in doc["rows"]:
        if r["kind"] != "model" or not r.get("rank"):
            continue
        label = f"{r['model']} · {r['provider']} ({r['harness']})" + (" · base model" if r["base"] else "")
        out.append(
            {
                "row": label,
                "series": "this row",
                "mean": _number(r["mean"]["value"]),
                "lower": _number(r["band"]["lower"]),
                "upper": _number(r["band"]["upper"]),
            }
        )
        for policy in SIDE_POLICIES:
            m = (r.get("same_worlds_means") or {}).get(policy)
            if m:
                x = _number(m["value"])
                out.append({"row": label, "series": policy, "mean": x, "lower": x, "upper": x})
    return out


def json_text(pub) -> str:
    return json.dumps(document(pub), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


CSV_COLUMNS = ("group", "agent", "kind", "world", "attempt_id", "score", "qualified", "graded_by")


def csv_text(pub) -> str:
    """leaderboard.csv: one line per counted observation (the rows' `counted` lists)."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for row in document(pub)["rows"]:
        for c in row["counted"]:
            w.writerow(
                [
                    row["group"],
                    row["key"],
                    row["kind"],
                    c["world"],
                    c["attempt_id"],
                    c["score"],
                    int(bool(c["qualified"])),
                    c["graded_by"],
                ]
            )
    return buf.getvalue()


def check_document(doc) -> None:
    """Every row's figures recompute from the attempts it lists as counted (one per world), with the methods it
    names: what a reader's script would do with leaderboard.json, done by the build before it publishes."""
    for row in doc["rows"]:
        counted = row["counted"]
        worlds = {c["world"] for c in counted}
        where = f"leaderboard.json: row {row['key']}"
        if row["kind"] in ("model", "baseline", "machinery") and len(worlds) != len(counted):
            raise SiteInputError(
                f"{where}: counted: expected one attempt per world, got {len(counted)} for {len(worlds)} worlds"
            )
        if row["worlds"] != len(worlds):
            raise SiteInputError(f"{where}: worlds: expected {len(worlds)}, got {row['worlds']}")
        want_rate = intervals.wilson(sum(1 for c in counted if c["qualified"]), len(counted))
        want_mean = intervals.t_mean([c["score"] for c in counted])
        if (row["qualified"], row["mean"]) != (want_rate, want_mean):
            raise SiteInputError(
                f"{where}: qualified and mean: expected {want_rate} and {want_mean} from its counted attempts"
            )
        if row["kind"] == "model" and [(c["started"] or "", c["world"]) for c in counted] != sorted(
            (c["started"] or "", c["world"]) for c in counted
        ):
            raise SiteInputError(f"{where}: counted: expected the order the attempts were started")
    models = [r for r in doc["rows"] if r["kind"] == "model"]
    got = ranking.rank(models, doc["preliminary_below"])
    if [r["key"] for r in models] != got["order"]:
        raise SiteInputError(f"leaderboard.json: model rows: expected the order {got['order']} of the ranking")
    for row in models:
        want = got["rows"][row["key"]]
        for key in ("preliminary", "rank", "band", "rank_band"):
            if row[key] != want[key]:
                raise SiteInputError(
                    f"leaderboard.json: row {row['key']}: {key}: expected {want[key]} from its "
                    f"counted attempts, got {row[key]}"
                )


def files(pub) -> dict:
    """{site path: bytes} of the published leaderboard files, checked (check_document) before they are."""
    check_document(document(pub))
    return {
        "leaderboard.json": json_text(pub).encode("utf-8"),
        "leaderboard.csv": csv_text(pub).encode("utf-8"),
        **ranking.site_files(),
    }


def status(pub, models, heads=()) -> dict:
    """What exists, dated by the newest record."""
    dates = [_date(r.record, "finished") for r in pub.runs] + [_started_date(a) for a in pub.attempts]
    dates += [_date(s.record, "finished", "imported", "started") for s in pub.practitioners]
    dates = [d for d in dates if d]
    real = [a for a in pub.attempts if is_real_model(a.content)]
    with_result = [a for a in real if isinstance(_dict(a.content.get("result")).get("status"), str)]
    grader = [r for r in pub.runs if r.content.get("expected") is not None]
    return {
        "date": max(dates) if dates else None,
        "model_results": len(with_result),
        # models are counted by weights (ranking.headings): one set of weights reached three ways is one model
        "models_with_results": [
            {
                "name": h["name"],
                "base": h["base"],
                "card": h["card"],
                "paths": sum(1 for r in h["rows"] if r["n"] > r["ended_without_result"]),
            }
            for h in heads
            if any(r["n"] > r["ended_without_result"] for r in h["rows"])
        ],
        "model_attempts": len(real),
        "model_worlds": sum(len(a.observations) for a in models),
        "local_attempts": sum(a.attempts for a in models if a.cost.get("local")),
        "baseline_runs": sum(1 for r in pub.runs if r.content.get("kind") == "baseline"),
        "grader_tests": len(grader),
        "grader_passed": sum(1 for r in grader if r.content.get("passed") is True),
        "machinery_attempts": sum(1 for a in pub.attempts if not is_real_model(a.content)),
        "practitioner_sessions": len(pub.practitioners),
        "studies": _studies(pub),
    }


def _studies(pub) -> list:
    """Each pre-registered study's state, as its committed status.json states it (builders/site/studies.py)."""
    from . import studies

    out = []
    for st in studies.studies(pub.runs_dir, pub.attempts):
        out.append(
            {
                "name": st["name"],
                "state": st["state"],
                "worlds": st["worlds"],
                "planned_max": st["planned_max"],
                "questions": [(q["name"], (q["state"] or {}).get("verdict")) for q in st["questions"]],
            }
        )
    return out
