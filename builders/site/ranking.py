"""The board by weights: the model rows (one per path: provider, model id and harness) grouped under one heading
per set of weights (weights.py), ranked with simultaneous bands (bands.py, run on experiments/rules.py's own
source), and each row's grammar-1 erratum note.

rules.py is read as text and run as a module of its own (as sensitivity.py runs a decision's rules.py): builders
sit below experiments and import nothing from it, and the bytes run here are the bytes published beside
leaderboard.json for the reader's browser (leaderboard/rules.py, leaderboard/bands.py).
"""

import hashlib
import types
from pathlib import Path

from . import bands, weights

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "experiments" / "rules.py"
BANDS = Path(bands.__file__)
ALPHA = "0.05"
ERRATUM_ANCHOR = "limitations/#the-grammar-1-erratum"
SITE_FILES = {"leaderboard/rules.py": RULES, "leaderboard/bands.py": BANDS}


def _rules():
    module = types.ModuleType("fundbook_board_rules")
    exec(compile(RULES.read_text(encoding="utf-8"), "rules.py", "exec"), module.__dict__)
    return module


def code() -> dict:
    """{"rules": {path, sha256}, "bands": {path, sha256}}: the code the bands are computed with, as published."""
    return {
        name: {"path": path, "sha256": hashlib.sha256(src.read_bytes()).hexdigest()}
        for name, (path, src) in zip(("rules", "bands"), SITE_FILES.items())
    }


def site_files() -> dict:
    return {path: src.read_bytes() for path, src in SITE_FILES.items()}


def rank(rows, preliminary_below) -> dict:
    """bands.ranking over the model rows, each row's scores in the order its counted attempts were started."""
    return bands.ranking(
        _rules(),
        [{"key": r["key"], "scores": [c["score"] for c in r["counted"]]} for r in rows],
        ALPHA,
        preliminary_below,
    )


def erratum_note(row, errata) -> dict | None:
    """{grammar, attempts, withheld_at_most}: the counted attempts of a row the grammar-1 erratum names (those
    with inexpressible days), and the points their days could have withheld at most; None when it names none."""
    named = {
        e.get("attempt_id"): e
        for e in (errata.get("attempts") or [])
        if isinstance(e, dict) and e.get("inexpressible_days")
    }
    hit = [named[c["attempt_id"]] for c in row["counted"] if c["attempt_id"] in named]
    if not hit:
        return None
    withheld = sum(
        e["bound"]["withheld_at_most"] for e in hit if isinstance((e.get("bound") or {}).get("withheld_at_most"), int)
    )
    return {"grammar": str(errata.get("grammar")), "attempts": len(hit), "withheld_at_most": withheld}


def headings(rows) -> list:
    """[heading dict with `rows`]: one per set of weights, in board order (a heading sits where its first row
    does; its rows keep the board's order under it)."""
    out = {}
    for r in rows:
        if r["weights"] not in out:
            names = sorted({x["model_id"] for x in rows if x["weights"] == r["weights"]})
            head = weights.heading(r["weights"], names)
            out[r["weights"]] = dict(head, card=f"models/{head['slug']}/", rows=[])
        out[r["weights"]]["rows"].append(r)
    return list(out.values())


def apply(rows, pub, preliminary_below) -> tuple:
    """(rows in board order with rank, band, rank_band, erratum and their heading's tuning; the ranking;
    the headings)."""
    got = rank(rows, preliminary_below)
    by_key = {r["key"]: r for r in rows}
    ordered = [by_key[k] for k in got["order"]]
    heads = headings(ordered)
    for head in heads:
        for r in head["rows"]:
            r.update(got["rows"][r["key"]])
            r.update(
                model=head["name"],
                tuning=head["tuning"],
                base=head["base"],
                card=head["card"],
                erratum=erratum_note(r, pub.errata),
            )
    return ordered, got, heads
