"""One run of the desk: a world, a book, a receipt chain, day by day.

The same class serves grading (in memory), the SQLite desk runtime and replay:
`submit` takes one batch for the open day, `skip` closes the open day without
one, `finalize` closes the remaining checkpoints and the carry horizon.
"""

from ._batch import check_batch_shape
from ._book import copy_book, new_book, public_book, state_hash
from ._commitment import check_salt, public_salt, world_commitment
from ._errors import BatchRejected, RunClosed
from ._packet import build_packet
from ._receipts import compare_receipts, extend, head
from ._report import gold_report
from ._rules import approval_response, check_references, decide, market_from_instance
from ._settle import close_day, open_day
from ._world import fixture_sha256


def _safe_state_hash(book):
    try:
        return state_hash(book)
    except ValueError:
        return None


class Run:
    def __init__(self, instance, salt=None, receipts=True):
        """`receipts=False` plays a scratch run (a scripted policy generating a
        candidate, the reference plan's economics): same book and days, no
        receipt chain, so nothing is hashed that nobody will read."""
        self.recording = receipts
        self.instance = instance
        self.fixture_sha256 = fixture_sha256(instance)
        self.salt = public_salt(self.fixture_sha256) if salt is None else check_salt(salt)
        self.world_commitment = world_commitment(self.fixture_sha256, self.salt)  # the chain's genesis
        self.market = market_from_instance(instance)
        self.book = new_book(instance)
        self.receipts = []
        self.days = []  # per checkpoint: outcome of the day
        self.finalized = False
        self.horizon = instance["horizon"]
        self.open_day = None
        self._log = []
        self.keep_closed_book = False  # the runtime keeps the book as of each close for its snapshot
        self.closed_book = None
        self._open(1)

    @classmethod
    def restore(cls, instance, salt, receipts, closed_book, closed_day):
        """The run continued from the public book as of a close, checked against
        the chain instead of trusted: the book must hash to that day's CLOSE
        receipt, its hidden part is rebuilt from the world, and the next day's
        opening must reproduce the receipts stored after the CLOSE. Returns None
        when anything does not match (the caller then replays the history)."""
        try:
            close = [i for i, r in enumerate(receipts) if r["kind"] == "CLOSE"][-1]
        except IndexError:
            return None
        if (receipts[close]["day"] != closed_day or not isinstance(closed_book, dict)
                or receipts[close]["payload"].get("state_hash") != _safe_state_hash(closed_book)):
            return None
        run = cls.__new__(cls)
        run.instance = instance
        run.recording = True
        run.fixture_sha256 = fixture_sha256(instance)
        run.salt = check_salt(salt)
        run.world_commitment = world_commitment(run.fixture_sha256, run.salt)
        run.market = market_from_instance(instance)
        run.book = copy_book(closed_book)
        run.book["hidden"] = {"responses": {apid: approval_response(run.market, ap)
                                            for apid, ap in sorted(run.book["approvals"].items())
                                            if ap["status"] == "pending"}}
        run.receipts = receipts[:close + 1]
        run.days, run.finalized, run.horizon = [], False, instance["horizon"]
        run.open_day, run._log, run.keep_closed_book, run.closed_book = None, [], True, None
        if closed_day < run.horizon:
            run._open(closed_day + 1)
        try:
            compare_receipts(run.receipts[close + 1:], receipts, close + 1)
        except Exception:
            return None
        if len(run.receipts) != len(receipts):
            return None
        return run

    # -- plumbing -------------------------------------------------------------
    def _flush(self):
        if not self.recording:
            self._log = []
            return []
        added = extend(self.receipts, self._log, self.world_commitment)
        self._log = []
        return added

    def _open(self, day):
        open_day(self.instance, self.book, day, self._log)
        self.open_day = day
        self._flush()

    @property
    def head(self):
        return head(self.receipts, self.world_commitment)

    def _require_open_day(self, what):
        if self.finalized:
            raise RunClosed(f"the run is finalised: {what}")
        if self.open_day is None:
            raise RunClosed(f"every checkpoint (1..{self.horizon}) is closed: {what}; "
                            f"finalise the run to grade it")

    def packet(self):
        self._require_open_day("there is no open day, so no packet")
        return build_packet(self.instance, self.market, self.book, self.open_day, self.receipts, self.world_commitment)

    def _close(self, day, batch, decisions):
        close_day(self.book, day, self._log)
        if self.keep_closed_book:
            self.closed_book = copy_book(public_book(self.book))
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
        if self.recording:
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
        self._require_open_day("no further batches are accepted")
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
        self._require_open_day("there is no open day to close")
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
        """Write the FINAL receipt: it binds the graded result to the chain and
        reveals the salt, so anyone holding the world can check the commitment."""
        self._log.append({"day": self.instance["carry_end"], "kind": "FINAL", "payload": {
            "result_sha256": result_sha256, "fixture_sha256": self.fixture_sha256, "salt": self.salt}})
        self._flush()
