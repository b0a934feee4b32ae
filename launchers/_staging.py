"""What the worker may read, and nothing else.

Staged: the worker's own code (agent and protocol), the calculation tools
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

TOOL_MODULES = ("_batch", "_book", "_canon", "_errors", "_packet", "_report", "_rules", "_settle", "_tools", "_units")
NEVER_STAGED = ("_baselines", "_candidate", "_episodes", "_families", "_fixtures", "_grade", "_mutations",
                "_records", "_reference", "_replay", "_run", "_runtime", "_session", "_world", "cli", "episodes")
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


def stage(packet) -> dict:
    """Relative path -> bytes: every file the worker starts with."""
    check_closure()
    files = {"worker.py": _read(os.path.join(WORKER_DIR, "agent.py")),
             "protocol.py": _read(os.path.join(WORKER_DIR, "protocol.py")),
             "desktools/__init__.py": DESKTOOLS_INIT}
    for name in TOOL_MODULES:
        files[f"desktools/{name}.py"] = _read(os.path.join(ENGINE_DIR, name + ".py"))
    files["packet.json"] = (json.dumps(packet, sort_keys=True, indent=1) + "\n").encode("utf-8")
    for source in packet.get("sources", []):
        files[f"sources/{source['id']}.txt"] = (source["title"] + "\n\n" + source["text"] + "\n").encode("utf-8")
    return dict(sorted(files.items()))


def manifest(files) -> list:
    """The information boundary as recorded: each staged path with its sha256."""
    return [{"path": rel, "sha256": engine.sha256_hex(data), "bytes": len(data)} for rel, data in sorted(files.items())]



def worker_identity() -> dict:
    """The prompt, the output schema and the worker's code, by sha256 (for the freeze and every record)."""
    from .worker import agent, protocol
    code = {"worker.py": _read(os.path.join(WORKER_DIR, "agent.py")),
            "protocol.py": _read(os.path.join(WORKER_DIR, "protocol.py")), "desktools/__init__.py": DESKTOOLS_INIT}
    for name in TOOL_MODULES:
        code[f"desktools/{name}.py"] = _read(os.path.join(ENGINE_DIR, name + ".py"))
    schema = {rel: engine.sha256_hex(code[rel]) for rel in ("desktools/_batch.py", "protocol.py")}
    return {"prompt": {"version": agent.PROMPT_VERSION, "sha256": engine.sha256_hex(agent.SYSTEM.encode("utf-8"))},
            "output_schema": {"sha256": engine.content_sha256(schema)},
            "worker": {"sha256": engine.content_sha256(manifest(code)),
                       "max_calls_per_checkpoint": protocol.MAX_CALLS_PER_CHECKPOINT}}
