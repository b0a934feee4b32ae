"""Runs inside the pinned Pyodide: everything the desk and the verify button ask
of the engine, error paths included, so that an import trace of it names
every standard-library module they need (builders/desk/stdlib_trace.mjs).

`run(records)` drives engine._session exactly as the browser worker does
(JSON strings in, JSON strings out): an episode and a practice family played
with their gold batches, a day closed without a batch, every calculation
tool, a rejected batch and bad inputs of each kind, finalisation, and verify
of one published record of each kind (plus a tampered one). It returns the
standard-library modules loaded, and the calls that failed for want of a module (ImportError, by name).
"""

import json
import sys


def _stdlib_modules():
    """Loaded modules whose code comes from the runtime's stdlib zip (not built in, not the bundle)."""
    out = set()
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) or getattr(module, "__file__", None) or ""
        if origin.startswith(("/lib/python", sys.prefix + "/lib/python")) and "site-packages" not in origin:
            out.add(name)
    return sorted(out)


def run(records_json: str) -> str:
    import engine
    from engine import session as s

    failures = []
    answers = {"ok": 0, "refused": 0}

    def call(label, fn, *args):
        try:
            answer = json.loads(fn(*args))
            answers["ok" if answer.get("ok") else "refused"] += 1
            return answer
        except ImportError as exc:  # a module the stdlib subset lacks: what this looks for
            failures.append(f"{label}: {type(exc).__name__}: {exc}")
        except Exception:  # noqa: BLE001 -- the worker reports these by their last line, as text
            import traceback

            traceback.format_exc()
        return {}

    def play(source, days=None):
        src = json.dumps(source)
        instance = (
            engine.load_episode(source["episode"])
            if "episode" in source
            else engine.generate(source["family"], source["seed"])
        )
        gold = engine.gold_candidate(instance)
        moves = []
        for batch in gold["batches"][:days]:
            packet = call("state", s.desk_state, src, json.dumps(moves)).get("packet")
            if packet:
                call(
                    "tool project",
                    s.desk_tool,
                    json.dumps(packet),
                    "project",
                    json.dumps({"actions": batch["actions"]}),
                )
                call("tool headroom", s.desk_tool, json.dumps(packet), "headroom", "{}")
                if packet["assets"] and packet["quotes"]:
                    call(
                        "tool exposure",
                        s.desk_tool,
                        json.dumps(packet),
                        "exposure",
                        json.dumps({"asset": packet["assets"][0]["id"], "quote": packet["quotes"][0]["id"]}),
                    )
                call(
                    "tool interest",
                    s.desk_tool,
                    json.dumps(packet),
                    "interest",
                    json.dumps({"principal": 100_000_00, "rate_bps": 450, "start_day": 0, "end_day": 1}),
                )
            call("submit", s.desk_submit, src, json.dumps(moves), json.dumps(batch))
            moves.append({"batch": batch})
        return src, moves

    src, moves = play({"episode": "W3"})
    call("finalize", s.desk_finalize, src, json.dumps(moves))
    src, moves = play({"family": engine.FAMILIES[0], "seed": 1}, days=2)
    call("skip", s.desk_skip, src, json.dumps(moves))
    call("finalize early", s.desk_finalize, src, json.dumps(moves))
    # the error paths a person can reach from the page
    call("rejected batch", s.desk_submit, src, json.dumps(moves), json.dumps({"day": 99, "report": {}, "actions": []}))
    call("batch not JSON", s.desk_submit, src, json.dumps(moves), "{")
    call("bad source", s.desk_state, json.dumps({"family": "NOPE", "seed": 1}), "[]")
    call("bad move", s.desk_state, src, json.dumps([{"what": 1}]))
    call("unknown tool", s.desk_tool, "{}", "nope", "{}")
    call(
        "tool bad args",
        s.desk_tool,
        json.dumps({"day": 1, "calendar": [0, 1]}),
        "interest",
        json.dumps({"principal": 1, "rate_bps": 1, "start_day": 5, "end_day": 1}),
    )
    for text in json.loads(records_json):
        call("verify", s.verify_run, text)
        record = json.loads(text)
        record["content_sha256"] = "0" * 64
        call("verify tampered", s.verify_run, json.dumps(record))
    call("verify not JSON", s.verify_run, "not json")
    # the worker reports an escaped exception by its last line: formatting it must work too
    try:
        raise ValueError("probe")
    except ValueError:
        import traceback

        traceback.format_exc()
    return json.dumps({"modules": _stdlib_modules(), "failures": failures, "answers": answers})
