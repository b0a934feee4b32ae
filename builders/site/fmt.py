"""Small display helpers shared by the page templates and the OG cards."""

import re
import shlex

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def money(cents) -> str:
    """Integer cents as a grouped currency amount; None as an em dash."""
    if cents is None:
        return "—"
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(int(cents)), 100)
    return f"{sign}{whole:,}.{frac:02d}"


def micro_usd(amount) -> str:
    if amount is None:
        return "—"
    sign = "-" if amount < 0 else ""
    whole, frac = divmod(abs(int(amount)), 1_000_000)
    return f"{sign}${whole:,}.{frac:06d}"


def short(sha) -> str:
    return (sha or "")[:12] or "—"


def score_text(score) -> str:
    if not score:
        return "no score"
    return f"{score['points']}/{score['denominator']}"


def duration(ms) -> str:
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms} ms"
    return f"{ms / 1000:,.1f} s"


def shell(argv) -> str:
    return " ".join(shlex.quote(str(a)) for a in argv or [])


def fixture_label(fixture: dict) -> str:
    """W3 · M4_fully_hedged_tail, FUND_01 seed 2 · do-nothing, or W1."""
    if not fixture:
        return "—"
    if "episode" in fixture:
        return " · ".join(x for x in (fixture["episode"], fixture.get("mutation")) if x)
    if "family" in fixture:
        return f"{fixture['family']} seed {fixture.get('seed')} · {fixture.get('policy', '')}".rstrip(" ·")
    return ", ".join(f"{k}={v}" for k, v in sorted(fixture.items()) if k != "kind")
