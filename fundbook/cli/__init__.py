"""The evaluator-side command line (host only: it needs click, and it exposes
gold reports and mutations, so it never goes into a worker or the bundle)."""

import os

import click

import engine
from engine import (EPISODES, FAMILIES, format_cents, MUTATION_NOTES, MUTATIONS, History, exit_code_for,
                    load_episode, load_family_root)

from engine import MAX_BATCH_BYTES, MAX_CANDIDATE_BYTES

from ._common import FundbookGroup, Integer, emit_json, expect_head_option, json_option, leave, read_json, write_json
from ._render import decision_line, echo_result, packet_lines
from .tools import tools
from experiments.seeds import seed_param


@click.group(cls=FundbookGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(engine.ENGINE_VERSION, prog_name="fundbook")
def cli():
    """fundbook: the evaluator side of the back-to-back funding desk.

    Exit codes: 0 success; 1 rejected batch, candidate error, input error or a
    run that is not scoreable; 2 UNSCORABLE only; 64 usage error.
    """


def _fixture(episode, family_root):
    if (episode is None) == (family_root is None):
        raise click.UsageError("give exactly one of --episode or --family-root")
    return load_episode(episode) if episode else load_family_root(family_root)


episode_option = click.option("--episode", type=click.Choice(EPISODES), help="A hand-authored episode W1..W5.")
family_root_option = click.option("--family-root", type=click.Path(file_okay=False),
                                  help="A family instance folder written by `fundbook families`.")


# -- grading ----------------------------------------------------------------------

@cli.command()
@episode_option
@family_root_option
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the candidate here (default: stdout).")
@json_option
def gold(episode, family_root, output, as_json):
    """Emit the gold candidate (the reference plan's actions and reports for every day).

    Without --output the candidate itself is printed (JSON); with --output, a
    summary line (or, with --json, a summary object).
    """
    candidate = engine.gold_candidate(_fixture(episode, family_root))
    if not output:
        emit_json(candidate)
        return 0
    write_json(output, candidate)
    summary = {"instance_id": candidate["instance_id"], "fixture_sha256": candidate["fixture_sha256"],
               "batches": len(candidate["batches"]), "output": output,
               "candidate_sha256": engine.content_sha256(candidate)}
    if as_json:
        emit_json(summary)
    else:
        click.echo(f"gold candidate for {candidate['instance_id']}: {len(candidate['batches'])} batches -> {output}")
    return 0


@cli.command()
@click.argument("candidate", type=click.Path())
@episode_option
@family_root_option
@json_option
def grade(candidate, episode, family_root, as_json):
    """Grade a CANDIDATE file against an episode or family instance.

    Prints the status, then the verdict with its gates, then the score out of 100.
    """
    instance = _fixture(episode, family_root)
    result = engine.grade_candidate(read_json(candidate, "a candidate", MAX_CANDIDATE_BYTES), instance)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"{instance['instance_id']}  fixture {engine.fixture_sha256(instance)}")
        echo_result(result)
    return exit_code_for(result)


@cli.command()
@click.argument("name", type=click.Choice(MUTATIONS), required=False)
@episode_option
@family_root_option
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the mutated candidate here (default: stdout).")
@click.option("--list", "list_only", is_flag=True, help="List the mutations and their expected outcomes.")
@json_option
def mutate(name, episode, family_root, output, list_only, as_json):
    """Emit the named mutation NAME of the gold candidate (an adverse fixture with its expected outcome)."""
    if list_only:
        if as_json:
            emit_json({m: MUTATION_NOTES[m] for m in MUTATIONS})
        else:
            for m in MUTATIONS:
                click.echo(f"{m:<24} {MUTATION_NOTES[m]}")
        return 0
    if name is None:
        raise click.UsageError("missing the mutation NAME (see --list)")
    candidate, expected = engine.mutate(name, _fixture(episode, family_root))
    if output:
        write_json(output, candidate)
        if as_json:
            emit_json({"mutation": name, "output": output, "expected": expected})
        else:
            click.echo(f"{name} for {candidate['instance_id']} -> {output}")
            click.echo(f"expected outcome: {engine.canonical_json(expected).decode()}")
    else:
        emit_json(candidate)
    return 0


# -- family generator ---------------------------------------------------------------

@cli.command()
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False), help="Folder to write <FAMILY>/seed-<N>/instance.json into.")
@click.option("--seeds", required=True, type=seed_param(), multiple=True,
              help="Seeds: `--seeds 1 2 3`, `--seeds 1..200` or `--seeds 1,5,9` (or repeat the option).")
@click.argument("more_seeds", nargs=-1, type=seed_param(), metavar="")
@click.option("--family", "families", type=click.Choice(FAMILIES), multiple=True, help="Families (default: all four).")
@json_option
def families(output, seeds, more_seeds, families, as_json):
    """Write practice family instances for the given seeds into a folder."""
    seeds = sorted({s for group in tuple(seeds) + tuple(more_seeds) for s in group})
    written = []
    for family in families or FAMILIES:
        for seed in seeds:
            instance = engine.generate(family, seed)
            path = engine.write_family_root(os.path.join(output, family, f"seed-{seed}"), instance)
            written.append({"instance_id": instance["instance_id"], "path": path,
                            "fixture_sha256": engine.fixture_sha256(instance)})
    if as_json:
        emit_json({"written": written})
    else:
        for w in written:
            click.echo(f"{w['instance_id']:<16} {w['fixture_sha256'][:16]}  {w['path']}")
    return 0


# -- the desk runtime -------------------------------------------------------------

@cli.group(cls=click.Group)
def desk():
    """The evaluator-owned desk runtime over a SQLite history."""


db_option = click.option("--db", required=True, type=click.Path(dir_okay=False), help="The SQLite history file.")


def _source_root(ctx, param, value):
    """The seed's desk_runtime.py took --source-root (the evaluator's sources); fundbook runs the installed engine
    package, so the option is accepted only as a check: DIR must be the checkout whose engine/ this command runs."""
    if value is None:
        return value
    mine = os.path.dirname(os.path.abspath(engine.__file__))
    theirs = os.path.join(value, "engine")
    if not (os.path.isdir(theirs) and os.path.samefile(theirs, mine)):
        raise click.BadParameter(f"{value}: not the checkout whose engine this command runs ({os.path.dirname(mine)}); "
                                 f"the option is only a check and may be left out", ctx, param)
    return value


source_root_option = click.option("--source-root", type=click.Path(file_okay=False), expose_value=False,
                                  callback=_source_root, help="Accepted as in the seed: must be this checkout "
                                  "(the desk runs its installed engine/).")


def _family_check(family_root):
    return load_family_root(family_root) if family_root else None


@desk.command()
@source_root_option
@episode_option
@family_root_option
@db_option
@click.option("--observation-end-day", default=20, show_default=True, type=Integer(1, 200),
              help="The last checkpoint (observation horizon), 1..200.")
@click.option("--salt", help="The world commitment's salt, 64 hex digits (default: a fresh secret one; give the "
                             "salt a FINAL receipt revealed to reproduce that run).")
@json_option
def init(episode, family_root, db, observation_end_day, salt, as_json):
    """Create the history and fix the observation horizon.

    The receipts start from a salted commitment to the world, so nothing a desk
    sees before the end commits to what it has not been shown; the FINAL
    receipt reveals the salt.
    """
    run = History(db).init(_fixture(episode, family_root), observation_end_day, salt)
    out = {"db": db, "instance_id": run.instance["instance_id"], "fixture_sha256": run.fixture_sha256,
           "world_commitment": run.world_commitment, "horizon": run.horizon, "open_day": run.open_day, "head": run.head}
    if as_json:
        emit_json(out)
    else:
        click.echo(f"initialised {db}: {out['instance_id']} observed to day {run.horizon}; open day {run.open_day}")
    return 0


@desk.command()
@source_root_option
@db_option
@family_root_option
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the packet JSON here.")
@expect_head_option
@json_option
def packet(db, family_root, output, expect_head, as_json):
    """Export the current read-only packet for the open day."""
    pkt = History(db).packet(_family_check(family_root), expect_head)
    if output:
        write_json(output, pkt)
    if as_json:
        emit_json(pkt)
    else:
        for line in packet_lines(pkt):
            click.echo(line)
        if output:
            click.echo(f"packet for day {pkt['day']} -> {output}")
    return 0


@desk.command()
@source_root_option
@db_option
@family_root_option
@click.option("--input", "-i", "input_path", required=True, type=click.Path(), help="The batch JSON file.")
@expect_head_option
@json_option
def submit(db, family_root, input_path, expect_head, as_json):
    """Validate one batch and settle its accepted actions, atomically.

    A batch file is at most 64 KiB (see the contract's limits).
    """
    batch = read_json(input_path, "a batch {day, report, actions}", MAX_BATCH_BYTES)
    run, decisions, record = History(db).submit(batch, _family_check(family_root), expect_head)
    out = {"day": record["day"], "decisions": decisions, "cash": record["cash"], "breaches": record["breaches"],
           "open_day": run.open_day, "head": run.head}
    if as_json:
        emit_json(out)
    else:
        click.echo(f"day {record['day']}: {record['accepted']} accepted, {record['refused']} refused")
        for d in decisions:
            click.echo(decision_line(d))
        click.echo(f"settled: cash {format_cents(record['cash'])}" + (f", breaches {record['breaches']}" if record["breaches"] else ""))
        click.echo(f"next open day: {run.open_day}" if run.open_day else "every checkpoint is closed: run `desk result --finalize`")
    return 0


@desk.command()
@source_root_option
@db_option
@family_root_option
@expect_head_option
@json_option
def advance(db, family_root, expect_head, as_json):
    """Close the open checkpoint without a batch (the day counts as missed)."""
    run, record = History(db).advance(_family_check(family_root), expect_head)
    if as_json:
        emit_json({"closed_day": record["day"], "open_day": run.open_day, "head": run.head})
    else:
        click.echo(f"day {record['day']} closed without a batch; open day: {run.open_day}")
    return 0


@desk.command()
@source_root_option
@db_option
@family_root_option
@expect_head_option
@json_option
def replay(db, family_root, expect_head, as_json):
    """Rebuild the book from the receipts alone and verify every receipt.

    A finalised run is also re-graded, and its stored result must equal the
    re-derived one.
    """
    history = History(db)
    meta, run = history.load(_family_check(family_root), expect_head)
    from engine import state_hash
    out = {"verified": True, "receipts": run.head["size"], "head": run.head, "state_hash": state_hash(run.book),
           "open_day": run.open_day, "finalized": run.finalized}
    if as_json:
        emit_json(out)
    else:
        click.echo(f"replay verified: {run.head['size']} receipts, head {run.head['hash']}")
        click.echo(f"state {out['state_hash']}")
        if run.finalized:
            click.echo("result re-derived from the receipts: equal to the FINAL receipt and to the stored result")
    return 0


@desk.command()
@source_root_option
@db_option
@family_root_option
@click.option("--finalize", is_flag=True, help="Close the run: remaining checkpoints unanswered, then the carry horizon.")
@expect_head_option
@json_option
def result(db, family_root, finalize, expect_head, as_json):
    """Status, qualification verdict and score (--finalize closes the run).

    The result is re-derived from the receipts every time (replay, then
    grading) and checked against the FINAL receipt and the stored copy; any
    difference is an error naming the field.
    """
    history = History(db)
    state, res, run = history.result(_family_check(family_root), expect_head)
    if state == "open" and finalize:
        run, res = history.finalize(_family_check(family_root), expect_head)
        state = "finalized"
    if state == "open":
        out = {"status": "OPEN", "open_day": run.open_day, "horizon": run.horizon,
               "message": "not finalised: no score until `desk result --finalize`"}
        if as_json:
            emit_json(out)
        else:
            click.echo(f"status   OPEN (day {run.open_day} of {run.horizon} open)" if run.open_day is not None else
                       f"status   OPEN (every checkpoint (1..{run.horizon}) is closed; not finalised)")
            click.echo("score    none until the run is finalised (`fundbook desk result --finalize`)")
        return 1
    if as_json:
        emit_json(res)
    else:
        echo_result(res)
    return exit_code_for(res)


cli.add_command(tools)


def main():
    try:
        cli(prog_name="fundbook")
    except SystemExit as exc:  # the entry point only: in-process callers (tests) keep the ordinary exit
        leave(exc.code)
from . import experiments  # noqa: E402,F401  (registers sweep, compare and heldout)
from . import practitioner  # noqa: E402,F401  (registers practitioner import and verify)
from . import inspect  # noqa: E402,F401  (registers inspect import and verify)
