"""The budget ledger of one attempt, kept by the host controller outside the worker.

Two accounts with separate caps: `inference` (model calls: micro-USD and
tokens) and `sandbox` (the worker's compute, priced per second). Every model
call is reserved before it is made (its prompt tokens plus its max_tokens,
priced at the full input rate), then settled from the tokens the provider
returns: a `charge` for what was used and a `release` of the rest. The
sandbox's whole time limit is reserved before it starts and settled from the
time it ran. A reservation that never settles -- a call cancelled or timed
out, a host that died -- stays an unresolved liability, forever counted
against its cap. Entries are appended to a file as they happen (flushed and
fsynced) and hash-chained, so a crash leaves an honest ledger and an edit is
visible.

A settlement is two entries, so a host can die between them (the boundary
`settle:after-charge`): a charge whose release was never written. The
release is fully determined by the reservation and the charge, so `recover`
completes it (`complete`), as it books the charge of an answer the journal
already shows (the controller journals the answer's step first, with the
charge `charge_for` computes, then settles: boundary `call:after-step`).
"""

import os
from dataclasses import dataclass

from engine import canonical_json, content_sha256

from ._crash import boundary
from ._errors import BudgetHalt, InputError, UsageOverrun
from ._jsonfile import read_lines
from ._prices import call_cost, format_usd
from ._signals import critical

LEDGER_SCHEMA = "fundbook.ledger/2"
KINDS = ("reserve", "charge", "release", "unresolved")
ACCOUNTS = ("inference", "sandbox")
SANDBOX_CALL = 0  # the sandbox account's single "call"


def genesis(claim_sha256: str) -> str:
    """The chain's first prev_hash: binds the ledger to one claim."""
    return content_sha256({"schema": LEDGER_SCHEMA, "claim_sha256": claim_sha256})


DETAIL = ("cpu_ms", "reasoning_tokens")  # a charge's optional figures, written only when given


def step_detail(obj) -> dict:
    """The optional figures (DETAIL) of a transcript step's call or a ledger entry."""
    return {k: obj[k] for k in DETAIL if k in obj}


@dataclass(frozen=True)
class Amounts:
    """What one entry books: micro-USD, provider tokens (the cached input among them) and, for a call run on this
    host, its CPU time (written only when given)."""

    micro_usd: int
    tokens_in: int = 0
    tokens_out: int = 0
    cached_in: int = 0
    cpu_ms: int = None
    reasoning_tokens: int = None  # of tokens_out, the provider's reasoning (written only when it reports them)


class Ledger:
    """Reserve / charge / release in integer micro-USD and tokens, per account."""

    def __init__(
        self, claim_sha256, cap_micro_usd, cap_tokens, price, path=None, cap_sandbox_micro_usd=0, sandbox_rate=0
    ):
        self.claim_sha256 = claim_sha256
        self.cap_micro_usd = cap_micro_usd
        self.cap_tokens = cap_tokens
        self.cap_sandbox_micro_usd = cap_sandbox_micro_usd
        self.price = price
        self.sandbox_rate = sandbox_rate
        self.path = path
        self.entries = []
        self._open = {}  # (account, call) -> its reservation entry, until settled
        self.torn = False  # the file had a torn last line (dropped), set by load_ledger

    # -- chain -------------------------------------------------------------------
    @property
    def head(self):
        last = self.entries[-1]["hash"] if self.entries else genesis(self.claim_sha256)
        return {"size": len(self.entries), "hash": last}

    def _append(self, kind, account, call, amounts, note=""):
        body = {
            "seq": len(self.entries),
            "kind": kind,
            "account": account,
            "call": call,
            "micro_usd": amounts.micro_usd,
            "tokens_in": amounts.tokens_in,
            "tokens_out": amounts.tokens_out,
            "cached_tokens_in": amounts.cached_in,
            "note": note,
            "prev_hash": self.head["hash"],
        }
        if amounts.cpu_ms is not None:  # a call run on the host (the local sampler): its CPU time is its cost
            body["cpu_ms"] = amounts.cpu_ms
        if amounts.reasoning_tokens is not None:  # seed 002: reasoning apart from the output it is part of
            body["reasoning_tokens"] = amounts.reasoning_tokens
        entry = dict(body, hash=content_sha256(body))
        with critical():
            if self.path is not None:
                with open(self.path, "ab") as fh:
                    fh.write(canonical_json(entry) + b"\n")
                    fh.flush()
                    os.fsync(fh.fileno())
            self.entries.append(entry)
        return entry

    # -- totals ------------------------------------------------------------------
    def _sum(self, account, kind, field):
        return sum(e[field] for e in self.entries if e["account"] == account and e["kind"] == kind)

    def totals(self) -> dict:
        charged = self._sum("inference", "charge", "micro_usd")
        tokens_in = self._sum("inference", "charge", "tokens_in")
        tokens_out = self._sum("inference", "charge", "tokens_out")
        opened = [e for (account, _), e in self._open.items() if account == "inference"]
        open_usd = sum(e["micro_usd"] for e in opened)
        open_tokens = sum(e["tokens_in"] + e["tokens_out"] for e in opened)
        sandbox_charged = self._sum("sandbox", "charge", "micro_usd")
        sandbox_open = sum(e["micro_usd"] for (account, _), e in self._open.items() if account == "sandbox")
        return {
            "charged_micro_usd": charged,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "cached_tokens_in": self._sum("inference", "charge", "cached_tokens_in"),
            "unresolved_micro_usd": open_usd,
            "unresolved_tokens": open_tokens,
            "unresolved_calls": sorted(call for (account, call) in self._open if account == "inference"),
            "committed_micro_usd": charged + open_usd,
            "committed_tokens": tokens_in + tokens_out + open_tokens,
            "sandbox_charged_micro_usd": sandbox_charged,
            "sandbox_unresolved_micro_usd": sandbox_open,
            "sandbox_committed_micro_usd": sandbox_charged + sandbox_open,
            **self._optional_total("cpu_ms"),
            **self._optional_total("reasoning_tokens"),
        }

    def _optional_total(self, field):
        """{field: total} when a charge carries it (cpu_ms: the local sampler's CPU time; reasoning_tokens: what
        a provider reported as reasoning), else nothing: a ledger without it keeps its totals' bytes."""
        charged = [e[field] for e in self.entries if e["kind"] == "charge" and field in e]
        return {field: sum(charged)} if charged else {}

    # -- inference -------------------------------------------------------------------
    def reserve(self, call, tokens_in, max_tokens, free=False):
        """Reserve a call's worst case, or raise BudgetHalt (nothing written).

        `free`: a cache hit, which spends neither money nor provider tokens."""
        if ("inference", call) in self._open or any(
            e["account"] == "inference" and e["call"] == call for e in self.entries
        ):
            raise InputError(f"ledger: call {call} was already reserved")
        if free:
            entry = self._append("reserve", "inference", call, Amounts(0), note="cache hit")
            self._open[("inference", call)] = entry
            return entry
        cost = call_cost(self.price, tokens_in, max_tokens)
        t = self.totals()
        if t["committed_micro_usd"] + cost > self.cap_micro_usd:
            raise BudgetHalt(
                f"call {call}: reserving {format_usd(cost)} would pass the cap of "
                f"{format_usd(self.cap_micro_usd)} ({format_usd(t['committed_micro_usd'])} already "
                f"committed)",
                limit="cost",
            )
        if t["committed_tokens"] + tokens_in + max_tokens > self.cap_tokens:
            raise BudgetHalt(
                f"call {call}: reserving {tokens_in + max_tokens} tokens would pass the cap of "
                f"{self.cap_tokens} ({t['committed_tokens']} already committed)",
                limit="tokens",
            )
        entry = self._append("reserve", "inference", call, Amounts(cost, tokens_in, max_tokens))
        self._open[("inference", call)] = entry
        return entry

    def charge_for(self, call, tokens_in, tokens_out, note="", free=False, cached_in=0, detail=None):
        """What `settle` will charge for this call (micro_usd, tokens, cached_tokens_in, note, and the `detail`
        figures given: cpu_ms, reasoning_tokens), written nowhere: the controller journals the answer's step
        with it before the ledger books it."""
        if ("inference", call) not in self._open:
            raise InputError(f"ledger: call {call} has no open reservation")
        detail = {k: v for k, v in (detail or {}).items() if k in DETAIL and v is not None}
        if free:
            tokens_in = tokens_out = cached_in = 0
            detail = {}
        cached_in = max(0, min(cached_in, tokens_in))
        out = {
            "micro_usd": call_cost(self.price, tokens_in, tokens_out, cached_in),
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "cached_tokens_in": cached_in,
            "note": note,
        }
        return dict(out, **{k: detail[k] for k in DETAIL if k in detail})

    def settle(self, call, tokens_in, tokens_out, note="", free=False, cached_in=0, detail=None):
        """Charge the call's actual usage and release the rest of its reservation (`detail`: {cpu_ms: the host
        CPU time of a call run in this process, reasoning_tokens: the provider's reasoning among tokens_out},
        recorded with the charge when given)."""
        c = self.charge_for(call, tokens_in, tokens_out, note, free, cached_in, detail)
        reservation = self._open.pop(("inference", call))
        charge = self._append(
            "charge",
            "inference",
            call,
            Amounts(
                c["micro_usd"],
                c["tokens_in"],
                c["tokens_out"],
                c["cached_tokens_in"],
                c.get("cpu_ms"),
                c.get("reasoning_tokens"),
            ),
            note,
        )
        if self.path is not None:  # a ledger being written (not verify's re-booking in memory)
            boundary("settle:after-charge")
        self._release(reservation, charge)
        found = self.overruns(call)
        if found:  # booked as reported; the caps hold whatever a provider says: the attempt ends now
            raise UsageOverrun(found[0], limit="tokens" if "token" in found[0] else "cost")
        return charge

    def overruns(self, call=None) -> list:
        """One line, with its amounts, for every way the booked usage passes what was reserved (a call's charge
        over its reservation: more prompt or output tokens, or more micro-USD, than it could use) or capped (the
        claim's tokens, inference or sandbox micro-USD). `call`: only that call's, and the caps."""
        found = []
        reserved = {(e["account"], e["call"]): e for e in self.entries if e["kind"] == "reserve"}
        for e in self.entries:
            if e["kind"] != "charge" or e["account"] != "inference" or (call is not None and e["call"] != call):
                continue
            r = reserved.get(("inference", e["call"]))
            if r is None or r["note"] == "cache hit":
                continue
            for field, what in (
                ("tokens_in", "prompt tokens"),
                ("tokens_out", "output tokens"),
                ("micro_usd", "micro-USD"),
            ):
                if e[field] > r[field]:
                    found.append(
                        f"call {e['call']}: the provider reported {e[field]} {what}, over the {r[field]} the "
                        f"call reserved (overrun {e[field] - r[field]})"
                    )
        t = self.totals()
        for have, cap, what in (
            (t["committed_tokens"], self.cap_tokens, "tokens"),
            (t["committed_micro_usd"], self.cap_micro_usd, "micro-USD"),
            (t["sandbox_committed_micro_usd"], self.cap_sandbox_micro_usd, "sandbox micro-USD"),
        ):
            if cap is not None and have > cap:
                found.append(f"the claim's cap of {cap} {what} is passed: {have} committed (overrun {have - cap})")
        return found

    def _release(self, reservation, charge):
        """The rest of a reservation once its charge is booked: a function of the two entries alone."""
        return self._append(
            "release",
            reservation["account"],
            reservation["call"],
            Amounts(
                max(0, reservation["micro_usd"] - charge["micro_usd"]),
                max(0, reservation["tokens_in"] - charge["tokens_in"]),
                max(0, reservation["tokens_out"] - charge["tokens_out"]),
            ),
        )

    def mark_unresolved(self, call, reason, account="inference"):
        """A reservation that will not settle here: it stays a liability."""
        reservation = self._open.get((account, call))
        if reservation is None:
            raise InputError(f"ledger: call {call} has no open reservation")
        return self._append(
            "unresolved",
            account,
            call,
            Amounts(reservation["micro_usd"], reservation["tokens_in"], reservation["tokens_out"]),
            reason,
        )

    # -- sandbox compute -----------------------------------------------------------
    def reserve_sandbox(self, seconds):
        """Reserve the sandbox's whole time limit at its rate, or raise BudgetHalt (limit "sandbox")."""
        cost = seconds * self.sandbox_rate
        committed = self.totals()["sandbox_committed_micro_usd"]
        if committed + cost > self.cap_sandbox_micro_usd:
            raise BudgetHalt(
                f"the sandbox: reserving {seconds} s at {self.sandbox_rate} micro-USD/s "
                f"({format_usd(cost)}) would pass the sandbox cap of "
                f"{format_usd(self.cap_sandbox_micro_usd)}",
                limit="sandbox",
            )
        entry = self._append("reserve", "sandbox", SANDBOX_CALL, Amounts(cost), note=f"{seconds} s limit")
        self._open[("sandbox", SANDBOX_CALL)] = entry
        return entry

    def settle_sandbox(self, seconds):
        """Charge the time the sandbox ran (whole seconds, rounded up by the caller), release the rest."""
        reservation = self._open.pop(("sandbox", SANDBOX_CALL), None)
        if reservation is None:
            return None
        cost = min(reservation["micro_usd"], seconds * self.sandbox_rate)
        charge = self._append("charge", "sandbox", SANDBOX_CALL, Amounts(cost), note="sandbox compute")
        if self.path is not None:
            boundary("settle:after-sandbox-charge")
        self._release(reservation, charge)
        return charge

    def has_open_sandbox(self):
        return ("sandbox", SANDBOX_CALL) in self._open

    # -- recovery -------------------------------------------------------------------
    def complete(self, answered):
        """Finish the settlements a dead host left half done; returns how many entries were added.

        A charge without its release (the host died at `settle:after-charge`): its release is booked, as settle
        would have. `answered`: the journal's answered calls ({call: the step's call dict}); one whose
        reservation is still open (the host died at `call:after-step`) is settled from the step's own figures,
        and must charge what the step says. Deterministic, so a `recover` killed part way and run again
        completes the same entries."""
        before = len(self.entries)
        last = {}
        for e in self.entries:
            last[(e["account"], e["call"])] = e
        for key, e in sorted(last.items()):
            if e["kind"] == "charge":
                reservation = next(
                    r for r in self.entries if r["kind"] == "reserve" and (r["account"], r["call"]) == key
                )
                self._release(reservation, e)
        for call, step in sorted(answered.items()):
            if ("inference", call) not in self._open:
                continue
            free = step.get("cached") is True
            charge = self.settle(
                call,
                step.get("tokens_in", 0),
                step.get("tokens_out", 0),
                "cache hit" if free else step.get("stop_reason", ""),
                free=free,
                cached_in=step.get("prompt_cache_hit_tokens", 0),
                detail=step_detail(step),
            )
            if charge["micro_usd"] != step.get("micro_usd"):
                raise InputError(
                    f"ledger: call {call}: the journal's step says {step.get('micro_usd')} micro-USD, "
                    f"the ledger's rules charge {charge['micro_usd']}"
                )
        return len(self.entries) - before

    def rewrite(self):
        """The ledger's file as exactly its entries (a torn tail gone), put in place in one rename."""
        tmp = self.path + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(b"".join(canonical_json(e) + b"\n" for e in self.entries))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        self.torn = False


def load_ledger(
    path,
    claim_sha256,
    cap_micro_usd,
    cap_tokens,
    price,
    tolerate_torn_tail=False,
    cap_sandbox_micro_usd=0,
    sandbox_rate=0,
) -> Ledger:
    """Rebuild a ledger from its file, verifying the chain (e.g. after a crash).

    `tolerate_torn_tail`: after a host crash the last line may be half-written;
    it is dropped (its reservation, if any earlier line made one, stays open)."""
    ledger = Ledger(
        claim_sha256,
        cap_micro_usd,
        cap_tokens,
        price,
        cap_sandbox_micro_usd=cap_sandbox_micro_usd,
        sandbox_rate=sandbox_rate,
    )
    lines, torn = read_lines(path, "ledger", torn_tail=tolerate_torn_tail)
    for i, (number, entry) in enumerate(lines):
        body = {k: v for k, v in entry.items() if k != "hash"} if isinstance(entry, dict) else {}
        if (
            body.get("seq") != i
            or body.get("prev_hash") != ledger.head["hash"]
            or content_sha256(body) != entry.get("hash")
        ):
            raise InputError(f"{path}: line {number}: the hash chain is broken (edited, dropped or reordered)")
        if entry.get("kind") not in KINDS or entry.get("account") not in ACCOUNTS:
            raise InputError(f"{path}: line {number}: kind/account: expected one of {list(KINDS)} / {list(ACCOUNTS)}")
        for key in ("call", "micro_usd", "tokens_in", "tokens_out", "cached_tokens_in"):
            if not isinstance(entry.get(key), int) or isinstance(entry.get(key), bool) or entry[key] < 0:
                raise InputError(f"{path}: line {number}: {key}: expected a non-negative integer")
        if not isinstance(entry.get("note"), str):
            raise InputError(f"{path}: line {number}: note: expected text")
        ledger.entries.append(entry)
        key = (entry["account"], entry["call"])
        if entry["kind"] == "reserve":
            ledger._open[key] = entry
        elif entry["kind"] == "charge":
            ledger._open.pop(key, None)
    ledger.path = path
    ledger.torn = bool(torn)
    return ledger
