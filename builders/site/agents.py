"""Who is on the board: the agents and their observations, one per world.

An agent is whoever wrote the candidates: a model (its attempt records, grouped by provider, model id and
harness; the paths to one set of weights grouped under one heading, ranking.py), a practitioner cohort (the
desk's imported sessions in runs/practitioners/, grouped by cohort) or a scripted baseline (the baseline runs,
grouped by policy). leaderboard.py ranks them and writes the board's files.
"""

import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from urllib.parse import quote


from . import fmt, intervals, weights
from .records import SiteInputError
from .counted import (
    attempt_score,
    counted_attempts,
    inspect_usage,
    is_inspect,
    is_real_model,
    model_key,
    policy_points,
    started_of,
)

PRELIMINARY_BELOW = 30
POLICY_NOTES = {
    "reference": "the engine's own plan: the top of the scale, 100 by construction",
    "shortest-cheapest": "funds each position from the shortest, cheapest quote, without looking ahead",
    "do-nothing": "takes no action and reports its empty book truthfully: the bottom of the scale",
}
SIDE_POLICIES = ("do-nothing", "shortest-cheapest", "reference")  # graded on a model's own worlds, beside its row
HARNESSES = {None: "fundbook worker", "inspect": "Inspect"}
KIND_LABELS = {
    "model": "model",
    "practitioners": "practitioner cohort",
    "baseline": "scripted baseline",
    "machinery": "machinery test",
}


@dataclass
class Agent:
    key: str  # "model:llama-cpp:qwen2.5-0.5b", "baseline:do-nothing", ...
    kind: str  # model | practitioners | baseline | machinery
    name: str
    note: str
    observations: list = field(default_factory=list)  # {world, qualified, points, date, ended}
    cost: dict = field(default_factory=dict)
    links: list = field(default_factory=list)  # [(text, href relative to the site root)]
    arms: tuple = ()  # comparison arm names that mean this agent
    attempts: int = 0  # every attempt of the agent, counted or not
    provider: str = ""
    harness: str = ""
    same_worlds: list = field(default_factory=list)  # [(label, mean dict)] on the model's worlds
    weights: str = ""  # the weights a model row's attempts ran (weights.py), its basis, the model id
    weights_basis: str = ""
    model_id: str = ""
    attempt_ids: list = field(default_factory=list)  # every attempt of a model or machinery row, counted or not

    def row(self) -> dict:
        obs = self.observations
        worlds = sorted({o["world"] for o in obs})
        rate = intervals.wilson(sum(1 for o in obs if o["qualified"]), len(obs))
        mean = intervals.t_mean([o["points"] for o in obs])
        dates = [o["date"] for o in obs if o["date"]]
        mean_exact = Fraction(sum(o["points"] for o in obs), len(obs)) if obs else Fraction(0)
        return {
            "order": -mean_exact,
            "key": self.key,
            "kind": self.kind,
            "kind_label": KIND_LABELS[self.kind],
            "name": self.name,
            "note": self.note,
            "n": len(obs),
            "worlds": len(worlds),
            "rate": rate,
            "mean": mean,
            "ended_without_result": sum(1 for o in obs if not o["ended"]),
            "attempts": self.attempts or len(obs),
            "provider": self.provider,
            "harness": self.harness,
            "counted": [
                dict(
                    {
                        "world": o["world"],
                        "attempt_id": o.get("attempt_id"),
                        "score": o["points"],
                        "qualified": o["qualified"],
                        "graded_by": o.get("source", "record"),
                    },
                    **({"started": o.get("started")} if "started" in o else {}),
                )
                for o in obs
            ],
            "weights": self.weights or None,
            "weights_basis": self.weights_basis or None,
            "model_id": self.model_id or None,
            "attempt_ids": list(self.attempt_ids),
            "same_worlds": list(self.same_worlds),
            "preliminary": self.kind in ("model", "practitioners") and len(worlds) < PRELIMINARY_BELOW,
            "date": max(dates) if dates else None,
            "cost": cost_text(self.kind, self.cost),
            "links": list(self.links),
        }


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


def _started_date(attempt) -> str | None:
    """An attempt's start date (counted.started_of: an Inspect attempt's eval creation time), as _date reads one."""
    value = started_of(attempt)
    return value[:10] if isinstance(value, str) and len(value) >= 10 and value[:4].isdigit() else None


def _outcome(result) -> tuple:
    """(qualified, points, ended with a result) of an engine result, or of none."""
    result = _dict(result)
    score = _dict(result.get("score"))
    ended = isinstance(result.get("status"), str)
    return (result.get("status") == "SCORED" and result.get("verdict") == "QUALIFIED", _int(score.get("points")), ended)


def cost_text(kind, cost) -> str:
    if kind == "baseline":
        return f"$0 (scripted, no model calls; {fmt.duration(cost.get('engine_ms'))} of engine time)"
    if kind == "practitioners":
        return f"$0 (no model calls; {fmt.count(round(cost.get('clock_ms', 0) / 60_000))} min at the desk)"
    if cost.get("inspect"):
        return (
            f"outside fundbook's ledger (Inspect made the calls) · Inspect logged {fmt.count(cost.get('tokens_in', 0))} "
            f"tokens in, {fmt.count(cost.get('tokens_out', 0))} out"
        )
    parts = [fmt.usd(cost.get("micro_usd", 0))]
    if cost.get("local"):
        parts[0] += " (local)"
    if cost.get("unresolved_micro_usd"):
        parts.append(f"{fmt.usd(cost['unresolved_micro_usd'])} unresolved")
    calls = cost.get("calls", 0)
    if cost.get("cpu_ms"):
        per = fmt.per_call(cost["cpu_ms"], calls)
        parts.append(
            f"CPU {fmt.duration(cost['cpu_ms'])}" + (f" ({fmt.duration(per)} per call)" if per is not None else "")
        )
    tokens = (
        f"{fmt.count(calls)} calls, {fmt.count(cost.get('tokens_in', 0))} tokens in, "
        f"{fmt.count(cost.get('tokens_out', 0))} out"
    )
    if calls:
        tokens += (
            f" ({fmt.count(fmt.per_call(cost.get('tokens_in', 0), calls))} and "
            f"{fmt.count(fmt.per_call(cost.get('tokens_out', 0), calls))} per call)"
        )
    parts.append(tokens)
    return " · ".join(parts)


def harness_of(content) -> str:
    """The harness that ran an attempt: Inspect-imported records say `harness: "inspect"`; the launcher's
    worker records carry no harness field (the fundbook worker)."""
    value = content.get("harness")
    return HARNESSES.get(value, str(value)) if value is None or isinstance(value, str) else str(value)


ISO_TIME = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$"
)


def order_start(value):
    """An attempt's start as the bands' order reads it: its recorded ISO time, or None for anything else
    (board.js `orderStart` alike)."""
    return value if isinstance(value, str) and ISO_TIME.fullmatch(value) else None


def _model_agents(pub) -> tuple:
    """(real model agents, machinery agents), one per provider, model id and harness; one observation per
    world, the attempt the rule counts."""
    groups = {}
    for attempt in pub.attempts:
        c = attempt.content
        model = _dict(c.get("model"))
        provider, model_id = str(model.get("provider", "?")), str(model.get("id", "?"))
        machinery = not is_real_model(c)
        key = model_key(c)
        ident = weights.identity(c) if not machinery else {"weights": "", "basis": ""}
        if key in groups and groups[key].weights != ident["weights"]:
            raise SiteInputError(
                f"runs/attempts/{attempt.attempt_id}/record.json: model {key.split(':', 1)[1]} ran "
                f"weights {ident['weights']}, its other attempts {groups[key].weights}: one model id, "
                f"two sets of weights"
            )
        if key not in groups:
            note = (
                "the deterministic mock sampler replays the reference plan: it tests the launcher, the ledger "
                "and the evaluator, and measures nothing about a model"
                if machinery
                else f"run in Inspect AI through its {provider} provider; each log imported and every engine call "
                f"re-executed by fundbook"
                if is_inspect(c)
                else "an open-weights model run on the host (llama.cpp)"
                if provider == "llama-cpp"
                else f"a model served by {provider}"
            )
            groups[key] = Agent(
                key=key,
                kind="machinery" if machinery else "model",
                name=f"{provider}:{model_id}",
                note=note,
                cost={"local": provider == "llama-cpp"},
                provider=provider,
                harness=harness_of(c),
                weights=ident["weights"],
                weights_basis=ident["basis"],
                model_id=model_id,
                arms=(f"model:{model_id}", f"model:{provider}:{model_id}", f"{provider}:{model_id}"),
            )
        agent = groups[key]
        agent.attempts += 1
        agent.attempt_ids.append(attempt.attempt_id)
        cost = _dict(c.get("cost"))
        if is_inspect(c):  # no ledger: the tokens Inspect logged, as provenance
            agent.cost["inspect"] = True
            cost = inspect_usage(c)
        for k in ("micro_usd", "unresolved_micro_usd", "calls", "tokens_in", "tokens_out", "cpu_ms"):
            agent.cost[k] = agent.cost.get(k, 0) + _int(cost.get(k))
        if attempt.transcript is not None:
            agent.links.append((f"transcript {attempt.attempt_id}", f"attempts/{attempt.attempt_id}/"))
    for (key, world), (attempt, _) in counted_attempts(pub.attempts, lambda a: model_key(a.content)).items():
        got = attempt_score(attempt)
        groups[key].observations.append(
            {
                "world": world,
                "qualified": got["qualified"],
                "points": got["points"],
                "ended": got["source"] == "record",
                "source": got["source"],
                "attempt_id": attempt.attempt_id,
                "task": _dict(attempt.content.get("task")),
                "date": _started_date(attempt),
                "started": order_start(started_of(attempt)),
            }
        )
    for agent in groups.values():
        # in the order the counted attempts were started (then by world): the order the bands' betting reads them
        agent.observations.sort(key=lambda o: (o["started"] or "", o["world"]))
        if len(agent.links) > 3:  # many attempts: the Attempts page lists every transcript
            agent.links = [(f"{len(agent.links)} transcripts", "attempts/")]
        agent.links.insert(0, ("attempts", "attempts/"))
        if agent.kind == "model":
            agent.same_worlds = _same_worlds(agent)
    agents = sorted(groups.values(), key=lambda a: a.key)
    return [a for a in agents if a.kind == "model"], [a for a in agents if a.kind == "machinery"]


def _same_worlds(agent) -> list:
    """[{world, attempt_id, model, do-nothing, shortest-cheapest}] on the model's counted worlds."""
    out = []
    for o in sorted(agent.observations, key=lambda o: o["world"]):
        row = {"world": o["world"], "attempt_id": o["attempt_id"], "model": o["points"]}
        for policy in SIDE_POLICIES:
            row[policy] = policy_points(o["task"], policy)
        out.append(row)
    return out


def side_by_side(row) -> list:
    """[(label, mean dict)]: the model and each side policy's mean over the same worlds (those the engine could
    grade for every policy)."""
    rows = [r for r in row["same_worlds"] if all(r[p] is not None for p in SIDE_POLICIES)]
    if not rows:
        return []
    return [
        (label, intervals.t_mean([r[col] for r in rows]))
        for label, col in [(row["name"], "model")] + [(p, p) for p in SIDE_POLICIES]
    ]


def _practitioner_agents(pub) -> list:
    groups = {}
    for session in pub.practitioners:
        c = session.content
        cohort = str(c.get("cohort") or "unnamed")
        agent = groups.setdefault(
            cohort,
            Agent(
                key=f"practitioners:{cohort}",
                kind="practitioners",
                name=f"cohort {cohort}",
                note="people playing the practice desk, their sessions imported with consent",
                cost={"clock_ms": 0},
                arms=(f"practitioners:{cohort}", f"practitioner:{cohort}"),
            ),
        )
        qualified, points, ended = _outcome(c.get("result"))
        task = _dict(c.get("task"))
        agent.observations.append(
            {
                "world": str(task.get("instance_id") or task.get("fixture_sha256") or session.session_id),
                "qualified": qualified,
                "points": points,
                "ended": ended,
                "attempt_id": session.session_id,
                "date": _date(session.record, "finished", "imported", "started"),
            }
        )
        clock = _dict(c.get("clock")).get("per_checkpoint_ms")
        agent.cost["clock_ms"] += sum(_int(ms) for ms in clock) if isinstance(clock, list) else 0
        # the page builders/site/practitioner_page.py makes for a record with its receipts and submission
        # (its verify box included); otherwise the record itself
        folder = pub.runs_dir / "practitioners" / session.session_id
        paged = all((folder / name).is_file() for name in ("record.json", "receipts.json", "submission.json"))
        agent.links.append(
            (
                f"session {c.get('participant') or session.session_id}",
                f"practitioners/{session.session_id}/" if paged else f"{session.folder}/record.json",
            )
        )
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
        agent = groups.setdefault(
            policy,
            Agent(
                key=f"baseline:{policy}",
                kind="baseline",
                name=policy,
                note=POLICY_NOTES.get(policy, "a scripted policy"),
                cost={"engine_ms": 0},
                links=[("runs", f"runs/?policy={quote(policy, safe='')}")],
                arms=(f"baseline:{policy}",),
            ),
        )
        qualified, points, ended = _outcome(
            {"status": c.get("status"), "verdict": c.get("verdict"), "score": c.get("score")}
        )
        world = str(c.get("instance_id") or c.get("fixture_sha256"))
        agent.cost["engine_ms"] += run.duration_ms or 0
        if any(o["world"] == world for o in agent.observations):
            continue  # a scripted policy is deterministic: one run per world counts (the first in the index)
        agent.observations.append(
            {
                "world": world,
                "qualified": qualified,
                "points": points,
                "ended": ended,
                "attempt_id": run.run_id,
                "date": _date(run.record, "finished"),
            }
        )
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
