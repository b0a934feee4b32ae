"""`fundbook practitioner import` and `fundbook practitioner verify`: a
participant's study session from the desk to a record on the register
(builders/practitioners does the work)."""

import click

from engine import InputError, score_text

from ._common import emit_json, emit_verified, json_option
from ._render import plain


def _stage(fn, *args):
    """Run a builders stage; its BuildError (no runtime, a bundle that does not check) is one line, exit 1."""
    from builders import BuildError

    try:
        return fn(*args)
    except BuildError as exc:
        raise InputError(exc.format_message()) from None


runs_option = click.option(
    "--runs",
    "runs_dir",
    default="runs",
    show_default=True,
    type=click.Path(file_okay=False),
    help="The published runs folder; records go to RUNS/practitioners/<attempt id>/.",
)
bundle_option = click.option(
    "--bundle",
    "bundle_dir",
    default="build/engine",
    show_default=True,
    type=click.Path(file_okay=False),
    help="The engine bundle (`make build-engine`): the published runs' bundle.",
)


@click.group(cls=click.Group)
def practitioner():
    """Practitioner runs: study sessions from the practice desk, as records beside model attempts."""


@practitioner.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@runs_option
@bundle_option
@json_option
def import_(files, runs_dir, bundle_dir, as_json):
    """Check practitioner submissions and publish each as a practitioner attempt record.

    FILES are submissions exported by the desk's study mode. Each is read
    strictly (size, shape, every bound), must carry an accepted consent text
    the desk has shown and name this engine bundle; then every session is
    re-executed through the compiled bundle in Pyodide, as every published run
    was, and must reproduce the receipts head the desk recorded. Only when all
    FILES pass is anything written: RUNS/practitioners/<attempt id>/ with
    record.json, receipts.json and submission.json. A file refused is named
    with the field at fault, and nothing changes. Importing a published
    session again changes nothing.
    """
    from builders.practitioners import import_submissions

    done = _stage(import_submissions, list(files), runs_dir, bundle_dir)
    if as_json:
        emit_json({"imported": done})
        return 0
    for item in done:
        term = item["termination"]
        if item["result"]:
            outcome = (
                f"{item['result']['status']}, {item['result']['verdict'] or 'no verdict'}, {score_text(item['result'])}"
            )
        else:
            outcome = f"not finalised ({term['reason']} after {term['checkpoints_closed']} checkpoints)"
        head = item["receipts_head"]
        verb = "already published, unchanged" if item["status"] == "unchanged" else "imported"
        click.echo(
            f"{plain(item['file'])}: {verb} as {item['attempt_id']} ({term['status']}: {outcome}); "
            f"receipts {head['size']}, head {head['hash'][:16]}"
        )
        click.echo(f"  -> {item['record']}")
    return 0


@practitioner.command()
@runs_option
@bundle_option
@json_option
def verify(runs_dir, bundle_dir, as_json):
    """Re-execute every practitioner record under RUNS/practitioners/ and compare every byte.

    Each record's submission is imported again, through the same checks and
    the compiled bundle in Pyodide, into memory; the record, its receipts and
    its submission must come out byte for byte (the import time, in the
    record's volatile part, is not compared). Exit 1 names each difference.
    """
    from builders.practitioners import verify_records

    return emit_verified(_stage(verify_records, runs_dir, bundle_dir), "practitioner records", as_json)
