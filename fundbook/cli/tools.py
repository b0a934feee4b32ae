"""`fundbook tools`: the calculation tools over a packet file (public information only).

Text for people by default; `--json` prints the tool's output object, the
same one the practice desk and model workers get.
"""

import click

import engine
from engine import InputError, format_cents
from engine import MAX_ACTIONS_BYTES, MAX_PACKET_BYTES

from ._common import Integer, emit_json, json_option, read_json
from ._render import plain


@click.group()
def tools():
    """Calculation tools over a packet: the same ones the practice desk and model workers get."""


packet_option = click.option("--packet", "packet_path", required=True, type=click.Path(), help="A packet JSON file.")


def _packet(path):
    return read_json(path, "a packet (`fundbook desk packet --output`)", MAX_PACKET_BYTES)


def _out(value, as_json, lines):
    if as_json:
        emit_json(value)
    else:
        for line in lines(value):
            click.echo(line)
    return 0


@tools.command()
@packet_option
@click.option("--principal", required=True, type=Integer(), help="Cents.")
@click.option("--rate-bps", required=True, type=Integer())
@click.option("--start-day", required=True, type=Integer())
@click.option("--end-day", required=True, type=Integer())
@json_option
def interest(packet_path, principal, rate_bps, start_day, end_day, as_json):
    """ACT/360 interest on a principal between two business days."""
    out = engine.interest(_packet(packet_path), principal, rate_bps, start_day, end_day)
    return _out(
        out,
        as_json,
        lambda o: [
            f"interest {format_cents(o['interest'])} on {format_cents(principal)} at {rate_bps} bps "
            f"over {o['calendar_days']} calendar days (days {start_day}..{end_day}, ACT/360)"
        ],
    )


def _project_lines(o):
    lines = [f"day {o['day']}"]
    if o["rejected"]:
        lines.append(f"  the desk would REJECT this batch: {o['rejected']}")
    for d in o["decisions"]:
        lines.append(
            f"  {d['decision']:<8} {d['type']:<8} {plain(d['action'])}"
            + ("" if d["decision"] == "ACCEPTED" else f"  {d['reason']}: {plain(d['message'])}")
        )
    lines.append(f"  cash at the close {format_cents(o['cash'])}")
    r = o["report"]
    lines.append(
        f"  report: cash {format_cents(r['cash'])}, funding cost to date {format_cents(r['funding_cost_to_date'])}, "
        f"breaches {len(r['breaches'])}, open approvals {', '.join(r['open_approvals']) or 'none'}"
    )
    for aid, a in sorted(r["assets"].items()):
        lines.append(
            f"    {aid}: funded {format_cents(a['funded'])}, unfunded {format_cents(a['unfunded'])}, "
            f"maturity gap {a['maturity_gap_days']} days, tail {a['tail_cent_days']} cent-days"
        )
    if o["state_hash"]:
        lines.append(f"  state hash at the close {o['state_hash']} (the CLOSE receipt will carry it)")
    return lines


@tools.command()
@packet_option
@click.option(
    "--actions",
    "actions_path",
    required=True,
    type=click.Path(),
    help="A JSON list of actions, or a batch whose actions to use.",
)
@json_option
def project(packet_path, actions_path, as_json):
    """Dry run: what would be accepted and why not, the closing cash and the exact report."""
    actions = read_json(actions_path, "a list of actions or a batch", MAX_ACTIONS_BYTES)
    if isinstance(actions, dict):
        if "actions" not in actions:  # (a candidate or a packet is not an empty batch)
            raise InputError(f"{actions_path}: expected a list of actions or a batch with its actions")
        actions = actions["actions"]
    return _out(engine.project(_packet(packet_path), actions), as_json, _project_lines)


@tools.command()
@packet_option
@click.option("--asset", required=True)
@click.option("--quote", required=True)
@click.option("--notional", type=Integer(), help="Cents (default: the asset's notional).")
@json_option
def exposure(packet_path, asset, quote, notional, as_json):
    """Maturity gap and tail of an asset now, and if funded from a quote."""
    out = engine.exposure(_packet(packet_path), asset, quote, notional)
    return _out(
        out,
        as_json,
        lambda o: [
            f"{o['asset']} now: maturity gap {o['now']['maturity_gap_days']} days, tail {o['now']['tail_cent_days']} cent-days",
            f"with {o['with_quote']['quote']} (matures day {o['with_quote']['maturity']}): maturity gap "
            f"{o['with_quote']['maturity_gap_days']} days, tail {o['with_quote']['tail_cent_days']} cent-days; "
            f"principal {format_cents(o['with_quote']['principal'])}, haircut {format_cents(o['with_quote']['haircut'])}",
            "(cent-days: unfunded cents times the calendar days they stay unfunded)",
        ],
    )


@tools.command()
@packet_option
@json_option
def headroom(packet_path, as_json):
    """Capacity headroom per counterparty and what is left on each quote."""
    out = engine.headroom(_packet(packet_path))
    return _out(
        out,
        as_json,
        lambda o: [
            *(
                f"{cid}: capacity {format_cents(c['capacity'])}, peak usage {format_cents(c['peak_usage'])}, "
                f"headroom {format_cents(c['headroom'])}"
                for cid, c in sorted(o["counterparties"].items())
            ),
            *(
                f"{qid}: {format_cents(q['remaining'])} left of {format_cents(q['max_notional'])}"
                for qid, q in sorted(o["quotes"].items())
            ),
        ],
    )
