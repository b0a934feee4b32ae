"""One run of the desk: a world, a book, a receipt chain, day by day.

The same class serves grading (in memory), the SQLite desk runtime and replay:
`submit` takes one batch for the open day, `skip` closes the open day without
one, `finalize` closes the remaining checkpoints and the carry horizon.
"""

from ._batch import check_batch_shape
from ._book import new_book, state_hash
from ._errors import BatchRejected, RunClosed
from ._packet import build_packet
from ._receipts import extend, head
from ._report import gold_report
from ._rules import check_references, decide, market_from_instance
from ._settle import close_day, open_day
from ._world import fixture_sha256


class Run:
    def __init__(self, instance):
        self.instance = instance
        self.fixture_sha256 = fixture_sha256(instance)
        self.market = market_from_instance(instance)
        self.book = new_book(instance)
        self.receipts = []
        self.days = []  # per checkpoint: outcome of the day
        self.finalized = False
        self.horizon = instance["horizon"]
        self.open_day = None
        self._log = []
        self._open(1)

    # -- plumbing -------------------------------------------------------------
    def _flush(self):
        added = extend(self.receipts, self._log, self.fixture_sha256)
        self._log = []
        return added

    def _open(self, day):
        open_day(self.instance, self.book, day, self._log)
        self.open_day = day
        self._flush()

    @property
    def head(self):
        return head(self.receipts, self.fixture_sha256)

    def packet(self):
        if self.finalized or self.open_day is None:
            raise RunClosed("the run is finalised: there is no open day")
        return build_packet(self.instance, self.book, self.open_day, self.receipts, self.fixture_sha256)

    def _close(self, day, batch, decisions):
        close_day(self.book, day, self._log)
        record = None
        if day <= self.horizon:
            gold = gold_report(self.book, day)
            record = {
                "day": day,
                "batch": "accepted" if batch is not None else "missing",
                "accepted": sum(1 for d in decisions if d["decision"] == "ACCEPTED"),
                "refused": sum(1 for d in decisions if d["decision"] == "REFUSED"),
                "decisions": [{"action": d["action"], "type": d["type"], "decision": d["decision"], "reason": d["reason"]}
                              for d in decisions],
                "cash": self.book["cash"],
                "breaches": [b["code"] for b in self.book["breaches"] if b["day"] == day],
                "gold_report": gold,
                "report": batch["report"] if batch is not None else None,
            }
            self.days.append(record)
        self._log.append({"day": day, "kind": "CLOSE", "payload": {
            "batch": batch is not None, "cash": self.book["cash"], "state_hash": state_hash(self.book),
            "phase": "checkpoint" if day <= self.horizon else "carry"}})
        self._flush()
        return record

    def days_public(self):
        """Per-checkpoint outcomes without the gold reports (those are graded, not shown, mid-run)."""
        return [{k: v for k, v in d.items() if k != "gold_report"} for d in self.days]

    # -- the desk's moves -----------------------------------------------------
    def check(self, batch):
        """Raise BatchRejected unless `batch` is well-formed for the open day."""
        if self.finalized:
            raise RunClosed("the run is finalised: no further batches are accepted")
        check_batch_shape(batch)
        day = batch["day"]
        if day != self.open_day:
            if day < self.open_day:
                raise BatchRejected(f"batch.day: day {day} is already settled (duplicate batch); the open day is {self.open_day}")
            raise BatchRejected(f"batch.day: expected the open day {self.open_day}, got {day}")
        check_references(batch, self.book, self.market)

    def submit(self, batch):
        """Validate and settle one batch; returns (decisions, day outcome)."""
        self.check(batch)
        day = self.open_day
        self._log.append({"day": day, "kind": "BATCH", "payload": {"batch": batch}})
        decisions = []
        for action in batch["actions"]:
            decision = decide(self.book, self.market, day, action)
            decisions.append(decision)
            self._log.append({"day": day, "kind": "ACTION", "payload": {"action": action, **{k: v for k, v in decision.items() if k != "action"}}})
        record = self._close(day, batch, decisions)
        self._advance(day)
        return decisions, record

    def skip(self):
        """Close the open checkpoint with no batch."""
        if self.finalized:
            raise RunClosed("the run is finalised")
        day = self.open_day
        record = self._close(day, None, [])
        self._advance(day)
        return record

    def _advance(self, day):
        if day < self.horizon:
            self._open(day + 1)
        else:
            self.open_day = None

    def finalize(self):
        """Close the remaining checkpoints unanswered, then run the carry horizon."""
        if self.finalized:
            raise RunClosed("the run is already finalised")
        while self.open_day is not None:
            self.skip()
        for day in range(self.horizon + 1, self.instance["carry_end"] + 1):
            open_day(self.instance, self.book, day, self._log)
            self._close(day, None, [])
        self.finalized = True

    def seal(self, result_sha256):
        """Write the FINAL receipt binding the graded result to the chain."""
        self._log.append({"day": self.instance["carry_end"], "kind": "FINAL", "payload": {"result_sha256": result_sha256}})
        self._flush()
