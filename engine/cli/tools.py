"""`fundbook tools`: the calculation tools over a packet file (public information only)."""

import click

import engine

from ._common import emit_json, read_json


@click.group()
def tools():
    """Calculation tools over a packet: the same ones the practice desk and model workers get."""


packet_option = click.option("--packet", "packet_path", required=True, type=click.Path(), help="A packet JSON file.")


@tools.command()
@packet_option
@click.option("--principal", required=True, type=int, help="Cents.")
@click.option("--rate-bps", required=True, type=int)
@click.option("--start-day", required=True, type=int)
@click.option("--end-day", required=True, type=int)
def interest(packet_path, principal, rate_bps, start_day, end_day):
    """ACT/360 interest on a principal between two business days."""
    emit_json(engine.interest(read_json(packet_path, "a packet"), principal, rate_bps, start_day, end_day))
    return 0


@tools.command()
@packet_option
@click.option("--actions", "actions_path", required=True, type=click.Path(),
              help="A JSON list of actions, or a batch whose actions to use.")
def project(packet_path, actions_path):
    """Dry run: what would be accepted and why not, the closing cash and the exact report."""
    actions = read_json(actions_path, "a list of actions or a batch")
    if isinstance(actions, dict):
        actions = actions.get("actions", [])
    emit_json(engine.project(read_json(packet_path, "a packet"), actions))
    return 0


@tools.command()
@packet_option
@click.option("--asset", required=True)
@click.option("--quote", required=True)
@click.option("--notional", type=int, help="Cents (default: the asset's notional).")
def exposure(packet_path, asset, quote, notional):
    """Maturity gap and tail of an asset now, and if funded from a quote."""
    emit_json(engine.exposure(read_json(packet_path, "a packet"), asset, quote, notional))
    return 0


@tools.command()
@packet_option
def headroom(packet_path):
    """Capacity headroom per counterparty and what is left on each quote."""
    emit_json(engine.headroom(read_json(packet_path, "a packet")))
    return 0
