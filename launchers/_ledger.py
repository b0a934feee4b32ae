"""The budget ledger, kept by the host controller outside the worker.

Every model call is reserved before it is made (its prompt tokens plus its
max_tokens, priced), then settled from the tokens the provider returns: a
`charge` for what was used and a `release` of the rest. A call that never
settles -- cancelled, timed out, or the host died -- keeps its reservation as an
unresolved liability, forever counted against the cap. Entries are appended to
a file as they happen (flushed and fsynced) and hash-chained, so a crash leaves
an honest ledger and an edit is visible.
"""

import json
import os

from engine import canonical_json, content_sha256

from ._errors import BudgetHalt, InputError
from ._prices import call_cost, format_usd

LEDGER_SCHEMA = "fundbook.ledger/1"
KINDS = ("reserve", "charge", "release", "unresolved")


def genesis(claim_sha256: str) -> str:
    """The chain's first prev_hash: binds the ledger to one claim."""
    return content_sha256({"schema": LEDGER_SCHEMA, "claim_sha256": claim_sha256})


class Ledger:
    """Reserve / charge / release in integer micro-USD and tokens."""

    def __init__(self, claim_sha256, cap_micro_usd, cap_tokens, price, path=None):
        self.claim_sha256 = claim_sha256
        self.cap_micro_usd = cap_micro_usd
        self.cap_tokens = cap_tokens
        self.price = price
        self.path = path
        self.entries = []
        self._open = {}  # call -> its reservation entry, until settled

    # -- chain -------------------------------------------------------------------
    @property
    def head(self):
        last = self.entries[-1]["hash"] if self.entries else genesis(self.claim_sha256)
        return {"size": len(self.entries), "hash": last}

    def _append(self, kind, call, micro_usd, tokens_in, tokens_out, note=""):
        body = {"seq": len(self.entries), "kind": kind, "call": call, "micro_usd": micro_usd,
                "tokens_in": tokens_in, "tokens_out": tokens_out, "note": note, "prev_hash": self.head["hash"]}
        entry = dict(body, hash=content_sha256(body))
        if self.path is not None:
            with open(self.path, "ab") as fh:
                fh.write(canonical_json(entry) + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
        self.entries.append(entry)
        return entry

    # -- totals ------------------------------------------------------------------
    def totals(self) -> dict:
        charged = sum(e["micro_usd"] for e in self.entries if e["kind"] == "charge")
        tokens_in = sum(e["tokens_in"] for e in self.entries if e["kind"] == "charge")
        tokens_out = sum(e["tokens_out"] for e in self.entries if e["kind"] == "charge")
        open_usd = sum(e["micro_usd"] for e in self._open.values())
        open_tokens = sum(e["tokens_in"] + e["tokens_out"] for e in self._open.values())
        return {"charged_micro_usd": charged, "tokens_in": tokens_in, "tokens_out": tokens_out,
                "unresolved_micro_usd": open_usd, "unresolved_tokens": open_tokens,
                "unresolved_calls": sorted(self._open),
                "committed_micro_usd": charged + open_usd, "committed_tokens": tokens_in + tokens_out + open_tokens}

    # -- moves ---------------------------------------------------------------------
    def reserve(self, call, tokens_in, max_tokens, free=False):
        """Reserve a call's worst case, or raise BudgetHalt (nothing written).

        `free`: a cache hit, which spends neither money nor provider tokens."""
        if call in self._open or any(e["call"] == call for e in self.entries):
            raise InputError(f"ledger: call {call} was already reserved")
        if free:
            entry = self._append("reserve", call, 0, 0, 0, "cache hit")
            self._open[call] = entry
            return entry
        cost = call_cost(self.price, tokens_in, max_tokens)
        t = self.totals()
        if t["committed_micro_usd"] + cost > self.cap_micro_usd:
            raise BudgetHalt(f"call {call}: reserving {format_usd(cost)} would pass the cap of "
                             f"{format_usd(self.cap_micro_usd)} ({format_usd(t['committed_micro_usd'])} already "
                             f"committed)", limit="cost")
        if t["committed_tokens"] + tokens_in + max_tokens > self.cap_tokens:
            raise BudgetHalt(f"call {call}: reserving {tokens_in + max_tokens} tokens would pass the cap of "
                             f"{self.cap_tokens} ({t['committed_tokens']} already committed)", limit="tokens")
        entry = self._append("reserve", call, cost, tokens_in, max_tokens)
        self._open[call] = entry
        return entry

    def settle(self, call, tokens_in, tokens_out, note="", free=False):
        """Charge the call's actual usage and release the rest of its reservation."""
        reservation = self._open.pop(call, None)
        if reservation is None:
            raise InputError(f"ledger: call {call} has no open reservation")
        if free:
            tokens_in = tokens_out = 0
        cost = call_cost(self.price, tokens_in, tokens_out)
        charge = self._append("charge", call, cost, tokens_in, tokens_out, note)
        self._append("release", call, max(0, reservation["micro_usd"] - cost),
                     max(0, reservation["tokens_in"] - tokens_in), max(0, reservation["tokens_out"] - tokens_out))
        return charge

    def mark_unresolved(self, call, reason):
        """A call that will not settle here: its reservation stays a liability."""
        reservation = self._open.get(call)
        if reservation is None:
            raise InputError(f"ledger: call {call} has no open reservation")
        return self._append("unresolved", call, reservation["micro_usd"], reservation["tokens_in"],
                            reservation["tokens_out"], reason)

    def summary(self) -> dict:
        return {"schema": LEDGER_SCHEMA, "claim_sha256": self.claim_sha256, "cap_micro_usd": self.cap_micro_usd,
                "cap_tokens": self.cap_tokens, "price": dict(self.price), "entries": list(self.entries),
                "head": self.head, "totals": self.totals()}


def load_ledger(path, claim_sha256, cap_micro_usd, cap_tokens, price, tolerate_torn_tail=False) -> Ledger:
    """Rebuild a ledger from its file, verifying the chain (e.g. after a crash).

    `tolerate_torn_tail`: after a host crash the last line may be half-written;
    it is dropped (its call's reservation, if any earlier line made one, stays open)."""
    ledger = Ledger(claim_sha256, cap_micro_usd, cap_tokens, price)
    try:
        with open(path, "rb") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})")
    for i, line in enumerate(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            if tolerate_torn_tail and i == len(lines) - 1:
                break
            raise InputError(f"{path}: line {i + 1}: not JSON (a torn write?)")
        body = {k: v for k, v in entry.items() if k != "hash"}
        if body.get("seq") != i or body.get("prev_hash") != ledger.head["hash"] or content_sha256(body) != entry.get("hash"):
            raise InputError(f"{path}: line {i + 1}: the hash chain is broken (edited, dropped or reordered)")
        if entry["kind"] not in KINDS:
            raise InputError(f"{path}: line {i + 1}: kind: expected one of {list(KINDS)}")
        ledger.entries.append(entry)
        if entry["kind"] == "reserve":
            ledger._open[entry["call"]] = entry
        elif entry["kind"] == "charge":
            ledger._open.pop(entry["call"], None)
    ledger.path = path
    return ledger
