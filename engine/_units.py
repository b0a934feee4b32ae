"""Money, rates and day counts: integers only, one rounding rule.

Money is integer cents, rates are integer basis points per year, interest is
ACT/360 on the calendar days between two business-day indexes. Every division
that can leave a remainder goes through :func:`div_half_even`, so CPython and
Pyodide give the same cent.
"""

BPS = 10_000
DAYS_PER_YEAR = 360
# principal (cents) x rate (bps) x days / ACCRUAL_DENOMINATOR = cents
ACCRUAL_DENOMINATOR = BPS * DAYS_PER_YEAR


def div_half_even(numerator: int, denominator: int) -> int:
    """Integer division rounded half to even (banker's rounding)."""
    if not isinstance(numerator, int) or not isinstance(denominator, int):
        raise TypeError("div_half_even takes integers")
    if denominator == 0:
        raise ZeroDivisionError("div_half_even by zero")
    if denominator < 0:
        numerator, denominator = -numerator, -denominator
    quotient, remainder = divmod(numerator, denominator)
    twice = 2 * remainder
    if twice > denominator or (twice == denominator and quotient % 2 == 1):
        quotient += 1
    return quotient


def accrual(principal_cents: int, rate_bps: int, calendar_days: int) -> int:
    """Simple ACT/360 interest on a principal, rounded half-even to the cent."""
    return div_half_even(principal_cents * rate_bps * calendar_days, ACCRUAL_DENOMINATOR)


def haircut_amount(notional_cents: int, haircut_bps: int) -> int:
    """The part of a notional a lender keeps back, rounded half-even."""
    return div_half_even(notional_cents * haircut_bps, BPS)


def charge_on_cent_days(cent_days: int, rate_bps: int) -> int:
    """Interest on an exposure already expressed in cent-days (ACT/360)."""
    return div_half_even(cent_days * rate_bps, ACCRUAL_DENOMINATOR)


def format_cents(cents: int) -> str:
    """12345678 -> '123,456.78' (for people; never parsed back)."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{part:02d}"
