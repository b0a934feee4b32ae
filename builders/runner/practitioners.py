"""Inside the pinned Pyodide: re-execute practitioner sessions through the bundle.

The same calls the desk's worker makes in the reader's browser
(engine._session: the session rebuilt from its source and moves, finalised
when the participant finalised it), from fresh engine module state for each
session (run_fixtures._engine), every engine module from the bundle's
bytecode (run_fixtures._modules).
"""

import json

import run_fixtures


def execute(request_json):
    """{"source", "moves", "finalize"} -> the state, receipts and (finalised) result, or the engine's refusal."""
    request = json.loads(request_json)
    engine = run_fixtures._engine()
    from engine import session as _session
    source, moves = json.dumps(request["source"]), json.dumps(request["moves"])
    state = json.loads(_session.desk_state(source, moves))
    if not state.pop("ok"):
        return json.dumps({"ok": False, "error": state["error"]})
    state.pop("packet", None)  # the open day's packet: the record keeps the receipts, not a packet
    out = {"ok": True, "state": state, "result": None}
    if request["finalize"]:
        final = json.loads(_session.desk_finalize(source, moves))
        if not final.pop("ok"):
            return json.dumps({"ok": False, "error": final["error"]})
        out["result"], out["receipts"] = final["result"], final["receipts"]
    else:
        run = _session.rebuild(*_session.parse_session(source, moves))
        out["receipts"] = run.receipts
    out["modules"] = run_fixtures._modules()
    out["fresh_modules"] = run_fixtures._fresh()
    out["sha256"] = engine.content_sha256({k: out[k] for k in ("state", "result", "receipts")})
    return json.dumps(out)
