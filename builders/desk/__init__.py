"""build-desk: the practice desk's runtime beside the site (its stdlib subset, the engine's memory snapshot, the
precompressed twins), the stand-in site the desk's tests serve, and the desk's benchmark. See README.md.

    python -m builders.desk.stdlib_stage | snapshot_stage | precompress | stdlib_trace | bench

Each module is a stage or a tool of its own; this package imports none of them.
"""

__all__ = [
    "bench",
    "devsite",
    "precompress",
    "snapshot_stage",
    "stdlib_compile",
    "stdlib_stage",
    "stdlib_subset",
    "stdlib_trace",
    "stdlib_workload",
]
