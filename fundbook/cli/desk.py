"""`fundbook desk`: the evaluator-owned desk runtime over a SQLite history (init, packet, submit, advance,
replay, result)."""

import os

import click

import engine
from engine import MAX_BATCH_BYTES, History, exit_code_for, format_cents, load_family_root

from ._common import Integer, emit_json, expect_head_option, json_option, read_json, write_json
from ._render import decision_line, echo_result, packet_lines
from .grading import _fixture, episode_option, family_root_option


@click.group(cls=click.Group)
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
        raise click.BadParameter(
            f"{value}: not the checkout whose engine this command runs ({os.path.dirname(mine)}); "
            f"the option is only a check and may be left out",
            ctx,
            param,
        )
    return value


source_root_option = click.option(
    "--source-root",
    type=click.Path(file_okay=False),
    expose_value=False,
    callback=_source_root,
    help="Accepted as in the seed: must be this checkout (the desk runs its installed engine/).",
)


def _family_check(family_root):
    return load_family_root(family_root) if family_root else None


@desk.command()
@source_root_option
@episode_option
@family_root_option
@db_option
@click.option(
    "--observation-end-day",
    default=20,
    show_default=True,
    type=Integer(1, 200),
    help="The last checkpoint (observation horizon), 1..200.",
)
@click.option(
    "--salt",
    help="The world commitment's salt, 64 hex digits (default: a fresh secret one; give the "
    "salt a FINAL receipt revealed to reproduce that run).",
)
@json_option
def init(episode, family_root, db, observation_end_day, salt, as_json):
    """Create the history and fix the observation horizon.

    The receipts start from a salted commitment to the world, so nothing a desk
    sees before the end commits to what it has not been shown; the FINAL
    receipt reveals the salt.
    """
    run = History(db).init(_fixture(episode, family_root), observation_end_day, salt)
    out = {
        "db": db,
        "instance_id": run.instance["instance_id"],
        "fixture_sha256": run.fixture_sha256,
        "world_commitment": run.world_commitment,
        "horizon": run.horizon,
        "open_day": run.open_day,
        "head": run.head,
    }
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
    out = {
        "day": record["day"],
        "decisions": decisions,
        "cash": record["cash"],
        "breaches": record["breaches"],
        "open_day": run.open_day,
        "head": run.head,
    }
    if as_json:
        emit_json(out)
    else:
        click.echo(f"day {record['day']}: {record['accepted']} accepted, {record['refused']} refused")
        for d in decisions:
            click.echo(decision_line(d))
        click.echo(
            f"settled: cash {format_cents(record['cash'])}"
            + (f", breaches {record['breaches']}" if record["breaches"] else "")
        )
        click.echo(
            f"next open day: {run.open_day}"
            if run.open_day
            else "every checkpoint is closed: run `desk result --finalize`"
        )
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

    out = {
        "verified": True,
        "receipts": run.head["size"],
        "head": run.head,
        "state_hash": state_hash(run.book),
        "open_day": run.open_day,
        "finalized": run.finalized,
    }
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
@click.option(
    "--finalize", is_flag=True, help="Close the run: remaining checkpoints unanswered, then the carry horizon."
)
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
        out = {
            "status": "OPEN",
            "open_day": run.open_day,
            "horizon": run.horizon,
            "message": "not finalised: no score until `desk result --finalize`",
        }
        if as_json:
            emit_json(out)
        else:
            click.echo(
                f"status   OPEN (day {run.open_day} of {run.horizon} open)"
                if run.open_day is not None
                else f"status   OPEN (every checkpoint (1..{run.horizon}) is closed; not finalised)"
            )
            click.echo("score    none until the run is finalised (`fundbook desk result --finalize`)")
        return 1
    if as_json:
        emit_json(res)
    else:
        echo_result(res)
    return exit_code_for(res)
