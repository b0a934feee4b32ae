"""The home page's answer: what exists (the status line) and one leaderboard
row per agent.

An agent is whoever wrote the candidates: a model (its attempt records,
grouped by provider and model id), a practitioner cohort (the desk's imported
sessions in runs/practitioners/, grouped by cohort) or a scripted baseline
(the baseline runs, grouped by policy). The mock sampler is none of these: its
attempts test the launcher, so they are a machinery row drawn apart, never
ranked and never charted.

Each row has one observation per attempt: qualified or not, and its score in
points out of 100. An attempt that ended without a result (interrupted,
MALFORMED, a session abandoned) stays in as not qualified and 0 points, the
rule the experiments use for failures. Rates and means carry 95 % intervals
(intervals.py); fewer than PRELIMINARY_BELOW worlds is labelled preliminary.
"""

import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from urllib.parse import quote

from . import fmt, intervals

PRELIMINARY_BELOW = 30
POLICY_NOTES = {
    "reference": "the engine's own plan: the top of the scale, 100 by construction",
    "shortest-cheapest": "funds each position from the shortest, cheapest quote, without looking ahead",
    "do-nothing": "takes no action and reports its empty book truthfully: the bottom of the scale",
}
KIND_LABELS = {"model": "model", "practitioners": "practitioner cohort", "baseline": "scripted baseline",
               "machinery": "machinery test"}


@dataclass
class Agent:
    key: str                 # "model:llama-cpp:qwen2.5-0.5b", "baseline:do-nothing", ...
    kind: str                # model | practitioners | baseline | machinery
    name: str
    note: str
    observations: list = field(default_factory=list)  # {world, qualified, points, date, ended}
    cost: dict = field(default_factory=dict)
    links: list = field(default_factory=list)         # [(text, href relative to the site root)]
    arms: tuple = ()         # comparison arm names that mean this agent

    def row(self) -> dict:
        obs = self.observations
        worlds = sorted({o["world"] for o in obs})
        rate = intervals.wilson(sum(1 for o in obs if o["qualified"]), len(obs))
        mean = intervals.t_mean([o["points"] for o in obs])
        dates = [o["date"] for o in obs if o["date"]]
        mean_exact = Fraction(sum(o["points"] for o in obs), len(obs)) if obs else Fraction(0)
        return {"order": -mean_exact, "key": self.key, "kind": self.kind, "kind_label": KIND_LABELS[self.kind], "name": self.name,
                "note": self.note, "n": len(obs), "worlds": len(worlds), "rate": rate, "mean": mean,
                "ended_without_result": sum(1 for o in obs if not o["ended"]),
                "preliminary": self.kind in ("model", "practitioners") and len(worlds) < PRELIMINARY_BELOW,
                "date": max(dates) if dates else None, "cost": cost_text(self.kind, self.cost),
                "links": list(self.links)}


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _date(record, *keys) -> str | None:
    volatile = _dict(record.get("volatile"))
    for key in keys:
        value = volatile.get(key)
        if isinstance(value, str) and len(value) >= 10 and value[:4].isdigit():
            return value[:10]
    return None


def _outcome(result) -> tuple:
    """(qualified, points, ended with a result) of an engine result, or of none."""
    result = _dict(result)
    score = _dict(result.get("score"))
    ended = isinstance(result.get("status"), str)
    return (result.get("status") == "SCORED" and result.get("verdict") == "QUALIFIED",
            _int(score.get("points")), ended)


def is_real_model(content) -> bool:
    """A model attempt by anything but the mock sampler."""
    return _dict(content.get("model")).get("provider") not in (None, "mock")


def cost_text(kind, cost) -> str:
    if kind == "baseline":
        return f"$0 (scripted, no model calls; {fmt.duration(cost.get('engine_ms'))} of engine time)"
    if kind == "practitioners":
        return f"$0 (no model calls; {fmt.count(round(cost.get('clock_ms', 0) / 60_000))} min at the desk)"
    parts = [fmt.usd(cost.get("micro_usd", 0))]
    if cost.get("local"):
        parts[0] += " (local)"
    if cost.get("unresolved_micro_usd"):
        parts.append(f"{fmt.usd(cost['unresolved_micro_usd'])} unresolved")
    calls = cost.get("calls", 0)
    if cost.get("cpu_ms"):
        per = fmt.per_call(cost["cpu_ms"], calls)
        parts.append(f"CPU {fmt.duration(cost['cpu_ms'])}" + (f" ({fmt.duration(per)} per call)" if per is not None else ""))
    tokens = f"{fmt.count(calls)} calls, {fmt.count(cost.get('tokens_in', 0))} tokens in, " \
             f"{fmt.count(cost.get('tokens_out', 0))} out"
    if calls:
        tokens += (f" ({fmt.count(fmt.per_call(cost.get('tokens_in', 0), calls))} and "
                   f"{fmt.count(fmt.per_call(cost.get('tokens_out', 0), calls))} per call)")
    parts.append(tokens)
    return " · ".join(parts)


def _model_agents(pub) -> tuple:
    """(real model agents, machinery agents), one per provider and model id."""
    groups = {}
    for attempt in pub.attempts:
        c = attempt.content
        model = _dict(c.get("model"))
        provider, model_id = str(model.get("provider", "?")), str(model.get("id", "?"))
        machinery = not is_real_model(c)
        key = f"{'machinery' if machinery else 'model'}:{provider}:{model_id}"
        if key not in groups:
            note = ("the deterministic mock sampler replays the reference plan: it tests the launcher, the ledger "
                    "and the evaluator, and measures nothing about a model" if machinery else
                    "an open-weights model run on the host (llama.cpp)" if provider == "llama-cpp" else
                    f"a model served by {provider}")
            groups[key] = Agent(key=key, kind="machinery" if machinery else "model", name=f"{provider}:{model_id}",
                                note=note, cost={"local": provider == "llama-cpp"},
                                arms=(f"model:{model_id}", f"model:{provider}:{model_id}", f"{provider}:{model_id}"))
        agent = groups[key]
        qualified, points, ended = _outcome(c.get("result"))
        task = _dict(c.get("task"))
        agent.observations.append({"world": str(task.get("instance_id") or task.get("fixture_sha256") or attempt.attempt_id),
                                   "qualified": qualified, "points": points, "ended": ended,
                                   "date": _date(attempt.record, "started", "finished")})
        cost = _dict(c.get("cost"))
        for k in ("micro_usd", "unresolved_micro_usd", "calls", "tokens_in", "tokens_out", "cpu_ms"):
            agent.cost[k] = agent.cost.get(k, 0) + _int(cost.get(k))
        if attempt.transcript is not None:
            agent.links.append((f"transcript {attempt.attempt_id}", f"attempts/{attempt.attempt_id}/"))
    for agent in groups.values():
        if len(agent.links) > 3:  # many attempts: the Attempts page lists every transcript
            agent.links = [(f"{len(agent.links)} transcripts", "attempts/")]
        agent.links.insert(0, ("attempts", "attempts/"))
    agents = sorted(groups.values(), key=lambda a: a.key)
    return [a for a in agents if a.kind == "model"], [a for a in agents if a.kind == "machinery"]


def _practitioner_agents(pub) -> list:
    groups = {}
    for session in pub.practitioners:
        c = session.content
        cohort = str(c.get("cohort") or "unnamed")
        agent = groups.setdefault(cohort, Agent(
            key=f"practitioners:{cohort}", kind="practitioners", name=f"cohort {cohort}",
            note="people playing the practice desk, their sessions imported with consent",
            cost={"clock_ms": 0}, arms=(f"practitioners:{cohort}", f"practitioner:{cohort}")))
        qualified, points, ended = _outcome(c.get("result"))
        task = _dict(c.get("task"))
        agent.observations.append({"world": str(task.get("instance_id") or task.get("fixture_sha256") or session.session_id),
                                   "qualified": qualified, "points": points, "ended": ended,
                                   "date": _date(session.record, "finished", "imported", "started")})
        clock = _dict(c.get("clock")).get("per_checkpoint_ms")
        agent.cost["clock_ms"] += sum(_int(ms) for ms in clock) if isinstance(clock, list) else 0
        # the page builders/desk/practitioner_page.py makes for a record with its receipts and submission
        # (its verify box included); otherwise the record itself
        folder = pub.runs_dir / "practitioners" / session.session_id
        paged = all((folder / name).is_file() for name in ("record.json", "receipts.json", "submission.json"))
        agent.links.append((f"session {c.get('participant') or session.session_id}",
                            f"practitioners/{session.session_id}/" if paged else f"{session.folder}/record.json"))
    for agent in groups.values():
        if len(agent.links) > 3:
            agent.links = agent.links[:3] + [(f"{len(agent.links) - 3} more in runs/practitioners/", None)]
    return [groups[k] for k in sorted(groups)]


def _baseline_agents(pub) -> list:
    groups = {}
    for run in pub.runs:
        c = run.content
        if c.get("kind") != "baseline":
            continue
        policy = str(_dict(c.get("fixture")).get("policy") or "unnamed")
        agent = groups.setdefault(policy, Agent(
            key=f"baseline:{policy}", kind="baseline", name=policy, note=POLICY_NOTES.get(policy, "a scripted policy"),
            cost={"engine_ms": 0}, links=[("runs", f"runs/?policy={quote(policy, safe='')}")],
            arms=(f"baseline:{policy}",)))
        qualified, points, ended = _outcome({"status": c.get("status"), "verdict": c.get("verdict"),
                                             "score": c.get("score")})
        agent.observations.append({"world": str(c.get("instance_id") or c.get("fixture_sha256")),
                                   "qualified": qualified, "points": points, "ended": ended,
                                   "date": _date(run.record, "finished")})
        agent.cost["engine_ms"] += run.duration_ms or 0
    # the scale's two ends are listed last, the top first
    order = {"reference": 1, "do-nothing": 2}
    return [groups[k] for k in sorted(groups, key=lambda p: (order.get(p, 0), p))]


MODEL_ARM = re.compile(r"(model:.+):[0-9a-f]{12}")  # a model arm's name: its model id and configuration hash


def comparison_arms(runs_dir) -> dict:
    """{arm name: [(comparison slug, the other arms)]} from every drawn decision (runs/comparisons/*/ and the
    studies' comparisons; only the arm names are read). A model arm (model:<id>:<configuration hash>) is also
    listed under model:<id>, the model's row on the register."""
    from .comparisons import decided_folders
    out = {}
    for folder, _ in decided_folders(runs_dir):
        try:
            decision = json.loads((folder / "decision.json").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        arms = decision.get("arms") if isinstance(decision, dict) else None
        names = [str(a) for a in arms] if isinstance(arms, dict) else []
        for arm in names:
            if fmt.SAFE_ID.match(folder.name):
                entry = (folder.name, [a for a in names if a != arm])
                out.setdefault(arm, []).append(entry)
                model = MODEL_ARM.fullmatch(arm)
                if model:
                    out.setdefault(model.group(1), []).append(entry)
    return out


def board(pub) -> dict:
    """{"groups": [(kind label, [rows])], "machinery": [rows], "status": {...}} for the home page."""
    models, machinery = _model_agents(pub)
    practitioners = _practitioner_agents(pub)
    baselines = _baseline_agents(pub)
    arms = comparison_arms(pub.runs_dir)
    for agent in models + practitioners + baselines + machinery:
        found = sorted({(slug, tuple(others)) for arm in agent.arms for slug, others in arms.get(arm, [])})
        agent.links += [("vs " + ", ".join(o.split(":", 1)[-1] for o in others) if others else f"comparison {slug}",
                         f"comparisons/{slug}/") for slug, others in found]
    groups = [("Models", sorted((a.row() for a in models), key=lambda r: (r["order"], r["key"]))),
              ("Practitioners", [a.row() for a in practitioners]),
              ("Scripted baselines", [a.row() for a in baselines])]
    return {"groups": groups, "machinery": [a.row() for a in machinery], "status": status(pub, models)}


def status(pub, models) -> dict:
    """What exists, dated by the newest record."""
    dates = [_date(r.record, "finished") for r in pub.runs] + [_date(a.record, "started") for a in pub.attempts]
    dates += [_date(s.record, "finished", "imported", "started") for s in pub.practitioners]
    dates = [d for d in dates if d]
    with_result = [o for a in models for o in a.observations if o["ended"]]
    grader = [r for r in pub.runs if r.content.get("expected") is not None]
    return {"date": max(dates) if dates else None, "model_results": len(with_result),
            "models_with_results": sorted(a.name for a in models if any(o["ended"] for o in a.observations)),
            "model_attempts": sum(len(a.observations) for a in models),
            "local_attempts": sum(len(a.observations) for a in models if a.cost.get("local")),
            "baseline_runs": sum(1 for r in pub.runs if r.content.get("kind") == "baseline"),
            "grader_tests": len(grader), "grader_passed": sum(1 for r in grader if r.content.get("passed") is True),
            "machinery_attempts": sum(1 for a in pub.attempts if not is_real_model(a.content)),
            "practitioner_sessions": len(pub.practitioners), "studies": _studies(pub)}


def _studies(pub) -> list:
    """Each pre-registered study's state, as its committed status.json states it (builders/site/studies.py)."""
    from . import studies
    out = []
    for st in studies.studies(pub.runs_dir, pub.attempts):
        out.append({"name": st["name"], "state": st["state"], "worlds": st["worlds"],
                    "planned_max": st["planned_max"],
                    "questions": [(q["name"], (q["state"] or {}).get("verdict")) for q in st["questions"]]})
    return out
