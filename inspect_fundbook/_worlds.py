"""The task's worlds argument: `practice:FUND_01:1..5`, `FUND_01:3`, or a list of them separated by commas."""

import re

import engine

_SPEC = re.compile(r"(?:practice:)?(FUND_\d\d):(\d{1,9})(?:\.\.(\d{1,9}))?")
MAX_WORLDS = 1000


def parse_worlds(spec) -> list:
    """-> [(family, seed)] in the order given; ValueError names the part that is not a world."""
    out = []
    for part in str(spec).split(","):
        m = _SPEC.fullmatch(part.strip())
        if not m or m.group(1) not in engine.FAMILIES:
            raise ValueError(f"worlds: {part.strip()[:60]!r}: expected practice:FAMILY:FIRST..LAST or FAMILY:SEED "
                             f"(families {', '.join(engine.FAMILIES)})")
        first = int(m.group(2))
        last = int(m.group(3)) if m.group(3) else first
        if not 1 <= first <= last or last - first >= MAX_WORLDS:
            raise ValueError(f"worlds: {part.strip()!r}: seeds from 1, FIRST <= LAST, at most {MAX_WORLDS}")
        out += [(m.group(1), seed) for seed in range(first, last + 1)]
    if len(set(out)) != len(out):
        raise ValueError("worlds: a world is listed twice")
    return out


def world_id(family, seed) -> str:
    return f"{family}-seed-{seed}"
