"""Provenance helpers shared by the stages and the launchers: the code
revision, and an in-toto Statement carrying SLSA v1 provenance.

The statement is unsigned and built on whatever machine runs `make`, so it
claims SLSA Build L1 and nothing more. Timings live only in
predicate.runDetails.metadata; everything else is a function of the sources,
the lock files and the commit.
"""

import subprocess

from ._files import ROOT

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"


def code_revision(root=ROOT, paths=()) -> dict:
    """{"commit": sha or None, "dirty": bool} for the repo (or some paths in it)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--", *paths], cwd=root,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": True}
    return {"commit": commit, "dirty": bool(status.strip())}


def statement(subjects, build_type, external, internal, dependencies, builder, metadata, byproducts=()):
    """An in-toto v1 Statement with an SLSA v1 provenance predicate."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": digest}} for name, digest in subjects],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": build_type,
                "externalParameters": external,
                "internalParameters": internal,
                "resolvedDependencies": list(dependencies),
            },
            "runDetails": {"builder": builder, "metadata": metadata, "byproducts": list(byproducts)},
        },
    }


def without_timings(doc) -> dict:
    """The statement minus runDetails.metadata: what two builds must share."""
    out = dict(doc)
    predicate = dict(out["predicate"])
    run_details = dict(predicate["runDetails"])
    run_details.pop("metadata", None)
    predicate["runDetails"] = run_details
    out["predicate"] = predicate
    return out
