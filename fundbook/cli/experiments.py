"""`fundbook sweep`, `fundbook compare` and `fundbook heldout`: the experiment
layer's commands (host only). The work lives in the `experiments` package,
imported when a command runs so that the other commands start fast."""

import os

import click

from engine import FAMILIES
from experiments.seeds import seed_param

from ._common import Integer, emit_json, json_option


def _plan_and_rows(out, families, seed_args, episodes, is_heldout, secret_file):
    from experiments import heldout
    from experiments.sweep import heldout_plan, plan_rows, practice_plan, read_doc

    families = list(families or FAMILIES)
    if is_heldout:
        if seed_args or episodes:
            raise click.UsageError("--heldout takes its worlds from the commitment: no --seeds or --episodes")
        commitment, _ = read_doc(
            os.path.join(out, "commitment.json"),
            "the published commitment (`fundbook heldout commit --out DIR/commitment.json`)",
        )
        heldout.check_commitment_doc(commitment, os.path.join(out, "commitment.json"))
        secret = heldout.read_secret(secret_file) if secret_file else None
        plan = heldout_plan(commitment)
        return plan, plan_rows(plan, secret, commitment), commitment
    if not seed_args:
        raise click.UsageError("give --seeds (practice worlds, e.g. `--seeds 1..200`) or --heldout")
    seeds = sorted({s for group in seed_args for s in group})
    plan = practice_plan(families, seeds, ("W1", "W2", "W3", "W4", "W5") if episodes else ())
    return plan, plan_rows(plan), None


@click.command()
@click.option(
    "--out",
    "-o",
    required=True,
    type=click.Path(file_okay=False),
    help="The sweep folder: items.jsonl, observations.jsonl/.parquet, sweep.json (resumed if present).",
)
@click.option(
    "--arm",
    "arm_specs",
    multiple=True,
    required=True,
    help="An arm: baseline:<policy>, gold, mutation:<name>, mutations, files:<dir>, attempts:<dir>, "
    "practitioners:<dir> (practitioner records), inspect:<log> (an Inspect log of "
    "inspect_fundbook/desk, re-executed), mock-worker, "
    "model:llama-cpp:<GGUF file> (a recorded local-model attempt per item; "
    "--workers 1), model:openai:MODEL, model:anthropic:MODEL, "
    "model:openai-compatible:MODEL@URL (an API model: a paid one under the project's "
    "freeze, each item's claim at its caps; the key from the environment, never "
    "recorded; experiments/arm_api.py); NAME=SPEC names it. Repeat for several.",
)
@click.option("--family", "families", type=click.Choice(FAMILIES), multiple=True, help="Families (default: all four).")
@click.option(
    "--seeds", "seed_args", multiple=True, type=seed_param(), help="Practice seeds: `1..200`, `1,5,9`, `1..10,20..30`."
)
@click.option("--episodes", is_flag=True, help="Add the hand-authored episodes W1..W5 (practice split).")
@click.option(
    "--heldout",
    "is_heldout",
    is_flag=True,
    help="The held-out split committed in OUT/commitment.json (needs --secret-file).",
)
@click.option("--secret-file", type=click.Path(dir_okay=False), help="The held-out secret (or a reveal.json).")
@click.option(
    "--comparison",
    "comparisons",
    multiple=True,
    type=click.Path(file_okay=False),
    help="A frozen comparison folder this sweep serves (recorded before any arm runs).",
)
@click.option(
    "--workers", default=1, show_default=True, type=Integer(1, 256), help="Local worker processes (1 to 256)."
)
@click.option(
    "--executor",
    default="local",
    show_default=True,
    type=click.Choice(["local", "modal"]),
    help="local: a process pool; modal: Function.map over chunks of items.",
)
@click.option(
    "--bundle",
    "bundle_dir",
    default="build/engine",
    show_default=True,
    type=click.Path(file_okay=False),
    help="The engine bundle the evaluator is frozen to.",
)
@click.option(
    "--pyodide-sample",
    default=8,
    show_default=True,
    type=click.IntRange(0),
    help="Items re-executed through the bundle in Pyodide (0: none, and the path says so).",
)
@click.option("--sample-seed", type=int, help="Seed of that sample (default: from the evaluator id).")
@click.option(
    "--pilot",
    type=click.IntRange(1),
    help="Only the feasibility pilot on N practice worlds: writes OUT/feasibility.json and stops.",
)
@click.option("--progress/--no-progress", default=True, show_default=True, help="A progress bar on stderr.")
@json_option
def sweep(
    out,
    arm_specs,
    families,
    seed_args,
    episodes,
    is_heldout,
    secret_file,
    comparisons,
    workers,
    executor,
    bundle_dir,
    pyodide_sample,
    sample_seed,
    pilot,
    progress,
    as_json,
):
    """Run arms over items: one observation row per (item, arm, seed, metric).

    Rows go to OUT/observations.jsonl and .parquet under one evaluator id, each item's
    rows hash-chained into OUT/journal.jsonl as they are written, after the frozen
    comparisons the sweep serves. A re-run reuses every (item, arm) whose rows still
    hash to the journal (and recomputes a sample of them); an edited row stops it.
    A sweep that serves only paired_betting comparisons runs the worlds in the committed
    order and stops where their pre-registered rules stop. Held-out sweeps need the
    commitment published first and a feasibility pilot (--pilot) before the run.
    """
    from experiments.arms import parse_arms
    from experiments.files import make_folder, write_atomic
    from experiments.sweep import Running, prepare, pretty, run_sweep

    arm_list = parse_arms(arm_specs)
    plan, rows, commitment = _plan_and_rows(out, families, seed_args, episodes, is_heldout, secret_file)
    if pilot:
        from experiments.feasibility import run_pilot

        fixed = prepare(out, plan, rows, arm_list, bundle_dir, comparisons)
        doc = run_pilot(out, plan, rows, arm_list, fixed["evaluator_id"], pilot, comparisons=fixed["comparisons"])
        make_folder(out)
        write_atomic(os.path.join(out, "feasibility.json"), pretty(doc))
        if as_json:
            emit_json(doc)
        else:
            p = doc["projection"]
            click.echo(
                f"pilot: {doc['pilot']['items']} practice worlds x {len(arm_list)} arms -> {out}/feasibility.json"
            )
            for name, arm in doc["per_arm"].items():
                click.echo(
                    f"  {name:<28} {arm['micros_per_item'] / 1000:9.1f} ms/item  "
                    f"{arm['tokens_in_per_item'] + arm['tokens_out_per_item']} tokens/item  "
                    f"{arm['micro_usd_per_item']} micro-USD/item"
                )
            click.echo(
                f"projection for {p['items']} items: {p['cpu_us'] / 1e6:.1f} CPU-s; local {p['local']['wall_us'] / 1e6:.1f} s "
                f"on {p['local']['workers']} workers; modal {p['modal']['wall_us'] / 1e6:.1f} s, "
                f"{p['modal']['compute_micro_usd']} micro-USD compute; inference {p['inference_micro_usd']} micro-USD"
            )

            def needed(table):
                return ", ".join(
                    f"{m} {w['worlds'] if w['worlds'] is not None else 'more than ' + str(w['cap'])}"
                    for m, w in table.items()
                )

            for name, c in (doc.get("power") or {}).items():
                against = (
                    f"; for the opposite verdict (an effect below the margin): {needed(c['worlds_needed_against'])}"
                    if c.get("worlds_needed_against")
                    else ""
                )
                click.echo(
                    f"  {name}: pilot effect {c['effect']['mean_difference']} (sd {c['effect']['sd']}); worlds "
                    f"for 80% power: {needed(c['worlds_needed'])}{against}"
                )
        return 0
    doc = run_sweep(
        out,
        plan,
        rows,
        arm_list,
        bundle_dir,
        comparisons=comparisons,
        commitment=commitment,
        running=Running(
            workers=workers, executor=executor, sample_size=pyodide_sample, sample_seed=sample_seed, progress=progress
        ),
    )
    if as_json:
        emit_json({k: doc[k] for k in ("evaluator_id", "counts", "files", "execution", "comparisons")})
    else:
        sample = doc["execution"]["pyodide_sample"]
        counts = doc["counts"]
        measured = (
            counts["items"] if counts["measured"] == counts["items"] else f"{counts['measured']} of {counts['items']}"
        )
        click.echo(
            f"sweep {out}: {measured} items x {counts['arms']} arms = "
            f"{counts['rows']} rows ({doc['volatile']['items_computed']} items computed now)"
        )
        if doc.get("sequential"):
            seq = doc["sequential"]
            click.echo(
                f"sequential: stopped after {seq['n']} worlds in the committed order ({seq['reason']}): "
                + "; ".join(
                    f"{name} at n {r['n']}, {r['verdict'] or 'not stopped'}" for name, r in seq["comparisons"].items()
                )
            )
        click.echo(f"evaluator {doc['evaluator_id']}")
        click.echo(
            f"path: {doc['execution']['path']}; "
            + (
                f"{sample['size']} sampled items re-executed through the bundle in Pyodide {sample['pyodide_version']}: identical"
                if sample.get("identical")
                else "no sampled re-execution through the bundle"
            )
        )
    return 0


@click.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--freeze", "do_freeze", is_flag=True, help="Hash and record DIRECTORY/spec.json (before any observation)."
)
@click.option("--sweep", "sweep_dir", type=click.Path(file_okay=False), help="Decide from this sweep's observations.")
@click.option(
    "--secret-file", type=click.Path(dir_okay=False), help="Reveal the held-out list (checked against the commitment)."
)
@click.option("--verify", "do_verify", is_flag=True, help="Recompute the decision from the files evidence.json lists.")
@json_option
def compare(directory, do_freeze, sweep_dir, secret_file, do_verify, as_json):
    """A pre-registered paired comparison: --freeze, then --sweep SWEEP, then --verify.

    The decision is the spec's rule -- paired_hoeffding or paired_empirical_bernstein at
    the last planned world, or paired_betting wherever its wealth stopped the sweep --
    for the weighted difference against the spec's margin: supported, not supported or
    inconclusive (and why), with DIRECTORY/result.json, the structured result:
    status succeeded, or failed when no decision could be drawn (a sweep that never
    finished). Every evidence file is read within its limit (16 MiB a
    document; observations, journal and Parquet 1 GiB and 4,000,000 rows; items
    512 MiB) and refused in one line beyond it.
    """
    from experiments import compare as cmp, heldout

    if sum(bool(x) for x in (do_freeze, sweep_dir, do_verify)) != 1:
        raise click.UsageError("give exactly one of --freeze, --sweep SWEEP or --verify")
    if do_freeze:
        doc = cmp.freeze(directory)
        emit_json(doc) if as_json else click.echo(
            f"frozen {directory}/spec.json: sha256 {doc['spec_sha256']} on {doc['frozen_on']}"
        )
        return 0
    if sweep_dir:
        decision = cmp.run_compare(directory, sweep_dir, heldout.read_secret(secret_file) if secret_file else None)
    else:
        decision = cmp.verify(directory)
    if as_json:
        emit_json(decision)
    else:
        why = f", {decision['inconclusive_because']}" if decision.get("inconclusive_because") else ""
        click.echo(
            f"{decision['comparison']}: {decision['verdict'].upper()} ({decision['confidence']} confidence{why})"
        )
        click.echo(
            f"  {decision['method']}: estimate {decision['estimate']['decimal']} {decision['metric']}, lower bound "
            f"{decision['lower_bound']}, upper bound {decision['upper_bound']} against margin "
            f"{decision['margin']} (n {decision['n']}, alpha {decision['alpha']})"
        )
        if decision.get("sequential"):
            seq = decision["sequential"]
            click.echo(
                f"  wealth for {seq['wealth_for']}, against {seq['wealth_against']} (threshold {seq['threshold']}): "
                f"{seq['reason']}"
            )
        if do_verify:
            click.echo("  verified: the decision recomputes from the evidence files and their sha256")
    return 0


@click.group()
def heldout():
    """The held-out split: a secret, and the commitment published before any arm runs."""


@heldout.command()
@click.option(
    "--secret-file",
    required=True,
    type=click.Path(dir_okay=False),
    help="The secret (created with 32 random bytes if absent; keep it private until the reveal).",
)
@click.option("--family", "families", type=click.Choice(FAMILIES), multiple=True, help="Families (default: all four).")
@click.option("--count", required=True, type=Integer(1, 1_000_000), help="Worlds in the split (at most 1000000).")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), help="Where to write commitment.json.")
@json_option
def commit(secret_file, families, count, out, as_json):
    """Write the salted sha256 commitment of a held-out world list drawn from a secret."""
    from experiments import heldout as ho
    from experiments.files import make_folder, write_atomic
    from experiments.sweep import pretty

    if os.path.lexists(out):
        raise click.UsageError(f"{out}: exists (a published commitment is never rewritten)")
    # everything is checked before a new secret is written: a refused commit leaves no file behind
    created = not os.path.lexists(secret_file)
    secret = ho.new_secret() if created else ho.read_secret(secret_file)
    doc = ho.commit(secret, list(families or FAMILIES), count)
    make_folder(os.path.dirname(os.path.abspath(out)))
    if created:
        ho.write_secret(secret_file, secret)
    try:
        write_atomic(out, pretty(doc))
    except Exception:
        if created:
            os.remove(secret_file)
        raise
    if as_json:
        emit_json(doc)
    else:
        click.echo(f"commitment {doc['sha256']} for {count} worlds of {', '.join(doc['families'])} -> {out}")
        if created:
            click.echo(f"new secret in {secret_file}: keep it private until the comparison is published")
    return 0
