"""Provenance shared by the stages: an in-toto v1 Statement carrying SLSA v1
provenance (https://slsa.dev/provenance/v1), strictly in that schema.

The statement is unsigned and built on whatever machine runs `make`, so it
claims SLSA Build L1 and nothing more. It names no commit: a provenance
committed beside the code cannot contain its own commit's hash. Sources are
named by path, sha256 and git blob id instead, so any commit holding these
files can be checked against it with `git ls-tree -r <commit> engine` (see the
contract page, "Publication: runs/ and its index").

Its two parts, like a run record's:
- the build (subject, buildDefinition, builder.id): a function of the sources,
  the pinned runtime and SOURCE_DATE_EPOCH; two builds of the same inputs agree;
- the run details of one build (builder.version, builder.builderDependencies,
  metadata.startedOn/finishedOn): volatile. Other timings are not provenance:
  they go to build/timings/.
"""

import hashlib

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"


def git_blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def file_dependency(path, data: bytes) -> dict:
    """A repository file as an SLSA ResourceDescriptor: its repo-relative name,
    sha256 and git blob id."""
    return {"name": path, "digest": {"sha256": hashlib.sha256(data).hexdigest(), "gitBlob": git_blob_id(data)}}


def statement(subjects, build_type, external, internal, dependencies, builder, metadata, byproducts=()):
    """An in-toto v1 Statement with an SLSA v1 provenance predicate."""
    run_details = {"builder": builder, "metadata": metadata}
    if byproducts:
        run_details["byproducts"] = list(byproducts)
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
            "runDetails": run_details,
        },
    }


def build_part(doc) -> dict:
    """What two builds of the same inputs must share: everything but the run
    details of one build (builder.id stays: it names what built it)."""
    predicate = doc.get("predicate") or {}
    builder = (predicate.get("runDetails") or {}).get("builder") or {}
    return {
        "_type": doc.get("_type"),
        "subject": doc.get("subject"),
        "predicateType": doc.get("predicateType"),
        "buildDefinition": predicate.get("buildDefinition"),
        "builder.id": builder.get("id"),
    }
