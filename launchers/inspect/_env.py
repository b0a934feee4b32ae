"""The desk environment behind inspect_fundbook/desk: one world, its moves,
the model worker's affordances, every tool result canonical JSON.

Every engine answer comes through `caller(fn, *json_args) -> json text`, one
of engine._session's JSON functions (desk_state, desk_submit, desk_tool,
desk_finalize): on the host while Inspect runs, and again in the compiled
bundle under Pyodide when a log is imported (the importer records the calls
here and requires the bundle's answers byte for byte). The environment is a
pure function of its source and the calls made to it: no clock, no random.

Outcomes: an engine refusal (a batch or tool argument the desk refuses, a
refused action with its reason code) is an ordinary result the model reads;
a protocol error (arguments that are not the named shape, a closed run) is a
ProtocolError, which the Inspect tool raises as ToolError.
"""

import json

import engine
from engine import session as _session

from ..worker import protocol
from ..worker.agent import SYSTEM as TEXT_SYSTEM
from ..worker.agent import extract_json

TASK_NAME = "inspect_fundbook/desk"
TOOLS = ("submit_batch", "project", "exposure", "headroom", "interest", "read_source", "note")
CALC_TOOLS = ("project", "exposure", "headroom", "interest")
PROTOCOLS = ("tool", "text")
DEFAULT_DAYS = 20

TOOL_SYSTEM = (
    TEXT_SYSTEM.split("\n\nAnswer with exactly one JSON object", 1)[0]
    + """

Call the tools. submit_batch {"day": <today>, "report": {...}, "actions": [...]} submits today's artefact (it must
be the last thing you do today); its result is the desk's decisions and the next checkpoint's packet.
  project {"actions": [...]}            dry run: decisions, closing cash and the exact truthful report
  exposure {"asset", "quote", "notional"?}  maturity gap and tail now and if funded from the quote
  headroom {}                            counterparty capacity and what is left on each quote
  interest {"principal", "rate_bps", "start_day", "end_day"}   ACT/360 interest (cents)
  read_source {"id"}                     the full text of a published source
  note {"text"}                          keep a note for later checkpoints
"""
    + TEXT_SYSTEM.split("Tools (they read only the packet):", 1)[1].split("\n\nActions", 1)[1].join(["\nActions", ""])
)


class ProtocolError(Exception):
    """A call outside the environment's protocol (the Inspect tool raises it as ToolError)."""


def canonical(obj) -> str:
    return engine.canonical_json(obj).decode("utf-8")


def host_caller(fn, *args):
    """The engine on this host (during an Inspect eval)."""
    if fn not in ("desk_state", "desk_submit", "desk_tool", "desk_finalize"):
        raise ValueError(f"not an engine session function: {fn}")
    return getattr(_session, fn)(*args)


class Recorder:
    """A caller that keeps every call for the importer to re-ask the bundle. Each distinct text is kept once (a
    day's packet is the argument of every tool call that day), each answer by its sha256, and the finalisation's
    answer whole (its receipts): what a sample holds stays the size of its distinct days, however many calls."""

    def __init__(self, inner=host_caller):
        self.inner = inner
        self.texts = {}  # text -> its index
        self.calls = []  # (fn, (indexes of its arguments), sha256 of the answer)
        self.final = None
        self.size = 0  # characters of distinct text kept

    def _ref(self, text):
        if text not in self.texts:
            self.texts[text] = len(self.texts)
            self.size += len(text)
        return self.texts[text]

    def __call__(self, fn, *args):
        out = self.inner(fn, *args)
        self.calls.append((fn, tuple(self._ref(a) for a in args), engine.sha256_hex(out.encode("utf-8"))))
        if fn == "desk_finalize":
            self.final = out
        return out

    def lines(self, max_chars):
        """[(JSON line {"texts", "calls": [[fn, [index, ...]]]}, [answer sha256])]: the calls in order, cut into
        lines whose own texts stay within max_chars (a single call's texts excepted)."""
        by_index = list(self.texts)
        out, calls, texts, local, size = [], [], [], {}, 0
        for fn, refs, digest in self.calls:
            new = [r for r in dict.fromkeys(refs) if r not in local]
            grow = sum(len(by_index[r]) for r in new)
            if calls and size + grow > max_chars:
                out.append(
                    (
                        json.dumps({"texts": texts, "calls": [c[:2] for c in calls]}, separators=(",", ":")),
                        [c[2] for c in calls],
                    )
                )
                calls, texts, local, size = [], [], {}, 0
                new, grow = list(dict.fromkeys(refs)), sum(len(by_index[r]) for r in dict.fromkeys(refs))
            for r in new:
                local[r] = len(texts)
                texts.append(by_index[r])
            size += grow
            calls.append((fn, [local[r] for r in refs], digest))
        if calls:
            out.append(
                (
                    json.dumps({"texts": texts, "calls": [c[:2] for c in calls]}, separators=(",", ":")),
                    [c[2] for c in calls],
                )
            )
        return out


def world_source(family, seed, days=DEFAULT_DAYS) -> dict:
    return {"family": family, "seed": seed, "horizon": days}


def checkpoint_text(packet) -> str:
    """A checkpoint's packet as the model sees it (the worker's checkpoint message, without history)."""
    return (
        f"{protocol.CHECKPOINT_MARK} day {packet['day']} of {packet['horizon']}.\n"
        f"{protocol.PACKET_OPEN}\n{json.dumps(protocol.prompt_packet(packet), sort_keys=True)}\n"
        f"{protocol.FENCE_CLOSE}"
    )


class DeskEnv:
    """One world's run. `state` is plain JSON (kept in Inspect's store between tool calls)."""

    def __init__(self, state, caller=host_caller):
        self.state = state
        self.caller = caller

    @classmethod
    def new(cls, source, caller=host_caller):
        return cls({"source": source, "moves": [], "notes": "", "result": None}, caller)

    def _ask(self, fn, *args):
        reply = json.loads(self.caller(fn, *args))
        return reply

    def _src(self):
        return json.dumps(self.state["source"], sort_keys=True)

    def _moves(self):
        return json.dumps(self.state["moves"], sort_keys=True)

    def desk(self) -> dict:
        reply = self._ask("desk_state", self._src(), self._moves())
        if not reply.get("ok"):
            raise ProtocolError(f"the desk cannot rebuild this run: {reply.get('error')}")
        return reply

    def opening(self) -> str:
        return checkpoint_text(self.desk()["packet"])

    @property
    def closed(self) -> bool:
        return self.state["result"] is not None

    def _open_packet(self):
        if self.closed:
            raise ProtocolError("the run is closed: every checkpoint is settled and graded")
        return self.desk()["packet"]

    # -- the tools ----------------------------------------------------------------------
    def call(self, name, args) -> str:
        """A tool call -> its result text (canonical JSON); ProtocolError outside the protocol."""
        if name not in TOOLS:
            raise ProtocolError(f"unknown tool {str(name)[:40]!r} (tools: {', '.join(TOOLS)})")
        if not isinstance(args, dict):
            raise ProtocolError(f"{name}: arguments: expected a JSON object")
        if name == "submit_batch":
            return canonical(self.submit(args))
        packet = self._open_packet()
        if name in CALC_TOOLS:
            reply = self._ask("desk_tool", json.dumps(packet, sort_keys=True), name, json.dumps(args, sort_keys=True))
            return canonical({"output": reply["output"]} if reply.get("ok") else {"error": reply.get("error")})
        if name == "read_source":
            found = [s for s in packet.get("sources", []) if s.get("id") == args.get("id")]
            if not found:
                return canonical({"error": f"read_source: no published source {str(args.get('id'))[:40]!r}"})
            return canonical({"id": found[0]["id"], "text": found[0]["title"] + "\n\n" + found[0]["text"] + "\n"})
        text = args.get("text")
        if not isinstance(text, str):
            raise ProtocolError("note: text: expected a string")
        line = f"day {packet['day']}: {text}\n"
        if len((self.state["notes"] + line).encode("utf-8")) > protocol.NOTES_LIMIT:
            return canonical({"error": f"note: the notes are full ({protocol.NOTES_LIMIT} bytes kept)"})
        self.state["notes"] += line
        return canonical({"kept": True})

    def submit(self, batch) -> dict:
        if not isinstance(batch, dict):
            raise ProtocolError("submit_batch: expected the batch object {day, report, actions}")
        packet = self._open_packet()
        reply = self._ask("desk_submit", self._src(), self._moves(), json.dumps(batch, sort_keys=True))
        if not reply.get("ok"):  # the desk refuses the batch as a whole: the model may try again today
            return {"accepted": False, "day": packet["day"], "error": reply.get("error")}
        self.state["moves"].append({"batch": batch})
        state = reply["state"]
        out = {"accepted": True, "day": packet["day"], "decisions": reply["decisions"], "receipts_head": state["head"]}
        if state["open_day"] is None:
            out["result"] = self.finalize()
            out["next"] = None
        else:
            out["next"] = checkpoint_text(state["packet"])
        return out

    def finalize(self) -> dict:
        """Close what is left (days without a batch) and grade: the engine's result."""
        if self.state["result"] is None:
            reply = self._ask("desk_finalize", self._src(), self._moves())
            if not reply.get("ok"):
                raise ProtocolError(f"the desk cannot finalise this run: {reply.get('error')}")
            self.state["result"] = reply["result"]
        return self.state["result"]

    # -- the text protocol ----------------------------------------------------------------
    def text_turn(self, text):
        """A model's text answer -> (tool name or None, message to send back, whether it was valid).
        Parsed as the worker parses (launchers/worker/agent.py): one JSON object, {tool, arguments} or {batch}."""
        try:
            obj = json.loads(extract_json(text))
        except ValueError as exc:
            return None, f"Invalid answer: not one JSON object ({exc}). Answer with one JSON object.", False
        if not isinstance(obj, dict) or (("tool" in obj) == ("batch" in obj)):
            return (
                None,
                (
                    "Invalid answer: expected exactly one of 'tool' or 'batch' at the top level. "
                    "Answer with one JSON object."
                ),
                False,
            )
        name, args = ("submit_batch", obj["batch"]) if "batch" in obj else (obj["tool"], obj.get("arguments", {}))
        try:
            result = self.call(name, args)
        except ProtocolError as exc:
            return name, f"TOOL ERROR {name}: {exc}", False
        return name, f"TOOL RESULT {name}: {result}", True


def grade(result) -> dict:
    """The scorer's view of an engine result: value out of 100, the answer, and the metadata kept."""
    points = result["score"]["points"] if result.get("score") else 0
    return {
        "value": points,
        "answer": f"{result['status']} {result['verdict'] or 'no verdict'} {engine.score_text(result)}",
        "metadata": {
            "status": result["status"],
            "verdict": result["verdict"],
            "score": result.get("score"),
            "gates": result["gates"],
            "receipts_head": result["receipts_head"],
            "instance_id": result.get("instance_id"),
            "fixture_sha256": result.get("fixture_sha256"),
            "error": result.get("error"),
        },
    }
