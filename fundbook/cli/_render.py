"""Human-readable renderings: status first, then verdict with gates, then score."""

import click

from engine import format_cents, score_text


def result_lines(result):
    lines = [f"status   {result['status']}"]
    if result["status"] != "SCORED":
        lines.append(f"         {result.get('error', '')}")
        lines.append("score    none (a run that is not scored has no score)")
        return lines
    lines.append(f"verdict  {result['verdict']}")
    for gate in result["gates"]:
        lines.append(f"  [{'pass' if gate['passed'] else 'FAIL'}] {gate['gate']}: {gate['detail']}")
    comps = result["score"]["components"]
    lines.append(
        f"score    {score_text(result)}  (report accuracy {comps['report_accuracy']['points']}/40, "
        f"funding cost {comps['funding_cost']['points']}/30, maturity protection {comps['maturity_protection']['points']}/30)"
    )
    head = result.get("receipts_head")
    if head:
        lines.append(f"receipts {head['size']}, head {head['hash']}")
    return lines


def echo_result(result):
    for line in result_lines(result):
        click.echo(line)


def plain(text):
    """A string from outside (a desk's action id) as it may be printed in a
    line of text: characters that are not printable (a newline, U+202E) are
    escaped, so no id can start a line of its own or reorder one on screen."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def decision_line(d):
    if d["decision"] == "ACCEPTED":
        effects = d.get("effects", {})
        detail = ", ".join(f"{k} {v}" for k, v in sorted(effects.items()))
        return f"  ACCEPTED {d['type']:<8} {plain(d['action'])}  {detail}"
    return f"  REFUSED  {d['type']:<8} {plain(d['action'])}  {d['reason']}: {plain(d['message'])}"


def packet_lines(packet):
    lines = [
        f"{packet['family']}  day {packet['day']} of {packet['horizon']}  cash {format_cents(packet['cash'])} "
        f"(buffer {format_cents(packet['desk']['min_buffer'])})"
    ]
    for a in packet["assets"]:
        lines.append(
            f"  asset {a['id']:<4} {a['kind']:<4} {format_cents(a['notional']):>16}  {a['status']:<9} settles d{a['settle_day']} exits d{a['exit_day']}"
        )
    for t in packet["trades"]:
        lines.append(
            f"  trade {t['id']} {t['asset']} {t['counterparty']} {format_cents(t['notional']):>16} {t['rate_bps']}bps d{t['start']}->d{t['maturity']} {t['status']}"
        )
    for q in packet["quotes"]:
        lines.append(
            f"  quote {q['id']} {q['counterparty']} start d{q['start_day']} tenor {q['tenor']} {q['rate_bps']}bps "
            f"haircut {q['haircut_bps']}bps max {format_cents(q['max_notional'] - q['used'])} valid to d{q['valid_through']}"
        )
    for cp in packet["counterparties"]:
        lines.append(
            f"  limit {cp['id']} capacity {format_cents(cp['capacity'])} usage {format_cents(cp['usage'])} headroom {format_cents(cp['headroom'])}"
        )
    for ap in packet["approvals"]:
        lines.append(f"  approval {ap['id']} {ap['kind']} {ap['counterparty']} {ap['amount']} {ap['status']}")
    lines.append(f"  sources {len(packet['sources'])}, earlier receipts {len(packet['receipts'])}")
    return lines
