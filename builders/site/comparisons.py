"""The Comparisons section, rendered from runs/comparisons and runs/certificates.

One page per frozen comparison -- the decision first (verdict, confidence,
estimate and bound against the margin, why an inconclusive one is), the full
report (per-arm means, the mean paired difference and its standard errors,
the correlation, n), the other rules on the same question side by side, then
the wealth (a betting rule) or the bound (a fixed-n rule) as n grows, the
per-family breakdown, the split, the evaluator and execution path, the
feasibility pilot with the worlds each rule would need, deviations and the
evidence with its hashes, and a "verify in your browser" box that reruns the
published rules (assets/fundbook/decisions.js) -- plus the calibration and
power study of the rules, the grader certificate, the scale page (cost and
time to 100,000 items) and an overview. What this build re-checked comes from
build/experiments/checks.json (FUNDBOOK_EXPERIMENTS_DIR redirects it);
without it the pages say so.

Every evidence file is hashed before a page shows anything it backs; a
mismatch is a SiteInputError naming the file. Numbers are the decision's own
decimal strings; floats appear only in the chart data. The rules each
decision ran (its rules.py, pinned in its evidence) are published beside it
as a static file for the browser's verify; this module only copies bytes the
evidence names, it imports nothing from experiments/.

This module holds the page views and renderers; the evidence is found, loaded
and hashed in comparison_evidence.py, the charts built in comparison_charts.py.
"""

import json

from . import fmt
from .comparison_charts import bound_chart, wealth_chart
from .comparison_evidence import (  # noqa: F401  (re-exported: callers and tests import these from comparisons)
    CALIBRATION_FILE,
    ROOT,
    _json,
    checks_dir,
    decided_folders,
    load,
)
from .figures import DecisionFigures
from .reading import arm_role, reading

CERTIFICATE_URI = "comparisons/grader-certificate/index.md"
SCALE_URI = "comparisons/scale/index.md"
CALIBRATION_URI = "comparisons/calibration/index.md"
BETTING = "paired_betting"
METHOD_NAMES = {
    "paired_hoeffding": "paired Hoeffding",
    "paired_empirical_bernstein": "empirical Bernstein",
    "paired_betting": "betting",
}


# -- views ----------------------------------------------------------------------------


def _scale_rows(feasibility):
    """The projections the pilot published for 1,000 to 100,000 worlds (experiments/feasibility.py)."""
    return feasibility.get("scale") or []


def modal_nano_usd(micros, feasibility) -> int:
    """Modal compute for `micros` of one container's time at the pilot's recorded prices:
    integer nano-USD, rounded up (cores and MiB as the pilot recorded them)."""
    a = feasibility["assumptions"]
    cores_milli = round(a["modal_cpu_cores_per_container"] * 1000)
    num = micros * (
        cores_milli * 1024 * a["modal_nano_usd_per_core_second"]
        + a["modal_memory_mib"] * 1000 * a["modal_nano_usd_per_gib_second"]
    )
    return -(-num // (1_000_000 * 1000 * 1024))


def _provenance_rows(sweep):
    p = sweep["provenance"]
    return [
        ("engine bundle sha256", p["engine"]["bundle_sha256"]),
        ("bundle manifest sha256", p["engine"]["manifest_sha256"]),
        ("engine version", p["engine"]["engine_version"]),
        ("result / candidate format", f"{p['grader']['result_format']} / {p['grader']['candidate_format']}"),
        ("gates", ", ".join(p["grader"]["gates"])),
        ("mutations", ", ".join(p["grader"]["mutations"])),
        (
            "metric definitions",
            f"version {p['metrics']['work_format']}: "
            + ", ".join(sorted(k for k in p["metrics"]["definitions"] if k != "gate"))
            + ", gate:<name>",
        ),
        ("metric code sha256 (experiments/work.py)", p["metrics"]["code_sha256"]),
        ("items manifest sha256", f"{p['items']['manifest_sha256']} ({p['items']['count']} items)"),
    ]


def _build_check(checks, sweep_dir, evaluator_id):
    if not checks:
        return None
    entry = (checks.get("sweeps") or {}).get(sweep_dir)
    if not entry or entry.get("evaluator_id") != evaluator_id:
        return None
    recheck = checks["recheck"]
    return {
        "reused": entry["reused"],
        "built": checks["built"],
        "seed": recheck["seed"],
        "sampled": len(recheck["per_sweep"].get(sweep_dir, {}).get("items", [])),
        "pyodide_version": recheck["pyodide_version"],
        "sources": entry["source_check"],
    }


def _sweep_dir(sweep_href):
    # runs/comparisons/heldout-baselines/sweep.json -> comparisons/heldout-baselines
    return "/".join(sweep_href.split("/")[1:-1])


def _question_key(d):
    """What makes two decisions the same question asked of the same worlds: contrast, metric, items."""
    return (json.dumps(d["arms"], sort_keys=True), d["metric"], json.dumps(d["items"], sort_keys=True))


def _stopped_at(d):
    """(n, how): where a betting rule stopped, or where a fixed-n bound first settled the margin read at
    every n (which its rule does not allow; the decision itself used all of its n)."""
    if d.get("method") == BETTING:
        seq = d["sequential"]
        return d["n"], ("stopped: " + seq["reason"]) if seq["stopped_at"] else "did not stop: every planned world used"
    first = d.get("first_settled_n")
    if first is None:
        return None, "never settled the margin"
    return first, f"first settled the margin at this n, read at every n (its rule decided at n {d['n']})"


def same_question(loaded, c) -> list:
    """The other rules on the same question and worlds, this one included, for the side-by-side table."""
    key = _question_key(c["decision"])
    rows = []
    for other in loaded["comparisons"]:
        d = other["decision"]
        if _question_key(d) != key:
            continue
        at, how = _stopped_at(d)
        rows.append(
            {
                "slug": other["slug"],
                "comparison": d["comparison"],
                "method": METHOD_NAMES.get(d.get("method"), d.get("method")),
                "n": d["n"],
                "at": at,
                "how": how,
                "verdict": d["verdict"],
                "lower": d["lower_bound"],
                "self": other is c,
                "frozen_on": d["frozen_on"],
            }
        )
    return rows


def cpu_text(micros) -> str:
    """Microseconds of CPU as read: "36.1 ms" under a second, "648.8 s" above (one unit per size)."""
    if not isinstance(micros, int) or isinstance(micros, bool):
        return "—"
    return f"{micros / 1000:,.1f} ms" if micros < 1_000_000 else f"{micros / 1_000_000:,.1f} s"


def _counted_note(pub, c):
    """The attempts a study decision counted that ended without a result, with the sensitivity
    (builders/site/sensitivity.py); [] for any other decision."""
    if pub is None or "/studies/" not in f"/{c['rel']}/":
        return []
    from . import sensitivity

    study = (pub.runs_dir / c["rel"].split("/", 1)[1]).parent
    if not (study / "status.json").is_file():
        return []
    status = _json(study / "status.json", f"{c['rel'].rsplit('/', 1)[0]}/status.json")
    spec = _json(pub.runs_dir / c["rel"].split("/", 1)[1] / "spec.json", f"{c['rel']}/spec.json")
    items_file = next((f for f in c["files"] if f["kind"] == "items"), None)
    items = []
    if items_file:
        path = pub.runs_dir / items_file["href"].split("/", 1)[1]
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return sensitivity.analyse(pub, c, status, items, spec)


def comparison_page(env, loaded, c, pub=None) -> str:
    from builders import counting

    d = c["decision"]
    sweep_file = next(f for f in c["files"] if f["kind"] == "sweep_manifest")
    check = _build_check(loaded["checks"], _sweep_dir(sweep_file["href"]), d["evaluator_id"])
    betting = d.get("method") == BETTING
    side = same_question(loaded, c)
    return env.get_template("comparison.md.j2").render(
        c=c,
        d=d,
        sweep=c["sweep"],
        feas=c["feasibility"],
        check=check,
        root="../../",
        betting=betting,
        provenance=_provenance_rows(c["sweep"]),
        chart=wealth_chart(d) if betting else bound_chart(d),
        fraction=_fraction(d),
        side=side if len(side) > 1 else [],
        method_name=METHOD_NAMES.get(d.get("method")),
        power=((c["feasibility"] or {}).get("power") or {}).get(d["comparison"]),
        method_names=METHOD_NAMES,
        evidence_href=f"{c['rel']}/evidence.json",
        read=reading(d),
        lost=_counted_note(pub, c),
        dfig=DecisionFigures(d),
        rule=counting.RULE if any(str(a).startswith("model:") for a in d.get("arms") or {}) else None,
        description=f"{d['comparison']}: {d['verdict']} ({d['confidence']} confidence), estimate "
        f"{d['estimate']['decimal']} {d['metric']}, lower bound {d['lower_bound']} against margin {d['margin']}",
    )


def _fraction(d):
    """The score estimate as a fraction of the 100-point scale (display only)."""
    if d["metric"] != "score":
        return None
    from decimal import Decimal

    return str((Decimal(d["estimate"]["decimal"]) / 100).normalize())


def certificate_page(env, loaded) -> str:
    cert = loaded["certificate"]
    doc = cert["doc"]
    check = _build_check(loaded["checks"], "certificates/grader", doc["evaluator_id"])
    arms = list(doc["per_family"][0]["arms"]) if doc["per_family"] else []
    return env.get_template("comparison_certificate.md.j2").render(
        cert=doc,
        files=cert["files"],
        arms=arms,
        check=check,
        root="../../",
        description=f"Grader certificate: {'passed' if doc['passed'] else 'FAILED'}, {doc['met']} of {doc['checked']} "
        f"expectations met on {doc['worlds']} worlds",
    )


def scale_page(env, loaded) -> str:
    feas = next((c["feasibility"] for c in loaded["comparisons"] if c["feasibility"]), None)
    return env.get_template("comparison_scale.md.j2").render(
        feas=feas,
        rows=_scale_rows(feas) if feas else [],
        description="How the time and cost of a sweep grow to 100,000 items, locally and on Modal.",
    )


def index_page(env, loaded) -> str:
    return env.get_template("comparison_index.md.j2").render(
        comparisons=loaded["comparisons"],
        cert=(loaded["certificate"] or {}).get("doc"),
        checks=loaded["checks"],
        method_names=METHOD_NAMES,
        stopped_at=_stopped_at,
        calibration=loaded.get("calibration"),
        description=f"{len(loaded['comparisons'])} frozen comparisons and the grader certificate.",
    )


def calibration_page(env, loaded) -> str:
    cal = loaded["calibration"]
    return env.get_template("comparison_calibration.md.j2").render(
        cal=cal,
        method_names=METHOD_NAMES,
        root="../../",
        description=f"The decision rules measured: {cal['sweeps']:,} simulated null sweeps per rule and shape "
        f"(false-supported counts), and the worlds each rule needs at 80 % power.",
    )


def generated_pages(env, pub) -> dict:
    env.globals.setdefault("micro_usd", fmt.micro_usd)
    env.globals.setdefault("usd_cents", fmt.usd_cents)
    env.globals.setdefault("modal_nano_usd", modal_nano_usd)
    env.globals.setdefault("cpu_text", cpu_text)
    env.globals.setdefault("arm_role", arm_role)
    loaded = load(pub.runs_dir)
    pages = {"comparisons/index.md": index_page(env, loaded), SCALE_URI: scale_page(env, loaded)}
    for c in loaded["comparisons"]:
        pages[f"comparisons/{c['slug']}/index.md"] = comparison_page(env, loaded, c, pub)
        if c["rules"] is not None:  # a static file (not .json): the bytes the evidence pins, for the browser's verify
            pages[c["rules_href"]] = c["rules"]
    if loaded.get("calibration"):
        pages[CALIBRATION_URI] = calibration_page(env, loaded)
    if loaded["certificate"]:
        pages[CERTIFICATE_URI] = certificate_page(env, loaded)
    return pages


def page_titles(pub) -> dict:
    loaded = load(pub.runs_dir)
    titles = {
        "comparisons/index.md": ("Comparisons", [f"{len(loaded['comparisons'])} frozen comparisons"]),
        SCALE_URI: ("Sweeps at scale", ["to 100,000 items", "local pool and Modal"]),
    }
    for c in loaded["comparisons"]:
        d = c["decision"]
        titles[f"comparisons/{c['slug']}/index.md"] = (
            d["comparison"],
            [
                d["verdict"],
                f"{d['confidence']} confidence",
                f"estimate {d['estimate']['decimal']}",
                f"n {d['n']} ({METHOD_NAMES.get(d.get('method'), d.get('method'))})",
            ],
        )
    if loaded.get("calibration"):
        cal = loaded["calibration"]
        titles[CALIBRATION_URI] = (
            "Calibration and power",
            [f"{cal['sweeps']:,} null sweeps per rule and shape", "worlds at 80 % power"],
        )
    if loaded["certificate"]:
        doc = loaded["certificate"]["doc"]
        titles[CERTIFICATE_URI] = (
            "Grader certificate",
            [
                "passed" if doc["passed"] else "FAILED",
                f"{doc['met']}/{doc['checked']} expectations",
                f"{doc['worlds']} worlds",
            ],
        )
    return titles
