"""`fundbook-launch freeze` and `deviate`: a study's configuration frozen before the first paid call, and a
dated deviation from it."""

import json
import os
import re

import click

import engine
import launchers
from launchers import DEFAULT_TOKENS_IN, SPLITS, InputError, sampler_names

from ._launch_options import (
    CAP,
    PER_CHECKPOINT,
    SEED,
    TOKENS,
    api_options,
    local_model_options,
    prices_option,
    project_option,
    sampler_own,
    text,
    with_run_options,
)


@click.command()
@click.option(
    "--out",
    "out_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="The freeze file to write (default place: <project>/freeze.json).",
)
@click.option(
    "--model",
    "models",
    multiple=True,
    help="A model id the study runs (repeatable; required unless "
    "--sampler llama-cpp, whose default is the model file's name).",
)
@click.option(
    "--sampler",
    "sampler_name",
    type=click.Choice(sampler_names("freeze")),
    default="tinker",
    show_default=True,
    help="The study's sampler (a paid one runs in the modal sandbox).",
)
@click.option("--family", "families", required=True, multiple=True, help="A family the study runs (repeatable).")
@click.option("--seed", "seeds", type=SEED, required=True, multiple=True, help="A seed the study runs (repeatable).")
@click.option("--split", type=click.Choice(SPLITS), default="public-practice", show_default=True)
@click.option("--cap-micro-usd", type=CAP, required=True, help="Per-claim inference cap.")
@click.option("--cap-tokens", type=CAP, required=True, help="Per-claim token cap.")
@click.option("--cap-sandbox-micro-usd", type=CAP, required=True, help="Per-claim sandbox compute cap.")
@click.option("--project-cap-micro-usd", type=CAP, required=True, help="Project-wide inference cap.")
@click.option("--project-cap-sandbox-micro-usd", type=CAP, required=True, help="Project-wide sandbox compute cap.")
@click.option("--intervention-policy", required=True, help="What the operator may do once attempts run.")
@click.option(
    "--estimate-tokens-in",
    type=TOKENS,
    default=DEFAULT_TOKENS_IN,
    show_default=True,
    help="The pilot's cost estimate: opening prompt tokens of a checkpoint (as `budget --tokens-in`).",
)
@click.option(
    "--estimate-tokens-out",
    type=TOKENS,
    default=600,
    show_default=True,
    help="The pilot's cost estimate: output tokens per call.",
)
@click.option(
    "--max-resumes",
    type=click.IntRange(0, 100),
    default=0,
    show_default=True,
    help="The intervention policy's enforced part: continuations (--resume-from) allowed per attempt.",
)
@click.option(
    "--pilot-cap-micro-usd",
    type=CAP,
    default=None,
    help="The most the whole pilot may commit, inference and sandbox (default: the project's caps).",
)
@click.option(
    "--estimate-calls-per-checkpoint",
    type=PER_CHECKPOINT,
    default=3,
    show_default=True,
    help="The pilot's cost estimate: calls a checkpoint.",
)
@click.option(
    "--tiers",
    "tiers_path",
    type=click.Path(dir_okay=False),
    help="A tier plan (fundbook.tier-plan/1: "
    "cells, seeds and budget per tier, the order of sacrifice, the pilot's sd table; launchers/_tiers.py).",
)
@local_model_options
@api_options
@with_run_options
@prices_option
def freeze(
    out_path,
    models,
    sampler_name,
    families,
    seeds,
    split,
    cap_micro_usd,
    cap_tokens,
    cap_sandbox_micro_usd,
    project_cap_micro_usd,
    project_cap_sandbox_micro_usd,
    intervention_policy,
    estimate_tokens_in,
    estimate_tokens_out,
    estimate_calls_per_checkpoint,
    max_resumes,
    pilot_cap_micro_usd,
    model_file,
    threads,
    threads_batch,
    base_url,
    server_dialect,
    local_server,
    reasoning_effort,
    effort,
    sandbox_name,
    worker_seconds,
    call_deadline,
    max_tokens,
    max_calls,
    horizon,
    temperature_milli,
    sampling_seed,
    prices,
    tiers_path=None,
):
    """Write freeze.json before the first paid call: code, prompt, schema, engine, config, models, prices, caps, and
    the pilot's criteria and cost estimate (a confirmatory attempt needs a passing pilot)."""
    from launchers import (
        Limits,
        Planned,
        SamplerOptions,
        SandboxOptions,
        check_options,
        default_sandbox,
        estimate,
        load_prices,
        local_model_id,
        pricing,
        sampler_class,
        sandbox_rate,
        table_sha256,
    )
    from launchers import sampler as providers_sampler
    from launchers import sandbox as providers_sandbox

    ctx = click.get_current_context()
    own = check_options(sampler_name, sampler_own(ctx.params))
    if not models and sampler_name != "llama-cpp":
        raise click.UsageError("--model is required (unless --sampler llama-cpp names it from --model-file)")
    for m in models:
        text("--model", m)
    cls = sampler_class(sampler_name)
    paid = not cls.free_for({"local_server": 1 if own.get("local_server") else 0})
    sandbox_name = sandbox_name or default_sandbox(paid)
    if paid and sandbox_name == "local":
        raise click.UsageError("--sandbox local: a paid study runs in an isolated sandbox (modal or local-isolated)")
    for family in families:
        if family not in engine.FAMILIES:
            raise InputError(f"--family: expected one of {list(engine.FAMILIES)}, got {family!r}")
    table = load_prices(prices)
    limits = Limits(worker_seconds, call_deadline, max_tokens, max_calls)
    built = providers_sampler(
        sampler_name,
        SamplerOptions(
            call_deadline_s=call_deadline,
            temperature_milli=temperature_milli,
            seed=sampling_seed,
            own=own,
            offline=True,
            environ={},
        ),
    )
    sampling = built.sampling  # the settings only (a local model: its file's sha256): the service is checked at execute
    if sampler_name == "llama-cpp":
        models = [local_model_id(m, built, own.get("model_file")) for m in models or [None]]
    models = list(models) or [built.model_id]
    config = {
        "sampler": sampler_name,
        "sandbox": providers_sandbox(sandbox_name, SandboxOptions(offline=True)).config,
        "sampling": sampling,
        "limits": vars(limits),
        "horizon": horizon,
    }
    estimates = {
        m: estimate(
            table,
            m,
            Planned(None, estimate_tokens_in, max_tokens, max_calls, horizon, worker_seconds, sandbox_name),
            calls_per_checkpoint=estimate_calls_per_checkpoint,
            tokens_out=min(estimate_tokens_out, max_tokens),
            price=pricing(built, m, table)[0],
        )["expected_micro_usd"]
        for m in models
    }
    body = launchers.freeze_content(
        config=config,
        models=list(models),
        provider=sampler_name,
        prices={
            "models": {m: pricing(built, m, table)[0] for m in models},  # as execute books them
            "sandbox": {"name": sandbox_name, "micro_usd_per_second": sandbox_rate(table, sandbox_name)},
            "table_sha256": table_sha256(table),
        },
        worlds=launchers.FreezeWorlds(list(families), split, list(seeds)),
        caps={
            "claim_micro_usd": cap_micro_usd,
            "claim_tokens": cap_tokens,
            "claim_sandbox_micro_usd": cap_sandbox_micro_usd,
            "project_micro_usd": project_cap_micro_usd,
            "project_sandbox_micro_usd": project_cap_sandbox_micro_usd,
        },
        intervention_policy=intervention_policy,
        freeze_only={
            "intervention": {"max_resumes": max_resumes},
            "pilot": launchers.pilot_terms(
                estimates,
                estimate_tokens_in,
                estimate_tokens_out,
                estimate_calls_per_checkpoint,
                spend_cap=project_cap_micro_usd + project_cap_sandbox_micro_usd
                if pilot_cap_micro_usd is None
                else pilot_cap_micro_usd,
            ),
        },
    )
    if tiers_path:
        body["tiers"] = _tier_plan(tiers_path, models, families, seeds)
    doc = launchers.write_freeze(out_path, body)
    click.echo(
        f"freeze {doc['content_sha256'][:12]} ({doc['frozen_at']}): {', '.join(models)} on "
        f"{', '.join(sorted(families))} seeds {', '.join(str(s) for s in sorted(seeds))}, config "
        f"{body['config_hash'][:12]} -> {out_path}"
    )
    click.echo("a confirmatory attempt under it needs a passing pilot (`fundbook-launch pilot`)")


@click.command()
@click.option(
    "--freeze",
    "freeze_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="The freeze (default: <project>/freeze.json).",
)
@project_option
@click.option(
    "--field", required=True, help="The frozen field that changes, dotted (e.g. config.limits.max_tokens_per_call)."
)
@click.option("--effective", required=True, help="The value in force from now on (JSON; plain text is a string).")
@click.option("--reason", required=True, help="Why it changed.")
def deviate(freeze_path, project, field, effective, reason):
    """Record a dated deviation from the freeze (field, original, effective, reason)."""
    from launchers import loads, project_dir

    stripped = effective.strip()
    if stripped[:1] in ("{", "[", '"') or re.match(r"-?[0-9]", stripped) or stripped in ("true", "false", "null"):
        value = loads(effective, "--effective", "option")  # JSON, read strictly (no NaN, nesting bounded)
    else:
        value = effective  # plain text is a string
    path = freeze_path or os.path.join(project_dir(project), "freeze.json")
    entry = launchers.deviate(path, field, value, reason)
    click.echo(
        f"deviation {entry['date']}: {field} {json.dumps(entry['original'])} -> {json.dumps(entry['effective'])} "
        f"({entry['reason']}) -> {launchers.deviations_path(path)}"
    )


def _tier_plan(path, models, families, seeds):
    """The tier plan, checked, within what the freeze names (every cell's model, family and seeds frozen)."""
    plan = launchers.check_plan(launchers.read_json(path, "the tier plan", 4 * 1024 * 1024), path)
    plan = dict(plan, budgets=launchers.tier_budgets(plan))  # the freeze records each tier's budget
    for tier in plan["tiers"]:
        for cell in tier["cells"]:
            outside = [s for s in cell["seeds"] if s not in seeds]
            if cell["model"] not in models or cell["family"] not in families or outside:
                raise InputError(
                    f"{path}: {tier['name']}/{cell['name']}: {cell['model']} {cell['family']} "
                    f"seeds {outside or cell['seeds']} are not all among the freeze's --model, --family "
                    f"and --seed"
                )
    return plan
