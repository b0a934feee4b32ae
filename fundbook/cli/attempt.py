"""`fundbook-launch execute`, `pilot` and `recover`: one attempt from its claim to its record, the pilot's
attempts of a frozen configuration, and the end of an attempt whose host died."""

import os

import click

from launchers import SPLITS, InputError, sampler_names

from ._launch_options import (
    ATTEMPT_ID,
    CAP,
    SEED,
    api_options,
    env_file_option,
    local_model_options,
    positive,
    prices_option,
    project_option,
    sampler_own,
    state_option,
    text,
    with_run_options,
)


@click.command()
@click.option("--claim", "claim_path", required=True, type=click.Path(dir_okay=False), help="The claim file.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="A new (or empty) output directory.")
@click.option("--family", default=None, help="Required unless --resume-from or --replay-of names the task.")
@click.option("--seed", type=SEED, default=None)
@click.option("--split", type=click.Choice(SPLITS), default="public-practice", show_default=True)
@click.option(
    "--model",
    default=None,
    help="Model id (default: mock for --sampler mock; a mock under a real model "
    "id is priced as that model, a projection).",
)
@click.option("--sampler", "sampler_name", type=click.Choice(sampler_names()), default="mock", show_default=True)
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Decision cache (SQLite, or an attempt's cache.jsonl to replay): required for --sampler cache "
    "(default with --replay-of DIR: DIR/cache.jsonl); records tinker/mock/llama-cpp answers otherwise.",
)
@local_model_options
@api_options
@with_run_options
@env_file_option
@click.option("--attempt-id", default=None, help="Default: <label>-<family>-seed-<seed>-<claim id>.")
@click.option(
    "--freeze",
    "freeze_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="The freeze a paid attempt must match (default: <project>/freeze.json).",
)
@click.option(
    "--resume-from",
    type=click.Path(),
    default=None,
    help="Continue an interrupted attempt (its folder) from its settled history, with this new claim.",
)
@click.option(
    "--replay-of",
    type=click.Path(),
    default=None,
    help="With --sampler cache: the recorded attempt to reproduce (its salt, settings and receipts head).",
)
@click.option(
    "--pilot",
    "pilot_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="The passing pilot a confirmatory attempt under a freeze needs (default: <freeze dir>/pilot/pilot.json).",
)
@prices_option
@state_option
@project_option
def execute(
    claim_path,
    out,
    family,
    seed,
    split,
    model,
    sampler_name,
    cache_path,
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
    env_file,
    attempt_id,
    freeze_path,
    resume_from,
    replay_of,
    pilot_path,
    prices,
    state,
    project,
):
    """Run one attempt: the paid path, not a dry run. Consumes the claim first."""
    from launchers import (
        AttemptSpec,
        Limits,
        Places,
        SamplerOptions,
        Sources,
        Task,
        check_options,
        command_line,
        default_sandbox,
        load_prices,
        load_source,
        local_model_id,
        sampler_class,
    )
    from launchers import env_file_environment
    from launchers import execute as run_attempt
    from launchers import sampler as providers_sampler
    from launchers import sandbox as providers_sandbox

    ctx = click.get_current_context()
    text("--model", model)
    if attempt_id is not None and not ATTEMPT_ID.fullmatch(attempt_id):
        raise InputError(f"--attempt-id {attempt_id!r}: expected letters, digits, '.', '_' and '-' (at most 160)")
    own = check_options(sampler_name, sampler_own(ctx.params))
    environ = env_file_environment(env_file)  # None: the providers read os.environ
    paid = not sampler_class(sampler_name).free_for(
        {"local_server": 1 if own.get("local_server") else 0} if "local_server" in own else {}
    )
    sandbox_name = sandbox_name or default_sandbox(paid)
    if paid and sandbox_name == "local":
        raise click.UsageError(
            "--sandbox local: a paid sampler runs only in an isolated sandbox (modal, or "
            "local-isolated on this host; local is for mock and cache: it is not an isolation "
            "boundary)"
        )
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
        for name, given, recorded in (
            ("family", family, c["task"]["family"]),
            ("seed", seed, c["task"]["seed"]),
            ("model", model, c["model"]["id"]),
        ):
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
    positive(worker_seconds=worker_seconds, call_deadline=call_deadline, max_tokens=max_tokens, max_calls=max_calls)
    sampler_class(sampler_name).check_temperature(temperature_milli)
    sampler = providers_sampler(
        sampler_name,
        SamplerOptions(
            cache_path=cache_path,
            call_deadline_s=call_deadline,
            temperature_milli=temperature_milli,
            seed=sampling_seed,
            model=model,
            replay_sampling=replay_sampling,
            own=own,
            environ=environ,
        ),
    )
    if sampler_name == "llama-cpp":
        model = local_model_id(model, sampler, own.get("model_file"))
    spec = AttemptSpec(
        claim=claim_path,
        out=out,
        task=Task(family, seed, split, horizon),
        model=model,
        sampler=sampler,
        sandbox=providers_sandbox(sandbox_name),
        prices=load_prices(prices),
        limits=Limits(worker_seconds, call_deadline, max_tokens, max_calls),
        sources=Sources(resume_from, replay_of, freeze_path, pilot_path),
        places=Places(state, project),
        attempt_id=attempt_id,
        command_line=tuple(command_line()),
    )
    record = run_attempt(spec, environ=environ)
    content = record["content"]
    click.echo(content["summary"])
    click.echo(f"record: {out}/record.json (content {record['content_sha256'][:12]})")
    replayed = content.get("replay_of")
    if replayed is not None:
        cost = content["cost"]
        click.echo(
            f"replay of {replayed['attempt_id']}: {cost['cache_hits']}/{cost['calls']} calls from the cache, "
            f"{cost['micro_usd']} micro-USD; receipts head "
            f"{'matches' if replayed['head_matches'] else 'DIFFERS from'} the recorded one"
        )
        if not replayed["head_matches"]:
            return 1
    return 0 if content["termination"]["status"] == "completed" else 1


@click.command()
@click.option(
    "--freeze",
    "freeze_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="The freeze whose configuration the pilot runs (default: <project>/freeze.json).",
)
@click.option(
    "--claim",
    "claims",
    required=True,
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A claim for one pilot attempt (repeatable: one per --seed, in order).",
)
@click.option("--seed", "seeds", type=SEED, required=True, multiple=True, help="A pilot seed (repeatable).")
@click.option("--family", default=None, help="Default: the freeze's family, when it has one.")
@click.option("--model", default=None, help="Default: the freeze's model, when it has one.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="A new folder for the attempts and pilot.json (default: <freeze dir>/pilot).",
)
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Decision cache recording every answer (as execute --cache).",
)
@click.option(
    "--model-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="A frozen llama-cpp configuration: its GGUF file (checked against the frozen sha256).",
)
@click.option(
    "--confirm-spend",
    type=CAP,
    default=None,
    help="Confirm the pilot's projected worst case (micro-USD, its claims' caps): required when above 0.",
)
@env_file_option
@prices_option
@state_option
@project_option
def pilot(
    freeze_path,
    claims,
    seeds,
    family,
    model,
    out_dir,
    cache_path,
    model_file,
    confirm_spend,
    env_file,
    prices,
    state,
    project,
):
    """Run the pilot: one attempt of the frozen configuration per seed, judged from the records against the
    freeze's criteria (validity, failures, cost against the estimate, budget halts); writes pilot.json.

    Exit 0 when every criterion passes, 1 when one fails (a confirmatory execute is then refused)."""
    from launchers import (
        PilotSpec,
        Places,
        command_line,
        default_pilot_path,
        env_file_environment,
        format_usd,
        load_prices,
        project_dir,
        run_pilot,
    )

    freeze_path = freeze_path or os.path.join(project_dir(project), "freeze.json")
    out_dir = out_dir or os.path.dirname(default_pilot_path(freeze_path))
    doc = run_pilot(
        PilotSpec(
            freeze=freeze_path,
            claims=tuple(claims),
            seeds=tuple(seeds),
            out_dir=out_dir,
            prices=load_prices(prices),
            family=family,
            model=model,
            places=Places(state, project),
            cache_path=cache_path,
            model_file=model_file,
            confirm_spend=confirm_spend,
            command_line=tuple(command_line()),
        ),
        environ=env_file_environment(env_file),
    )
    body = doc["content"]
    spend = body["spend"]
    click.echo(
        f"spend: at most {format_usd(spend['worst_case_micro_usd'])} confirmed "
        f"({format_usd(spend['confirmed_micro_usd'] or 0)}), pilot cap "
        f"{format_usd(spend['cap_micro_usd']) if spend['cap_micro_usd'] is not None else '-'}; committed "
        f"{format_usd(body['figures']['committed_micro_usd'])}"
    )
    for c in body["criteria"]:
        click.echo(
            f"{c['result']} {c['criterion']:<13} {c['value'] if c['value'] is not None else '-':>6}  {c['rule']}"
        )
    lat = doc["volatile"]["latency"]
    f = body["figures"]
    click.echo(
        f"{f['attempts']} attempts ({', '.join(f'{k} {v}' for k, v in f['statuses'].items())}), {f['calls']} "
        f"calls, cache hits {f['cache_hit_bps'] if f['cache_hit_bps'] is not None else '-'} bps, latency p50 "
        f"{lat.get('p50_ms', '-')} ms, p90 {lat.get('p90_ms', '-')} ms"
    )
    d = body["decisions"]
    click.echo(
        f"per decision ({d['answered_calls']} answered calls): tokens in {d['tokens_in_per_decision']}, out "
        f"{d['tokens_out_per_decision']}, reasoning {d['reasoning_tokens_per_decision']}; paired differences "
        f"of {d['paired']['metric']} vs {d['paired']['baseline']}: n {d['paired']['n']}, sd "
        f"{d['paired']['sd'] if d['paired']['sd'] is not None else '- (under two attempts)'}"
    )
    click.echo(f"pilot {body['verdict']}: {os.path.join(out_dir, 'pilot.json')} (content {doc['content_sha256'][:12]})")
    return 0 if body["verdict"] == "PASS" else 1


@click.command()
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
    from launchers import recover as recover_attempt

    record = recover_attempt(partial, out, project, state)
    click.echo(record["content"]["summary"])
    click.echo(f"record: {out}/record.json (content {record['content_sha256'][:12]})")
    return 1
