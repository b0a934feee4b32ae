"""Inside the pinned Pyodide: answer an Inspect log's engine calls from the bundle.

Each line is a run of one sample's calls {"texts": [...], "calls": [[fn, [text
index, ...]]]} to engine._session's JSON functions, as launchers/inspect/_env.py
made them on the host (each distinct argument text sent once); each is asked
again of the engine imported afresh from the bundle's bytecode, and each answer
goes back as the sha256 of its UTF-8 bytes (the host compares it with its own:
byte for byte, without sending a day's packet back once per call).
"""

import hashlib
import json

import run_fixtures

FUNCTIONS = ("desk_state", "desk_submit", "desk_tool", "desk_finalize")


def answer(line):
    doc = json.loads(line)
    texts = doc["texts"]
    run_fixtures._engine()
    from engine import session as _session

    out = []
    for fn, refs in doc["calls"]:
        if fn not in FUNCTIONS:
            raise ValueError(f"not an engine session function: {fn}")
        text = getattr(_session, fn)(*[texts[i] for i in refs])
        out.append(hashlib.sha256(text.encode("utf-8")).hexdigest())
    run_fixtures._fresh()
    return json.dumps({"answers": out, "modules": len(run_fixtures._modules())})
