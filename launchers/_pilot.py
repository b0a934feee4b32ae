"""The pilot: a few attempts of the frozen configuration, judged by pre-registered criteria, before any
confirmatory spend.

The freeze fixes the pilot's terms (`terms`): whether a passing pilot is
required, the criteria -- valid answers at least 80 % of the answered model
calls, failed calls (no answer: timeouts, provider errors, capacity) at most
10 % of the calls made, cost (charged plus unresolved, per attempt) within
30 % of the freeze's own estimate, no budget halts -- and the estimate
(`budget`'s expected figure for the frozen token assumptions). `fundbook-launch
pilot` runs one attempt per seed, each with its own claim, through the same
`execute` as any attempt (any sampler the adapters know: the mock for a free
dry run, tinker for the live pilot, a local model), then computes the figures
from the records alone and writes `pilot.json` (fundbook.pilot/1: content
hashed, latencies in `volatile`) with PASS or FAIL per criterion.

A confirmatory `execute` under that freeze (any attempt under a freeze that
is not a pilot attempt) needs a passing pilot: `require` re-reads pilot.json,
verifies every pilot record, recomputes the figures and the verdict from them
and refuses anything but PASS for this very freeze -- unless a dated deviation
sets `pilot.required` to false. After a failed pilot the run protocol allows
one prompt revision (a deviation of the prompt's sha256), a mock re-run and a
one-seed re-pilot into a new folder, named with `execute --pilot`.
"""

import os
from dataclasses import dataclass

from engine import content_sha256, pretty_json

from . import _freeze
from ._errors import FreezeRefused, InputError
from ._jsonfile import read_json

PILOT_SCHEMA = "fundbook.pilot/1"
CRITERIA = {"validity_min_bps": 8000, "failures_max_bps": 1000, "cost_tolerance_bps": 3000, "budget_halts_max": 0}
BPS = 10000


def terms(estimates, tokens_in, tokens_out, calls_per_checkpoint, required=True, spend_cap=None) -> dict:
    """The freeze's `pilot` block. `estimates`: {model: expected micro-USD of one attempt (`budget`)};
    `spend_cap`: the most the whole pilot may commit, inference and sandbox together (micro-USD)."""
    out = {
        "required": required,
        "criteria": dict(CRITERIA),
        "estimate": {
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "calls_per_checkpoint": calls_per_checkpoint,
            "expected_micro_usd": dict(sorted(estimates.items())),
        },
    }
    if spend_cap is not None:
        out["spend_cap_micro_usd"] = spend_cap
    return out


def projection(pilot_terms, model, claims) -> dict:
    """What the pilot may spend before it runs: the expected figure (the freeze's estimate per attempt) and the
    worst case (its claims' inference and sandbox caps: no attempt can commit more than its claim), against the
    frozen pilot spend cap."""
    expected = pilot_terms["estimate"]["expected_micro_usd"].get(model)
    return {
        "attempts": len(claims),
        "expected_micro_usd": None if expected is None else expected * len(claims),
        "worst_case_micro_usd": sum(c["cap_micro_usd"] + c.get("cap_sandbox_micro_usd", 0) for c in claims),
        "cap_micro_usd": pilot_terms.get("spend_cap_micro_usd"),
    }


def check_spend(spend, confirmed, where="pilot"):
    """Refuse a pilot whose worst case passes the frozen pilot cap, or one run without confirming its worst case
    (`--confirm-spend`, at least that figure); before any claim is consumed."""
    from ._prices import format_usd

    worst, cap = spend["worst_case_micro_usd"], spend["cap_micro_usd"]
    told = (
        f"{spend['attempts']} attempts, expected {format_usd(spend['expected_micro_usd'] or 0)}, at most "
        f"{format_usd(worst)} (their claims' inference and sandbox caps)"
    )
    if cap is not None and worst > cap:
        raise FreezeRefused(
            f"{where}: {told}: over the frozen pilot spend cap of {format_usd(cap)} (authorise smaller "
            f"claims, or record a deviation of pilot.spend_cap_micro_usd)"
        )
    if worst > 0 and (confirmed is None or confirmed < worst):
        raise FreezeRefused(
            f"{where}: {told}; confirm the projected spend with --confirm-spend {worst}"
            + (f" (you confirmed {confirmed})" if confirmed is not None else "")
        )


def _bps(part, whole):
    return part * BPS // whole if whole else None


def figures(records) -> dict:
    """What the criteria read, from the attempt records alone (integers; shares in basis points, floored)."""
    calls = answered = invalid = committed = cache_hits = prompt_hits = tokens_in = halts = 0
    statuses = {}
    for record in records:
        c = record["content"]
        cost = c["cost"]
        status = c["termination"]["status"]
        statuses[status] = statuses.get(status, 0) + 1
        halts += status == "budget_halt"
        calls += cost["calls"]
        answered += cost["calls"] - len(cost["unresolved_calls"])
        invalid += c["invalid_artefacts"]
        committed += cost["micro_usd"] + cost["unresolved_micro_usd"]
        cache_hits += cost["cache_hits"]
        prompt_hits += cost["prompt_cache_hit_tokens"]
        tokens_in += cost["tokens_in"]
    valid = max(0, answered - invalid)
    return {
        "attempts": len(records),
        "statuses": dict(sorted(statuses.items())),
        "calls": calls,
        "answered_calls": answered,
        "failed_calls": calls - answered,
        "invalid_answers": invalid,
        "valid_answers": valid,
        "validity_bps": _bps(valid, answered),
        "failures_bps": _bps(calls - answered, calls),
        "budget_halts": halts,
        "committed_micro_usd": committed,
        "cache_hits": cache_hits,
        "cache_hit_bps": _bps(cache_hits, calls),
        "prompt_cache_hit_tokens": prompt_hits,
        "prompt_cache_hit_bps": _bps(prompt_hits, tokens_in),
    }


BASELINE = "do-nothing"  # the control the paired differences are taken against (seed 002: the no-LLM cell)
SD_PLACES = 6  # the sd of the paired differences as decimal text, to this many places (no floats)


def _points(result):
    """Score points of a graded result; 0 for one that was not scored (a failure stays a row, at 0)."""
    score = (result or {}).get("score") if isinstance(result, dict) else None
    return score["points"] if isinstance(score, dict) and isinstance(score.get("points"), int) else 0


def baseline_points(task) -> int:
    """The baseline policy's score points on the attempt's world (family, seed, horizon), graded by the engine."""
    import engine
    from ._desk import world

    instance = world(task["family"], task["seed"], task["horizon"])
    return _points(engine.grade_candidate(engine.policy_candidate(instance, BASELINE), instance))


def sd_text(values):
    """The sample standard deviation (n - 1) of integers as decimal text, exact to SD_PLACES places (rounded
    half even); None under two values."""
    import decimal

    n = len(values)
    if n < 2:
        return None
    total = sum(values)
    squares = n * sum(v * v for v in values) - total * total  # n * (n - 1) * variance, an exact integer
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        sd = (decimal.Decimal(squares) / decimal.Decimal(n * (n - 1))).sqrt()
        return str(sd.quantize(decimal.Decimal(1).scaleb(-SD_PLACES), rounding=decimal.ROUND_HALF_EVEN))


def decisions(records) -> dict:
    """Seed 002's pilot figures: tokens per decision (an answered call: prompt, output and, where the provider
    reports them, reasoning tokens; floored) and the paired differences of score points between each attempt and
    the baseline policy on its world, with their sd (the figure a tier plan's sd table takes)."""
    answered = tokens_in = tokens_out = 0
    reasoning = None
    diffs = []
    for record in records:
        c = record["content"]
        cost = c["cost"]
        answered += cost["calls"] - len(cost["unresolved_calls"]) - cost["cache_hits"]
        tokens_in += cost["tokens_in"]
        tokens_out += cost["tokens_out"]
        if "reasoning_tokens" in cost:
            reasoning = (reasoning or 0) + cost["reasoning_tokens"]
        diffs.append(_points(c.get("result")) - baseline_points(c["task"]))
    per = lambda total: total // answered if answered and total is not None else None  # noqa: E731
    return {
        "answered_calls": answered,
        "tokens_in_per_decision": per(tokens_in),
        "tokens_out_per_decision": per(tokens_out),
        "reasoning_tokens_per_decision": per(reasoning),
        "paired": {
            "metric": "points",
            "baseline": f"baseline:{BASELINE}",
            "differences": diffs,
            "n": len(diffs),
            "mean_milli": sum(diffs) * 1000 // len(diffs) if diffs else None,
            "sd": sd_text(diffs),
        },
    }


def sd_table(pilot_doc, where) -> dict:
    """The sd table a tier plan takes from the pilot: {"points vs baseline:do-nothing": sd}; a one-line
    FreezeRefused when the pilot records none (a pilot written before it was recorded, or under two attempts)."""
    paired = ((pilot_doc.get("content") or {}).get("decisions") or {}).get("paired") or {}
    if not isinstance(paired.get("sd"), str):
        raise FreezeRefused(
            f"{where}: the pilot records no sd of paired differences (a pilot of at least two "
            f"attempts written by this version records it: run `fundbook-launch pilot` again), so "
            f"the tier plan's sd table, taken from the pilot, is missing"
        )
    return {f"{paired['metric']} vs {paired['baseline']}": paired["sd"]}


def judge(figs, pilot_terms, model) -> list:
    """[{criterion, rule, value, result}] for each pre-registered criterion; every value an integer or null."""
    crit = pilot_terms["criteria"]
    expected = pilot_terms["estimate"]["expected_micro_usd"].get(model)
    n = figs["attempts"]
    out = []

    def add(name, rule, value, ok):
        out.append({"criterion": name, "rule": rule, "value": value, "result": "PASS" if ok else "FAIL"})

    add(
        "validity",
        f"valid answers / answered calls >= {crit['validity_min_bps']} bps",
        figs["validity_bps"],
        figs["validity_bps"] is not None and figs["validity_bps"] >= crit["validity_min_bps"],
    )
    add(
        "failures",
        f"failed calls / calls <= {crit['failures_max_bps']} bps",
        figs["failures_bps"],
        figs["failures_bps"] is not None and figs["failures_bps"] <= crit["failures_max_bps"],
    )
    if expected is None or n == 0:
        add("cost", "committed micro-USD per attempt within the tolerance of the freeze's estimate", None, False)
    else:
        planned = expected * n
        gap = abs(figs["committed_micro_usd"] - planned)
        add(
            "cost",
            f"|committed - {expected} x attempts| <= {crit['cost_tolerance_bps']} bps of it",
            _bps(gap, planned) if planned else (0 if gap == 0 else None),
            gap * BPS <= crit["cost_tolerance_bps"] * planned,
        )
    add(
        "budget_halts",
        f"attempts ended budget_halt <= {crit['budget_halts_max']}",
        figs["budget_halts"],
        figs["budget_halts"] <= crit["budget_halts_max"],
    )
    return out


def latency(records) -> dict:
    """Wall-clock figures of the model calls (volatile: never hashed, never judged)."""
    ms = sorted(m for r in records for m in (r.get("volatile") or {}).get("calls_ms") or [] if isinstance(m, int))
    if not ms:
        return {"calls": 0}
    at = lambda q: ms[min(len(ms) - 1, q * len(ms) // 100)]  # noqa: E731
    return {
        "calls": len(ms),
        "p50_ms": at(50),
        "p90_ms": at(90),
        "max_ms": ms[-1],
        "attempt_ms": [(r.get("volatile") or {}).get("duration_ms") for r in records],
    }


def effective_terms(doc, entries, where):
    try:
        block = _freeze.effective(doc, entries, "pilot")
    except InputError:
        raise FreezeRefused(f"{where}: pilot: the freeze has no pilot terms (frozen by an older launcher)") from None
    required = _freeze.effective(doc, entries, "pilot.required")
    return dict(block, required=required)


@dataclass(frozen=True)
class Frozen:
    """A freeze as read: its document, its deviations' entries and the file's path."""

    doc: dict
    entries: list
    path: str


def content(frozen: Frozen, model, family, seeds, folder, records, confirmed=None) -> dict:
    """pilot.json's content; `confirmed`: the spend the operator confirmed (`--confirm-spend`), kept beside the
    projection recomputed from the records' claims."""
    freeze_doc = frozen.doc
    pilot_terms = effective_terms(freeze_doc, frozen.entries, frozen.path)
    figs = figures(records)
    crit = judge(figs, pilot_terms, model)
    spend = dict(
        projection(pilot_terms, model, [r["content"]["claim"] for r in records]), confirmed_micro_usd=confirmed
    )
    return {
        "freeze_sha256": freeze_doc["content_sha256"],
        "model": model,
        "family": family,
        "seeds": list(seeds),
        "terms": pilot_terms,
        "spend": spend,
        "attempts": [
            {
                "attempt_id": r["content"]["attempt_id"],
                "folder": name,
                "record_content_sha256": r["content_sha256"],
                "status": r["content"]["termination"]["status"],
            }
            for name, r in zip(folder, records)
        ],
        "figures": figs,
        "criteria": crit,
        "decisions": decisions(records),
        "verdict": "PASS" if crit and all(c["result"] == "PASS" for c in crit) else "FAIL",
    }


def write(path, body, records) -> dict:
    doc = {
        "schema": PILOT_SCHEMA,
        "content": body,
        "content_sha256": content_sha256(body),
        "volatile": {"latency": latency(records)},
    }
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(pretty_json(doc))
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})")
    return doc


def default_path(freeze_path):
    return os.path.join(os.path.dirname(os.path.abspath(freeze_path)), "pilot", "pilot.json")


def check(pilot_path, freeze_doc, entries, freeze_path) -> dict:
    """Re-read pilot.json and recompute it from its records (each verified); returns the document."""
    from ._record import read_record
    from ._verify import verify_attempt

    doc = read_json(pilot_path, "pilot")
    body = doc.get("content") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("schema") != PILOT_SCHEMA or not isinstance(body, dict):
        raise FreezeRefused(f"{pilot_path}: schema: expected a {PILOT_SCHEMA} pilot")
    if content_sha256(body) != doc.get("content_sha256"):
        raise FreezeRefused(f"{pilot_path}: content does not hash to content_sha256 (edited)")
    if body.get("freeze_sha256") != freeze_doc["content_sha256"]:
        raise FreezeRefused(f"{pilot_path}: freeze_sha256: the pilot ran under another freeze than {freeze_path}")
    attempts = body.get("attempts")
    if not isinstance(attempts, list) or not attempts:
        raise FreezeRefused(f"{pilot_path}: attempts: expected the pilot's attempts")
    base = os.path.dirname(os.path.abspath(pilot_path))
    records, folders = [], []
    for i, a in enumerate(attempts):
        folder = a.get("folder") if isinstance(a, dict) else None
        if not isinstance(folder, str) or folder != os.path.basename(folder) or folder in ("", ".", ".."):
            raise FreezeRefused(f"{pilot_path}: attempts[{i}].folder: expected a folder beside pilot.json")
        path = os.path.join(base, folder, "record.json")
        verify_attempt(path)
        record = read_record(path)
        c = record["content"]
        if record["content_sha256"] != a.get("record_content_sha256"):
            raise FreezeRefused(f"{pilot_path}: attempts[{i}]: {folder}/record.json is not the record the pilot read")
        if c.get("role") != "pilot" or (c.get("freeze") or {}).get("sha256") != freeze_doc["content_sha256"]:
            raise FreezeRefused(f"{pilot_path}: attempts[{i}]: {folder} is not a pilot attempt under this freeze")
        records.append(record)
        folders.append(folder)
    confirmed = (body.get("spend") or {}).get("confirmed_micro_usd")
    again = content(
        Frozen(freeze_doc, entries, freeze_path),
        body.get("model"),
        body.get("family"),
        body.get("seeds") or [],
        folders,
        records,
        confirmed if isinstance(confirmed, int) and not isinstance(confirmed, bool) else None,
    )
    if "decisions" not in body:  # a pilot written before its per-decision figures were recorded: judged without
        again.pop("decisions")
    if again != body:
        differs = next(k for k in sorted(set(again) | set(body)) if again.get(k) != body.get(k))
        raise FreezeRefused(f"{pilot_path}: {differs}: not what the pilot's records give")
    try:
        check_spend(again["spend"], again["spend"]["confirmed_micro_usd"], pilot_path)
    except FreezeRefused as exc:
        raise FreezeRefused(
            f"{exc.format_message()} (a pilot run past its cap or unconfirmed does not count)"
        ) from None
    return doc


def require(freeze_path, doc, entries, pilot_path=None) -> dict:
    """What lets a confirmatory attempt run under this freeze: a passing pilot ({sha256, verdict, attempts}), or a
    deviation that drops the requirement ({required: false, deviations: [it]}); FreezeRefused otherwise."""
    pilot_terms = effective_terms(doc, entries, freeze_path)
    if pilot_terms["required"] is False:
        used = [e for e in entries if e.get("field") == "pilot.required" and e.get("effective") is False][-1:]
        return {"required": False, "deviations": used}
    pilot_path = pilot_path or default_path(freeze_path)
    if not os.path.exists(pilot_path):
        raise FreezeRefused(
            f"{pilot_path}: no pilot: a confirmatory attempt under {freeze_path} needs a passing "
            f"pilot (`fundbook-launch pilot`) or a dated deviation of pilot.required"
        )
    found = check(pilot_path, doc, entries, freeze_path)
    body = found["content"]
    if body["verdict"] != "PASS":
        failed = [c["criterion"] for c in body["criteria"] if c["result"] != "PASS"]
        raise FreezeRefused(
            f"{pilot_path}: the pilot FAILED ({', '.join(failed)}): no confirmatory attempt runs under "
            f"this freeze (revise, re-run the mock, re-pilot; or record a deviation)"
        )
    out = {"required": True, "sha256": found["content_sha256"], "verdict": "PASS", "attempts": len(body["attempts"])}
    if (doc["content"].get("tiers") or {}).get("sd_table") == "pilot":  # the tier plan's sd table, from this pilot
        out["sd_table"] = sd_table(found, pilot_path)
    return out
