"""The model worker: a standard agent loop over one desk run.

Staged into the sandbox as worker.py, beside protocol.py, the calculation tools
(desktools/) and the current packet. Each checkpoint: packet, sources and tools
-> the model (every call is made by the host controller, which holds the keys
and the ledger) -> a typed action-and-report artefact, schema-checked here
(invalid output is recorded and retried within budget) -> the evaluator commits
only accepted actions and sends back the next packet. Retained work lives in
retained/ and sources/. Standard library only.
"""

import json
import os
import re
import sys

if __package__:  # a package module on the host (tests, the mock's prompt parsing)
    from . import protocol
else:  # staged flat in the sandbox and run isolated (-I): its own folder is not on sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import protocol

PROMPT_VERSION = "1"  # bump with any change to SYSTEM or to the checkpoint message
MAX_STEPS_PER_DAY = protocol.MAX_CALLS_PER_CHECKPOINT
MAX_INVALID_PER_DAY = 3
MAX_CALL_FAILURES_PER_DAY = 3
TOOL_OUTPUT_LIMIT = protocol.TOOL_OUTPUT_LIMIT

SYSTEM = """You run a structured-credit funding desk that carries client positions back to back.
Each daily checkpoint you receive the packet (the book, quotes valid today, sources published so far).
Fund every position you hold with quoted funding trades, cheaply, within limits, for as long as you
hold it; keep cash above the minimum buffer; escalate before breaking a limit; and report the book
truthfully as it will stand once today has settled.

Answer with exactly one JSON object and nothing else. Either call a tool:
  {"tool": "<name>", "arguments": {...}}
or submit today's artefact (it must be the last thing you do today):
  {"batch": {"day": <today>, "report": {...}, "actions": [...]}}

Tools (they read only the packet):
  project {"actions": [...]}            dry run: decisions, closing cash and the exact truthful report
  exposure {"asset", "quote", "notional"?}  maturity gap and tail now and if funded from the quote
  headroom {}                            counterparty capacity and what is left on each quote
  interest {"principal", "rate_bps", "start_day", "end_day"}   ACT/360 interest (cents)
  read_source {"id"}                     the full text of a published source
  note {"text"}                          keep a note for later checkpoints

Actions (each needs a unique string "id"; money in integer cents):
  FUND {"asset", "quote", "notional"}      ROLL {"trade", "quote"}      REPAY {"trade"}
  ESCALATE {"kind": "capacity"|"tenor"|"buffer", "amount", "counterparty" (for capacity), "note"?}
  EXECUTE {"approval", "action": {"type": "FUND"|"ROLL", ...}}
Report (all integers): cash, funding_cost_to_date, breaches [{day, code}], open_approvals [ids],
  assets {<id>: {funded, unfunded, maturity_gap_days, tail_cent_days}} for every asset not exited.
The `project` tool returns the report for the actions you pass it."""


def extract_json(text):
    """The JSON object in a model's answer: after any reasoning block, inside a fence if there is one."""
    body = text.strip()
    if "</think>" in body:
        body = body.split("</think>", 1)[1].strip()
    fence = re.search(r"```(?:json)?[ \t]*\n(.*?)\n?```", body, re.S)
    if fence:
        return fence.group(1)
    start, end = body.find("{"), body.rfind("}")
    return body[start:end + 1] if 0 <= start < end else body


class Halt(Exception):
    pass


def compact_prompt():
    """worker/prompt.py, staged only beside a worker that worker.json tells to use it."""
    if __package__:
        from . import prompt
    else:
        import prompt
    return prompt


class Worker:
    def __init__(self, root, stdin=None, stdout=None):
        self.root = root
        self.stdin = stdin or sys.stdin.buffer
        self.stdout = stdout or sys.stdout.buffer
        os.makedirs(os.path.join(root, "retained"), exist_ok=True)
        os.makedirs(os.path.join(root, "sources"), exist_ok=True)
        self.history = self._load("retained/history.json", [])
        self.config = self._load("worker.json", {})  # {"prompt": prompt.PROMPT_VERSION} for the compact prompt

    # -- files ---------------------------------------------------------------------
    def _load(self, rel, default):
        path = os.path.join(self.root, rel)
        if not os.path.exists(path):
            return default
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)

    def _save(self, rel, obj):
        path = os.path.join(self.root, rel)
        with open(path + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(obj, fh, sort_keys=True, indent=1)
        os.replace(path + ".tmp", path)

    def keep_packet(self, packet):
        self._save("packet.json", packet)
        for source in packet.get("sources", []):
            path = os.path.join(self.root, "sources", source["id"] + ".txt")
            if not os.path.exists(path):
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(source["title"] + "\n\n" + source["text"] + "\n")

    # -- channel -------------------------------------------------------------------
    def send(self, obj):
        self.stdout.write(protocol.encode(obj))
        self.stdout.flush()

    def receive(self):
        line = self.stdin.readline()
        if not line:
            raise Halt("the host closed the channel")
        msg = protocol.decode(line)
        if msg["type"] == "halt":
            raise Halt(msg.get("reason", "halted by the host"))
        return msg

    # -- tools ---------------------------------------------------------------------
    def run_tool(self, name, args, packet):
        from desktools import _tools
        if not isinstance(args, dict):
            raise ValueError("arguments: expected an object")
        if name == "project":
            return _tools.project(packet, args.get("actions"))
        if name == "exposure":
            return _tools.exposure(packet, args["asset"], args["quote"], args.get("notional"))
        if name == "headroom":
            return _tools.headroom(packet)
        if name == "interest":
            return _tools.interest(packet, args["principal"], args["rate_bps"], args["start_day"], args["end_day"])
        if name == "read_source":
            known = {s["id"] for s in packet.get("sources", [])}
            if args.get("id") not in known:
                raise ValueError(f"read_source: no published source {args.get('id')!r}")
            with open(os.path.join(self.root, "sources", args["id"] + ".txt"), encoding="utf-8") as fh:
                return {"id": args["id"], "text": fh.read()}
        if name == "note":
            path = os.path.join(self.root, "retained", "notes.txt")
            line = f"day {packet['day']}: {args.get('text', '')}\n"
            held = os.path.getsize(path) if os.path.exists(path) else 0
            if held + len(line.encode("utf-8")) > protocol.NOTES_LIMIT:
                raise ValueError(f"note: the notes are full ({protocol.NOTES_LIMIT} bytes kept)")
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(line)
            return {"kept": True}
        raise ValueError(f"unknown tool {name!r}")

    # -- the loop ------------------------------------------------------------------
    def checkpoint_message(self, packet):
        notes = ""
        path = os.path.join(self.root, "retained", "notes.txt")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                notes = fh.read()[-4000:]
        earlier = json.dumps(self.history[-5:], sort_keys=True)
        return (f"{protocol.CHECKPOINT_MARK} day {packet['day']} of {packet['horizon']}.\n"
                f"Your last outcomes: {earlier}\nYour notes:\n{notes or '(none)'}\n"
                f"{protocol.PACKET_OPEN}\n{json.dumps(protocol.prompt_packet(packet), sort_keys=True)}\n"
                f"{protocol.FENCE_CLOSE}")

    def parse(self, text, day):
        from desktools._batch import check_batch_shape
        from desktools._errors import BatchRejected
        try:
            obj = json.loads(extract_json(text))
        except ValueError as exc:
            raise ValueError(f"not one JSON object ({exc})")
        if not isinstance(obj, dict) or (("tool" in obj) == ("batch" in obj)):
            raise ValueError("expected exactly one of 'tool' or 'batch' at the top level")
        if "tool" in obj:
            return obj
        try:
            check_batch_shape(obj["batch"])
        except BatchRejected as exc:
            raise ValueError(exc.message)
        if obj["batch"]["day"] != day:
            raise ValueError(f"batch.day: expected today, {day}")
        return obj

    def send_retained(self, day):
        """The retained work, so the host can continue the attempt elsewhere after an interruption."""
        files = {}
        for rel in protocol.RETAINED_FILES:
            path = os.path.join(self.root, *rel.split("/"))
            if os.path.exists(path):
                with open(path, encoding="utf-8") as fh:
                    files[rel] = fh.read()
        self.send({"type": "retained", "day": day, "files": files})

    def day(self, packet):
        if self.config.get("prompt") is not None:
            return self.compact_day(packet)
        day = packet["day"]
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": self.checkpoint_message(packet)}]
        invalid = failures = 0
        for _ in range(MAX_STEPS_PER_DAY):
            self.send({"type": "sample", "messages": messages})  # the host sets max_tokens
            reply = self.receive()
            if reply["type"] == "call_failed":
                failures += 1
                if failures > MAX_CALL_FAILURES_PER_DAY:
                    break
                continue
            text = reply["text"]
            messages.append({"role": "assistant", "content": text})
            try:
                obj = self.parse(text, day)
            except ValueError as exc:
                invalid += 1
                self.send({"type": "invalid", "error": str(exc)})
                if invalid > MAX_INVALID_PER_DAY:
                    break
                messages.append({"role": "user", "content": f"Invalid answer: {exc}. Answer with one JSON object."})
                continue
            if "tool" in obj:
                try:
                    output, code = self.run_tool(obj["tool"], obj.get("arguments", {}), packet), 0
                except Exception as exc:  # a tool error is the model's to read, not the worker's end
                    output, code = {"error": f"{type(exc).__name__}: {exc}"}, 1
                self.send({"type": "tool", "name": obj["tool"], "arguments": obj.get("arguments", {}),
                           "output": output, "exit_code": code})
                text_out = protocol.tool_result_text(output)  # cut at TOOL_OUTPUT_LIMIT, the cut marked
                messages.append({"role": "user", "content": f"TOOL RESULT {obj['tool']} (exit {code}): {text_out}"})
                continue
            self.send({"type": "submit", "batch": obj["batch"]})
            reply = self.receive()
            if reply["type"] == "accepted":
                counts = {"accepted": sum(1 for d in reply["decisions"] if d["decision"] == "ACCEPTED"),
                          "refused": [[d["action"], d["reason"]] for d in reply["decisions"] if d["decision"] == "REFUSED"]}
                self.history.append({"day": day, **counts})
                self._save("retained/history.json", self.history)
                self.send_retained(day)
                return reply["packet"]
            messages.append({"role": "user", "content": f"The evaluator rejected the batch: {reply.get('message')}"})
        self.send({"type": "pass", "day": day, "reason": "no valid artefact within the day's step limits"})
        reply = self.receive()
        self.history.append({"day": day, "batch": "missing"})
        self._save("retained/history.json", self.history)
        self.send_retained(day)
        return reply["packet"]

    # -- the compact prompt (worker/prompt.py): one call a checkpoint, the refusal fed back --------------
    def compact_day(self, packet):
        day = packet["day"]
        try:  # the no-action report, which a one-call day leaves no turn to ask the project tool for
            projection = self.run_tool("project", {"actions": []}, packet)["report"]
        except Exception:  # a packet the tool cannot read: the view goes without it
            projection = None
        prompt = compact_prompt()
        opening = prompt.messages(packet, projection, self.history, self.config["prompt"])
        messages = opening
        for call in range(1, prompt.MAX_CALLS_PER_DAY + 1):
            self.send({"type": "sample", "messages": messages})
            reply = self.receive()
            if reply["type"] == "call_failed":
                continue
            text = reply["text"]
            try:
                batch = self.compact_batch(text, day)
            except ValueError as exc:
                self.send({"type": "invalid", "error": str(exc)})
                messages = prompt.retry(opening, text, f"your answer is not a valid batch: {exc}", call + 1)
                continue
            self.send({"type": "submit", "batch": batch})
            reply = self.receive()
            if reply["type"] == "accepted":
                self.history.append({"day": day, "accepted": sum(1 for d in reply["decisions"]
                                                                 if d["decision"] == "ACCEPTED"),
                                     "refused": [[d["action"], d["reason"]] for d in reply["decisions"]
                                                 if d["decision"] == "REFUSED"]})
                self._save("retained/history.json", self.history)
                self.send_retained(day)
                return reply["packet"]
            messages = prompt.retry(opening, text, f"the evaluator rejected the batch: {reply.get('message')}",
                                    call + 1)
        self.send({"type": "pass", "day": day, "reason": "no valid artefact within the day's step limits"})
        reply = self.receive()
        self.history.append({"day": day, "batch": "missing"})
        self._save("retained/history.json", self.history)
        self.send_retained(day)
        return reply["packet"]

    def compact_batch(self, text, day):
        """Today's batch from a compact answer: strictly read (prompt.read_answer), then the engine's own shape
        check and today's day -- what the grammar cannot hold (integer bounds, unique ids) is refused here."""
        from desktools._batch import check_batch_shape
        from desktools._errors import BatchRejected
        batch = compact_prompt().read_answer(text)
        try:
            check_batch_shape(batch)
        except BatchRejected as exc:
            raise ValueError(exc.message)
        if batch["day"] != day:
            raise ValueError(f"batch.day: expected today, {day}")
        return batch

    def run(self):
        wanted = self.config.get("prompt")
        if wanted is not None and wanted not in compact_prompt().PROMPT_VERSIONS:
            raise Halt(f"worker.json: prompt {wanted!r} is not one of {list(compact_prompt().PROMPT_VERSIONS)}")
        packet = self._load("packet.json", None)
        while packet is not None:
            self.keep_packet(packet)
            packet = self.day(packet)
        return 0


def main():
    root = os.path.dirname(os.path.abspath(__file__))
    try:
        return Worker(root).run()
    except Halt as exc:
        print(f"worker: halted: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
