"""fundbook's desk as an Inspect AI task: `inspect eval inspect_fundbook/desk --model <provider>/<model>`.

Registered through the entry point group `inspect_ai` (pyproject.toml), so the
task's name is `inspect_fundbook/desk`. Every tool call goes through the desk
environment of launchers/inspect/_env.py (the engine on this host, the model
worker's affordances); `fundbook inspect import LOG` re-executes a log's calls
through the compiled bundle in Pyodide before anything is published.
The engine never imports this package or Inspect.
"""
