"""build-runs: execute every published fixture through the engine bundle in
the pinned Pyodide and publish the records (runs/), with a host-CPython parity
check beside it.

    python -m builders.runs build [--compile-engine] [--bundle build/engine] [--stdlib FILE] [--out runs]
                                  [--volatile keep|fresh] [--no-parity] [--run-id ID ...]
    python -m builders.runs verify [--expect-head HEX]   (rebuild; check every published byte of runs/)
    python -m builders.runs bench [--passes N]           (Pyodide vs host CPython per fixture)

With --compile-engine and --stdlib the bundle, the runs and the desk's stdlib
come out of one Pyodide runtime (builders/_session.py).
"""

from ._stage import build_runs, execute, select_specs

__all__ = ["build_runs", "execute", "select_specs"]
