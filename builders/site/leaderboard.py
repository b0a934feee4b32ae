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
import re
from dataclasses import dataclass, field
from fractions import Fraction
from urllib.parse import quote

from builders import counting

from . import fmt, intervals, ranking, weights
from .records import SiteInputError
from .counted import attempt_score, counted_attempts, inspect_usage, is_real_model, model_key, policy_points, started_of  # noqa: F401

PRELIMINARY_BELOW = 30
POLICY_NOTES = {
    "reference": "the engine's own plan: the top of the scale, 100 by construction",
    "shortest-cheapest": "funds each position from the shortest, cheapest quote, without looking ahead",
    "do-nothing": "takes no action and reports its empty book truthfully: the bottom of the scale",
}
SIDE_POLICIES = ("do-nothing", "shortest-cheapest", "reference")  # graded on a model's own worlds, beside its row
HARNESSES = {None: "fundbook worker", "inspect": "Inspect"}
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
    attempts: int = 0        # every attempt of the agent, counted or not
    provider: str = ""
    harness: str = ""
    same_worlds: list = field(default_factory=list)  # [(label, mean dict)] on the model's worlds
    weights: str = ""        # the weights a model row's attempts ran (weights.py), its basis, the model id
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
        return {"order": -mean_exact, "key": self.key, "kind": self.kind, "kind_label": KIND_LABELS[self.kind], "name": self.name,
                "note": self.note, "n": len(obs), "worlds": len(worlds), "rate": rate, "mean": mean,
                "ended_without_result": sum(1 for o in obs if not o["ended"]),
                "attempts": self.attempts or len(obs), "provider": self.provider, "harness": self.harness,
                "counted": [dict({"world": o["world"], "attempt_id": o.get("attempt_id"), "score": o["points"],
                                  "qualified": o["qualified"], "graded_by": o.get("source", "record")},
                                 **({"started": o.get("started")} if "started" in o else {})) for o in obs],
                "weights": self.weights or None, "weights_basis": self.weights_basis or None,
                "model_id": self.model_id or None, "attempt_ids": list(self.attempt_ids),
                "same_worlds": list(self.same_worlds),
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


def _started_date(attempt) -> str | None:
    """An attempt's start date (counted.started_of: an Inspect attempt's eval creation time), as _date reads one."""
    value = started_of(attempt)
    return value[:10] if isinstance(value, str) and len(value) >= 10 and value[:4].isdigit() else None


def _outcome(result) -> tuple:
    """(qualified, points, ended with a result) of an engine result, or of none."""
    result = _dict(result)
    score = _dict(result.get("score"))
    ended = isinstance(result.get("status"), str)
    return (result.get("status") == "SCORED" and result.get("verdict") == "QUALIFIED",
            _int(score.get("points")), ended)


def cost_text(kind, cost) -> str:
    if kind == "baseline":
        return f"$0 (scripted, no model calls; {fmt.duration(cost.get('engine_ms'))} of engine time)"
    if kind == "practitioners":
        return f"$0 (no model calls; {fmt.count(round(cost.get('clock_ms', 0) / 60_000))} min at the desk)"
    if cost.get("inspect"):
        return (f"outside fundbook's ledger (Inspect made the calls) · Inspect logged {fmt.count(cost.get('tokens_in', 0))} "
                f"tokens in, {fmt.count(cost.get('tokens_out', 0))} out")
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


def harness_of(content) -> str:
    """The harness that ran an attempt: Inspect-imported records say `harness: "inspect"`; the launcher's
    worker records carry no harness field (the fundbook worker)."""
    value = content.get("harness")
    return HARNESSES.get(value, str(value)) if value is None or isinstance(value, str) else str(value)


ISO_TIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$")


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
            raise SiteInputError(f"runs/attempts/{attempt.attempt_id}/record.json: model {key.split(':', 1)[1]} ran "
                                 f"weights {ident['weights']}, its other attempts {groups[key].weights}: one model id, "
                                 f"two sets of weights")
        if key not in groups:
            note = ("the deterministic mock sampler replays the reference plan: it tests the launcher, the ledger "
                    "and the evaluator, and measures nothing about a model" if machinery else
                    f"run in Inspect AI through its {provider} provider; each log imported and every engine call "
                    f"re-executed by fundbook" if c.get("harness") == "inspect" else
                    "an open-weights model run on the host (llama.cpp)" if provider == "llama-cpp" else
                    f"a model served by {provider}")
            groups[key] = Agent(key=key, kind="machinery" if machinery else "model", name=f"{provider}:{model_id}",
                                note=note, cost={"local": provider == "llama-cpp"}, provider=provider,
                                harness=harness_of(c), weights=ident["weights"], weights_basis=ident["basis"],
                                model_id=model_id,
                                arms=(f"model:{model_id}", f"model:{provider}:{model_id}", f"{provider}:{model_id}"))
        agent = groups[key]
        agent.attempts += 1
        agent.attempt_ids.append(attempt.attempt_id)
        cost = _dict(c.get("cost"))
        if c.get("harness") == "inspect":  # no ledger: the tokens Inspect logged, as provenance
            agent.cost["inspect"] = True
            cost = inspect_usage(c)
        for k in ("micro_usd", "unresolved_micro_usd", "calls", "tokens_in", "tokens_out", "cpu_ms"):
            agent.cost[k] = agent.cost.get(k, 0) + _int(cost.get(k))
        if attempt.transcript is not None:
            agent.links.append((f"transcript {attempt.attempt_id}", f"attempts/{attempt.attempt_id}/"))
    for (key, world), (attempt, _) in counted_attempts(pub.attempts, lambda a: model_key(a.content)).items():
        got = attempt_score(attempt)
        groups[key].observations.append({
            "world": world, "qualified": got["qualified"], "points": got["points"],
            "ended": got["source"] == "record", "source": got["source"], "attempt_id": attempt.attempt_id,
            "task": _dict(attempt.content.get("task")), "date": _started_date(attempt),
            "started": order_start(started_of(attempt))})
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
    return [(label, intervals.t_mean([r[col] for r in rows]))
            for label, col in [(row["name"], "model")] + [(p, p) for p in SIDE_POLICIES]]


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
                                   "attempt_id": session.session_id,
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
        world = str(c.get("instance_id") or c.get("fixture_sha256"))
        agent.cost["engine_ms"] += run.duration_ms or 0
        if any(o["world"] == world for o in agent.observations):
            continue  # a scripted policy is deterministic: one run per world counts (the first in the index)
        agent.observations.append({"world": world, "qualified": qualified, "points": points, "ended": ended,
                                   "attempt_id": run.run_id, "date": _date(run.record, "finished")})
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
        labels = [("vs " + ", ".join(o.split(":", 1)[-1] for o in others) if others else f"comparison {slug}")
                  for slug, others in found]
        # two comparisons against the same arms (a fixed-n one and a betting one) are told apart by their name
        agent.links += [(text if labels.count(text) == 1 else f"{text} ({slug})", f"comparisons/{slug}/")
                        for text, (slug, _) in zip(labels, found)]
    model_rows, ranked, heads = ranking.apply([a.row() for a in models], pub, PRELIMINARY_BELOW)
    groups = [("Models", model_rows), ("Practitioners", [a.row() for a in practitioners]),
              ("Scripted baselines", [a.row() for a in baselines])]
    for row in groups[0][1]:
        row["side"] = side_by_side(row)
    out = {"groups": groups, "models": heads, "ranking": ranked, "machinery": [a.row() for a in machinery],
           "status": status(pub, models, heads)}
    out["headline"] = headline(groups)
    try:
        pub._board = out
    except AttributeError:
        pass
    return out


def _mean(values) -> Fraction:
    return Fraction(sum(values), len(values))


NO_MODEL = ("No model has a result yet: the rows below are the scripted baselines and the practitioners, who give "
            "the score scale its meaning.")


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
    out = {"model": best["key"], "name": best["name"], "worlds": n, "denominator": 100,
           "mean": _tenths(_mean([c["score"] for c in best["counted"]])),
           "qualified": sum(1 for c in best["counted"] if c["qualified"])}
    if same:
        nothing = _mean([r["do-nothing"] for r in same])
        reference = _mean([r["reference"] for r in same])
        model_same = _mean([r["model"] for r in same])
        out.update({"same": len(same), "model_same": _tenths(model_same), "do_nothing": _tenths(nothing),
                    "reference": _tenths(reference),
                    "direction": "below" if model_same < nothing else "above" if model_same > nothing else "level with",
                    "reference_direction": ("below" if model_same < reference else "level with"
                                            if model_same == reference else "above")})
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
    parts = ["The best model so far, ", say("name"), ", scored a mean of ", say("mean"), " points out of ",
             say("denominator"), " over ", say("worlds", "number"), f" world{'s' if n != 1 else ''}"]
    if "same" in h:
        if h["same"] != n:
            parts += [" (on the ", say("same", "number"), " of them the engine could replay: ", say("model_same"), ")"]
        parts += [": ", say("direction"), " doing nothing on the same worlds (", say("do_nothing"), ") and ",
                  say("reference_direction"), " the reference policy (", say("reference"), ")"]
    parts += [". It qualified on ", say("qualified", "number"), " of ", say("worlds", "number"), "."]
    if "preliminary_not_ranked" in h:
        passed = h["preliminary_not_ranked"]
        parts += [" ", say("preliminary_not_ranked", "number"), f" other model row{'s' if passed != 1 else ''}, over "
                  "fewer than ", say("preliminary_below"), f" worlds, {'are' if passed != 1 else 'is'} preliminary "
                  "and not ranked here."]
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
            row = {"group": label, "key": r["key"], "kind": r["kind"], "name": r["name"],
                   "provider": r["provider"] or None, "harness": r["harness"] or None,
                   "worlds": r["worlds"], "attempts": r["attempts"], "qualified": r["rate"], "mean": r["mean"],
                   "ended_without_result": r["ended_without_result"], "counted": r["counted"],
                   "same_worlds": r["same_worlds"],
                   "same_worlds_means": {label: m for label, m in r.get("side") or []}}
            if r["kind"] in ("model", "machinery"):  # every attempt of the row: the verify applies the rule to them
                row["attempt_ids"] = sorted(r["attempt_ids"])
            if r["kind"] == "model":
                row.update({k: r[k] for k in MODEL_FIELDS})
            rows.append(row)
    rk = b["ranking"]
    return {"schema": SCHEMA, "rule": counting.RULE, "rule_source": counting.RULE_SOURCE,
            "intervals": {"qualified": intervals.RATE_METHOD, "mean": intervals.MEAN_METHOD},
            "preliminary_below": PRELIMINARY_BELOW, "headline": b["headline"]["text"],
            "simultaneous": {"method": rk["method"], "alpha": rk["alpha"], "ranked": rk["ranked"],
                             "per_end_alpha": rk["per_end_alpha"], "guarantee": GUARANTEE,
                             "code": ranking.code()},
            "models": [{"weights": h["weights"], "name": h["name"], "tuning": h["tuning"], "base": h["base"],
                        "card": h["card"],
                        "rows": [r["key"] for r in h["rows"]]} for h in b["models"]],
            "packaged": weights.table(), "weights_basis": dict(weights.BASIS), "rows": rows}


SCHEMA = "fundbook.leaderboard/2"
# what a model row states beyond the other rows (ranking.py, bands.py, weights.py)
MODEL_FIELDS = ("weights", "weights_basis", "model_id", "model", "tuning", "base", "card", "preliminary", "rank",
                "band", "rank_band", "erratum")
GUARANTEE = ("With probability at least 1 - alpha, every ranked row's band holds its true mean score, at every number "
             "of worlds at once (each band is two one-sided confidence sequences at alpha / (2K), valid at every n by "
             "Ville's inequality, joined by the union bound over the 2K ends), and so every rank band holds its true "
             "rank.")


def figure_root(doc) -> dict:
    """The root the home page's board marks point into (["board", "rows", key, ...], ["board", "models", weights,
    ...]): leaderboard.json keyed by row and by weights. site/assets/fundbook/board.js builds the same root from the
    document it recomputes."""
    return {"board": {"rows": {r["key"]: r for r in doc["rows"]}, "models": {m["weights"]: m for m in doc["models"]},
                      "preliminary_below": doc["preliminary_below"], "simultaneous": doc["simultaneous"]}}


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
        out.append({"row": label, "series": "this row", "mean": _number(r["mean"]["value"]),
                    "lower": _number(r["band"]["lower"]), "upper": _number(r["band"]["upper"])})
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
            w.writerow([row["group"], row["key"], row["kind"], c["world"], c["attempt_id"], c["score"],
                        int(bool(c["qualified"])), c["graded_by"]])
    return buf.getvalue()


def check_document(doc) -> None:
    """Every row's figures recompute from the attempts it lists as counted (one per world), with the methods it
    names: what a reader's script would do with leaderboard.json, done by the build before it publishes."""
    for row in doc["rows"]:
        counted = row["counted"]
        worlds = {c["world"] for c in counted}
        where = f"leaderboard.json: row {row['key']}"
        if row["kind"] in ("model", "baseline", "machinery") and len(worlds) != len(counted):
            raise SiteInputError(f"{where}: counted: expected one attempt per world, got {len(counted)} for "
                                 f"{len(worlds)} worlds")
        if row["worlds"] != len(worlds):
            raise SiteInputError(f"{where}: worlds: expected {len(worlds)}, got {row['worlds']}")
        want_rate = intervals.wilson(sum(1 for c in counted if c["qualified"]), len(counted))
        want_mean = intervals.t_mean([c["score"] for c in counted])
        if (row["qualified"], row["mean"]) != (want_rate, want_mean):
            raise SiteInputError(f"{where}: qualified and mean: expected {want_rate} and {want_mean} from its "
                                 f"counted attempts")
        if row["kind"] == "model" and [(c["started"] or "", c["world"]) for c in counted] != sorted(
                (c["started"] or "", c["world"]) for c in counted):
            raise SiteInputError(f"{where}: counted: expected the order the attempts were started")
    models = [r for r in doc["rows"] if r["kind"] == "model"]
    got = ranking.rank(models, doc["preliminary_below"])
    if [r["key"] for r in models] != got["order"]:
        raise SiteInputError(f"leaderboard.json: model rows: expected the order {got['order']} of the ranking")
    for row in models:
        want = got["rows"][row["key"]]
        for key in ("preliminary", "rank", "band", "rank_band"):
            if row[key] != want[key]:
                raise SiteInputError(f"leaderboard.json: row {row['key']}: {key}: expected {want[key]} from its "
                                     f"counted attempts, got {row[key]}")


def files(pub) -> dict:
    """{site path: bytes} of the published leaderboard files, checked (check_document) before they are."""
    check_document(document(pub))
    return {"leaderboard.json": json_text(pub).encode("utf-8"), "leaderboard.csv": csv_text(pub).encode("utf-8"),
            **ranking.site_files()}


def status(pub, models, heads=()) -> dict:
    """What exists, dated by the newest record."""
    dates = [_date(r.record, "finished") for r in pub.runs] + [_started_date(a) for a in pub.attempts]
    dates += [_date(s.record, "finished", "imported", "started") for s in pub.practitioners]
    dates = [d for d in dates if d]
    real = [a for a in pub.attempts if is_real_model(a.content)]
    with_result = [a for a in real if isinstance(_dict(a.content.get("result")).get("status"), str)]
    grader = [r for r in pub.runs if r.content.get("expected") is not None]
    return {"date": max(dates) if dates else None, "model_results": len(with_result),
            # models are counted by weights (ranking.headings): one set of weights reached three ways is one model
            "models_with_results": [{"name": h["name"], "base": h["base"], "card": h["card"],
                                     "paths": sum(1 for r in h["rows"] if r["n"] > r["ended_without_result"])}
                                    for h in heads if any(r["n"] > r["ended_without_result"] for r in h["rows"])],
            "model_attempts": len(real), "model_worlds": sum(len(a.observations) for a in models),
            "local_attempts": sum(a.attempts for a in models if a.cost.get("local")),
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
