"""build-runs: execute every published fixture through the engine bundle in
the pinned Pyodide and publish the records (runs/), with a host-CPython parity
check beside it.

    python -m builders.runs build [--compile-engine] [--bundle build/engine] [--stdlib FILE] [--out runs]
                                  [--volatile keep|fresh] [--no-parity] [--run-id ID ...]
    python -m builders.runs verify [--expect-head HEX]   (rebuild; check every published byte of runs/)
    python -m builders.runs bench [--passes N]           (Pyodide vs host CPython per fixture)

With --compile-engine and --stdlib the bundle, the runs and the desk's stdlib
come out of one Pyodide runtime (builders/_session.py). The index's hash chain is
builders/run_index.py, which the site checks too.
"""

from ._pipeline import Stage, build_options, run_build
from ._stage import build_runs, execute, select_specs
from ._verify import verify_runs

__all__ = ["Stage", "build_options", "build_runs", "execute", "run_build", "select_specs", "verify_runs"]
