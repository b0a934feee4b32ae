"""The project ledger: one ledger across claims, with the project-wide caps.

`<project>/project-ledger.jsonl`, hash-chained like an attempt's ledger. An
`authorise` entry is appended when a claim is issued: the claim's whole
content (scope, caps, the plan its caps were checked against, the price row)
and its sha256. A `claim` entry is appended when a claim is consumed: it
reserves the claim's whole caps (inference and sandbox) against the project's
caps, which come from the freeze. A `settle` entry is appended when the
attempt's record is written (by `execute` or `recover`): its spend and its
unresolved liabilities, taken from the attempt's own ledger, replace the
reservation, and the record's content sha256 is bound to it. A claim the
project ledger has seen is refused even if its consumed marker in the claim
registry was deleted, and a claim it never registered (another project, a
fresh folder) is refused too. `reconcile` checks every settlement against the
attempt records; `verify` checks a record against its claim's entries.

What only this file catches: an attempt's files can all be rewritten and
re-hashed consistently by someone with write access (the claim copy and caps
in the record, the price row, the ledger, the retained work); the project
ledger's entries for the claim -- committed with the project, hash-chained --
are what such a rewrite cannot match. A rewrite of the project ledger itself
is visible only against its committed history (its head in git).

The project directory defaults to `$FUNDBOOK_LAUNCH_PROJECT`, else this
checkout's `runs/attempts/`, where the freeze, the deviations and the
published attempts live.
"""

import contextlib
import fcntl
import os

from engine import canonical_json, content_sha256

from ._errors import BudgetHalt, ClaimRefused, InputError
from ._jsonfile import read_lines
from ._prices import format_usd
from ._signals import critical

SCHEMA = "fundbook.project-ledger/1"
LEDGER_NAME = "project-ledger.jsonl"
KINDS = ("authorise", "claim", "settle")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def project_dir(path=None) -> str:
    return path or os.environ.get("FUNDBOOK_LAUNCH_PROJECT") or os.path.join(REPO, "runs", "attempts")


class ProjectLedger:
    def __init__(self, directory):
        self.dir = directory
        self.path = os.path.join(directory, LEDGER_NAME)
        self.torn = False
        self.entries = self._load()

    # -- file --------------------------------------------------------------------
    def _load(self):
        if not os.path.lexists(self.path):
            return []
        lines, self.torn = read_lines(self.path, "project ledger", torn_tail=True)
        entries, prev = [], content_sha256({"schema": SCHEMA})
        for i, (number, entry) in enumerate(lines):
            body = {k: v for k, v in entry.items() if k != "hash"} if isinstance(entry, dict) else {}
            if body.get("seq") != i or body.get("prev_hash") != prev or content_sha256(body) != entry.get("hash"):
                raise InputError(f"{self.path}: line {number}: the hash chain is broken (edited, dropped or reordered)")
            if body.get("kind") not in KINDS or not isinstance(body.get("claim_id"), str):
                raise InputError(
                    f"{self.path}: line {number}: kind/claim_id: expected one of {list(KINDS)} and a claim id"
                )
            entries.append(entry)
            prev = entry["hash"]
        return entries

    @contextlib.contextmanager
    def _exclusive(self):
        """Check-then-append under a lock, re-reading the file: two launchers never interleave. A last line torn
        by a writer that died mid-append is cut off first (it was never a whole entry)."""
        try:
            os.makedirs(self.dir, exist_ok=True)
            fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise InputError(f"{self.dir}: cannot open the project ledger ({exc.strerror})")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self.entries = self._load()
            if self.torn:
                self._cut_torn_tail()
            yield
        finally:
            os.close(fd)

    def _cut_torn_tail(self):
        with open(self.path, "rb+") as fh:
            data = fh.read()
            fh.truncate(data.rfind(b"\n") + 1)
            fh.flush()
            os.fsync(fh.fileno())
        self.torn = False

    @property
    def head(self):
        return {
            "size": len(self.entries),
            "hash": self.entries[-1]["hash"] if self.entries else content_sha256({"schema": SCHEMA}),
        }

    def _append(self, body):
        body = dict(body, seq=len(self.entries), prev_hash=self.head["hash"])
        entry = dict(body, hash=content_sha256(body))
        line = canonical_json(entry) + b"\n"
        with critical():
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)  # one write: a death lands before or after it, or leaves a torn tail
                os.fsync(fd)
            finally:
                os.close(fd)
            self.entries.append(entry)
        return entry

    # -- reading -----------------------------------------------------------------
    def _find(self, kind, claim_id):
        return next((e for e in self.entries if e["kind"] == kind and e["claim_id"] == claim_id), None)

    def authorised(self, claim_id):
        return self._find("authorise", claim_id)

    def claim_entry(self, claim_id):
        return self._find("claim", claim_id)

    def settlement(self, claim_id):
        return self._find("settle", claim_id)

    def totals(self) -> dict:
        out = {
            "claims": 0,
            "open_claims": [],
            "charged_micro_usd": 0,
            "unresolved_micro_usd": 0,
            "reserved_micro_usd": 0,
            "sandbox_charged_micro_usd": 0,
            "sandbox_unresolved_micro_usd": 0,
            "sandbox_reserved_micro_usd": 0,
            "projected_micro_usd": 0,
        }
        for e in self.entries:
            if e["kind"] != "claim":
                continue
            out["claims"] += 1
            s = self.settlement(e["claim_id"])
            if s is None:
                out["open_claims"].append(e["claim_id"])
                out["reserved_micro_usd"] += e["reserve_micro_usd"]
                out["sandbox_reserved_micro_usd"] += e["reserve_sandbox_micro_usd"]
                continue
            if s.get("projection"):  # a mock priced as a real model: nothing was spent
                out["projected_micro_usd"] += s["charged_micro_usd"] + s["unresolved_micro_usd"]
            else:
                out["charged_micro_usd"] += s["charged_micro_usd"]
                out["unresolved_micro_usd"] += s["unresolved_micro_usd"]
            out["sandbox_charged_micro_usd"] += s["sandbox_charged_micro_usd"]
            out["sandbox_unresolved_micro_usd"] += s["sandbox_unresolved_micro_usd"]
        out["committed_micro_usd"] = out["charged_micro_usd"] + out["unresolved_micro_usd"] + out["reserved_micro_usd"]
        out["sandbox_committed_micro_usd"] = (
            out["sandbox_charged_micro_usd"] + out["sandbox_unresolved_micro_usd"] + out["sandbox_reserved_micro_usd"]
        )
        return out

    # -- claims --------------------------------------------------------------------
    def register(self, claim_doc):
        """The `authorise` entry: the claim as issued, bound by its sha256 (what a record's claim must hash to)."""
        claim = claim_doc["claim"]
        with self._exclusive():
            if self.authorised(claim["id"]) is not None:
                raise ClaimRefused(f"claim {claim['id']} is already registered in {self.path}")
            return self._append(
                {"kind": "authorise", "claim_id": claim["id"], "claim_sha256": claim_doc["sha256"], "claim": claim}
            )

    def check_claim(self, claim, caps, sha256=None):
        """Refuse a claim this project never registered (or registered with other content), one it has seen
        consumed, or one whose caps would pass the project caps (`caps` from the freeze)."""
        registered = self.authorised(claim["id"])
        if registered is None:
            raise ClaimRefused(
                f"claim {claim['id']} was not authorised in this project ({self.path} has no "
                f"authorise entry for it): `authorise --project` registers a claim where it runs"
            )
        if sha256 is not None and registered["claim_sha256"] != sha256:
            raise ClaimRefused(
                f"claim {claim['id']}: its sha256 is not the one registered at authorise "
                f"({self.path}, entry {registered['seq']}): the claim file was edited"
            )
        seen = self.claim_entry(claim["id"])
        if seen is not None:
            raise ClaimRefused(
                f"claim {claim['id']} was already used by attempt {seen['attempt_id']} "
                f"({self.path}, entry {seen['seq']}): a claim is spent once"
            )
        if caps is None:
            return
        t = self.totals()
        for what, cap_key, claim_key, committed in (
            ("inference", "project_micro_usd", "cap_micro_usd", "committed_micro_usd"),
            ("sandbox", "project_sandbox_micro_usd", "cap_sandbox_micro_usd", "sandbox_committed_micro_usd"),
        ):
            cap, want = caps[cap_key], claim.get(claim_key, 0)
            if t[committed] + want > cap:
                raise BudgetHalt(
                    f"claim {claim['id']}: its {what} cap of {format_usd(want)} would pass the project's "
                    f"{what} cap of {format_usd(cap)} ({format_usd(t[committed])} already committed)",
                    limit="project",
                )

    def open_claim(self, claim_doc, attempt_id, caps, recovering=False):
        """The `claim` entry at consumption. `recovering`: `recover` records a consumption the journal never
        reached the project with; the claim is spent, so it is entered whatever the caps say now."""
        claim = claim_doc["claim"]
        with self._exclusive():
            if recovering:
                found = self.claim_entry(claim["id"])
                if found is not None:
                    return found
            else:
                self.check_claim(claim, caps, claim_doc["sha256"])
            return self._append(
                {
                    "kind": "claim",
                    "claim_id": claim["id"],
                    "claim_sha256": claim_doc["sha256"],
                    "nonce": claim_doc["consumption"]["nonce"],
                    "consumed_at": claim_doc["consumption"]["consumed_at"],
                    "attempt_id": attempt_id,
                    "scope": claim["scope"],
                    "reserve_micro_usd": claim["cap_micro_usd"],
                    "reserve_sandbox_micro_usd": claim.get("cap_sandbox_micro_usd", 0),
                }
            )

    def settle(self, record):
        """Replace a claim's reservation by what its attempt spent and still owes (from the record). Settling the
        same record twice is a no-op (a `recover` after a death between the settlement and the rename)."""
        c = record["content"]
        claim_id = c["claim"]["id"]
        with self._exclusive():
            if self.claim_entry(claim_id) is None:
                raise InputError(f"{self.path}: claim {claim_id} was never opened here")
            found = self.settlement(claim_id)
            if found is not None:
                if found["record_content_sha256"] != record["content_sha256"]:
                    raise InputError(
                        f"{self.path}: claim {claim_id} is settled by another record "
                        f"({found['record_content_sha256'][:12]}, entry {found['seq']})"
                    )
                return found
            return self._append(settlement_body(record))


def settlement_body(record) -> dict:
    c = record["content"]
    t = c["ledger"]["totals"]
    body = {
        "kind": "settle",
        "claim_id": c["claim"]["id"],
        "attempt_id": c["attempt_id"],
        "status": c["termination"]["status"],
        "record_content_sha256": record["content_sha256"],
        "charged_micro_usd": t["charged_micro_usd"],
        "unresolved_micro_usd": t["unresolved_micro_usd"],
        "sandbox_charged_micro_usd": t["sandbox_charged_micro_usd"],
        "sandbox_unresolved_micro_usd": t["sandbox_unresolved_micro_usd"],
    }
    if (c.get("cost") or {}).get("projection"):
        body["projection"] = True
    return body


def reconcile(ledger: ProjectLedger, records) -> list:
    """Problems between the project ledger and attempt records; [] when they agree."""
    problems = []
    by_claim = {r["content"]["claim"]["id"]: r for r in records}
    for e in ledger.entries:
        if e["kind"] == "authorise":
            continue
        if e["kind"] == "claim":
            if ledger.settlement(e["claim_id"]) is None:
                problems.append(
                    f"claim {e['claim_id']} (attempt {e['attempt_id']}) is open: its attempt has no "
                    f"settled record (`fundbook-launch recover` it)"
                )
            continue
        record = by_claim.get(e["claim_id"])
        if record is None:
            problems.append(f"settle {e['seq']}: no record of attempt {e['attempt_id']} here")
            continue
        want = dict(settlement_body(record), seq=e["seq"], prev_hash=e["prev_hash"])
        for key in sorted(set(want) | (set(e) - {"hash"})):
            if want.get(key) != e.get(key):
                problems.append(
                    f"settle {e['seq']} ({e['attempt_id']}): {key} is {e.get(key)!r} in the project "
                    f"ledger, {want.get(key)!r} in the record"
                )
                break
    for claim_id, record in sorted(by_claim.items()):
        if ledger.claim_entry(claim_id) is None:
            problems.append(
                f"attempt {record['content']['attempt_id']}: its claim {claim_id} is not in the project ledger"
            )
        for over in _overruns(record):  # booked as the provider reported it: never passed over silently
            problems.append(f"attempt {record['content']['attempt_id']}: usage overrun: {over}")
    return problems


def _overruns(record) -> list:
    """A record's usage overruns (launchers/_ledger.py `Ledger.overruns`), from the ledger entries it carries."""
    from ._ledger import Ledger

    c = record["content"]
    claim, book = c.get("claim") or {}, c.get("ledger") or {}
    ledger = Ledger(
        claim.get("sha256"),
        claim.get("cap_micro_usd"),
        claim.get("cap_tokens"),
        None,
        cap_sandbox_micro_usd=claim.get("cap_sandbox_micro_usd", 0),
    )
    ledger.entries = [e for e in book.get("entries") or [] if isinstance(e, dict)]
    try:
        return ledger.overruns()
    except (KeyError, TypeError):
        return []  # a record of another shape: `verify` names it
