"""fundbook-launch: the paid model-worker path.

Exit codes: 0 ok (an attempt that completed); 1 refused (claim, budget, input,
freeze, output directory) or an attempt that ended incomplete (its record is
still written); 64 usage error (including a paid sampler in the local sandbox).
"""

import json
import os
import re

import click

from launchers._adapters import API_SAMPLERS, PAID_SAMPLERS, SAMPLERS, is_paid
from launchers._budget import FREE_PRICE, DEFAULT_HORIZON, DEFAULT_TOKENS_IN, DEFAULT_WORKER_SECONDS, attempt_plan, estimate, render
from launchers._claims import MAX_HOURS, SPLITS, authorise as write_claim, plan_text, state_dir
from ._common import FundbookGroup
from ._render import plain

from launchers._errors import InputError, LaunchError
from launchers._prices import MAX_SAFE, format_usd, load_prices
from launchers._selfcheck import run_self_check


class LaunchGroup(FundbookGroup):
    """The evaluator CLI's error handling: usage errors exit 64 (never click's 2,
    which means UNSCORABLE here); expected failures print one line."""

    expected_errors = (LaunchError,)

    def report(self, exc):  # one line whatever the message quotes (a path with a newline in it)
        click.echo(f"error: {plain(exc.format_message())}", err=True)


@click.group(cls=LaunchGroup, context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """fundbook-launch: budget, authorise, freeze and execute a model attempt on the desk.

    Paid calls need a single-use claim from `authorise`, a budget and a freeze;
    every attempt, complete or not, leaves a fundbook.attempt/1 record.
    """


prices_option = click.option("--prices", type=click.Path(dir_okay=False), default=None,
                             help="Price table file (default: launchers/prices.json).")
state_option = click.option("--state", type=click.Path(file_okay=False), default=None,
                            help="Claim registry directory (default: $FUNDBOOK_LAUNCH_STATE or ~/.fundbook-launch).")
project_option = click.option("--project", type=click.Path(file_okay=False), default=None,
                              help="Project directory: project ledger, freeze, deviations (default: "
                                   "$FUNDBOOK_LAUNCH_PROJECT or runs/attempts/).")
# Every integer option has a bound: what hashed content can hold, and what the machinery behind it can honour
# without allocating by the option's size (a budget for any number of checkpoints costs the same to compute).
CAP = click.IntRange(0, MAX_SAFE)
SEED = click.IntRange(1, MAX_SAFE)
HOURS = click.IntRange(1, MAX_HOURS)
CHECKPOINTS = click.IntRange(1, 1000)
ATTEMPTS = click.IntRange(1, 100_000)
TOKENS = click.IntRange(0, 10_000_000)
MAX_TOKENS = click.IntRange(1, 1_000_000)
MAX_CALLS = click.IntRange(1, 100_000)
SECONDS = click.IntRange(1, 86_400)      # a day: Modal's own limit for a sandbox
CALL_SECONDS = click.IntRange(1, 3600)
TEMPERATURE = click.IntRange(0, 2000)
PER_CHECKPOINT = click.IntRange(1, 8)
ATTEMPT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,159}")


def _text(option, value):
    """An option's text must be Unicode (a lone surrogate from a mis-encoded argv is not): one line otherwise."""
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{option}: not Unicode text (a lone surrogate in the command line)") from None
    return value


def _positive(**values):
    for name, value in values.items():
        if value is not None and value <= 0:
            raise InputError(f"--{name.replace('_', '-')}: expected a positive integer")


# What an HTTP API sampler's attempt is planned at when `budget --sampler` is given without figures: the compact
# prompt (worker/prompt.py) opens a checkpoint with about 2,000 tokens (the published SmolLM2 attempt: 600 to
# 2,333), one call a checkpoint when its answer is accepted; reasoning tokens count as output.
API_PLAN = {"tokens_in": 2500, "tokens_out": 800, "calls_per_checkpoint": 1}


@cli.command()
@click.option("--model", required=True, help="Model id as in the price table, e.g. Qwen/Qwen3-8B.")
@click.option("--sampler", "sampler_name", type=click.Choice([n for n in SAMPLERS if n not in ("cache", "mock")]),
              default=None, help="The sampler planned for: with openai, anthropic or openai-compatible the figures "
              "default to the compact prompt's (--tokens-in 2500 --tokens-out 800 --calls-per-checkpoint 1).")
@prices_option
@click.option("--attempts", type=ATTEMPTS, default=1, show_default=True)
@click.option("--checkpoints", type=CHECKPOINTS, default=DEFAULT_HORIZON, show_default=True)
@click.option("--calls-per-checkpoint", type=PER_CHECKPOINT, default=None,
              help="Expected calls a checkpoint (default 3; the worst case uses the worker's limit).")
@click.option("--tokens-in", type=TOKENS, default=None, help="Assumed opening prompt tokens of a checkpoint "
              "(required unless --sampler names an HTTP API).")
@click.option("--tokens-out", type=TOKENS, default=None, help="Assumed output tokens per call (required unless "
              "--sampler names an HTTP API).")
@click.option("--max-tokens", type=MAX_TOKENS, default=2048, show_default=True, help="The per-call cap the ledger reserves.")
@click.option("--max-calls", type=MAX_CALLS, default=None, help="The attempt's call limit (execute --max-calls).")
@click.option("--worker-seconds", type=click.IntRange(0, 86_400), default=DEFAULT_WORKER_SECONDS, show_default=True,
              help="The worker's time limit the sandbox compute is priced over (execute's default).")
@click.option("--sandbox", type=click.Choice(["local", "modal"]), default="modal", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
def budget(model, sampler_name, prices, attempts, checkpoints, calls_per_checkpoint, tokens_in, tokens_out, max_tokens,
           max_calls, worker_seconds, sandbox, as_json):
    """Calls and USD for a planned attempt, before anything is spent."""
    plan = API_PLAN if sampler_name in API_SAMPLERS else {"calls_per_checkpoint": 3}
    tokens_in = plan.get("tokens_in") if tokens_in is None else tokens_in
    tokens_out = plan.get("tokens_out") if tokens_out is None else tokens_out
    calls_per_checkpoint = calls_per_checkpoint or plan["calls_per_checkpoint"]
    if tokens_in is None or tokens_out is None:
        raise click.UsageError("--tokens-in and --tokens-out are required (unless --sampler openai, anthropic or "
                               "openai-compatible plans the compact prompt)")
    est = estimate(load_prices(prices), model, attempts, checkpoints, calls_per_checkpoint, tokens_in, tokens_out,
                   max_tokens, worker_seconds, sandbox, max_calls)
    click.echo(json.dumps(est, sort_keys=True, indent=1) if as_json else render(est))


@cli.command()
@click.option("--family", required=True)
@click.option("--split", type=click.Choice(SPLITS), default="public-practice", show_default=True)
@click.option("--model", required=True)
@click.option("--cap-micro-usd", type=CAP, required=True, help="The inference cap in integer micro-USD (1 USD = 1000000).")
@click.option("--cap-tokens", type=click.IntRange(1, MAX_SAFE), required=True, help="The token cap (input + output).")
@click.option("--cap-sandbox-micro-usd", type=CAP, default=0, show_default=True,
              help="The sandbox compute cap in integer micro-USD (separate from inference).")
@click.option("--hours", type=HOURS, default=24, show_default=True, help="Hours until the claim expires.")
@click.option("--tokens-in", type=TOKENS, default=DEFAULT_TOKENS_IN, show_default=True,
              help="The plan's opening prompt tokens of a checkpoint (as `budget --tokens-in`).")
@click.option("--max-tokens", type=MAX_TOKENS, default=2048, show_default=True, help="The plan's per-call output cap.")
@click.option("--max-calls", type=MAX_CALLS, default=400, show_default=True, help="The plan's call limit.")
@click.option("--horizon", type=CHECKPOINTS, default=DEFAULT_HORIZON, show_default=True, help="The plan's checkpoints.")
@click.option("--worker-seconds", type=SECONDS, default=DEFAULT_WORKER_SECONDS, show_default=True,
              help="The plan's worker time limit.")
@click.option("--sandbox", type=click.Choice(["local", "modal"]), default=None,
              help="The plan's sandbox (default: local for the mock model, modal otherwise).")
@click.option("--accept-partial-budget", is_flag=True,
              help="Issue a claim whose caps are below the plan's worst case (recorded in the claim).")
@click.option("--local", "local", is_flag=True,
              help="A claim for a model run on this host (--sampler llama-cpp, or openai-compatible with "
                   "--local-server): planned at zero cost, local sandbox.")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="The claim file to write (new).")
@prices_option
@state_option
@project_option
def authorise(family, split, model, cap_micro_usd, cap_tokens, cap_sandbox_micro_usd, hours, tokens_in, max_tokens,
              max_calls, horizon, worker_seconds, sandbox, accept_partial_budget, local, out_path, prices, state,
              project):
    """Write a single-use authorisation claim (scope, caps, plan, expiry), registered in the project ledger.

    The caps are checked against the worker's worst case for the plan (`budget`'s figure): a claim that could
    be planned to halt is refused unless --accept-partial-budget, which the claim then says."""
    from launchers._project import project_dir
    _text("--model", model)
    if local:
        from launchers._sampler_llama import check_model_id
        check_model_id(model)
    plan = attempt_plan(load_prices(prices), model, tokens_in, max_tokens, max_calls, horizon, worker_seconds,
                        sandbox or ("local" if model == "mock" or local else "modal"),
                        price=FREE_PRICE if local else None)
    doc = write_claim(out_path, family, split, model, cap_micro_usd, cap_tokens, hours, state=state,
                      cap_sandbox_micro_usd=cap_sandbox_micro_usd, plan=plan,
                      accept_partial_budget=accept_partial_budget, project=project)
    c = doc["claim"]
    click.echo(f"claim {c['id']}: {c['scope']['family']}/{c['scope']['split']} on {c['scope']['model']}, cap "
               f"{format_usd(c['cap_micro_usd'])} and {c['cap_tokens']:,} tokens, sandbox "
               f"{format_usd(c['cap_sandbox_micro_usd'])}, expires {c['expires']} -> {out_path}")
    if c["partial_budget"]["accepted"]:
        click.echo(f"PARTIAL BUDGET (accepted, recorded in the claim): {'; '.join(c['partial_budget']['shortfalls'])}")
    else:
        click.echo(f"covers the worker's worst case for {plan_text(plan)}")
    click.echo(f"registered in {state_dir(state)} and {project_dir(project)}; it can be consumed once.")


@cli.command("self-check")
def self_check():
    """Exercise the controls that guard paid calls, deterministically (no cloud, no model)."""
    results = run_self_check()
    for r in results:
        click.echo(f"{'ok  ' if r['passed'] else 'FAIL'} {r['check']}: {r['detail']}")
    failed = [r for r in results if not r["passed"]]
    click.echo(f"self-check: {len(results) - len(failed)}/{len(results)} passed")
    return 1 if failed else 0


run_options = [
    click.option("--sandbox", "sandbox_name", type=click.Choice(["local", "modal"]), default=None,
                 help="Default: modal for a paid sampler, local for the others."),
    click.option("--worker-seconds", type=SECONDS, default=DEFAULT_WORKER_SECONDS, show_default=True),
    click.option("--call-deadline", type=CALL_SECONDS, default=120, show_default=True,
                 help="Seconds the controller waits for one call."),
    click.option("--max-tokens", type=MAX_TOKENS, default=2048, show_default=True, help="Per-call output cap."),
    click.option("--max-calls", type=MAX_CALLS, default=400, show_default=True),
    click.option("--horizon", type=CHECKPOINTS, default=DEFAULT_HORIZON, show_default=True),
    click.option("--temperature-milli", type=TEMPERATURE, default=None,
                 help="Sampling temperature x 1000 (default: 700 for tinker and mock; 0 for llama-cpp, anthropic and "
                      "openai-compatible, greedy; openai sends none)."),
    click.option("--sampling-seed", type=click.IntRange(0, MAX_SAFE), default=0, show_default=True),
]


def default_temperature(sampler_name) -> int:
    """Greedy (0) where a model on this host or an HTTP API can be asked for it; 700 for tinker and the mock."""
    return 0 if sampler_name in ("llama-cpp",) + API_SAMPLERS else 700


def local_model_options(fn):
    """--model-file and the thread counts: the local open-weights sampler's options (execute and freeze)."""
    for option in reversed([
        click.option("--model-file", type=click.Path(dir_okay=False), default=None,
                     help="With --sampler llama-cpp: the GGUF model file (run in this process; nothing is paid), or a "
                          "packaged model: packaged (SmolLM2-135M-Instruct), packaged:gemma3-270m (the Gemma 3 270M base model)."),
        click.option("--threads", type=click.IntRange(1, 256), default=1, show_default=True,
                     help="With --sampler llama-cpp: threads generating tokens."),
        click.option("--threads-batch", type=click.IntRange(1, 256), default=2, show_default=True,
                     help="With --sampler llama-cpp: threads evaluating the prompt.")]):
        fn = option(fn)
    return fn


def check_model_file(sampler_name, model_file):
    if model_file is not None and sampler_name != "llama-cpp":
        raise click.UsageError("--model-file goes with --sampler llama-cpp")
    if sampler_name == "llama-cpp" and model_file is None:
        raise click.UsageError("--sampler llama-cpp needs --model-file PATH.gguf")


def api_options(fn):
    """The HTTP API samplers' options (execute and freeze): openai, anthropic, openai-compatible."""
    for option in reversed([
        click.option("--base-url", default=None,
                     help="With --sampler openai-compatible: the server's URL, e.g. http://127.0.0.1:8080/v1 "
                          "(default: $FUNDBOOK_OPENAI_BASE_URL; recorded without credentials or query)."),
        click.option("--server-dialect", type=click.Choice(["openai", "llama-cpp-python"]), default="openai",
                     show_default=True,
                     help="With --sampler openai-compatible: the answer schema as a json_schema response format "
                          "(openai), or as llama-cpp-python's server takes it (json_object with the grammar schema, "
                          "and the in-process sampler's top_k, top_p, min_p, repeat_penalty)."),
        click.option("--local-server", is_flag=True,
                     help="With --sampler openai-compatible: the server runs on this host; priced at zero (the claim "
                          "comes from `authorise --local`), the local sandbox allowed."),
        click.option("--reasoning-effort", type=click.Choice(["none", "minimal", "low", "medium", "high"]),
                     default="low", show_default=True,
                     help="With --sampler openai: the Responses API's reasoning effort (none: not sent).")]):
        fn = option(fn)
    return fn


def check_api_options(sampler_name, base_url, local_server, server_dialect="openai", reasoning_effort="low"):
    if sampler_name != "openai-compatible" and (base_url or local_server or server_dialect != "openai"):
        raise click.UsageError("--base-url, --local-server and --server-dialect go with --sampler openai-compatible")
    if sampler_name != "openai" and reasoning_effort != "low":
        raise click.UsageError("--reasoning-effort goes with --sampler openai")


def with_run_options(fn):
    for option in reversed(run_options):
        fn = option(fn)
    return fn


@cli.command()
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="The freeze file to write "
              "(default place: <project>/freeze.json).")
@click.option("--model", "models", multiple=True, help="A model id the study runs (repeatable; required unless "
              "--sampler llama-cpp, whose default is the model file's name).")
@click.option("--sampler", "sampler_name", type=click.Choice([n for n in SAMPLERS if n != "cache"]), default="tinker",
              show_default=True, help="The study's sampler (a paid one runs in the modal sandbox).")
@click.option("--family", "families", required=True, multiple=True, help="A family the study runs (repeatable).")
@click.option("--seed", "seeds", type=SEED, required=True, multiple=True, help="A seed the study runs (repeatable).")
@click.option("--split", type=click.Choice(SPLITS), default="public-practice", show_default=True)
@click.option("--cap-micro-usd", type=CAP, required=True, help="Per-claim inference cap.")
@click.option("--cap-tokens", type=CAP, required=True, help="Per-claim token cap.")
@click.option("--cap-sandbox-micro-usd", type=CAP, required=True, help="Per-claim sandbox compute cap.")
@click.option("--project-cap-micro-usd", type=CAP, required=True, help="Project-wide inference cap.")
@click.option("--project-cap-sandbox-micro-usd", type=CAP, required=True, help="Project-wide sandbox compute cap.")
@click.option("--intervention-policy", required=True, help="What the operator may do once attempts run.")
@click.option("--estimate-tokens-in", type=TOKENS, default=DEFAULT_TOKENS_IN, show_default=True,
              help="The pilot's cost estimate: opening prompt tokens of a checkpoint (as `budget --tokens-in`).")
@click.option("--estimate-tokens-out", type=TOKENS, default=600, show_default=True,
              help="The pilot's cost estimate: output tokens per call.")
@click.option("--max-resumes", type=click.IntRange(0, 100), default=0, show_default=True,
              help="The intervention policy's enforced part: continuations (--resume-from) allowed per attempt.")
@click.option("--pilot-cap-micro-usd", type=CAP, default=None,
              help="The most the whole pilot may commit, inference and sandbox (default: the project's caps).")
@click.option("--estimate-calls-per-checkpoint", type=PER_CHECKPOINT, default=3, show_default=True,
              help="The pilot's cost estimate: calls a checkpoint.")
@click.option("--tiers", "tiers_path", type=click.Path(dir_okay=False), help="A tier plan (fundbook.tier-plan/1: "
              "cells, seeds and budget per tier, the order of sacrifice, the pilot's sd table; launchers/_tiers.py).")
@local_model_options
@api_options
@with_run_options
@prices_option
def freeze(out_path, models, sampler_name, families, seeds, split, cap_micro_usd, cap_tokens, cap_sandbox_micro_usd,
           project_cap_micro_usd, project_cap_sandbox_micro_usd, intervention_policy, estimate_tokens_in,
           estimate_tokens_out, estimate_calls_per_checkpoint, max_resumes, pilot_cap_micro_usd, model_file, threads,
           threads_batch, base_url, server_dialect, local_server, reasoning_effort, sandbox_name, worker_seconds,
           call_deadline, max_tokens, max_calls, horizon, temperature_milli, sampling_seed, prices, tiers_path=None):
    """Write freeze.json before the first paid call: code, prompt, schema, engine, config, models, prices, caps, and
    the pilot's criteria and cost estimate (a confirmatory attempt needs a passing pilot)."""
    from launchers import _freeze, _pilot
    from launchers._adapters import make_sampler_factory
    from launchers._attempt import pricing
    from launchers._controller import Limits
    from launchers._prices import sandbox_rate, table_sha256
    from launchers._sandbox_modal import modal_config
    check_model_file(sampler_name, model_file)
    if not models and sampler_name != "llama-cpp":
        raise click.UsageError("--model is required (unless --sampler llama-cpp names it from --model-file)")
    for m in models:
        _text("--model", m)
    check_api_options(sampler_name, base_url, local_server, server_dialect, reasoning_effort)
    paid = is_paid(sampler_name, local_server)
    sandbox_name = sandbox_name or ("modal" if paid else "local")
    if paid and sandbox_name == "local":
        raise click.UsageError("--sandbox local: a paid study runs in the modal sandbox")
    import engine
    for family in families:
        if family not in engine.FAMILIES:
            raise InputError(f"--family: expected one of {list(engine.FAMILIES)}, got {family!r}")
    table = load_prices(prices)
    temperature_milli = default_temperature(sampler_name) if temperature_milli is None else temperature_milli
    limits = Limits(worker_seconds, call_deadline, max_tokens, max_calls)
    local = {"model_file": model_file, "n_threads": threads, "n_threads_batch": threads_batch}
    api = {"base_url": base_url, "dialect": server_dialect, "local_server": local_server,
           "reasoning_effort": reasoning_effort, "offline": True}
    built = make_sampler_factory(sampler_name, None, call_deadline, temperature_milli, sampling_seed, environ={},
                                 local=local if sampler_name == "llama-cpp" else None,
                                 api=api if sampler_name in API_SAMPLERS else None)
    sampling = built.sampling  # the settings only (a local model: its file's sha256): the service is checked at execute
    if sampler_name == "llama-cpp":
        from launchers._sampler_llama import local_model_id
        models = [local_model_id(m, built, model_file) for m in models or [None]]
    models = list(models) or [built.model_id]
    config = {"sampler": sampler_name, "sandbox": modal_config() if sandbox_name == "modal" else {"name": "local"},
              "sampling": sampling, "limits": vars(limits), "horizon": horizon}
    estimates = {m: estimate(table, m, 1, horizon, estimate_calls_per_checkpoint, estimate_tokens_in,
                             min(estimate_tokens_out, max_tokens), max_tokens, worker_seconds, sandbox_name,
                             max_calls, price=pricing(sampler_name, m, table, sampling)[0])["expected_micro_usd"]
                 for m in models}
    body = _freeze.content(
        config=config, models=list(models), provider=sampler_name,
        prices={"models": {m: pricing(sampler_name, m, table, sampling)[0] for m in models},  # as execute books them
                "sandbox": {"name": sandbox_name, "micro_usd_per_second": sandbox_rate(table, sandbox_name)},
                "table_sha256": table_sha256(table)},
        families=list(families), split=split, seeds=list(seeds),
        caps={"claim_micro_usd": cap_micro_usd, "claim_tokens": cap_tokens,
              "claim_sandbox_micro_usd": cap_sandbox_micro_usd, "project_micro_usd": project_cap_micro_usd,
              "project_sandbox_micro_usd": project_cap_sandbox_micro_usd},
        intervention_policy=intervention_policy, intervention={"max_resumes": max_resumes},
        pilot=_pilot.terms(estimates, estimate_tokens_in, estimate_tokens_out, estimate_calls_per_checkpoint,
                           spend_cap=project_cap_micro_usd + project_cap_sandbox_micro_usd
                           if pilot_cap_micro_usd is None else pilot_cap_micro_usd))
    if tiers_path:
        body["tiers"] = _tier_plan(tiers_path, models, families, seeds)
    doc = _freeze.write_freeze(out_path, body)
    click.echo(f"freeze {doc['content_sha256'][:12]} ({doc['frozen_at']}): {', '.join(models)} on "
               f"{', '.join(sorted(families))} seeds {', '.join(str(s) for s in sorted(seeds))}, config "
               f"{body['config_hash'][:12]} -> {out_path}")
    click.echo("a confirmatory attempt under it needs a passing pilot (`fundbook-launch pilot`)")


@cli.command()
@click.option("--freeze", "freeze_path", type=click.Path(dir_okay=False), default=None,
              help="The freeze (default: <project>/freeze.json).")
@project_option
@click.option("--field", required=True, help="The frozen field that changes, dotted (e.g. config.limits.max_tokens_per_call).")
@click.option("--effective", required=True, help="The value in force from now on (JSON; plain text is a string).")
@click.option("--reason", required=True, help="Why it changed.")
def deviate(freeze_path, project, field, effective, reason):
    """Record a dated deviation from the freeze (field, original, effective, reason)."""
    from launchers import _freeze
    from launchers._project import project_dir
    from launchers._jsonfile import loads
    stripped = effective.strip()
    if stripped[:1] in ("{", "[", '"') or re.match(r"-?[0-9]", stripped) or stripped in ("true", "false", "null"):
        value = loads(effective, "--effective", "option")  # JSON, read strictly (no NaN, nesting bounded)
    else:
        value = effective  # plain text is a string
    path = freeze_path or os.path.join(project_dir(project), "freeze.json")
    entry = _freeze.deviate(path, field, value, reason)
    click.echo(f"deviation {entry['date']}: {field} {json.dumps(entry['original'])} -> {json.dumps(entry['effective'])} "
               f"({entry['reason']}) -> {_freeze.deviations_path(path)}")


@cli.command()
@click.option("--claim", "claim_path", required=True, type=click.Path(dir_okay=False), help="The claim file.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="A new (or empty) output directory.")
@click.option("--family", default=None, help="Required unless --resume-from or --replay-of names the task.")
@click.option("--seed", type=SEED, default=None)
@click.option("--split", type=click.Choice(SPLITS), default="public-practice", show_default=True)
@click.option("--model", default=None, help="Model id (default: mock for --sampler mock; a mock under a real model "
              "id is priced as that model, a projection).")
@click.option("--sampler", "sampler_name", type=click.Choice(SAMPLERS), default="mock", show_default=True)
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default=None,
              help="Decision cache (SQLite, or an attempt's cache.jsonl to replay): required for --sampler cache "
                   "(default with --replay-of DIR: DIR/cache.jsonl); records tinker/mock/llama-cpp answers otherwise.")
@local_model_options
@api_options
@with_run_options
@click.option("--attempt-id", default=None, help="Default: <label>-<family>-seed-<seed>-<claim id>.")
@click.option("--freeze", "freeze_path", type=click.Path(dir_okay=False), default=None,
              help="The freeze a paid attempt must match (default: <project>/freeze.json).")
@click.option("--resume-from", type=click.Path(), default=None,
              help="Continue an interrupted attempt (its folder) from its settled history, with this new claim.")
@click.option("--replay-of", type=click.Path(), default=None,
              help="With --sampler cache: the recorded attempt to reproduce (its salt, settings and receipts head).")
@click.option("--pilot", "pilot_path", type=click.Path(dir_okay=False), default=None,
              help="The passing pilot a confirmatory attempt under a freeze needs (default: <freeze dir>/pilot/pilot.json).")
@prices_option
@state_option
@project_option
def execute(claim_path, out, family, seed, split, model, sampler_name, cache_path, model_file, threads, threads_batch,
            base_url, server_dialect, local_server, reasoning_effort, sandbox_name, worker_seconds, call_deadline, max_tokens, max_calls, horizon, temperature_milli,
            sampling_seed, attempt_id, freeze_path, resume_from, replay_of, pilot_path, prices, state, project):
    """Run one attempt: the paid path, not a dry run. Consumes the claim first."""
    from launchers._adapters import make_sampler_factory, make_sandbox_factory
    from launchers._attempt import command_line, execute as run_attempt, load_source
    from launchers._controller import Limits

    _text("--model", model)
    if attempt_id is not None and not ATTEMPT_ID.fullmatch(attempt_id):
        raise InputError(f"--attempt-id {attempt_id!r}: expected letters, digits, '.', '_' and '-' (at most 160)")
    check_api_options(sampler_name, base_url, local_server, server_dialect, reasoning_effort)
    paid = is_paid(sampler_name, local_server)
    sandbox_name = sandbox_name or ("modal" if paid else "local")
    if paid and sandbox_name == "local":
        raise click.UsageError("--sandbox local: a paid sampler runs only in the modal sandbox (local is for mock "
                               "and cache: it is not an isolation boundary)")
    check_model_file(sampler_name, model_file)
    if sampler_name == "cache" and not cache_path and replay_of:  # a published attempt carries its answers
        exported = os.path.join(replay_of, "cache.jsonl") if os.path.isdir(replay_of) else None
        cache_path = exported if exported and os.path.isfile(exported) else None
    if sampler_name == "cache" and not cache_path:
        raise click.UsageError("--sampler cache needs --cache PATH")
    if replay_of and sampler_name != "cache":
        raise click.UsageError("--replay-of needs --sampler cache (a replay makes no provider call)")
    if replay_of and resume_from:
        raise click.UsageError("--replay-of and --resume-from: one or the other")
    replay_sampling = None
    source = resume_from or replay_of
    if source:  # the task, the model and the settings come from the recorded attempt
        c = load_source(source, "resume" if resume_from else "replay")["record"]["content"]
        for name, given, recorded in (("family", family, c["task"]["family"]), ("seed", seed, c["task"]["seed"]),
                                      ("model", model, c["model"]["id"])):
            if given is not None and given != recorded:
                raise click.UsageError(f"--{name} {given}: the recorded attempt has {recorded}")
        family, seed, model, horizon = c["task"]["family"], c["task"]["seed"], c["model"]["id"], c["task"]["horizon"]
        if replay_of:
            lim = c["limits"]
            worker_seconds, call_deadline = lim["worker_seconds"], lim["call_deadline_s"]
            max_tokens, max_calls = lim["max_tokens_per_call"], lim["max_calls"]
            replay_sampling = {k: v for k, v in c["sampling"].items() if k != "max_tokens_per_call"}
    if family is None or seed is None:
        raise click.UsageError("--family and --seed are required (unless --resume-from or --replay-of names them)")
    model = model or ("mock" if sampler_name == "mock" else None)
    if model is None and sampler_name != "llama-cpp":  # llama-cpp: the file's name unless --model names it
        raise click.UsageError(f"--model is required for --sampler {sampler_name}")
    _positive(worker_seconds=worker_seconds, call_deadline=call_deadline, max_tokens=max_tokens, max_calls=max_calls)
    if temperature_milli is None:
        temperature_milli = default_temperature(sampler_name)
    if sampler_name == "openai" and temperature_milli != default_temperature("openai"):
        raise click.UsageError("--temperature-milli: the openai sampler sends no temperature (reasoning models refuse "
                               "one); set --reasoning-effort")
    local = {"model_file": model_file, "n_threads": threads, "n_threads_batch": threads_batch}
    api = {"model": model, "base_url": base_url, "dialect": server_dialect, "local_server": local_server,
           "reasoning_effort": reasoning_effort}
    make_sampler = make_sampler_factory(sampler_name, cache_path, call_deadline, temperature_milli, sampling_seed,
                                        replay_sampling, local=local if sampler_name == "llama-cpp" else None,
                                        api=api if sampler_name in API_SAMPLERS else None)
    if sampler_name == "llama-cpp":
        from launchers._sampler_llama import local_model_id
        model = local_model_id(model, make_sampler, model_file)
    table = load_prices(prices)
    limits = Limits(worker_seconds, call_deadline, max_tokens, max_calls)
    make_sandbox = make_sandbox_factory(sandbox_name)
    record = run_attempt(claim_path=claim_path, out=out, family=family, seed=seed, split=split, model=model,
                         sampler_name=sampler_name, sandbox_name=sandbox_name, make_sampler=make_sampler,
                         make_sandbox=make_sandbox, prices=table, limits=limits, horizon=horizon,
                         attempt_id=attempt_id, state=state, paid=paid, freeze_path=freeze_path, project=project,
                         command_line=command_line(), resume_from=resume_from, replay_of=replay_of,
                         sampling=make_sampler.sampling, sandbox_config=make_sandbox.config, pilot_path=pilot_path)
    content = record["content"]
    click.echo(content["summary"])
    click.echo(f"record: {out}/record.json (content {record['content_sha256'][:12]})")
    replayed = content.get("replay_of")
    if replayed is not None:
        cost = content["cost"]
        click.echo(f"replay of {replayed['attempt_id']}: {cost['cache_hits']}/{cost['calls']} calls from the cache, "
                   f"{cost['micro_usd']} micro-USD; receipts head "
                   f"{'matches' if replayed['head_matches'] else 'DIFFERS from'} the recorded one")
        if not replayed["head_matches"]:
            return 1
    return 0 if content["termination"]["status"] == "completed" else 1


@cli.command()
@click.option("--freeze", "freeze_path", type=click.Path(dir_okay=False), default=None,
              help="The freeze whose configuration the pilot runs (default: <project>/freeze.json).")
@click.option("--claim", "claims", required=True, multiple=True, type=click.Path(dir_okay=False),
              help="A claim for one pilot attempt (repeatable: one per --seed, in order).")
@click.option("--seed", "seeds", type=SEED, required=True, multiple=True, help="A pilot seed (repeatable).")
@click.option("--family", default=None, help="Default: the freeze's family, when it has one.")
@click.option("--model", default=None, help="Default: the freeze's model, when it has one.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="A new folder for the attempts and pilot.json (default: <freeze dir>/pilot).")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default=None,
              help="Decision cache recording every answer (as execute --cache).")
@click.option("--model-file", type=click.Path(dir_okay=False), default=None,
              help="A frozen llama-cpp configuration: its GGUF file (checked against the frozen sha256).")
@click.option("--confirm-spend", type=CAP, default=None,
              help="Confirm the pilot's projected worst case (micro-USD, its claims' caps): required when above 0.")
@prices_option
@state_option
@project_option
def pilot(freeze_path, claims, seeds, family, model, out_dir, cache_path, model_file, confirm_spend, prices, state,
          project):
    """Run the pilot: one attempt of the frozen configuration per seed, judged from the records against the
    freeze's criteria (validity, failures, cost against the estimate, budget halts); writes pilot.json.

    Exit 0 when every criterion passes, 1 when one fails (a confirmatory execute is then refused)."""
    from launchers import _pilot, _pilot_run
    from launchers._attempt import command_line
    from launchers._project import project_dir
    freeze_path = freeze_path or os.path.join(project_dir(project), "freeze.json")
    out_dir = out_dir or os.path.dirname(_pilot.default_path(freeze_path))
    doc = _pilot_run.run(freeze_path=freeze_path, claims=list(claims), seeds=list(seeds), family=family, model=model,
                     out_dir=out_dir, prices=load_prices(prices), state=state, project=project, cache_path=cache_path,
                     command_line=command_line(), model_file=model_file, confirm_spend=confirm_spend)
    body = doc["content"]
    spend = body["spend"]
    click.echo(f"spend: at most {format_usd(spend['worst_case_micro_usd'])} confirmed "
               f"({format_usd(spend['confirmed_micro_usd'] or 0)}), pilot cap "
               f"{format_usd(spend['cap_micro_usd']) if spend['cap_micro_usd'] is not None else '-'}; committed "
               f"{format_usd(body['figures']['committed_micro_usd'])}")
    for c in body["criteria"]:
        click.echo(f"{c['result']} {c['criterion']:<13} {c['value'] if c['value'] is not None else '-':>6}  {c['rule']}")
    lat = doc["volatile"]["latency"]
    f = body["figures"]
    click.echo(f"{f['attempts']} attempts ({', '.join(f'{k} {v}' for k, v in f['statuses'].items())}), {f['calls']} "
               f"calls, cache hits {f['cache_hit_bps'] if f['cache_hit_bps'] is not None else '-'} bps, latency p50 "
               f"{lat.get('p50_ms', '-')} ms, p90 {lat.get('p90_ms', '-')} ms")
    click.echo(f"pilot {body['verdict']}: {os.path.join(out_dir, 'pilot.json')} (content {doc['content_sha256'][:12]})")
    return 0 if body["verdict"] == "PASS" else 1


@cli.command()
@click.argument("partial", type=click.Path(file_okay=False))
@click.option("--out", required=True, type=click.Path(file_okay=False), help="A new (or empty) output directory.")
@project_option
@state_option
def recover(partial, out, project, state):
    """Finish an attempt whose host died, from PARTIAL (its `<out>.partial` directory).

    Refused while the attempt is live (its lock is held). Whichever step the host
    died at: a folder that never consumed its claim is cleared (nothing was
    spent); a record already written is settled and moved; otherwise the attempt
    ends as an incomplete execution, its counts from the receipts, its open
    reservations unresolved liabilities, its claim consumed, the project ledger
    settled. Always exit 1."""
    from launchers._attempt import recover as recover_attempt
    record = recover_attempt(partial, out, project, state)
    click.echo(record["content"]["summary"])
    click.echo(f"record: {out}/record.json (content {record['content_sha256'][:12]})")
    return 1


@cli.command()
@click.argument("record_path", type=click.Path(dir_okay=False))
@project_option
def verify(record_path, project):
    """Check an attempt record: its hashes, that it tells what its receipts and ledger hold, and -- against the
    project ledger -- that its claim, prices and content are the ones registered, consumed and settled."""
    from launchers._verify import project_of, verify_attempt
    folder = project_of(record_path, project)
    found = verify_attempt(record_path, project=folder)
    c = found["record"]["content"]
    click.echo(f"{c['attempt_id']}: content verified and reconciled with {c['receipts_head']['size'] if c['receipts_head'] else 0} "
               f"receipts and {len(c['ledger']['entries'])} ledger entries; ended {c['termination']['status']}")
    bound = found["bound"]
    if bound is not None:
        click.echo(f"bound to {bound['ledger']}: the claim as authorised (entry {bound['authorise_entry']}), consumed "
                   f"(entry {bound['claim_entry']}) and settled by this very record (entry {bound['settle_entry']})"
                   + (f"; prices as frozen in {bound['freeze'][:12]}" if bound["freeze"] else ""))
        return 0
    from launchers._verify import _local
    if c["label"] == "model" and _local(c):  # a model on this host: nothing paid, so no ledger to bind to
        click.echo("a local-model attempt (nothing paid) is bound by its answers: `fundbook-launch rederive` replays it "
                   "from its cache.jsonl to the same receipts head (make verify does)")
        return 0
    if c["label"] == "model":
        raise InputError(f"{record_path}: a paid attempt is verified against its project ledger (--project DIR): "
                         f"only it shows the claim's caps and prices as authorised and the record as settled")
    click.echo("not checked against a project ledger (none found): a consistent rewrite of the record and its files "
               "would not be seen")
    return 0


@cli.command()
@project_option
@click.option("--attempts", "attempts_dir", type=click.Path(file_okay=False), default=None,
              help="Where the attempt folders are (default: the project directory).")
def ledger(project, attempts_dir):
    """The project ledger: claims, spend against the project caps, reconciled with the attempt records."""
    from launchers import _freeze
    from launchers._export import records_in
    from launchers._project import ProjectLedger, project_dir, reconcile
    folder = project_dir(project)
    book = ProjectLedger(folder)
    records = [r for r, _ in records_in(attempts_dir or folder)]
    t = book.totals()
    caps = None
    if os.path.exists(os.path.join(folder, "freeze.json")):
        doc, entries = _freeze.load(os.path.join(folder, "freeze.json"))
        caps = tuple(_freeze.project_caps(doc, entries, os.path.join(folder, "freeze.json")).values())
    click.echo(f"{book.path}: {t['claims']} claims ({len(t['open_claims'])} open), head {book.head['hash'][:12]}")
    click.echo(f"inference  charged {format_usd(t['charged_micro_usd'])}, unresolved "
               f"{format_usd(t['unresolved_micro_usd'])}, reserved {format_usd(t['reserved_micro_usd'])}"
               + (f" of the project cap {format_usd(caps[0])}" if caps else " (no freeze: no project cap)"))
    click.echo(f"sandbox    charged {format_usd(t['sandbox_charged_micro_usd'])}, unresolved "
               f"{format_usd(t['sandbox_unresolved_micro_usd'])}, reserved {format_usd(t['sandbox_reserved_micro_usd'])}"
               + (f" of the project cap {format_usd(caps[1])}" if caps else ""))
    paid = [r for r in records if r["content"]["label"] == "model" or book.claim_entry(r["content"]["claim"]["id"])]
    problems = reconcile(book, paid)
    for problem in problems:
        click.echo(f"MISMATCH {problem}")
    pilots = sum(1 for r in paid if r["content"].get("role") == "pilot")
    click.echo(f"reconciled with {len(paid)} attempt records ({pilots} pilot, {len(paid) - pilots} confirmatory or "
               f"other): {'ok' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


@cli.command()
@click.option("--attempts", "attempts_dir", type=click.Path(file_okay=False), default="runs/attempts",
              show_default=True)
@click.option("--out-dir", type=click.Path(file_okay=False), default="runs", show_default=True)
@click.option("--check", is_flag=True, help="Write nothing: verify every record and require the tables in --out-dir "
                                            "to be, byte for byte, their export (`make verify` runs this).")
def export(attempts_dir, out_dir, check):
    """Write attempts.parquet and calls.parquet (verified records only) beside the runs' tables."""
    from launchers._export import check_tables, write_tables
    counts = {}

    def pilots(name):  # the pilot's attempts are exported too (role "pilot"), and counted as such
        return f" ({counts['pilot']} pilot attempts)" if name == "attempts.parquet" else ""
    if check:
        for name, (path, rows) in sorted(check_tables(attempts_dir, out_dir, counts).items()):
            click.echo(f"ok      {path}: the export of the {rows} verified rows{pilots(name)}, byte for byte")
        return
    for name, (path, rows) in sorted(write_tables(attempts_dir, out_dir, counts).items()):
        click.echo(f"{path}: {rows} rows{pilots(name)}")


@cli.command()
@click.option("--attempts", "attempts_dir", type=click.Path(file_okay=False), default="runs/attempts",
              show_default=True)
def rederive(attempts_dir):
    """Replay every local-model (llama-cpp) attempt from its own cache.jsonl: same answers, same receipts head, 0 cost.

    Cache-only, no model loaded, a throwaway claim in a scratch folder; `make verify` runs it."""
    from launchers._rederive import rederive_all
    done = rederive_all(attempts_dir)
    for r in done:
        if r.get("nothing"):
            click.echo(f"ok      {r['attempt_id']}: no model answer to replay (its host stopped before the first call "
                       f"was answered; record and receipts verified) ({r['status']})")
            continue
        click.echo(f"ok      {r['attempt_id']}: {r['answers']} answers replayed from its cache.jsonl, receipts head "
                   f"{(r['receipts_head'] or {}).get('hash', '-')[:12]} ({r['status']})")
    empty = sum(1 for r in done if r.get("nothing"))
    click.echo(f"rederive: {len(done)} local-model attempts in {attempts_dir}: {len(done) - empty} reproduced from "
               f"their own cache, {empty} with no model answer to replay")


# -- the sandbox transport ---------------------------------------------------------------
@cli.group()
def sandbox():
    """The worker's Modal sandbox, without inference: build, launch, status, exec-worker, checkpoint, resume, stop."""


record_option = click.option("--record", "record_path", required=True, type=click.Path(dir_okay=False),
                             help="The transport record (fundbook.sandbox/1).")


@sandbox.command("build")
@click.option("--python", "python_version", default="3.11", show_default=True)
def sandbox_build(python_version):
    """Build the worker image (debian slim with Python; nothing else is installed)."""
    from launchers import _transport
    out = _transport.build_image(python_version=python_version)
    click.echo(f"image {out['image_id']} (python {out['python_version']})")


FIXTURE_NAMES = ("echo", "tools")  # launchers/_proofs.py


@sandbox.command("launch")
@record_option
@click.option("--family", required=True)
@click.option("--seed", type=SEED, required=True)
@click.option("--horizon", type=CHECKPOINTS, default=DEFAULT_HORIZON, show_default=True)
@click.option("--timeout", "timeout_s", type=SECONDS, default=1200, show_default=True, help="The sandbox's lifetime (s).")
@click.option("--cap-micro-usd", type=CAP, required=True, help="The compute cap for this sandbox.")
@click.option("--fixture", type=click.Choice(FIXTURE_NAMES), default=None,
              help="Stage a deterministic proof fixture (echo: the staged files; tools: the calculation tools).")
@prices_option
def sandbox_launch(record_path, family, seed, horizon, timeout_s, cap_micro_usd, fixture, prices):
    """Create a network-blocked sandbox holding the worker and the first packet (no model, no claim)."""
    from launchers import _transport
    doc = _transport.launch(record_path, family, seed, horizon, timeout_s, cap_micro_usd, load_prices(prices),
                            fixture=fixture)
    click.echo(f"sandbox {doc['sandbox_id']} in app {doc['app_name']} ({doc['app_id']}), up to "
               f"{format_usd(doc['max_micro_usd'])} -> {record_path}")


@sandbox.command("status")
@record_option
def sandbox_status(record_path):
    """Whether the sandbox runs, or its exit code."""
    from launchers import _transport
    s = _transport.status(record_path)
    state = "running" if s["running"] else f"exited {s['exit_code']}"
    click.echo(f"sandbox {s['sandbox_id']}: {state}; {s['checkpoints']} checkpoints"
               + (f"; stopped {s['stopped']['at']}" if s["stopped"] else ""))


@sandbox.command("exec-worker", context_settings={"ignore_unknown_options": True})
@record_option
@click.option("--timeout", "timeout_s", type=SECONDS, default=600, show_default=True)
@click.option("--fixture", type=click.Choice(FIXTURE_NAMES), default=None,
              help="Run the proof fixture staged at launch and compare its output with the host's.")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def sandbox_exec(record_path, timeout_s, fixture, argv):
    """Run a command in the sandbox (after --) and print its output; exit 0 only if it exited 0.

    With --fixture NAME: run the proof fixture and exit 0 only if its output is, byte for byte, the host's."""
    from launchers import _transport
    if fixture is not None:
        if argv:
            raise click.UsageError("--fixture runs the staged fixture: give no command after --")
        got = _transport.run_fixture(record_path, fixture, timeout_s)
        click.echo(f"fixture {fixture}: {'proof matches' if got['matches'] else 'MISMATCH'} (exit {got['exit_code']}, "
                   f"output sha256 {str(got['sha256'])[:12]}, expected {got['expected_sha256'][:12]})")
        if not got["matches"] and got["stderr"]:
            click.echo(got["stderr"], err=True, nl=not got["stderr"].endswith("\n"))
        return 0 if got["matches"] else 1
    out, err, code = _transport.exec_worker(record_path, list(argv), timeout_s)
    if out:
        click.echo(out, nl=not out.endswith("\n"))
    if err:
        click.echo(err, err=True, nl=not err.endswith("\n"))
    click.echo(f"exit {code}", err=True)
    return 0 if code == 0 else 1


@sandbox.command("checkpoint")
@record_option
def sandbox_checkpoint(record_path):
    """Snapshot the sandbox's filesystem (retained work included) into an image."""
    from launchers import _transport
    entry = _transport.checkpoint(record_path)
    click.echo(f"checkpoint image {entry['image_id']} at {entry['at']}")


@sandbox.command("resume")
@record_option
@click.option("--new-record", required=True, type=click.Path(dir_okay=False), help="The new transport record.")
@click.option("--timeout", "timeout_s", type=SECONDS, default=1200, show_default=True)
@click.option("--cap-micro-usd", type=CAP, required=True, help="The compute cap for the new sandbox.")
@prices_option
def sandbox_resume(record_path, new_record, timeout_s, cap_micro_usd, prices):
    """Start a new sandbox from the last checkpoint; write a new record linked to the old one."""
    from launchers import _transport
    doc = _transport.resume(record_path, new_record, timeout_s, cap_micro_usd, load_prices(prices))
    click.echo(f"sandbox {doc['sandbox_id']} from {doc['resumed_from']['image_id']} -> {new_record}")


@sandbox.command("stop")
@record_option
def sandbox_stop(record_path):
    """Terminate the sandbox and stop the app the launcher created; exit 1 (and no `stopped`) unless both were
    reached."""
    from launchers import _transport
    out = _transport.stop(record_path)
    click.echo(f"sandbox terminated: {out['sandbox_terminated']}; app stopped: {out['app_stopped']}")


def _tier_plan(path, models, families, seeds):
    """The tier plan, checked, within what the freeze names (every cell's model, family and seeds frozen)."""
    from launchers import _tiers
    from launchers._jsonfile import read_json
    plan = _tiers.check_plan(read_json(path, "the tier plan", 4 * 1024 * 1024), path)
    plan = dict(plan, budgets=_tiers.budgets(plan))  # the freeze records each tier's budget
    for tier in plan["tiers"]:
        for cell in tier["cells"]:
            outside = [s for s in cell["seeds"] if s not in seeds]
            if cell["model"] not in models or cell["family"] not in families or outside:
                raise InputError(f"{path}: {tier['name']}/{cell['name']}: {cell['model']} {cell['family']} "
                                 f"seeds {outside or cell['seeds']} are not all among the freeze's --model, --family "
                                 f"and --seed")
    return plan


def main():
    from ._common import leave
    try:
        cli(prog_name="fundbook-launch")
    except SystemExit as exc:  # the entry point only: in-process callers (tests) keep the ordinary exit
        leave(exc.code)
