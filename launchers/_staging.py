"""What the worker may read, and nothing else.

Staged: the worker's own code (agent and protocol; with the local sampler, the
compact prompt and worker.json naming it), the calculation tools
(engine modules that read only a packet, copied into a `desktools` package),
the current packet and its published sources. The worker keeps its retained
work beside them. Never staged: grading, candidates, the reference policy,
baselines, mutations, fixtures, the runtime, replay, records, the episodes, the
CLI -- `check_closure` proves the copied modules import nothing else.
"""

import ast
import json
import os

import engine

TOOL_MODULES = (
    "_batch",
    "_book",
    "_canon",
    "_errors",
    "_packet",
    "_report",
    "_rules",
    "_settle",
    "_tools",
    "_units",
    "_vocabulary",
)
NEVER_STAGED = (
    "_baselines",
    "_candidate",
    "_episodes",
    "_families",
    "_fixtures",
    "_grade",
    "_mutations",
    "_records",
    "_reference",
    "_replay",
    "_run",
    "_runtime",
    "_session",
    "_world",
    "episodes",
)
# What a record names as never staged: those engine modules, and the command lines and experiment layer outside
# the engine (the CLI moved from engine/cli to fundbook/cli; a name here is a path that exists, checked by a test).
NEVER_STAGED_PATHS = tuple("engine/" + m for m in NEVER_STAGED) + ("fundbook/cli", "experiments")
ENGINE_DIR = os.path.dirname(engine.__file__)
WORKER_DIR = os.path.join(os.path.dirname(__file__), "worker")
DESKTOOLS_INIT = b'"""The desk calculation tools, copied from the engine: they read a packet and nothing else."""\n'


def _read(path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def check_closure(modules=TOOL_MODULES):
    """Raise if a staged tool module imports an engine module that is not staged."""
    for name in modules:
        tree = ast.parse(_read(os.path.join(ENGINE_DIR, name + ".py")))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level >= 1:
                target = (node.module or "").split(".")[0]
                if target not in modules:
                    raise RuntimeError(f"engine/{name}.py imports .{target}, which is not staged into the worker")
                continue
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(n.split(".")[0] in ("engine", "launchers", "builders") for n in names):
                raise RuntimeError(f"engine/{name}.py imports {names}: the worker has no such package")


def worker_config(prompt=None) -> bytes:
    """worker.json: the prompt the worker uses (absent: agent.py's full prompt). Only a known one is staged."""
    from .worker import prompt as compact

    if prompt is not None and prompt not in compact.PROMPT_VERSIONS:
        raise ValueError(f"sampling.prompt: this worker knows {list(compact.PROMPT_VERSIONS)}, not {prompt!r}")
    return (json.dumps({"prompt": prompt}, sort_keys=True) + "\n").encode("utf-8")


def stage(packet, prompt=None) -> dict:
    """Relative path -> bytes: every file the worker starts with (`prompt`: the compact prompt's version,
    which the local sampler's settings name; worker.json tells the worker)."""
    check_closure()
    files = {
        "worker.py": _read(os.path.join(WORKER_DIR, "agent.py")),
        "protocol.py": _read(os.path.join(WORKER_DIR, "protocol.py")),
        "desktools/__init__.py": DESKTOOLS_INIT,
    }
    if prompt is not None:  # the compact prompt and the file that tells the worker to use it
        files["prompt.py"] = _read(os.path.join(WORKER_DIR, "prompt.py"))
        files["worker.json"] = worker_config(prompt)
    for name in TOOL_MODULES:
        files[f"desktools/{name}.py"] = _read(os.path.join(ENGINE_DIR, name + ".py"))
    files["packet.json"] = (json.dumps(packet, sort_keys=True, indent=1) + "\n").encode("utf-8")
    for source in packet.get("sources", []):
        files[f"sources/{source['id']}.txt"] = (source["title"] + "\n\n" + source["text"] + "\n").encode("utf-8")
    return dict(sorted(files.items()))


def manifest(files) -> list:
    """The information boundary as recorded: each staged path with its sha256."""
    return [{"path": rel, "sha256": engine.sha256_hex(data), "bytes": len(data)} for rel, data in sorted(files.items())]


def worker_identity(prompt=None) -> dict:
    """The prompt, the output schema and the worker's code, by sha256 (for the freeze and every record).

    With the compact prompt (`prompt`, as the local sampler's settings name it) the prompt is the whole of
    worker/prompt.py (its system text and the view it builds) and the output schema includes the grammar
    builder (launchers/_grammar.py) the host decodes with."""
    from .worker import agent, protocol
    from .worker import prompt as compact

    code = {
        "worker.py": _read(os.path.join(WORKER_DIR, "agent.py")),
        "protocol.py": _read(os.path.join(WORKER_DIR, "protocol.py")),
        "desktools/__init__.py": DESKTOOLS_INIT,
    }
    for name in TOOL_MODULES:
        code[f"desktools/{name}.py"] = _read(os.path.join(ENGINE_DIR, name + ".py"))
    if prompt is not None:
        code["prompt.py"] = _read(os.path.join(WORKER_DIR, "prompt.py"))
        code["worker.json"] = worker_config(prompt)
    schema = {rel: engine.sha256_hex(code[rel]) for rel in ("desktools/_batch.py", "protocol.py")}
    shown = {"version": agent.PROMPT_VERSION, "sha256": engine.sha256_hex(agent.SYSTEM.encode("utf-8"))}
    if prompt is not None:
        shown = {"version": prompt, "sha256": engine.sha256_hex(code["prompt.py"])}
        schema["launchers/_grammar.py"] = engine.sha256_hex(
            _read(os.path.join(os.path.dirname(__file__), "_grammar.py"))
        )
    calls = compact.MAX_CALLS_PER_DAY if prompt is not None else protocol.MAX_CALLS_PER_CHECKPOINT
    return {
        "prompt": shown,
        "output_schema": {"sha256": engine.content_sha256(schema)},
        "worker": {"sha256": engine.content_sha256(manifest(code)), "max_calls_per_checkpoint": calls},
    }
