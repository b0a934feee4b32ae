"""The task's worlds argument: `practice:FUND_01:1..5`, `FUND_01:3`, a published held-out list
(`heldout:DIR` or `heldout:DIR:FIRST..LAST`, positions in its committed order), or several separated by commas.
Inspect's CLI hands `-T worlds=A,B` to the task as the list [A, B]: a list of such parts is the same."""

import json
import os
import re

import engine

_SPEC = re.compile(r"(?:practice:)?(FUND_[0-9][0-9]):([0-9]{1,9})(?:\.\.([0-9]{1,9}))?")  # ASCII digits only
MAX_WORLDS = 1000


def parse_worlds(spec) -> list:
    """-> [(family, seed)] in the order given; ValueError names the part that is not a world."""
    if isinstance(spec, (list, tuple)):
        if not spec or not all(isinstance(p, str) for p in spec):
            raise ValueError(f"worlds: expected worlds separated by commas, got {str(spec)[:60]!r}")
        spec = ",".join(spec)
    out = []
    for part in str(spec).split(","):
        if part.strip().startswith("heldout:"):
            out += _heldout(part.strip()[len("heldout:") :])
            continue
        m = _SPEC.fullmatch(part.strip())
        if not m or m.group(1) not in engine.FAMILIES:
            raise ValueError(
                f"worlds: {part.strip()[:60]!r}: expected practice:FAMILY:FIRST..LAST or FAMILY:SEED "
                f"(families {', '.join(engine.FAMILIES)})"
            )
        first = int(m.group(2))
        last = int(m.group(3)) if m.group(3) else first
        if not 1 <= first <= last or last - first >= MAX_WORLDS:
            raise ValueError(f"worlds: {part.strip()!r}: seeds from 1, FIRST <= LAST, at most {MAX_WORLDS}")
        out += [(m.group(1), seed) for seed in range(first, last + 1)]
    if len(set(out)) != len(out):
        raise ValueError("worlds: a world is listed twice")
    return out


_RANGE = re.compile(r"(.+):([0-9]{1,4})\.\.([0-9]{1,4})")


def _heldout(rest) -> list:
    """A published held-out list: DIR holds its commitment.json and reveal.json (a sweep's folder, e.g.
    runs/studies/smollm2-heldout/sweep); the reveal must open the commitment, as `fundbook compare` checks it.
    FIRST..LAST picks positions (from 1) in the committed order, as a sequential study plays them."""
    from experiments.errors import ExperimentError
    from experiments.heldout import check_commitment_doc, check_reveal

    m = _RANGE.fullmatch(rest)
    folder, first, last = (m.group(1), int(m.group(2)), int(m.group(3))) if m else (rest, None, None)
    docs = {}
    for name in ("commitment.json", "reveal.json"):
        path = os.path.join(folder, name)
        try:
            with open(path, encoding="utf-8") as fh:
                docs[name] = json.load(fh)
        except (OSError, ValueError) as exc:
            raise ValueError(
                f"worlds: heldout:{folder[:60]!r}: {name}: {type(exc).__name__}: {str(exc)[:80]}"
            ) from None
    try:
        commitment = check_commitment_doc(docs["commitment.json"], os.path.join(folder, "commitment.json"))
        items = check_reveal(docs["reveal.json"], commitment, os.path.join(folder, "reveal.json"))
    except ExperimentError as exc:
        raise ValueError(f"worlds: heldout: {str(exc)[:200]}") from None
    if first is None:
        first, last = 1, len(items)
    if not 1 <= first <= last <= len(items) or last - first >= MAX_WORLDS:
        raise ValueError(
            f"worlds: heldout:{folder[:60]!r}: positions {first}..{last}: expected 1 <= FIRST <= LAST "
            f"<= {len(items)}, at most {MAX_WORLDS}"
        )
    return [(family, seed) for family, seed in items[first - 1 : last]]


def world_id(family, seed) -> str:
    return f"{family}-seed-{seed}"
