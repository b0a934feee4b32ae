"""Keeping what is already published: a rebuild that gives a record the same
content keeps the record's published volatile part (when and where the build
that first produced this content ran), and runs/engine/provenance.json stays
the published one while it describes the same build. So rebuilding an
unchanged publication rewrites nothing (`make build` on a fresh clone leaves
the tree clean); `--volatile fresh` (`make publish-runs`) opts out."""

import json
import os

from .._errors import BuildError
from .._files import rel
from .._provenance import build_part
from ..bundle import PROVENANCE
from ._schemas import validate


def _committed_record(out, rid):
    """The record already in `out`, if it is a valid record file; else None."""
    path = os.path.join(out, f"{rid}.json")
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read())
        validate("run", doc, rel(path))
    except (OSError, ValueError, BuildError):
        return None
    return doc


def keep_committed_volatile(records, out) -> list:
    """A record whose content is unchanged keeps the volatile part already
    published in `out` (when and where the build that first produced this
    content ran), so that rebuilding an unchanged publication rewrites nothing.
    Returns the run ids that kept theirs."""
    kept = []
    for rid, rec in records.items():
        old = _committed_record(out, rid)
        if old and old["content"] == rec["content"] and old["content_sha256"] == rec["content_sha256"]:
            rec["volatile"] = old["volatile"]
            kept.append(rid)
    return kept


def provenance_bytes(bundle_dir, out, volatile) -> bytes:
    """runs/engine/provenance.json: the bundle's, or the one already published
    when it describes the same build (its run details are the first build's)."""
    with open(os.path.join(bundle_dir, PROVENANCE), "rb") as fh:
        fresh = fh.read()
    if volatile == "keep":
        try:
            with open(os.path.join(out, "engine", PROVENANCE), "rb") as fh:
                committed = fh.read()
            validate("provenance", json.loads(committed), "runs/engine/provenance.json")
            if build_part(json.loads(committed)) == build_part(json.loads(fresh)):
                return committed
        except (OSError, ValueError, BuildError):
            pass
    return fresh
