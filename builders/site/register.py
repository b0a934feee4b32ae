"""The run register: every run of the index, in two views.

Results (the default) are the runs that measure a policy -- the scripted
baselines on practice families; grader tests are the fixtures that state the
outcome the grader must give them (reference and adversarial), shown with one
pass/fail badge. A column whose value is the same on every row (the engine
bundle, the execution path) is stated once above the tables instead.
register.js adds filters, search and sort, and keeps them in the query string.
"""

from . import fmt, glossary, scale
from .counted import counting_map
from .figures import Figures
from .parquet import table_links

VIEWS = (("results", "Results", "results"), ("grader", "Grader tests", "grader tests"))
# (column key, sort type) per view; "engine" and "path" join only when they vary.
COLUMNS = {
    "results": [
        ("world", "text"),
        ("policy", "text"),
        ("status", "text"),
        ("verdict", "text"),
        ("score", "number"),
        ("scale", None),
        ("fixture", "text"),
        ("time", "number"),
    ],
    "grader": [
        ("test", "text"),
        ("kind", "text"),
        ("check", "text"),
        ("status", "text"),
        ("verdict", "text"),
        ("score", "number"),
        ("fixture", "text"),
        ("time", "number"),
    ],
}
FILTERS = {"results": ("policy", "status", "verdict"), "grader": ("kind", "check", "status", "verdict")}


def view_of(content) -> str:
    return (
        "grader"
        if content.get("expected") is not None or content.get("kind") in ("reference", "adversarial")
        else "results"
    )


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _duration_ms(run, pub):
    ms = run.duration_ms
    if ms is None:
        durations = _dict(_dict(pub.index.get("volatile")).get("durations_ms"))
        value = durations.get(run.run_id)
        ms = value if isinstance(value, int) and not isinstance(value, bool) else None
    return ms


def _duration_path(run):
    """Where the register's time figure is read: the record's volatile duration, else the index's."""
    return (
        ["record", "volatile", "duration_ms"]
        if run.duration_ms is not None
        else ["index", "volatile", "durations_ms", run.run_id]
    )


def rows(pub, run_roots) -> list:
    worlds = scale.world_scores(pub.runs)
    by_id = {run.run_id: run for run in pub.runs}
    out = []
    for run in pub.runs:
        c = run.content
        score = c.get("score")
        fixture = _dict(c.get("fixture"))
        ms = _duration_ms(run, pub)
        verdict = c.get("verdict")
        passed = c.get("passed")
        expectation = (
            f"expected {fmt.figure_text(c.get('expected'), 'expectation')}; "
            f"observed {fmt.figure_text(c.get('observed'), 'expectation')}"
        )
        world = (
            f"{fixture['family']} seed {fmt.figure_text(fixture.get('seed'), 'text')}"
            if "family" in fixture
            else fmt.figure_text(fixture.get("episode"), "text")
            if "episode" in fixture
            else fmt.fixture_label(fixture)
        )
        out.append(
            {
                "run_id": run.run_id,
                "href": f"{run.run_id}/",
                "view": view_of(c),
                "kind": c.get("kind"),
                "status": c.get("status"),
                "verdict": verdict if verdict is not None else "none",
                "policy": fixture.get("policy") if isinstance(fixture.get("policy"), str) else "—",
                "world": world,
                "test": fmt.fixture_label(fixture),
                "check": "passed" if passed is True else "failed",
                "expectation": expectation,
                "points": score["points"] if isinstance(score, dict) and isinstance(score.get("points"), int) else -1,
                "fixture_sha256": c.get("fixture_sha256"),
                "bundle_sha256": _dict(c.get("engine")).get("bundle_sha256"),
                "execution_path": c.get("execution_path"),
                "duration": fmt.duration(ms),
                "duration_sort": ms if ms is not None else -1,
                "duration_path": _duration_path(run),
                # the scale's scores are figures of the other runs: verify checks them against those runs
                "scale": {
                    policy: Figures(run_roots(by_id[rid], pub), run_id=rid)
                    for policy, rid in (worlds.get(scale.world_key(c)) or {}).items()
                },
                "fig": Figures(run_roots(run, pub)),
            }
        )
    return out


def constants(all_rows) -> dict:
    """{"engine": sha, "path": text} for the columns whose value every row shares."""
    out = {}
    for key, field in (("engine", "bundle_sha256"), ("path", "execution_path")):
        values = {str(r[field]) for r in all_rows}
        if all_rows and len(values) == 1 and isinstance(all_rows[0][field], str):
            out[key] = all_rows[0][field]
    return out


def page(env, pub, run_roots) -> str:
    all_rows = rows(pub, run_roots)
    fixed = constants(all_rows)
    views = []
    for key, label, noun in VIEWS:
        view_rows = [r for r in all_rows if r["view"] == key]
        columns = list(COLUMNS[key]) + [(c, "text") for c in ("engine", "path") if c not in fixed]
        filters = [(col, sorted({str(r[col]) for r in view_rows})) for col in FILTERS[key]]
        views.append(
            {
                "key": key,
                "label": label,
                "noun": noun,
                "rows": view_rows,
                "filters": filters,
                "columns": [
                    (c, sort, glossary.REGISTER[c][0], glossary.title(glossary.REGISTER, c)) for c, sort in columns
                ],
            }
        )
    used = {c for v in views for c, *_ in v["columns"]} | set(fixed)
    terms = [(glossary.REGISTER[k][0], glossary.REGISTER[k][1]) for k in glossary.REGISTER if k in used]
    return env.get_template("register.md.j2").render(
        runs=pub.runs,
        views=views,
        fixed=fixed,
        terms=terms,
        tables=table_links(pub),
        scale_policies=scale.POLICIES,
        head_fig=Figures({"index": pub.index}),
        count=fmt.count,
        names={k: v[0] for k, v in glossary.REGISTER.items()},
        description=f"All {len(all_rows)} published runs: scripted-baseline results and grader tests, with status, "
        f"verdict, score and hashes.",
    )


# -- the Attempts register ------------------------------------------------------------------------------

OUTCOMES = {  # the outcome badge of an attempt: what its end means for its world
    "scored": "scored",
    "qualified": "qualified",
    "no-result": "counted without a result",
    "superseded": "not counted (retried)",
    "other": "not counted",
}


def _study_worlds(pub) -> dict:
    """{world: (study name, its place in the committed order)} of the worlds each study's rule read."""
    from . import studies

    out = {}
    for st in studies.studies(pub.runs_dir, pub.attempts):
        for i, w in enumerate(st["world_rows"], 1):
            out.setdefault(str(w["item_id"]), (st["name"], i))
    return out


def attempt_rows(pub, _attempt_view) -> list:
    """The Attempts register's rows: grouped by world (its tries in try order under it), worlds in order."""
    counts = counting_map(pub)
    in_study = _study_worlds(pub)
    rows = []
    for attempt in pub.attempts:
        view = _attempt_view(attempt)
        how = counts[attempt.attempt_id]
        task = _dict(attempt.content.get("task"))
        got = how["score"]
        if how["counted"]:
            outcome = "qualified" if got["qualified"] else "no-result" if got["source"] == "engine" else "scored"
            score_text = f"{got['points']}/100"
        else:
            outcome = "superseded"
            score_text = "not counted"
        study = in_study.get(how["world"])
        cost = _dict(attempt.content.get("cost"))
        view.update(
            {
                "href": f"{attempt.attempt_id}/" if attempt.transcript is not None else None,
                "world": how["world"],
                "split": str(task.get("split") or "—"),
                "agent": how["agent"],
                "study": f"{study[0]} · world {study[1]}" if study else "—",
                "study_name": study[0] if study else "none",
                "try": how["try"],
                "tries": how["tries"],
                "counted": how["counted"],
                "counted_id": how["counted_id"],
                "outcome": outcome,
                "outcome_label": OUTCOMES[outcome],
                "points": got["points"] if got else -1,
                "score_text": score_text,
                "graded_by": got["source"] if got else None,
                "micro_usd": _int(cost.get("micro_usd")),
                "cpu_ms": _int(cost.get("cpu_ms")),
                "order": (study[1] if study else 10**6, how["world"], how["try"]),
            }
        )
        rows.append(view)
    rows.sort(key=lambda r: (r["machinery"], r["agent"], r["order"], r["attempt_id"]))
    return rows


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


ATTEMPT_FILTERS = (
    ("model", "Model"),
    ("harness", "Harness"),
    ("split", "Split"),
    ("study_name", "Study"),
    ("outcome", "Outcome"),
    ("status", "End"),
)


def attempts_page(env, pub, attempt_view) -> str:
    from builders import counting
    from . import freeze  # the paid study's freeze, deviations and spend (launchers' files in runs/attempts/)

    rows = attempt_rows(pub, attempt_view)
    strip = [r for r in rows if r["counted"] and not r["machinery"]]
    filters = [(key, label, sorted({str(r[key]) for r in rows})) for key, label in ATTEMPT_FILTERS]
    worlds = len({(r["agent"], r["world"]) for r in rows})
    return env.get_template("attempts.md.j2").render(
        rows=rows,
        strip=strip,
        filters=filters,
        rule=counting.RULE,
        rule_source=counting.RULE_SOURCE,
        worlds=worlds,
        outcomes=OUTCOMES,
        description=f"{len(rows)} retained model attempts on {worlds} worlds, failed ones included; one counts "
        f"for each world.",
    ) + freeze.section(env, pub.runs_dir)
