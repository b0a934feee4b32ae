"""build-runs: execute every published fixture through the engine bundle in
the pinned Pyodide and publish the records (runs/), with a host-CPython parity
check beside it.

    python -m builders.runs build [--bundle build/engine] [--out runs] [--no-parity] [--run-id ID ...]
    python -m builders.runs verify      (rebuild and compare with the committed index head)
    python -m builders.runs bench       (Pyodide vs host CPython per fixture)
"""

from ._stage import build_runs, execute, select_specs

__all__ = ["build_runs", "execute", "select_specs"]
