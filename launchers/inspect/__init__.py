"""The desk as an Inspect AI environment, and Inspect logs as attempt records.

_env.py is the environment every tool call of inspect_fundbook/desk goes
through (standard library and the engine only: no Inspect import), so the
importer (_import.py) can replay a log's calls through the same code and
check every engine answer in the compiled bundle under Pyodide. The importer's
parts: _read.py reads a log within hard limits, _checks.py holds a log and its
samples to what the task writes, _replay.py re-derives each sample, _header.py
holds the header, reductions and summaries to the engine's grade, _record.py
writes the record in the format builders/inspect_format.py owns (and
builders/inspect_records.py checks, at import as at build time); bench.py
measures peak memory (`make bench-inspect`).
"""

# The public API (inspect_fundbook's task, the `fundbook inspect` verbs, a study's inspect:LOG arm): name ->
# "module" or "module:name", imported on first use (the environment needs only the engine; the importer needs
# the bundle's runtime).
_PUBLIC = {
    "DeskEnv": "_env",
    "ProtocolError": "_env",
    "grade": "_env",
    "world_source": "_env",
    "DEFAULT_DAYS": "_env",
    "PROTOCOLS": "_env",
    "TEXT_SYSTEM": "_env",
    "TOOL_SYSTEM": "_env",
    "task_version": "_version",
    "import_logs": "_import",
    "verify": "_import",
    "prepare": "_import",
    "is_inspect_record": "_kind",
}


def __getattr__(name):
    import importlib

    if name not in _PUBLIC:
        raise AttributeError(f"module 'launchers.inspect' has no attribute {name!r}")
    module, _, attr = _PUBLIC[name].partition(":")
    return getattr(importlib.import_module(f".{module}", __name__), attr or name)


__all__ = list(_PUBLIC)
