"""Seed lists: ranges, lists, bounds, and the shortest text back."""

import pytest
from hypothesis import given, strategies as st

from experiments.errors import ExperimentError
from experiments.seeds import MAX_SEED, format_seeds, parse_seed_args, parse_seeds


def test_ranges_lists_and_mixtures():
    assert parse_seeds("1..5") == [1, 2, 3, 4, 5]
    assert parse_seeds("3,1,2") == [1, 2, 3]
    assert parse_seeds("1..3,7,10..11") == [1, 2, 3, 7, 10, 11]
    assert parse_seeds("4") == [4]
    assert parse_seed_args(["1..2", "2..4", "9"]) == [1, 2, 3, 4, 9]
    assert parse_seeds(f"{MAX_SEED}") == [MAX_SEED]


@pytest.mark.parametrize(
    "text,needle",
    [
        ("a..3", "not a seed or a range"),
        ("5..1", "first <= last"),
        ("0..3", "1 <= first"),
        (f"1..{MAX_SEED + 1}", "2^53-1"),
        ("1..2000000", "more than"),
        ("", "no seeds"),
        ("1...3", "not a seed"),
    ],
)
def test_bad_seed_text_is_refused_naming_the_part(text, needle):
    with pytest.raises(ExperimentError) as err:
        parse_seeds(text)
    assert needle in err.value.message and err.value.message.startswith("--seeds")


@given(st.sets(st.integers(1, 500), min_size=1, max_size=60))
def test_format_then_parse_is_the_identity(seeds):
    seeds = sorted(seeds)
    assert parse_seeds(format_seeds(seeds)) == seeds


def test_format_uses_ranges():
    assert format_seeds([1, 2, 3, 7, 9, 10]) == "1..3,7,9..10"
    assert format_seeds(range(1, 1001)) == "1..1000"
