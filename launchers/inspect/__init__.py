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
