"""The Studies page: each pre-registered study under runs/studies/, its questions, rule and state.

Read from the study's committed files only (study.json, each comparison's spec.json and freeze.json, and
status.json, which `python -m experiments.study status` writes and `make verify` re-derives from the sweep's
journalled worlds and the recorded attempts). A study whose rule has not stopped is shown as running, with
the wealth so far: a betting rule is valid at every n, so the interim figures are not a peek that spends
alpha, and no verdict is drawn before the rule draws one.
"""

from pathlib import Path

from builders.preregistration import freeze_commit

from . import fmt
from .figures import DecisionFigures, Figures
from .records import SiteInputError, load_json

STATUS_SCHEMA = "fundbook.study-status/1"


def _decision(doc, where) -> dict:
    """What the page states of a drawn decision: its verdict, n, per-arm means, the mean difference and its
    confidence-sequence bounds (texts as published; `make verify` recomputes them from the evidence)."""
    report = doc.get("report") if isinstance(doc, dict) else None
    if not isinstance(report, dict) or not isinstance(report.get("per_arm_mean"), dict):
        raise SiteInputError(f"{where}: expected a decision with a report of per-arm means")
    return {
        "verdict": doc.get("verdict"),
        "n": doc.get("n"),
        "why": doc.get("inconclusive_because"),
        "per_arm_mean": [(arm, _two(v)) for arm, v in sorted(report["per_arm_mean"].items())],
        "mean_difference": _two(report.get("mean_difference")),
        "se": _two(report.get("se")),
        "lower": _two(doc.get("lower_bound"), "floor"),
        "upper": _two(doc.get("upper_bound"), "ceiling"),
        "direction": _reading(doc)["direction"],
        "informative": "upper" if doc.get("verdict") == "not supported" else "lower",
    }


def _reading(doc):
    from .reading import reading

    return reading(doc)


def _two(text, rounding="half-even") -> str:
    """A decision's decimal text at the comparisons pages' 2 decimals, a bound rounded outwards."""
    return fmt.decimal(text, 2, rounding)


def _study(root: Path, name: str, attempts) -> dict:
    where = f"runs/studies/{name}"
    study = load_json(root / name / "study.json", f"{where}/study.json")
    status = load_json(root / name / "status.json", f"{where}/status.json")
    if not isinstance(status, dict) or status.get("schema") != STATUS_SCHEMA:
        raise SiteInputError(f"{where}/status.json: expected schema {STATUS_SCHEMA}")
    questions = []
    for comp in study.get("comparisons") or []:
        if not isinstance(comp, str) or not fmt.SAFE_ID.match(comp):
            raise SiteInputError(f"{where}/study.json: comparisons: expected folder names, got {comp!r}")
        spec = load_json(root / name / comp / "spec.json", f"{where}/{comp}/spec.json")
        freeze = load_json(root / name / comp / "freeze.json", f"{where}/{comp}/freeze.json")
        state = (status.get("comparisons") or {}).get(comp) or {}
        decision = None
        if (root / name / comp / "decision.json").is_file():  # drawn once the rule stopped (`study decide`)
            decision = _decision(
                load_json(root / name / comp / "decision.json", f"{where}/{comp}/decision.json"),
                f"{where}/{comp}/decision.json",
            )
        decision_doc = (
            load_json(root / name / comp / "decision.json", f"{where}/{comp}/decision.json")
            if decision is not None
            else None
        )
        questions.append(
            {
                "dfig": DecisionFigures(decision_doc, of=comp) if decision_doc else None,
                "name": comp,
                "question": spec.get("question"),
                "estimand": spec.get("estimand"),
                "method": spec.get("method") or {},
                "alpha": spec.get("alpha"),
                "max_n": (spec.get("stopping") or {}).get("max_n"),
                "frozen_on": freeze.get("frozen_on"),
                "spec_sha256": freeze.get("spec_sha256"),
                "state": state,
                "decision": decision,
                "freeze_commit": freeze_commit(str(root / name / comp)),
                "path": f"{where}/{comp}",
            }
        )
    by_world = {}
    for a in attempts:  # a model attempt on a world of this study links from its row
        task = a.content.get("task") if isinstance(a.content.get("task"), dict) else {}
        if task.get("split") == "heldout":
            end = a.content.get("termination") if isinstance(a.content.get("termination"), dict) else {}
            by_world.setdefault(f"{task.get('family')}/seed-{task.get('seed')}", []).append(
                (a.attempt_id, str(end.get("status") or "unknown"))
            )
    worlds = []
    arms = list(study.get("arms") or [])
    for w in status.get("per_world") or []:
        scores = w.get("score") or {}
        worlds.append(
            {
                "item_id": w.get("item_id"),
                "family": w.get("family"),
                "listed": list(w.get("tries") or []),
                "scores": [fmt.figure_text(v, "points") if v is not None else "none" for v in scores.values()],
                "attempts": sorted(by_world.get(w.get("item_id"), [])),
            }
        )
    published = {a.attempt_id: a.content for a in attempts}
    roots = {
        "status": status,
        "study": study,
        "attempts": {aid: published.get(aid) for w in worlds for aid in w["listed"]},
        "spec": {q["name"]: load_json(root / name / q["name"] / "spec.json", "") for q in questions},
        "freeze": {q["name"]: load_json(root / name / q["name"] / "freeze.json", "") for q in questions},
    }
    return {
        "fig": Figures(roots, of=name),
        "url": f"../{where}/",
        "name": name,
        "state": status.get("state"),
        "worlds": status.get("worlds"),
        "planned_max": status.get("planned_max"),
        "questions": questions,
        "world_rows": worlds,
        "arm_names": list((status.get("per_world") or [{}])[0].get("score", {}).keys()) or arms,
        "tiers": _tiers(status.get("tiers"), where),
    }


def _usd(value):
    return fmt.usd(value) if isinstance(value, int) and not isinstance(value, bool) else "unknown"


def _tiers(doc, where):
    """The tier plan tier by tier as status.json states it (experiments/study.py tier_report): what ran, what was
    cut, spend against plan; None for a study without one."""
    if doc is None:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("tiers"), list):
        raise SiteInputError(f"{where}/status.json: tiers: expected {{tiers: [...]}}")
    rows = []
    for t in doc["tiers"]:
        if not isinstance(t, dict):
            raise SiteInputError(f"{where}/status.json: tiers: expected objects")

        def seeds(group):
            return (
                "; ".join(f"{cell} {', '.join(str(s) for s in found)}" for cell, found in sorted((group or {}).items()))
                or "none"
            )

        rows.append(
            {
                "name": t.get("name"),
                "budget": _usd(t.get("budget_micro_usd")),
                "spent": _usd(t.get("spent_micro_usd")),
                "cumulative": (
                    f"{_usd(t.get('cumulative_spent'))} of {_usd(t.get('cumulative_budget'))}"
                    if t.get("cumulative_budget") is not None
                    else "not reconciled yet"
                ),
                "ran": seeds(t.get("ran")),
                "cut": seeds(t.get("cut")),
                "action": t.get("action") or "none",
            }
        )
    return {
        "rows": rows,
        "overrun_bps": doc.get("overrun_bps"),
        "sd_table": sorted(doc["sd_table"].items()) if isinstance(doc.get("sd_table"), dict) else [],
    }


def studies(runs_dir: Path, attempts) -> list:
    root = runs_dir / "studies"
    if not root.is_dir():
        return []
    return [
        _study(root, p.name, attempts)
        for p in sorted(root.iterdir())
        if p.is_dir() and fmt.SAFE_ID.match(p.name) and (p / "study.json").exists() and not _waiting(p)
    ]


def _waiting(folder: Path) -> bool:
    """A study frozen and committed but not started: no status.json and no journal yet (its held-out list is
    still secret). It is listed apart, by its frozen questions (`preregistered`), with no figure to verify."""
    return not (folder / "status.json").exists() and not (folder / "sweep" / "journal.jsonl").exists()


def _object(path: Path, label: str) -> dict:
    doc = load_json(path, label)
    if not isinstance(doc, dict):
        raise SiteInputError(f"{label}: expected a JSON object")
    return doc


def _deviations(path: Path, label: str) -> list:
    """[(date, field, original, effective, reason)] of a comparison's deviations.json (none when absent)."""
    if not path.exists():
        return []
    entries = _object(path, label).get("deviations")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise SiteInputError(f"{label}: deviations: expected a list of objects")
    keys = ("date", "field", "original", "effective", "reason")
    return [tuple(str(e.get(k) or "") for k in keys) for e in entries]


def preregistered(runs_dir: Path) -> list:
    """[{name, questions: [(comparison, question, frozen_on)], deviations: [(date, field, original, effective,
    reason, [comparison])]}] of the studies frozen but not yet started (a change recorded for several comparisons
    is listed once, with the comparisons it was recorded for)."""
    root = runs_dir / "studies"
    out = []
    for p in sorted(root.iterdir()) if root.is_dir() else []:
        if not (p.is_dir() and fmt.SAFE_ID.match(p.name) and (p / "study.json").exists() and _waiting(p)):
            continue
        where = f"runs/studies/{p.name}"
        study = _object(p / "study.json", f"{where}/study.json")
        questions, changes = [], {}
        comparisons = study.get("comparisons") or []
        if not isinstance(comparisons, list):
            raise SiteInputError(f"{where}/study.json: comparisons: expected a list of comparison folder names")
        for comp in comparisons:
            if not isinstance(comp, str) or not fmt.SAFE_ID.match(comp):
                raise SiteInputError(f"{where}/study.json: comparisons: expected comparison folder names")
            spec = _object(p / comp / "spec.json", f"{where}/{comp}/spec.json")
            freeze = _object(p / comp / "freeze.json", f"{where}/{comp}/freeze.json")
            questions.append((comp, str(spec.get("question") or ""), str(freeze.get("frozen_on") or "")))
            for entry in _deviations(p / comp / "deviations.json", f"{where}/{comp}/deviations.json"):
                changes.setdefault(entry, []).append(comp)
        out.append({"name": p.name, "questions": questions, "deviations": [(*e, c) for e, c in changes.items()]})
    return out


def _short_arm(arm) -> str:
    """A column head that fits: "model", "do-nothing" (the full arm name is its title)."""
    arm = str(arm)
    return "model" if arm.startswith("model:") else arm.split(":", 1)[-1]


def counted(pub, found) -> None:
    """Each world row's counted attempt by the one rule (builders/counting.py), its tries, and a check that the
    study's score for the model is the counted attempt's: one number everywhere, or the build stops."""
    from builders import counting
    from .counted import counting_map

    counts = counting_map(pub)
    for st in found:
        model_col = next((i for i, a in enumerate(st["arm_names"]) if str(a).startswith("model:")), None)
        for w in st["world_rows"]:
            w["tries"] = sorted(
                ((aid, counts[aid]["try"], counts[aid]["counted"], end) for aid, end in w["attempts"] if aid in counts),
                key=lambda t: (t[1], t[0]),
            )
            # the tries as the study lists them (status.json), the counted one by the rule; the page marks each
            bold = {aid for aid, _, is_counted, _ in w["tries"] if is_counted}
            w["listed"] = [(j, aid, aid in bold) for j, aid in enumerate(w["listed"])]
            last = next((counts[aid] for aid, _, is_counted, _ in w["tries"] if is_counted), None)
            w["counted_id"] = last["counted_id"] if last else None
            if last and last["agent"].startswith("model:") and model_col is not None:
                stated = w["scores"][model_col]
                if stated != str(last["score"]["points"]):
                    raise SiteInputError(
                        f"runs/studies/{st['name']}/status.json: world {w['item_id']}: the study scores the model "
                        f"{stated}, its counted attempt {last['counted_id']} scores {last['score']['points']} by the "
                        f"rule of {counting.RULE_SOURCE}: the pages would disagree"
                    )
        st["arm_heads"] = [(_short_arm(a), a) for a in st["arm_names"]]
        st["rule"] = counting.RULE


def page(env, pub) -> str:
    found = studies(pub.runs_dir, pub.attempts)
    counted(pub, found)
    for st in found:
        st["erratum"] = pub.study_erratum(st["name"])
    return env.get_template("studies.md.j2").render(
        studies=found,
        arm_head=_short_arm,
        waiting=preregistered(pub.runs_dir),
        description=f"{len(found)} pre-registered studies of real agents, with their state.",
    )
