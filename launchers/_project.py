"""The project ledger: one ledger across claims, with the project-wide caps.

`<project>/project-ledger.jsonl`, hash-chained like an attempt's ledger. A
`claim` entry is appended when a claim is consumed: it reserves the claim's
whole caps (inference and sandbox) against the project's caps, which come
from the freeze. A `settle` entry is appended when the attempt's record is
written (by `execute` or `recover`): its spend and its unresolved liabilities,
taken from the attempt's own ledger, replace the reservation. A claim the
project ledger has seen is refused even if its consumed marker in the claim
registry was deleted. `reconcile` checks every settlement against the
attempt records.

The project directory defaults to `$FUNDBOOK_LAUNCH_PROJECT`, else this
checkout's `runs/attempts/`, where the freeze, the deviations and the
published attempts live.
"""

import contextlib
import fcntl
import json
import os

from engine import canonical_json, content_sha256

from ._errors import BudgetHalt, ClaimRefused, InputError
from ._prices import format_usd
from ._signals import critical

SCHEMA = "fundbook.project-ledger/1"
LEDGER_NAME = "project-ledger.jsonl"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def project_dir(path=None) -> str:
    return path or os.environ.get("FUNDBOOK_LAUNCH_PROJECT") or os.path.join(REPO, "runs", "attempts")


class ProjectLedger:
    def __init__(self, directory):
        self.dir = directory
        self.path = os.path.join(directory, LEDGER_NAME)
        self.entries = self._load()

    # -- file --------------------------------------------------------------------
    def _load(self):
        if not os.path.exists(self.path):
            return []
        try:
            with open(self.path, "rb") as fh:
                lines = fh.read().splitlines()
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read ({exc.strerror})")
        entries, prev = [], content_sha256({"schema": SCHEMA})
        for i, line in enumerate(lines):
            try:
                entry = json.loads(line)
                body = {k: v for k, v in entry.items() if k != "hash"}
            except (ValueError, AttributeError):
                raise InputError(f"{self.path}: line {i + 1}: not JSON")
            if body.get("seq") != i or body.get("prev_hash") != prev or content_sha256(body) != entry.get("hash"):
                raise InputError(f"{self.path}: line {i + 1}: the hash chain is broken (edited, dropped or reordered)")
            entries.append(entry)
            prev = entry["hash"]
        return entries

    @contextlib.contextmanager
    def _exclusive(self):
        """Check-then-append under a lock, re-reading the file: two launchers never interleave."""
        try:
            os.makedirs(self.dir, exist_ok=True)
            fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise InputError(f"{self.dir}: cannot open the project ledger ({exc.strerror})")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self.entries = self._load()
            yield
        finally:
            os.close(fd)

    @property
    def head(self):
        return {"size": len(self.entries),
                "hash": self.entries[-1]["hash"] if self.entries else content_sha256({"schema": SCHEMA})}

    def _append(self, body):
        body = dict(body, seq=len(self.entries), prev_hash=self.head["hash"])
        entry = dict(body, hash=content_sha256(body))
        with critical():
            with open(self.path, "ab") as fh:
                fh.write(canonical_json(entry) + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
            self.entries.append(entry)
        return entry

    # -- reading -----------------------------------------------------------------
    def claim_entry(self, claim_id):
        return next((e for e in self.entries if e["kind"] == "claim" and e["claim_id"] == claim_id), None)

    def settlement(self, claim_id):
        return next((e for e in self.entries if e["kind"] == "settle" and e["claim_id"] == claim_id), None)

    def totals(self) -> dict:
        out = {"claims": 0, "open_claims": [], "charged_micro_usd": 0, "unresolved_micro_usd": 0,
               "reserved_micro_usd": 0, "sandbox_charged_micro_usd": 0, "sandbox_unresolved_micro_usd": 0,
               "sandbox_reserved_micro_usd": 0}
        for e in self.entries:
            if e["kind"] != "claim":
                continue
            out["claims"] += 1
            s = self.settlement(e["claim_id"])
            if s is None:
                out["open_claims"].append(e["claim_id"])
                out["reserved_micro_usd"] += e["reserve_micro_usd"]
                out["sandbox_reserved_micro_usd"] += e["reserve_sandbox_micro_usd"]
            else:
                for key in ("charged_micro_usd", "unresolved_micro_usd", "sandbox_charged_micro_usd",
                            "sandbox_unresolved_micro_usd"):
                    out[key] += s[key]
        out["committed_micro_usd"] = out["charged_micro_usd"] + out["unresolved_micro_usd"] + out["reserved_micro_usd"]
        out["sandbox_committed_micro_usd"] = (out["sandbox_charged_micro_usd"] + out["sandbox_unresolved_micro_usd"]
                                              + out["sandbox_reserved_micro_usd"])
        return out

    # -- claims --------------------------------------------------------------------
    def check_claim(self, claim, caps):
        """Refuse a claim the project has seen, or whose caps would pass the project caps (`caps` from the freeze)."""
        seen = self.claim_entry(claim["id"])
        if seen is not None:
            raise ClaimRefused(f"claim {claim['id']} was already used by attempt {seen['attempt_id']} "
                               f"({self.path}, entry {seen['seq']}): a claim is spent once")
        if caps is None:
            return
        t = self.totals()
        for what, cap_key, claim_key, committed in (
                ("inference", "project_micro_usd", "cap_micro_usd", "committed_micro_usd"),
                ("sandbox", "project_sandbox_micro_usd", "cap_sandbox_micro_usd", "sandbox_committed_micro_usd")):
            cap, want = caps[cap_key], claim.get(claim_key, 0)
            if t[committed] + want > cap:
                raise BudgetHalt(f"claim {claim['id']}: its {what} cap of {format_usd(want)} would pass the project's "
                                 f"{what} cap of {format_usd(cap)} ({format_usd(t[committed])} already committed)",
                                 limit="project")

    def open_claim(self, claim_doc, attempt_id, caps):
        claim = claim_doc["claim"]
        with self._exclusive():
            self.check_claim(claim, caps)
            return self._append({"kind": "claim", "claim_id": claim["id"], "claim_sha256": claim_doc["sha256"],
                                 "nonce": claim_doc["consumption"]["nonce"],
                                 "consumed_at": claim_doc["consumption"]["consumed_at"], "attempt_id": attempt_id,
                                 "scope": claim["scope"], "reserve_micro_usd": claim["cap_micro_usd"],
                                 "reserve_sandbox_micro_usd": claim.get("cap_sandbox_micro_usd", 0)})

    def settle(self, record):
        """Replace a claim's reservation by what its attempt spent and still owes (from the record)."""
        c = record["content"]
        claim_id = c["claim"]["id"]
        with self._exclusive():
            if self.claim_entry(claim_id) is None:
                raise InputError(f"{self.path}: claim {claim_id} was never opened here")
            if self.settlement(claim_id) is not None:
                return self.settlement(claim_id)
            return self._append(settlement_body(record))


def settlement_body(record) -> dict:
    c = record["content"]
    t = c["ledger"]["totals"]
    return {"kind": "settle", "claim_id": c["claim"]["id"], "attempt_id": c["attempt_id"],
            "status": c["termination"]["status"], "record_content_sha256": record["content_sha256"],
            "charged_micro_usd": t["charged_micro_usd"], "unresolved_micro_usd": t["unresolved_micro_usd"],
            "sandbox_charged_micro_usd": t["sandbox_charged_micro_usd"],
            "sandbox_unresolved_micro_usd": t["sandbox_unresolved_micro_usd"]}


def reconcile(ledger: ProjectLedger, records) -> list:
    """Problems between the project ledger and attempt records ({content_sha256: record}); [] when they agree."""
    problems = []
    by_claim = {r["content"]["claim"]["id"]: r for r in records}
    for e in ledger.entries:
        if e["kind"] == "claim":
            if ledger.settlement(e["claim_id"]) is None:
                problems.append(f"claim {e['claim_id']} (attempt {e['attempt_id']}) is open: its attempt has no "
                                f"settled record (`fundbook-launch recover` it)")
            continue
        record = by_claim.get(e["claim_id"])
        if record is None:
            problems.append(f"settle {e['seq']}: no record of attempt {e['attempt_id']} here")
            continue
        want = dict(settlement_body(record), seq=e["seq"], prev_hash=e["prev_hash"])
        for key in sorted(want):
            if want[key] != e.get(key):
                problems.append(f"settle {e['seq']} ({e['attempt_id']}): {key} is {e.get(key)!r} in the project "
                                f"ledger, {want[key]!r} in the record")
                break
    for claim_id, record in sorted(by_claim.items()):
        if ledger.claim_entry(claim_id) is None:
            problems.append(f"attempt {record['content']['attempt_id']}: its claim {claim_id} is not in the project ledger")
    return problems
