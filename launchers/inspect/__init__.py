"""The desk as an Inspect AI environment, and Inspect logs as attempt records.

_env.py is the environment every tool call of inspect_fundbook/desk goes
through (standard library and the engine only: no Inspect import), so the
importer (_import.py) can replay a log's calls through the same code and
check every engine answer in the compiled bundle under Pyodide.
"""
