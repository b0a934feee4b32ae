"""fundbook-launch: the paid model-worker path.

Exit codes: 0 ok (an attempt that completed); 1 refused (claim, budget, input,
output directory) or an attempt that ended incomplete (its record is still
written); 64 usage error.
"""

import json

import click

from ._budget import estimate, render
from ._claims import SPLITS, authorise as write_claim, state_dir
from engine.cli._common import FundbookGroup

from ._errors import InputError, LaunchError
from ._prices import format_usd, load_prices
from ._record import read_record
from ._selfcheck import run_self_check


class LaunchGroup(FundbookGroup):
    """The evaluator CLI's error handling: usage errors exit 64 (never click's 2,
    which means UNSCORABLE here); expected failures print one line."""

    expected_errors = (LaunchError,)

    def report(self, exc):
        exc.show()


@click.group(cls=LaunchGroup, context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """fundbook-launch: budget, authorise and execute a model attempt on the desk.

    Paid calls need a single-use claim from `authorise` and a budget; every
    attempt, complete or not, leaves a fundbook.attempt/1 record.
    """


prices_option = click.option("--prices", type=click.Path(dir_okay=False), default=None,
                             help="Price table file (default: launchers/prices.json).")
state_option = click.option("--state", type=click.Path(file_okay=False), default=None,
                            help="Claim registry directory (default: $FUNDBOOK_LAUNCH_STATE or ~/.fundbook-launch).")


@cli.command()
@click.option("--model", required=True, help="Model id as in the price table, e.g. Qwen/Qwen3-8B.")
@prices_option
@click.option("--attempts", type=int, default=1, show_default=True)
@click.option("--checkpoints", type=int, default=20, show_default=True)
@click.option("--calls-per-checkpoint", type=int, default=3, show_default=True)
@click.option("--tokens-in", type=int, required=True, help="Assumed prompt tokens per call.")
@click.option("--tokens-out", type=int, required=True, help="Assumed output tokens per call.")
@click.option("--max-tokens", type=int, default=2048, show_default=True, help="The per-call cap the ledger reserves.")
@click.option("--worker-seconds", type=int, default=0, show_default=True)
@click.option("--sandbox", type=click.Choice(["local", "modal"]), default="modal", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
def budget(model, prices, attempts, checkpoints, calls_per_checkpoint, tokens_in, tokens_out, max_tokens,
           worker_seconds, sandbox, as_json):
    """Calls and USD for a planned attempt, before anything is spent."""
    est = estimate(load_prices(prices), model, attempts, checkpoints, calls_per_checkpoint, tokens_in, tokens_out,
                   max_tokens, worker_seconds, sandbox)
    click.echo(json.dumps(est, sort_keys=True, indent=1) if as_json else render(est))


@cli.command()
@click.option("--family", required=True)
@click.option("--split", type=click.Choice(SPLITS), default="public-practice", show_default=True)
@click.option("--model", required=True)
@click.option("--cap-micro-usd", type=int, required=True, help="The USD cap in integer micro-USD (1 USD = 1000000).")
@click.option("--cap-tokens", type=int, required=True, help="The token cap (input + output).")
@click.option("--hours", type=int, default=24, show_default=True, help="Hours until the claim expires.")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="The claim file to write (new).")
@state_option
def authorise(family, split, model, cap_micro_usd, cap_tokens, hours, out_path, state):
    """Write a single-use authorisation claim (scope, caps, expiry)."""
    doc = write_claim(out_path, family, split, model, cap_micro_usd, cap_tokens, hours, state=state)
    c = doc["claim"]
    click.echo(f"claim {c['id']}: {c['scope']['family']}/{c['scope']['split']} on {c['scope']['model']}, cap "
               f"{format_usd(c['cap_micro_usd'])} and {c['cap_tokens']:,} tokens, expires {c['expires']} -> {out_path}")
    click.echo(f"registered in {state_dir(state)}; it can be consumed once.")


@cli.command("self-check")
def self_check():
    """Exercise the budget controls deterministically (no cloud, no model)."""
    results = run_self_check()
    for r in results:
        click.echo(f"{'ok  ' if r['passed'] else 'FAIL'} {r['check']}: {r['detail']}")
    failed = [r for r in results if not r["passed"]]
    click.echo(f"self-check: {len(results) - len(failed)}/{len(results)} passed")
    return 1 if failed else 0


@cli.command()
@click.option("--claim", "claim_path", required=True, type=click.Path(dir_okay=False), help="The claim file.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="A new (or empty) output directory.")
@click.option("--family", required=True)
@click.option("--seed", type=int, required=True)
@click.option("--split", type=click.Choice(SPLITS), default="public-practice", show_default=True)
@click.option("--model", default=None, help="Model id (default: mock for --sampler mock).")
@click.option("--sampler", "sampler_name", type=click.Choice(["mock", "cache", "tinker"]), default="mock",
              show_default=True)
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default=None,
              help="Decision cache (SQLite): required for --sampler cache; records tinker/mock answers otherwise.")
@click.option("--sandbox", "sandbox_name", type=click.Choice(["local", "modal"]), default="local", show_default=True)
@click.option("--worker-seconds", type=int, default=1200, show_default=True)
@click.option("--call-deadline", type=int, default=120, show_default=True, help="Seconds the controller waits for one call.")
@click.option("--max-tokens", type=int, default=2048, show_default=True, help="Per-call output cap.")
@click.option("--max-calls", type=int, default=400, show_default=True)
@click.option("--horizon", type=int, default=20, show_default=True)
@click.option("--attempt-id", default=None, help="Default: <label>-<family>-seed-<seed>-<claim id>.")
@prices_option
@state_option
def execute(claim_path, out, family, seed, split, model, sampler_name, cache_path, sandbox_name, worker_seconds,
            call_deadline, max_tokens, max_calls, horizon, attempt_id, prices, state):
    """Run one attempt: the paid path, not a dry run. Consumes the claim first."""
    from ._adapters import make_sampler_factory, make_sandbox_factory
    from ._attempt import execute as run_attempt
    from ._controller import Limits

    if sampler_name == "cache" and not cache_path:
        raise click.UsageError("--sampler cache needs --cache PATH")
    model = model or ("mock" if sampler_name == "mock" else None)
    if model is None:
        raise click.UsageError("--model is required for --sampler tinker and cache")
    for name, value in (("worker-seconds", worker_seconds), ("call-deadline", call_deadline),
                        ("max-tokens", max_tokens), ("max-calls", max_calls)):
        if value <= 0:
            raise InputError(f"--{name}: expected a positive integer")
    table = load_prices(prices)
    limits = Limits(worker_seconds, call_deadline, max_tokens, max_calls)
    record = run_attempt(claim_path=claim_path, out=out, family=family, seed=seed, split=split, model=model,
                         sampler_name=sampler_name, sandbox_name=sandbox_name,
                         make_sampler=make_sampler_factory(sampler_name, cache_path, call_deadline),
                         make_sandbox=make_sandbox_factory(sandbox_name), prices=table, limits=limits,
                         horizon=horizon, attempt_id=attempt_id, state=state)
    content = record["content"]
    click.echo(content["summary"])
    click.echo(f"record: {out}/record.json (content {record['content_sha256'][:12]})")
    return 0 if content["termination"]["status"] == "completed" else 1


@cli.command()
@click.argument("partial", type=click.Path(file_okay=False))
@click.option("--out", required=True, type=click.Path(file_okay=False), help="A new (or empty) output directory.")
def recover(partial, out):
    """Record an attempt whose host died: assemble it from PARTIAL (its `<out>.partial` directory).

    The attempt ends as an infrastructure interruption; open reservations stay
    unresolved liabilities; the claim stays consumed."""
    from ._attempt import recover as recover_attempt
    record = recover_attempt(partial, out)
    click.echo(record["content"]["summary"])
    click.echo(f"record: {out}/record.json (content {record['content_sha256'][:12]})")
    return 1


@cli.command()
@click.argument("record_path", type=click.Path(dir_okay=False))
def verify(record_path):
    """Check an attempt record: schema version, content hash, transcript, receipts and ledger hashes."""
    record = read_record(record_path)
    c = record["content"]
    click.echo(f"{c['attempt_id']}: content {record['content_sha256'][:12]} verified; ended {c['termination']['status']}")


def main():
    cli(prog_name="fundbook-launch")
