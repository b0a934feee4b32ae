"""The host controller: runs the evaluator's desk, supervises the worker, makes
every model call itself under the ledger, and keeps what happened.

The worker (in a sandbox) asks for model calls, reports the tools it ran and
proposes one artefact a day; the controller reserves each call before making
it and settles it from the tokens returned, enforces the worker's time limit,
its own per-call deadline and the caps, commits only what the desk accepts,
and ends -- whatever the cause -- with an honest termination reason. It never
raises for the attempt's own failures: they are the record.
"""

import math
import time
from dataclasses import dataclass

import engine

from ._channel import ChannelTimeout, ProtocolError
from ._crash import boundary
from ._deadline import call_with_deadline
from ._errors import BudgetHalt, CacheMiss, CallTimeout, CapacityError, SamplerError, SandboxError
from ._signals import Stopped, critical, stop_reason
from ._staging import manifest, stage
from ._transcript import packet_text
from ._worker_messages import WorkerMessages
from .worker import protocol

MAX_CONSECUTIVE_CALL_FAILURES = 3
MIN_CALL_SECONDS = 1  # a call is not started when less than this is left of the worker's time
# A call the provider refuses for capacity is retried after each of these waits, as long as the wait and a
# retry fit in the call's deadline; then the attempt ends `capacity_block` with the schedule in its record.
BACKOFF_MS = (1000, 2000, 4000, 8000, 16000, 32000)


@dataclass
class Limits:
    worker_seconds: int = 1200  # wall time of the worker, model calls included
    call_deadline_s: int = 120  # the controller's own bound on one model call
    max_tokens_per_call: int = 2048
    max_calls: int = 400


class WorkerLimit(Exception):
    pass


class CapacityBlock(Exception):
    def __init__(self, call, error, schedule):
        super().__init__(error)
        self.call = call
        self.error = error
        self.schedule = schedule  # [{"wait_ms", "error"}] in the order waited


class Interrupted(Exception):
    def __init__(self, reason, limit="infrastructure"):
        super().__init__(reason)
        self.reason = reason
        self.limit = limit


@dataclass(frozen=True)
class Desk:
    """The world and its initialised desk history (`db_path`: new, or a settled one rebuilt to continue an
    attempt, then `retained` is the worker's retained work to stage with the open checkpoint's packet)."""

    instance: dict
    db_path: str
    retained: dict = None


@dataclass(frozen=True)
class Timing:
    """The controller's clock and sleep (tests pass their own)."""

    clock: object = time.monotonic
    sleep: object = time.sleep


class Controller(WorkerMessages):
    def __init__(self, desk: Desk, sampler, sandbox, ledger, limits, journal, timing: Timing = Timing()):
        self.instance = desk.instance
        self.staged_retained = desk.retained or {}
        self.day_calls = {}
        self.journal = journal
        self.sampler = sampler
        self.sandbox = sandbox
        self.ledger = ledger
        self.limits = limits
        self.history = engine.History(desk.db_path)
        self.clock = timing.clock
        self.steps = []
        self.proposals = []
        self.calls = 0
        self.settled_days = 0
        self.day = 1  # the open checkpoint
        self.result = None
        self.finished = False
        self.staged = []
        self.worker_stderr = ""
        self.retained = None
        self.sandbox_seconds = None
        self.sleep = timing.sleep
        self._failures = 0
        self._reports = 0  # worker reports (tool, invalid, submit) owed to model answers not yet reported
        self._retained_due = 0  # retained-work messages owed to checkpoints closed
        self.released = {}

    # -- transcript ------------------------------------------------------------------
    def step(self, role, text, tool_calls=None, **extra):
        """One transcript step; `day` is the open checkpoint unless given (null once the run is closed)."""
        extra.setdefault("day", self.day)
        step = {"index": len(self.steps), "role": role, "text": text, "tool_calls": tool_calls or [], **extra}
        self.steps.append(step)
        self.journal.write("step", step)

    # -- the attempt -----------------------------------------------------------------
    def run(self) -> dict:
        worker = None
        started = None
        end = {
            "status": "infrastructure_interruption",
            "reason": "",
            "limit": "infrastructure",
            "worker_exit_code": None,
        }
        try:
            packet = self.history.packet()
            self.day = packet["day"]
            prompt = (getattr(self.sampler, "sampling", None) or {}).get("prompt")  # the local sampler's compact prompt
            files = stage(packet) if prompt is None else stage(packet, prompt=prompt)
            for rel, text in sorted(self.staged_retained.items()):
                files[rel] = text.encode("utf-8")  # the retained work of the interrupted part
            files = dict(sorted(files.items()))
            self.staged = manifest(files)
            self.journal.write("staged", self.staged)
            self.step("evaluator", packet_text(packet), day=packet["day"])
            self.ledger.reserve_sandbox(self.limits.worker_seconds + self.sandbox.grace_s)
            started = self.clock()
            worker = self.sandbox.start(files, self.limits.worker_seconds)
            self.journal.write("sandbox", dict(self.sandbox.info))
            deadline = self.clock() + self.limits.worker_seconds
            end = self._supervise(worker, deadline)
        except SandboxError as exc:
            end["reason"] = exc.format_message()
        except BudgetHalt as exc:  # the sandbox's compute does not fit its cap: nothing started
            end = {
                "status": "budget_halt",
                "reason": exc.format_message(),
                "limit": exc.limit,
                "worker_exit_code": None,
            }
        except (KeyboardInterrupt, Stopped) as exc:
            end = {"status": "operator", "reason": stop_reason(exc), "limit": "operator", "worker_exit_code": None}
        except Exception as exc:  # a host-side failure is still an attempt's end, recorded as such
            end["reason"] = f"host controller error ({type(exc).__name__}: {exc})"
        finally:
            problems = []  # cleanup never hides the end: a failing step is added to the reason
            if worker is not None:

                def stop_worker():
                    if end["worker_exit_code"] is None and end["status"] != "completed":
                        worker.kill()
                        end["worker_exit_code"] = worker.wait(5)
                    self.worker_stderr = worker.stderr_tail()
                    worker.close()

                _quietly(stop_worker, "stopping the worker", problems)
            self.released["sandbox"] = _quietly(self.sandbox.shutdown, "shutting the sandbox down", problems)
            _quietly(lambda: self._settle_sandbox(started), "settling the sandbox's compute", problems)
            if hasattr(self.sampler, "close"):
                self.released["provider_session"] = _quietly(
                    lambda: self.sampler.close(close_status(end["status"]), end["reason"][:200]),
                    "closing the provider session",
                    problems,
                )
            if problems:
                end["reason"] = (end["reason"] + "; " if end["reason"] else "") + "; ".join(problems)
            if end["status"] == "capacity_block":
                end["capacity_block"]["released_clients"] = not problems
        info = getattr(self.sampler, "service_info", None)
        self.journal.write(
            "end",
            {
                "termination": end,
                "worker_stderr": self.worker_stderr,
                "sampling": getattr(self.sampler, "sampling", None),
                "sandbox": dict(self.sandbox.info),
                "service": info() if info else None,
                "sandbox_seconds": self.sandbox_seconds,
            },
        )
        return end

    def _settle_sandbox(self, started):
        """Charge the sandbox's compute: the whole seconds it ran; a sandbox that may exist unseen stays a liability."""
        if not self.ledger.has_open_sandbox():
            return
        if started is None:  # stopped between the reservation and the start: unknown, kept as a liability
            self.ledger.mark_unresolved(
                0, "the sandbox's start was interrupted: its compute is unknown", account="sandbox"
            )
            return
        self.sandbox_seconds = math.ceil(self.clock() - started)
        self.ledger.settle_sandbox(self.sandbox_seconds)

    def _supervise(self, worker, deadline) -> dict:
        try:
            while True:
                remaining = deadline - self.clock()
                if remaining <= 0:
                    raise WorkerLimit()
                try:
                    msg = worker.channel.receive(remaining)
                except ChannelTimeout:
                    raise WorkerLimit()
                if msg is None:
                    code = worker.wait(10)
                    if code == -1:  # Modal ended the sandbox at its timeout
                        raise WorkerLimit()
                    if self.finished:
                        return {
                            "status": "completed",
                            "reason": "every checkpoint closed; the run is finalised",
                            "limit": None,
                            "worker_exit_code": code,
                        }
                    return {
                        "status": "worker_exit",
                        "reason": f"the worker exited with code {code} before the last checkpoint",
                        "limit": "worker_exit_code",
                        "worker_exit_code": code,
                    }
                self._handle(worker, msg, deadline)
        except WorkerLimit:
            worker.kill(at_deadline=True)
            code = worker.wait(10)
            what = "no submission" if not self.proposals else f"{self.settled_days} checkpoints settled"
            return {
                "status": "worker_limit",
                "reason": f"the worker reached its {self.limits.worker_seconds}-second limit ({what})",
                "limit": "time",
                "worker_exit_code": code,
            }
        except BudgetHalt as exc:
            worker.channel.send({"type": "halt", "reason": "budget"})
            worker.kill()
            return {
                "status": "budget_halt",
                "reason": exc.format_message(),
                "limit": exc.limit,
                "worker_exit_code": worker.wait(10),
            }
        except ProtocolError as exc:
            worker.kill()
            return {
                "status": "infrastructure_interruption",
                "reason": str(exc),
                "limit": "infrastructure",
                "worker_exit_code": worker.wait(10),
            }
        except Interrupted as exc:
            worker.kill()
            return {
                "status": "infrastructure_interruption",
                "reason": exc.reason,
                "limit": exc.limit,
                "worker_exit_code": worker.wait(10),
            }
        except CapacityBlock as exc:
            worker.kill()
            waited = sum(w["wait_ms"] for w in exc.schedule)
            return {
                "status": "capacity_block",
                "limit": "capacity",
                "worker_exit_code": worker.wait(10),
                "reason": f"the provider refused model call {exc.call} for capacity {len(exc.schedule) + 1} "
                f"times over {waited} ms of backoff ({exc.error})",
                "capacity_block": {
                    "call": exc.call,
                    "error": exc.error[:300],
                    "backoff_ms": exc.schedule,
                    "waited_ms": waited,
                    "calls_answered": self.calls - len(self._unanswered()),
                    "released_clients": None,
                },
            }

    def _unanswered(self):
        return [s for s in self.steps if isinstance(s.get("call"), dict) and "outcome" in s["call"]]

    # -- model calls (the worker's other messages: _worker_messages.py) ---------------
    def _sample(self, msg, deadline):
        if self.calls >= self.limits.max_calls:
            raise BudgetHalt(f"the attempt reached its limit of {self.limits.max_calls} model calls", limit="calls")
        used = self.day_calls.get(self.day, 0)
        if used >= protocol.MAX_CALLS_PER_CHECKPOINT:
            raise BudgetHalt(
                f"the worker asked for model call {used + 1} on checkpoint {self.day}; the controller "
                f"allows {protocol.MAX_CALLS_PER_CHECKPOINT} (the bound `budget` reserves)",
                limit="calls",
            )
        if deadline - self.clock() < MIN_CALL_SECONDS:
            raise WorkerLimit()  # no time left for a call to finish: do not reserve one
        messages = msg.get("messages")
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages
        ):
            raise ProtocolError("sample.messages: expected a list of {role, content} strings")
        max_tokens = min(int(msg.get("max_tokens") or self.limits.max_tokens_per_call), self.limits.max_tokens_per_call)
        try:
            prepared = self.sampler.prepare(messages, max_tokens)
        except CacheMiss as exc:  # a cache-only replay: an error, never a reservation
            raise Interrupted(f"cache miss: {exc.format_message()}", limit="cache_miss")
        self.calls += 1
        self.day_calls[self.day] = used + 1
        call = self.calls
        self.ledger.reserve(call, prepared.prompt_tokens, max_tokens, free=prepared.cached)
        seconds = min(self.limits.call_deadline_s, deadline - self.clock())
        try:
            completion, backoff = self._call(call, prepared, seconds)
        except CapacityBlock as exc:
            with critical():  # the liability and the step that shows it: a stop lands before or after both
                self.ledger.mark_unresolved(call, f"capacity_block: {exc.error}"[:300])
                self.step(
                    "evaluator",
                    f"Model call {call} ended without an answer (capacity_block): the provider "
                    f"refused it {len(exc.schedule) + 1} times, backing off {[w['wait_ms'] for w in exc.schedule]} "
                    f"ms; its reservation stays an unresolved liability.",
                    call={"index": call, "outcome": "capacity_block"},
                )
            raise
        except (CallTimeout, SamplerError) as exc:
            reason = "request_timeout" if isinstance(exc, CallTimeout) else "call_failed"
            with critical():  # the ledger's entry and the transcript's step: a stop lands before or after both
                self.ledger.mark_unresolved(call, f"{reason}: {exc.format_message()}")
                self.step(
                    "evaluator",
                    f"Model call {call} ended without an answer ({reason}): its reservation "
                    f"stays an unresolved liability.",
                    call={"index": call, "outcome": reason},
                )
            self._failures += 1
            if self._failures >= MAX_CONSECUTIVE_CALL_FAILURES:
                raise Interrupted(
                    f"{self._failures} model calls in a row ended without an answer (last: {exc.format_message()})"
                )
            return {"type": "call_failed", "reason": reason}
        self._failures = 0
        self._reports += 1
        with critical():  # the charge and the transcript's step that shows it: a stop lands before or after both
            note = "cache hit" if completion.cached else completion.stop_reason
            detail = {"cpu_ms": completion.cpu_ms, "reasoning_tokens": getattr(completion, "reasoning_tokens", None)}
            charge = self.ledger.charge_for(
                call,
                completion.tokens_in,
                completion.tokens_out,
                note,
                free=completion.cached,
                cached_in=completion.cache_hit_tokens,
                detail=detail,
            )
            # The step first (it writes ahead, like a batch's intent): a host that dies before the ledger books
            # the charge leaves the answer's figures in the journal, and `recover` books them (Ledger.complete).
            self.step(
                "model",
                completion.text,
                call={
                    "index": call,
                    "request_sha256": prepared.request_sha256,
                    "tokens_in": completion.tokens_in,
                    "tokens_out": completion.tokens_out,
                    "prompt_cache_hit_tokens": charge["cached_tokens_in"],
                    "micro_usd": charge["micro_usd"],
                    "cached": completion.cached,
                    "stop_reason": completion.stop_reason,
                    **({"cpu_ms": charge["cpu_ms"]} if "cpu_ms" in charge else {}),
                    **({"reasoning_tokens": charge["reasoning_tokens"]} if "reasoning_tokens" in charge else {}),
                    **({"backoff_ms": backoff} if backoff else {}),
                },
            )
            boundary("call:after-step")
            self.ledger.settle(
                call,
                completion.tokens_in,
                completion.tokens_out,
                note,
                free=completion.cached,
                cached_in=completion.cache_hit_tokens,
                detail=detail,
            )
        return {"type": "completion", "text": completion.text}

    def _call(self, call, prepared, seconds):
        """Sample under the call's deadline; a capacity refusal is retried after each BACKOFF_MS wait that still
        leaves time for a retry inside that deadline, each wait journaled; then CapacityBlock."""
        end = self.clock() + seconds
        schedule = []
        while True:
            left = end - self.clock()
            started = time.monotonic()
            try:
                completion = call_with_deadline(lambda: self.sampler.sample(prepared, left), left, f"model call {call}")
            except CapacityError as exc:
                error = exc.format_message()
                wait = BACKOFF_MS[len(schedule)] if len(schedule) < len(BACKOFF_MS) else None
                if wait is None or self.clock() + wait / 1000 + MIN_CALL_SECONDS > end:
                    raise CapacityBlock(call, error, schedule)
                schedule.append({"wait_ms": wait, "error": error[:300]})
                self.journal.write("backoff", {"call": call, "wait_ms": wait, "error": error[:300]})
                self.sleep(wait / 1000)
                continue
            self.journal.write(
                "latency", {"call": call, "ms": int((time.monotonic() - started) * 1000), "retries": len(schedule)}
            )
            return completion, schedule


def _quietly(fn, what, problems) -> bool:
    try:
        fn()
        return True
    except Exception as exc:
        problems.append(f"{what} failed ({type(exc).__name__}: {exc})")
        return False


def close_status(status) -> str:
    """The provider session's finish reason for an attempt's termination status."""
    return {"completed": "success", "operator": "interrupted"}.get(status, "errored")
