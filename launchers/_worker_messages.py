"""The controller's answers to the worker's messages other than a model call: a tool result or an invalid
answer reported, retained work kept, a checkpoint passed, and a batch proposed to the desk (committed only when
the desk accepts it), each with its transcript step; then the next checkpoint's packet, or the finalised run.
"""

import json

import engine
from engine import MAX_BATCH_BYTES

from ._channel import ProtocolError
from ._journal import plain
from ._signals import critical
from ._transcript import bounded, count, packet_text
from .worker import protocol


class WorkerMessages:
    """The Controller's handling of the worker's messages (a mixin: the state is the Controller's)."""

    # -- messages --------------------------------------------------------------------
    def _handle(self, worker, msg, deadline):
        kind = msg["type"]
        if kind == "sample":
            worker.channel.send(self._sample(msg, deadline))
        elif kind == "tool":
            self._report("a tool result")
            code = msg.get("exit_code")
            call = {
                "name": bounded(str(msg.get("name")), 200),
                "arguments": bounded(msg.get("arguments")),
                "output": plain(msg.get("output")),
                "exit_code": code if isinstance(code, int) and not isinstance(code, bool) else None,
            }
            try:
                shown = protocol.tool_result_text(msg.get("output"))
            except (TypeError, ValueError, RecursionError):
                shown = None
            if shown is not None and len(shown) > protocol.TOOL_OUTPUT_LIMIT:  # what the model saw: cut, marked
                call["output"] = bounded(shown, protocol.TOOL_OUTPUT_LIMIT + 128)
                call["truncated"] = {
                    "shown": protocol.TOOL_OUTPUT_LIMIT,
                    "total": len(json.dumps(msg.get("output"), sort_keys=True)),
                }
            else:
                call["output"] = bounded(call["output"])
            self.step("tool", "", [call])
        elif kind == "invalid":
            self._report("an invalid answer")
            self.step(
                "tool",
                "",
                [
                    {
                        "name": "validate_artefact",
                        "arguments": {},
                        "output": bounded(str(msg.get("error")), 4000),
                        "exit_code": 1,
                    }
                ],
            )
        elif kind == "submit":
            self._report("a batch")
            worker.channel.send(self._submit(msg.get("batch")))
        elif kind == "retained":
            if self._retained_due < 1:
                raise ProtocolError("the worker sent retained work when no checkpoint had closed since the last")
            self._retained_due -= 1
            self._retained(msg)
        elif kind == "pass":
            self.journal.write("pass", {"day": self.day, "reason": str(msg.get("reason", ""))[:200]})  # write-ahead
            try:
                with critical():
                    run, record = self.history.advance()
            except engine.HistoryError:
                raise
            except engine.DeskError as exc:
                raise ProtocolError(f"the worker passed a checkpoint the desk cannot close ({exc.message})")
            self._retained_due += 1
            self.step(
                "evaluator",
                f"Checkpoint {record['day']} closed without a batch ({bounded(str(msg.get('reason', '')), 200)}).",
                day=record["day"],
            )
            worker.channel.send({"type": "advanced", "packet": self._next(run)})
        else:
            raise ProtocolError(f"unknown message type {kind!r} from the worker")

    def _report(self, what):
        """A worker report (tool result, invalid answer, batch) answers one model answer: no more than that."""
        if self._reports < 1:
            raise ProtocolError(f"the worker sent {what} that follows no model answer (one report per answer)")
        self._reports -= 1

    def _retained(self, msg):
        files = msg.get("files")
        if not isinstance(files, dict) or not all(
            k in protocol.RETAINED_FILES and isinstance(v, str) for k, v in files.items()
        ):
            raise ProtocolError(f"retained.files: expected text for some of {list(protocol.RETAINED_FILES)}")
        size = sum(len(v.encode("utf-8")) for v in files.values())
        if size > protocol.RETAINED_LIMIT:
            raise ProtocolError(f"retained work of {size} bytes (limit {protocol.RETAINED_LIMIT})")
        day = msg.get("day")
        self.retained = {
            "day": day if isinstance(day, int) and not isinstance(day, bool) else None,
            "files": dict(sorted(files.items())),
        }
        self.journal.write("retained", self.retained)

    def _submit(self, batch):
        hashable = _hashable(batch)
        day = batch.get("day") if isinstance(batch, dict) else None
        proposal = {
            "index": len(self.proposals),
            "step": len(self.steps),
            "day": day if isinstance(day, int) and _hashable(day) else None,
            "batch_sha256": engine.content_sha256(batch) if hashable else None,
            "batch": bounded(batch, 2 * MAX_BATCH_BYTES),
        }  # a larger batch is refused by the desk anyway
        self.proposals.append(proposal)
        self.journal.write("submit", proposal)  # write-ahead: the journal knows of a batch before the desk does
        with critical():  # the desk's commit and the journal of its answer: a stop lands before or after both
            try:
                run, decisions, record = self.history.submit(batch)
            except engine.HistoryError:
                raise  # the history itself failed: not the worker's batch, the attempt's end
            except engine.DeskError as exc:
                proposal.update(outcome="rejected", message=exc.message)
                self.journal.write("proposal", proposal)
                rejected = exc.message
            else:
                rejected = None
                proposal.update(
                    outcome="accepted",
                    decisions=[{k: d.get(k) for k in ("action", "type", "decision", "reason")} for d in decisions],
                )
                self.journal.write("proposal", proposal)
        if rejected is not None:
            self.step("evaluator", f"Batch rejected whole: {rejected}")
            return {"type": "rejected", "message": rejected}
        accepted = sum(1 for d in decisions if d["decision"] == "ACCEPTED")
        self.settled_days += 1
        self._retained_due += 1
        refused = [f"{d['action']} {d['reason']}" for d in decisions if d["decision"] == "REFUSED"]
        self.step(
            "evaluator",
            f"Checkpoint {record['day']}: batch accepted; {count(accepted, 'action')} accepted, "
            f"{len(refused)} refused"
            + (f" ({'; '.join(refused)})" if refused else "")
            + f"; closing cash {engine.format_cents(record['cash'])}.",
            day=record["day"],
        )
        return {"type": "accepted", "decisions": decisions, "packet": self._next(run)}

    def _next(self, run):
        if run.open_day is None:
            with critical():
                _, self.result = self.history.finalize()
                self.journal.write("result", self.result)
            self.finished = True
            self.day = None
            r = self.result
            score = f"{r['score']['points']}/{r['score']['denominator']}" if r.get("score") else "no score"
            self.step("evaluator", f"Run finalised: {r['status']}, {r['verdict']}, {score}.")
            return None
        packet = self.history.packet()
        self.day = packet["day"]
        self.step("evaluator", packet_text(packet))
        return packet


def _hashable(obj):
    try:
        engine.canonical_json(obj)
        return True
    except (ValueError, TypeError):
        return False
