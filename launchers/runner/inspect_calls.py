"""Inside the pinned Pyodide: answer an Inspect log's engine calls from the bundle.

Each line is one sample's calls [{"fn", "args"}] to engine._session's JSON
functions, as launchers/inspect/_env.py made them on the host; each is asked
again of the engine imported afresh from the bundle's bytecode, and the
answers go back as they are (the host compares them byte for byte).
"""

import json

import run_fixtures

FUNCTIONS = ("desk_state", "desk_submit", "desk_tool", "desk_finalize")


def answer(line):
    calls = json.loads(line)
    run_fixtures._engine()
    from engine import session as _session
    out = []
    for call in calls:
        if call["fn"] not in FUNCTIONS:
            raise ValueError(f"not an engine session function: {call['fn']}")
        out.append(getattr(_session, call["fn"])(*call["args"]))
    run_fixtures._fresh()
    return json.dumps({"answers": out, "modules": len(run_fixtures._modules())})
