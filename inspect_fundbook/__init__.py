"""fundbook's desk as an Inspect AI task: `inspect eval inspect_fundbook/desk --model <provider>/<model>`.

Registered through the entry point group `inspect_ai` (pyproject.toml), so the
task's name is `inspect_fundbook/desk`. Every tool call goes through the desk
environment of launchers/inspect/_env.py (the engine on this host, the model
worker's affordances); `fundbook inspect import LOG` re-executes a log's calls
through the compiled bundle in Pyodide before anything is published.
The engine never imports this package or Inspect.
"""

# The public names, loaded on first use (as engine.session is): the task, the scorer and the tools need inspect_ai
# (the optional extra); the world specs and the tool schemas need only the engine.
__all__ = [
    "desk",
    "desk_grade",
    "desk_tools",
    "parse_worlds",
    "project_parameters",
    "submit_batch_parameters",
    "world_id",
]


def __getattr__(name):
    if name == "desk":
        from . import _task as module
    elif name == "desk_grade":
        from . import _scorer as module
    elif name == "desk_tools":
        from . import _tools as module
    elif name in ("parse_worlds", "world_id"):
        from . import _worlds as module
    elif name in ("project_parameters", "submit_batch_parameters"):
        from . import _schema as module
    else:
        raise AttributeError(f"module 'inspect_fundbook' has no attribute {name!r}")
    return getattr(module, name)
