"""`fundbook inspect import` and `fundbook inspect verify`: runs of the desk made in Inspect AI
(`inspect eval inspect_fundbook/desk`), re-executed and published as attempt records (launchers/inspect)."""

import click

from engine import score_text

from ._common import emit_json, emit_verified, json_option
from ._render import plain

attempts_option = click.option(
    "--attempts",
    "attempts_dir",
    default="runs/attempts",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Records go to ATTEMPTS/<attempt id>/, beside the model worker's attempts.",
)
runs_option = click.option(
    "--runs",
    "runs_dir",
    default="runs",
    show_default=True,
    type=click.Path(file_okay=False),
    help="The published runs (their engine bundle is the one logs must name).",
)
bundle_option = click.option(
    "--bundle",
    "bundle_dir",
    default="build/engine",
    show_default=True,
    type=click.Path(file_okay=False),
    help="The engine bundle (`make build-engine`).",
)


@click.group(name="inspect", cls=click.Group)
def inspect_group():
    """Inspect AI runs of the desk: import a log as verified attempt records; verify them."""


@inspect_group.command("import")
@click.argument("logs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@attempts_option
@runs_option
@bundle_option
@json_option
def import_(logs, attempts_dir, runs_dir, bundle_dir, as_json):
    """Re-execute Inspect logs of inspect_fundbook/desk and publish each sample as an attempt record.

    LOGS are .eval or .json logs of at most 32 MiB, read within hard limits
    (every zip member decompressed in bounded steps to exactly its declared
    size, 64 MiB in all), then with Inspect's own reader. A log must have
    succeeded, hold no invalidation, post-hoc edit or model fallback, be
    this task with task arguments of its types, and each sample a published
    world (canonical id, fixture sha256 checked); every model turn is
    replayed through the desk and every engine call answered again by the
    compiled bundle in Pyodide: each tool result, the packets, the score,
    the header's metric and the summaries must be what the desk and the
    engine give. The first sample that fails is named with its check and
    nothing is written. Otherwise each sample becomes ATTEMPTS/<id>/ with
    record.json (harness inspect; its claims say what was re-derived and
    what is as logged, such as the model), transcript.json, receipts.json
    and the log itself, kept under its sha256 (credentials in its URLs
    replaced by REDACTED). One (eval, sample, epoch) imports once.
    """
    from launchers.inspect import import_logs

    done = import_logs(list(logs), attempts_dir, runs_dir, bundle_dir)
    if as_json:
        emit_json({"imported": done})
        return 0
    for item in done:
        r = item["result"]
        verb = "already published, unchanged" if item["status"] == "unchanged" else "imported"
        click.echo(
            f"{plain(item['log'])}: sample {plain(item['sample'])}: {verb} as {item['attempt_id']} "
            f"({r['status']}, {r['verdict'] or 'no verdict'}, {score_text(r)}); receipts "
            f"{r['receipts_head']['size']}, head {r['receipts_head']['hash'][:16]}"
        )
        click.echo(f"  -> {item['record']}")
    return 0


@inspect_group.command()
@attempts_option
@runs_option
@bundle_option
@json_option
def verify(attempts_dir, runs_dir, bundle_dir, as_json):
    """Import every published Inspect attempt again from its kept log and compare every byte.

    Exit 1 names each difference (the import time, in the record's volatile
    part, is not compared).
    """
    from launchers.inspect import verify as verify_all

    return emit_verified(verify_all(attempts_dir, runs_dir, bundle_dir), "inspect attempts", as_json)
