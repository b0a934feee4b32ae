from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine._units import accrual, div_half_even, format_cents, haircut_amount


@pytest.mark.parametrize(
    "n,d,want",
    [
        (5, 2, 2),
        (7, 2, 4),
        (-5, 2, -2),
        (-7, 2, -4),
        (1, 3, 0),
        (2, 3, 1),
        (15, 10, 2),
        (25, 10, 2),
        (0, 7, 0),
        (5, -2, -2),
    ],
)
def test_div_half_even_cases(n, d, want):
    assert div_half_even(n, d) == want


@given(st.integers(-(10**15), 10**15), st.integers(1, 10**9))
def test_div_half_even_matches_exact_rounding(n, d):
    assert div_half_even(n, d) == round(Fraction(n, d))  # Fraction rounds half to even


def test_div_half_even_refuses_floats_and_zero():
    with pytest.raises(TypeError):
        div_half_even(1.5, 2)
    with pytest.raises(ZeroDivisionError):
        div_half_even(1, 0)


def test_accrual_act_360():
    # 10,000,000.00 at 450 bps for 30 calendar days = 37,500.00
    assert accrual(1_000_000_000, 450, 30) == 3_750_000
    # 1 cent-scale half-even: 100 cents at 1 bps for 180 days = 0.005 cents -> 0
    assert accrual(100, 1, 180) == 0


def test_haircut_and_format():
    assert haircut_amount(1_234_567, 300) == 37_037  # 37037.01 -> 37037
    assert format_cents(-123456789) == "-1,234,567.89"
    assert format_cents(5) == "0.05"
