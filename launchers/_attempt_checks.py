"""The checks an attempt passes before its claim is consumed that read more than its own options: the claim's
plan against the attempt's worst case, and the freeze (with its intervention policy, pilot and tiers)."""

import os

from . import _budget, _freeze, _pilot, _tiers
from ._claims import plan_text
from ._errors import BudgetHalt, ClaimRefused, FreezeRefused, InputError
from ._journal import read_journal
from ._prices import table_sha256
from ._project import project_dir
from ._record import read_record


def check_budget(spec, claim, run):
    """The claim's plan against this attempt, before anything is spent: the price row it was authorised at, the
    sandbox compute its time limit needs, and the worker's worst case for these limits (unless the claim says
    its budget is partial)."""
    claim_path, limits, horizon, price, rate = spec.claim, spec.limits, run.instance["horizon"], run.price, run.rate
    plan = claim["plan"]
    free, projected = spec.sampler.free, spec.sampler.projected
    if not free or projected:
        if plan.get("price") != price:
            raise ClaimRefused(
                f"{claim_path}: claim.plan.price: the claim was authorised at {plan.get('price')}, this "
                f"attempt prices {claim['scope']['model']} at {price} (authorise with the same "
                f"--prices)"
            )
    need = (limits.worker_seconds + run.config["sandbox"].get("grace_s", 0)) * rate
    if claim.get("cap_sandbox_micro_usd", 0) < need:
        raise BudgetHalt(
            f"{claim_path}: the claim's sandbox cap of {claim.get('cap_sandbox_micro_usd', 0)} micro-USD "
            f"cannot cover the worker's {limits.worker_seconds} s at {rate} micro-USD/s",
            limit="sandbox",
        )
    if claim["partial_budget"].get("accepted") or (free and not projected):
        return  # accepted as partial; or a cached replay, whose hits reserve neither money nor tokens
    tokens_in = plan.get("tokens_in")
    if not isinstance(tokens_in, int) or isinstance(tokens_in, bool) or tokens_in < 0:
        raise ClaimRefused(f"{claim_path}: claim.plan.tokens_in: expected a non-negative integer")
    _, usd, tokens = _budget.worst(price, tokens_in, limits.max_tokens_per_call, horizon, limits.max_calls)
    short = [f"--cap-micro-usd {claim['cap_micro_usd']} < {usd} micro-USD" for _ in [0] if claim["cap_micro_usd"] < usd]
    short += [f"--cap-tokens {claim['cap_tokens']} < {tokens} tokens" for _ in [0] if claim["cap_tokens"] < tokens]
    if short:
        raise BudgetHalt(
            f"{claim_path}: the claim's caps are below this attempt's worst case ({'; '.join(short)}, for "
            f"{horizon} checkpoints, --max-tokens {limits.max_tokens_per_call}, --max-calls "
            f"{limits.max_calls}; authorised for {plan_text(plan)}): it could be planned to halt; "
            f"authorise for these limits, or with --accept-partial-budget",
            limit="cost",
        )


def check_freeze(spec, path, claim, run):
    """The freeze the attempt must match (`run`: what it will book and record: price, rate, config, instance,
    resume), its project caps, and for a confirmatory attempt a passing pilot and its tier: (freeze, caps)."""
    paid, model, prices, role, task = spec.paid, spec.model, spec.prices, spec.role, spec.task
    if not os.path.exists(path):
        if paid:
            raise FreezeRefused(
                f"{path}: no freeze: a paid attempt runs only against a freeze (`fundbook-launch freeze` first)"
            )
        raise InputError(f"--freeze {path}: no such file")
    doc, entries = _freeze.load(path)
    current = _freeze.content(
        config=run.config,
        models=[model],
        provider=spec.sampler.name,
        prices={
            "models": {model: run.price},
            "sandbox": {"name": run.config["sandbox"]["name"], "micro_usd_per_second": run.rate},
            "table_sha256": table_sha256(prices),
        },
        worlds=_freeze.Worlds([task.family], task.split, [] if role == "pilot" else [task.seed]),  # not the study's
        caps={
            "claim_micro_usd": claim["cap_micro_usd"],
            "claim_tokens": claim["cap_tokens"],
            "claim_sandbox_micro_usd": claim.get("cap_sandbox_micro_usd", 0),
        },
        intervention_policy=doc["content"].get("intervention_policy"),
    )
    used = _freeze.check(doc, entries, current, path)
    if run.resume is not None:
        _check_continuation(doc, entries, path, run.resume, spec.places.project, used)
    caps = _freeze.project_caps(doc, entries, path)
    out = {"sha256": doc["content_sha256"], "frozen_at": doc["frozen_at"], "deviations": used}
    if role != "pilot":
        out["pilot"] = _pilot.require(path, doc, entries, spec.sources.pilot)
        for entry in out["pilot"].pop("deviations", []):
            if entry not in used:
                used.append(entry)
        if doc["content"].get("tiers") is not None:  # seed 002's tiers: a cut seed, or one not planned, never runs
            plan = _tiers.check_plan(doc["content"]["tiers"], f"{path}: tiers")
            spent = _tiers.spent_from_records(
                _tiers.records_in(os.path.dirname(os.path.abspath(path))), doc["content_sha256"]
            )
            tier, cell = _tiers.admit(plan, spent, model, task.family, task.seed, f"{path}: tiers")
            out["tier"] = {"tier": tier, "cell": cell}
    return out, caps


def _lineage(folders):
    """{attempt id: the attempt id it continues, or None} of the attempts in `folders` (their records, and the
    journals of the ones still running or never recovered): who continues whom, as the attempts say."""
    parents = {}
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            base = os.path.join(folder, name)
            if os.path.isfile(os.path.join(base, "pilot.json")):
                parents.update(_lineage([base]))
                continue
            try:
                if os.path.isfile(os.path.join(base, "record.json")):
                    c = read_record(os.path.join(base, "record.json"))["content"]
                elif os.path.isfile(os.path.join(base, "journal.jsonl")):
                    c = read_journal(os.path.join(base, "journal.jsonl"))[0][2]
                else:
                    continue
            except InputError:
                continue  # not an attempt this check can read; `ledger` and `verify` name it
            parents[c.get("attempt_id")] = (c.get("resumed_from") or {}).get("attempt_id")
    return parents


def _check_continuation(doc, entries, path, resume, project, used):
    """The frozen intervention policy, enforced: at most `intervention.max_resumes` continuations of one attempt
    (counted over its whole line: continuing the original twice, or continuing a continuation, are both a second
    one), unless a dated deviation raises it. Refused before any claim is consumed."""
    try:
        limit = _freeze.effective(doc, entries, "intervention.max_resumes")
    except InputError:
        return  # frozen by an older launcher: the policy is text only
    source = resume["record"]["content"]
    parents = _lineage([project_dir(project), os.path.dirname(os.path.dirname(os.path.abspath(resume["path"])))])
    parents.setdefault(source["attempt_id"], (source.get("resumed_from") or {}).get("attempt_id"))

    def root(attempt_id):
        seen = set()
        while parents.get(attempt_id) is not None and attempt_id not in seen:
            seen.add(attempt_id)
            attempt_id = parents[attempt_id]
        return attempt_id

    origin = root(source["attempt_id"])
    done = sorted(a for a, parent in parents.items() if parent is not None and root(a) == origin)
    if len(done) + 1 > limit:
        raise FreezeRefused(
            f"{path}: intervention.max_resumes: the frozen policy allows {limit} continuation(s) of "
            f"attempt {origin}; {len(done)} already ({', '.join(done) or 'none'}): this would be "
            f"continuation {len(done) + 1} (record a dated deviation of intervention.max_resumes "
            f"to allow it)"
        )
    for entry in entries:
        if (
            entry.get("field") == "intervention.max_resumes"
            and entry not in used
            and len(done) + 1 > _freeze.lookup(doc["content"], "intervention.max_resumes")
        ):
            used.append(entry)  # the record names the deviation it relied on
