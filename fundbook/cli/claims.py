"""`fundbook-launch budget`, `authorise` and `self-check`: what an attempt may cost, the single-use claim that
lets it spend, and the controls that guard paid calls."""

import json

import click

from launchers import DEFAULT_HORIZON, DEFAULT_TOKENS_IN, DEFAULT_WORKER_SECONDS, SANDBOXES, SPLITS, sampler_names

from ._launch_options import (
    ATTEMPTS,
    CAP,
    CHECKPOINTS,
    HOURS,
    MAX_CALLS,
    MAX_TOKENS,
    PER_CHECKPOINT,
    SECONDS,
    TOKENS,
    MAX_SAFE,
    prices_option,
    project_option,
    state_option,
    text,
)


@click.command()
@click.option("--model", required=True, help="Model id as in the price table, e.g. Qwen/Qwen3-8B.")
@click.option(
    "--sampler",
    "sampler_name",
    type=click.Choice(sampler_names("budget")),
    default=None,
    help="The sampler planned for: with openai, anthropic or openai-compatible the figures "
    "default to the compact prompt's (--tokens-in 2500 --tokens-out 800 --calls-per-checkpoint 1).",
)
@prices_option
@click.option("--attempts", type=ATTEMPTS, default=1, show_default=True)
@click.option("--checkpoints", type=CHECKPOINTS, default=DEFAULT_HORIZON, show_default=True)
@click.option(
    "--calls-per-checkpoint",
    type=PER_CHECKPOINT,
    default=None,
    help="Expected calls a checkpoint (default 3; the worst case uses the worker's limit).",
)
@click.option(
    "--tokens-in",
    type=TOKENS,
    default=None,
    help="Assumed opening prompt tokens of a checkpoint (required unless --sampler names an HTTP API).",
)
@click.option(
    "--tokens-out",
    type=TOKENS,
    default=None,
    help="Assumed output tokens per call (required unless --sampler names an HTTP API).",
)
@click.option(
    "--max-tokens", type=MAX_TOKENS, default=2048, show_default=True, help="The per-call cap the ledger reserves."
)
@click.option(
    "--max-calls",
    type=MAX_CALLS,
    default=400,
    show_default=True,
    help="The attempt's call limit (execute --max-calls).",
)
@click.option(
    "--worker-seconds",
    type=click.IntRange(0, 86_400),
    default=DEFAULT_WORKER_SECONDS,
    show_default=True,
    help="The worker's time limit the sandbox compute is priced over (execute's default).",
)
@click.option(
    "--sandbox",
    type=click.Choice(list(SANDBOXES)),
    default=None,
    help="The sandbox priced (default: local for the mock model or a free sampler, modal otherwise).",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
def budget(
    model,
    sampler_name,
    prices,
    attempts,
    checkpoints,
    calls_per_checkpoint,
    tokens_in,
    tokens_out,
    max_tokens,
    max_calls,
    worker_seconds,
    sandbox,
    as_json,
):
    """Calls and USD for a planned attempt, before anything is spent.

    The worst case is `authorise`'s own projection (launchers.projection): the caps printed for one attempt
    are the caps `authorise` accepts with the options printed beside them."""
    from launchers import Planned, Provider, authorise_args, estimate, load_prices, projection, render_budget
    from launchers import sampler_class

    plan = sampler_class(sampler_name).PLAN if sampler_name else Provider.PLAN
    tokens_in = plan.get("tokens_in") if tokens_in is None else tokens_in
    tokens_out = plan.get("tokens_out") if tokens_out is None else tokens_out
    calls_per_checkpoint = calls_per_checkpoint or plan["calls_per_checkpoint"]
    if tokens_in is None or tokens_out is None:
        raise click.UsageError(
            "--tokens-in and --tokens-out are required (unless --sampler openai, anthropic or "
            "openai-compatible plans the compact prompt)"
        )
    table = load_prices(prices)
    planned = Planned(sampler_name, tokens_in, max_tokens, max_calls, checkpoints, worker_seconds, sandbox)
    one = projection(table, model, planned)  # one attempt: what a claim is checked against
    est = estimate(
        table,
        model,
        Planned(sampler_name, tokens_in, max_tokens, max_calls, checkpoints, worker_seconds, one["sandbox"]),
        attempts=attempts,
        calls_per_checkpoint=calls_per_checkpoint,
        tokens_out=tokens_out,
        price=one["price"],
    )
    est["authorise"] = authorise_args(one, planned)
    click.echo(json.dumps(est, sort_keys=True, indent=1) if as_json else render_budget(est))


@click.command()
@click.option("--family", required=True)
@click.option("--split", type=click.Choice(SPLITS), default="public-practice", show_default=True)
@click.option("--model", required=True)
@click.option(
    "--cap-micro-usd", type=CAP, required=True, help="The inference cap in integer micro-USD (1 USD = 1000000)."
)
@click.option("--cap-tokens", type=click.IntRange(1, MAX_SAFE), required=True, help="The token cap (input + output).")
@click.option(
    "--cap-sandbox-micro-usd",
    type=CAP,
    default=0,
    show_default=True,
    help="The sandbox compute cap in integer micro-USD (separate from inference).",
)
@click.option("--hours", type=HOURS, default=24, show_default=True, help="Hours until the claim expires.")
@click.option(
    "--sampler",
    "sampler_name",
    type=click.Choice(sampler_names("budget")),
    default=None,
    help="The sampler planned for, as `budget --sampler`: its plan's opening prompt is the default "
    "--tokens-in (2500 for openai, anthropic and openai-compatible); a free one (llama-cpp) is "
    "planned as --local.",
)
@click.option(
    "--tokens-in",
    type=TOKENS,
    default=None,
    help=f"The plan's opening prompt tokens of a checkpoint (as `budget --tokens-in`; default: the "
    f"sampler's plan, else {DEFAULT_TOKENS_IN}).",
)
@click.option("--max-tokens", type=MAX_TOKENS, default=2048, show_default=True, help="The plan's per-call output cap.")
@click.option("--max-calls", type=MAX_CALLS, default=400, show_default=True, help="The plan's call limit.")
@click.option("--horizon", type=CHECKPOINTS, default=DEFAULT_HORIZON, show_default=True, help="The plan's checkpoints.")
@click.option(
    "--worker-seconds",
    type=SECONDS,
    default=DEFAULT_WORKER_SECONDS,
    show_default=True,
    help="The plan's worker time limit.",
)
@click.option(
    "--sandbox",
    type=click.Choice(list(SANDBOXES)),
    default=None,
    help="The plan's sandbox (default: local for the mock model, modal otherwise).",
)
@click.option(
    "--accept-partial-budget",
    is_flag=True,
    help="Issue a claim whose caps are below the plan's worst case (recorded in the claim).",
)
@click.option(
    "--local",
    "local",
    is_flag=True,
    help="A claim for a model run on this host (--sampler llama-cpp, or openai-compatible with "
    "--local-server): planned at zero cost, local sandbox.",
)
@click.option(
    "--out", "out_path", required=True, type=click.Path(dir_okay=False), help="The claim file to write (new)."
)
@prices_option
@state_option
@project_option
def authorise(
    family,
    split,
    model,
    cap_micro_usd,
    cap_tokens,
    cap_sandbox_micro_usd,
    hours,
    sampler_name,
    tokens_in,
    max_tokens,
    max_calls,
    horizon,
    worker_seconds,
    sandbox,
    accept_partial_budget,
    local,
    out_path,
    prices,
    state,
    project,
):
    """Write a single-use authorisation claim (scope, caps, plan, expiry), registered in the project ledger.

    The caps are checked against the worker's worst case for the plan (`budget`'s figure): a claim that could
    be planned to halt is refused unless --accept-partial-budget, which the claim then says."""
    from launchers import Planned, check_model_id, format_usd, load_prices, plan_text, project_dir, projection
    from launchers import Grant, authorise as write_claim
    from launchers import state_dir

    text("--model", model)
    if local:
        check_model_id(model)
    plan = projection(
        load_prices(prices),
        model,
        Planned(sampler_name, tokens_in, max_tokens, max_calls, horizon, worker_seconds, sandbox, local),
    )
    doc = write_claim(
        out_path,
        family,
        split,
        model,
        cap_micro_usd,
        cap_tokens,
        hours,
        Grant(
            cap_sandbox_micro_usd=cap_sandbox_micro_usd,
            plan=plan,
            accept_partial_budget=accept_partial_budget,
            state=state,
            project=project,
        ),
    )
    c = doc["claim"]
    click.echo(
        f"claim {c['id']}: {c['scope']['family']}/{c['scope']['split']} on {c['scope']['model']}, cap "
        f"{format_usd(c['cap_micro_usd'])} and {c['cap_tokens']:,} tokens, sandbox "
        f"{format_usd(c['cap_sandbox_micro_usd'])}, expires {c['expires']} -> {out_path}"
    )
    if c["partial_budget"]["accepted"]:
        click.echo(f"PARTIAL BUDGET (accepted, recorded in the claim): {'; '.join(c['partial_budget']['shortfalls'])}")
    else:
        click.echo(f"covers the worker's worst case for {plan_text(plan)}")
    click.echo(f"registered in {state_dir(state)} and {project_dir(project)}; it can be consumed once.")


@click.command("self-check")
def self_check():
    """Exercise the controls that guard paid calls, deterministically (no cloud, no model)."""
    from launchers import run_self_check

    results = run_self_check()
    for r in results:
        click.echo(f"{'ok  ' if r['passed'] else 'FAIL'} {r['check']}: {r['detail']}")
    failed = [r for r in results if not r["passed"]]
    click.echo(f"self-check: {len(results) - len(failed)}/{len(results)} passed")
    return 1 if failed else 0
