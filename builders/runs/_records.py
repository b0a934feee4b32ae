"""Assembling a run record, its trace and its files.

content = engine.engine_fields(execution) (computed inside the bundle) + the
fields only the build knows (schema version, engine bundle, execution path,
command, outputs). The in-browser verifier recomputes the engine fields with
the same function, so a record written here verifies there.
"""

import engine

RUN_SCHEMA = engine.RUN_SCHEMA            # "fundbook.run/1"
RUN_SCHEMA_VERSION = engine.RUN_SCHEMA_VERSION
TRACE_SCHEMA = "fundbook.trace/1"         # bump the suffix when a trace field changes meaning
PYODIDE_PATH = "compiled bundle in Pyodide"
TRACE_STEPS = (
    "check the bundle: every entry against manifest.json inside it, that manifest against the one beside it",
    "read every unchecked-hash .pyc of the bundle once (checked above) into code objects; serve engine.* only from them",
    "drop every engine module from sys.modules, import engine from the bundle's bytecode (fresh module state: "
    "every module body executed again)",
    "execution = engine.execute_fixture(spec)",
    "fields = engine.engine_fields(execution)",
    "inputs = engine.fixture_input(spec) (the stage requires content_sha256(inputs) == input_sha256)",
)


def paths(run_id) -> dict:
    return {"record": f"runs/{run_id}.json", "receipts": f"runs/receipts/{run_id}.json",
            "trace": f"runs/traces/{run_id}.json", "input": f"runs/inputs/{run_id}.json"}


def engine_block(bundle, runtime) -> dict:
    return {"bundle_sha256": bundle["bundle_sha256"], "manifest_sha256": bundle["manifest_sha256"],
            "engine_version": runtime["engine_version"], "pyodide_version": runtime["runtime"]["pyodide_version"],
            "python_version": runtime["runtime"]["python_version"]}


def command(argv, epoch) -> dict:
    return {"argv": list(argv), "env": {"PYTHONHASHSEED": "0", "SOURCE_DATE_EPOCH": str(epoch)}}


def trace(event, bundle, runtime, cmd) -> dict:
    """What was executed, where, with what, and digests of what it printed."""
    fields = event["fields"]
    return {
        "schema": TRACE_SCHEMA,
        "run_id": event["run_id"],
        "execution_path": PYODIDE_PATH,
        "command": cmd,
        "bundle": {"path": bundle["path"], "sha256": bundle["bundle_sha256"],
                   "manifest": bundle["manifest_path"], "manifest_sha256": bundle["manifest_sha256"]},
        "runtime": {**{k: runtime["runtime"][k] for k in ("pyodide_version", "python_version", "abi",
                                                          "pyc_magic", "pyc_invalidation")},
                    "PYTHONHASHSEED": "0", "hash_randomization": runtime["hash_randomization"]},
        "fixture": {k: v for k, v in event["spec"].items() if k != "run_id"},
        "steps": list(TRACE_STEPS),
        "modules": event["modules"],
        "stdout": event["output"]["stdout"],
        "stderr": event["output"]["stderr"],
        "digests": {"fixture_sha256": fields["fixture_sha256"], "candidate_sha256": event["candidate_sha256"],
                    "input_sha256": fields["input_sha256"], "result_sha256": fields["result_sha256"],
                    "engine_fields_sha256": event["fields_sha256"]},
    }


def content(fields, build) -> dict:
    """The hashed part: engine fields plus the build's own fields."""
    out = dict(fields)
    out.update(build)
    return out


def record(content_part, volatile) -> dict:
    return {"schema": RUN_SCHEMA, "content": content_part,
            "content_sha256": engine.content_sha256(content_part), "volatile": volatile}


def file_bytes(doc) -> bytes:
    return engine.pretty_json(doc).encode("utf-8")
