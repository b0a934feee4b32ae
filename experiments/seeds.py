"""Seed lists on the command line: `1..200`, `1,5,9`, `1..10,20..30` or
plain integers, all positive and JSON-safe (below 2^53). Practice seeds stay
below 2^32: the held-out split draws its seeds from [2^32, 2^53), so the two
splits never meet (experiments/heldout.py)."""

import re

from .errors import ExperimentError

_DIGITS = re.compile(r"[0-9]{1,16}")

MAX_SEED = 2**53 - 1
MAX_PRACTICE_SEED = 2**32 - 1  # held-out seeds start at 2^32
MAX_SEEDS = 1_000_000  # a typo like 1..1e15 is refused, not enumerated


def parse_seeds(text, where="--seeds", max_seed=MAX_SEED) -> list:
    """Sorted unique seeds from one argument; ExperimentError naming the part."""
    seeds = set()
    for part in str(text).split(","):
        if not part:
            continue
        low, sep, high = part.partition("..")
        # ASCII digits only: int() also reads '٣', '１', '1_0' and '+3', which no seed list means
        if not _DIGITS.fullmatch(low) or (sep and not _DIGITS.fullmatch(high)):
            raise ExperimentError(f"{where}: {part[:40]!r} is not a seed or a range like 1..200")
        a = int(low)
        b = int(high) if sep else a
        if a < 1 or b > MAX_SEED or a > b:
            raise ExperimentError(f"{where}: {part!r}: expected 1 <= first <= last <= 2^53-1")
        if b > max_seed:
            raise ExperimentError(
                f"{where}: {part!r}: practice seeds are at most 2^32-1 (seeds from 2^32 on are the held-out split's)"
            )
        if b - a + 1 + len(seeds) > MAX_SEEDS:
            raise ExperimentError(f"{where}: more than {MAX_SEEDS} seeds")
        seeds.update(range(a, b + 1))
    if not seeds:
        raise ExperimentError(f"{where}: no seeds given")
    return sorted(seeds)


def parse_seed_args(values, where="--seeds") -> list:
    out = set()
    for value in values:
        out.update(parse_seeds(value, where))
    return sorted(out)


def format_seeds(seeds) -> str:
    """The shortest range text for a sorted seed list: `1..200` or `1..3,7`."""
    parts, start, prev = [], None, None
    for s in list(seeds) + [None]:
        if start is not None and (s is None or s != prev + 1):
            parts.append(str(start) if start == prev else f"{start}..{prev}")
            start = None
        if s is not None and start is None:
            start = s
        prev = s
    return ",".join(parts)


def seed_param():
    """A click parameter type: each value is a seed list (`1..200`, `1,5,9`); bad text is a usage error."""
    import click

    class Seeds(click.ParamType):
        name = "SEEDS"

        def convert(self, value, param, ctx):
            if isinstance(value, list):
                return value
            try:
                return parse_seeds(value, f"--{param.name}" if param is not None and param.name else "--seeds")
            except ExperimentError as exc:
                self.fail(exc.message.split(": ", 1)[-1], param, ctx)

    return Seeds()
