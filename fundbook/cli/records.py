"""`fundbook-launch verify`, `ledger`, `export` and `rederive`: attempt records checked, reconciled with the
project ledger, exported as tables, and local-model attempts replayed from their own cache."""

import os

import click

from launchers import InputError

from ._launch_options import project_option


@click.command()
@click.argument("record_path", type=click.Path(dir_okay=False))
@project_option
def verify(record_path, project):
    """Check an attempt record: its hashes, that it tells what its receipts and ledger hold, and -- against the
    project ledger -- that its claim, prices and content are the ones registered, consumed and settled."""
    from launchers import project_of, verify_attempt

    folder = project_of(record_path, project)
    found = verify_attempt(record_path, project=folder)
    c = found["record"]["content"]
    click.echo(
        f"{c['attempt_id']}: content verified and reconciled with {c['receipts_head']['size'] if c['receipts_head'] else 0} "
        f"receipts and {len(c['ledger']['entries'])} ledger entries; ended {c['termination']['status']}"
    )
    bound = found["bound"]
    if bound is not None:
        click.echo(
            f"bound to {bound['ledger']}: the claim as authorised (entry {bound['authorise_entry']}), consumed "
            f"(entry {bound['claim_entry']}) and settled by this very record (entry {bound['settle_entry']})"
            + (f"; prices as frozen in {bound['freeze'][:12]}" if bound["freeze"] else "")
        )
        return 0
    from launchers import is_local_model

    if c["label"] == "model" and is_local_model(c):  # a model on this host: nothing paid, so no ledger to bind to
        click.echo(
            "a local-model attempt (nothing paid) is bound by its answers: `fundbook-launch rederive` replays it "
            "from its cache.jsonl to the same receipts head (make verify does)"
        )
        return 0
    if c["label"] == "model":
        raise InputError(
            f"{record_path}: a paid attempt is verified against its project ledger (--project DIR): "
            f"only it shows the claim's caps and prices as authorised and the record as settled"
        )
    click.echo(
        "not checked against a project ledger (none found): a consistent rewrite of the record and its files "
        "would not be seen"
    )
    return 0


@click.command()
@project_option
@click.option(
    "--attempts",
    "attempts_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where the attempt folders are (default: the project directory).",
)
def ledger(project, attempts_dir):
    """The project ledger: claims, spend against the project caps, reconciled with the attempt records."""
    from launchers import ProjectLedger, format_usd, load_freeze, project_caps, project_dir, reconcile, records_in

    folder = project_dir(project)
    book = ProjectLedger(folder)
    records = [r for r, _ in records_in(attempts_dir or folder)]
    t = book.totals()
    caps = None
    if os.path.exists(os.path.join(folder, "freeze.json")):
        doc, entries = load_freeze(os.path.join(folder, "freeze.json"))
        caps = tuple(project_caps(doc, entries, os.path.join(folder, "freeze.json")).values())
    click.echo(f"{book.path}: {t['claims']} claims ({len(t['open_claims'])} open), head {book.head['hash'][:12]}")
    click.echo(
        f"inference  charged {format_usd(t['charged_micro_usd'])}, unresolved "
        f"{format_usd(t['unresolved_micro_usd'])}, reserved {format_usd(t['reserved_micro_usd'])}"
        + (f" of the project cap {format_usd(caps[0])}" if caps else " (no freeze: no project cap)")
    )
    click.echo(
        f"sandbox    charged {format_usd(t['sandbox_charged_micro_usd'])}, unresolved "
        f"{format_usd(t['sandbox_unresolved_micro_usd'])}, reserved {format_usd(t['sandbox_reserved_micro_usd'])}"
        + (f" of the project cap {format_usd(caps[1])}" if caps else "")
    )
    paid = [r for r in records if r["content"]["label"] == "model" or book.claim_entry(r["content"]["claim"]["id"])]
    problems = reconcile(book, paid)
    for problem in problems:
        click.echo(f"MISMATCH {problem}")
    pilots = sum(1 for r in paid if r["content"].get("role") == "pilot")
    click.echo(
        f"reconciled with {len(paid)} attempt records ({pilots} pilot, {len(paid) - pilots} confirmatory or "
        f"other): {'ok' if not problems else f'{len(problems)} problems'}"
    )
    return 1 if problems else 0


@click.command()
@click.option(
    "--attempts", "attempts_dir", type=click.Path(file_okay=False), default="runs/attempts", show_default=True
)
@click.option("--out-dir", type=click.Path(file_okay=False), default="runs", show_default=True)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing: verify every record and require the tables in --out-dir "
    "to be, byte for byte, their export (`make verify` runs this).",
)
def export(attempts_dir, out_dir, check):
    """Write attempts.parquet and calls.parquet (verified records only) beside the runs' tables."""
    from launchers import check_tables, write_tables

    counts = {}

    def pilots(name):  # the pilot's attempts are exported too (role "pilot"), and counted as such
        return f" ({counts['pilot']} pilot attempts)" if name == "attempts.parquet" else ""

    if check:
        for name, (path, rows) in sorted(check_tables(attempts_dir, out_dir, counts).items()):
            click.echo(f"ok      {path}: the export of the {rows} verified rows{pilots(name)}, byte for byte")
        return
    for name, (path, rows) in sorted(write_tables(attempts_dir, out_dir, counts).items()):
        click.echo(f"{path}: {rows} rows{pilots(name)}")


@click.command()
@click.option(
    "--attempts", "attempts_dir", type=click.Path(file_okay=False), default="runs/attempts", show_default=True
)
def rederive(attempts_dir):
    """Replay every local-model (llama-cpp) attempt from its own cache.jsonl: same answers, same receipts head, 0 cost.

    Cache-only, no model loaded, a throwaway claim in a scratch folder; `make verify` runs it."""
    from launchers import rederive_all

    done = rederive_all(attempts_dir)
    for r in done:
        if r.get("nothing"):
            click.echo(
                f"ok      {r['attempt_id']}: no model answer to replay (its host stopped before the first call "
                f"was answered; record and receipts verified) ({r['status']})"
            )
            continue
        click.echo(
            f"ok      {r['attempt_id']}: {r['answers']} answers replayed from its cache.jsonl, receipts head "
            f"{(r['receipts_head'] or {}).get('hash', '-')[:12]} ({r['status']})"
        )
    empty = sum(1 for r in done if r.get("nothing"))
    click.echo(
        f"rederive: {len(done)} local-model attempts in {attempts_dir}: {len(done) - empty} reproduced from "
        f"their own cache, {empty} with no model answer to replay"
    )
