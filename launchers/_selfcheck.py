"""`self-check`: the budget controls, exercised deterministically, no cloud, no model.

Each check runs against a fresh state directory and ledger file in a temp dir,
with a fixed clock and a fixed price, and reports what it saw. A failing check
means the controls that guard paid calls are broken: exit 1.
"""

import datetime
import os
import tempfile

from ._claims import authorise, consume
from ._errors import BudgetHalt, ClaimRefused
from ._ledger import Ledger, load_ledger

PRICE = {"input_micro_usd_per_mtok": 130000, "output_micro_usd_per_mtok": 400000}
NOW = datetime.datetime(2026, 11, 29, 9, 0, tzinfo=datetime.timezone.utc)


def _check(name, ok, detail):
    return {"check": name, "passed": bool(ok), "detail": detail}


def run_self_check() -> list:
    out = []
    with tempfile.TemporaryDirectory(prefix="fundbook-self-check-") as root:
        state = os.path.join(root, "state")
        claim_path = os.path.join(root, "claim.json")
        doc = authorise(claim_path, "FUND_01", "public-practice", "Qwen/Qwen3-8B", cap_micro_usd=5000,
                        cap_tokens=100000, hours=1, state=state, now=NOW)
        consumed = consume(claim_path, "FUND_01", "public-practice", "Qwen/Qwen3-8B", state=state, now=NOW)
        out.append(_check("claim consumed once", consumed["sha256"] == doc["sha256"], f"claim {doc['claim']['id']}"))

        ledger_path = os.path.join(root, "ledger.jsonl")
        ledger = Ledger(doc["sha256"], 5000, 100000, PRICE, path=ledger_path)
        r = ledger.reserve(1, 6000, 2000)          # 6000*0.13 + 2000*0.40 = 780 + 800 = 1580 micro-USD
        ledger.settle(1, 6000, 500)                # 780 + 200 = 980 charged, 600 released
        t = ledger.totals()
        out.append(_check("reserve, charge, release", r["micro_usd"] == 1580 and t["charged_micro_usd"] == 980
                          and t["unresolved_micro_usd"] == 0 and [e["kind"] for e in ledger.entries] ==
                          ["reserve", "charge", "release"],
                          f"reserved {r['micro_usd']}, charged {t['charged_micro_usd']}, open {t['unresolved_micro_usd']}"))

        ledger.reserve(2, 6000, 2000)              # committed 980 + 1580 = 2560
        ledger.settle(2, 6000, 2000)               # charged 2560
        try:
            ledger.reserve(3, 6000, 2000)          # 2560 + 1580 = 4140 <= 5000: allowed
            ledger.settle(3, 6000, 2000)           # charged 4140
            size = len(ledger.entries)
            ledger.reserve(4, 6000, 2000)          # 4140 + 1580 > 5000: refused
            refused = None
        except BudgetHalt as exc:
            refused = exc
        out.append(_check("refusal at the cap", refused is not None and refused.limit == "cost"
                          and len(ledger.entries) == size and ledger.totals()["charged_micro_usd"] == 4140,
                          refused.format_message() if refused else "the fourth reservation was NOT refused"))

        try:
            consume(claim_path, "FUND_01", "public-practice", "Qwen/Qwen3-8B", state=state, now=NOW)
            reused = None
        except ClaimRefused as exc:
            reused = exc
        out.append(_check("reused claim refused", reused is not None and "already consumed" in reused.format_message(),
                          reused.format_message() if reused else "the claim was accepted twice"))

        crash_path = os.path.join(root, "crash-ledger.jsonl")
        crashed = Ledger(doc["sha256"], 5000, 100000, PRICE, path=crash_path)
        try:
            crashed.reserve(1, 6000, 2000)
            raise RuntimeError("simulated crash after the reservation, before the provider answered")
        except RuntimeError:
            pass
        del crashed                                 # the process state is gone; only the file remains
        reloaded = load_ledger(crash_path, doc["sha256"], 5000, 100000, PRICE)
        t = reloaded.totals()
        out.append(_check("crash keeps the reservation as a liability",
                          t["unresolved_micro_usd"] == 1580 and t["unresolved_calls"] == [1] and t["charged_micro_usd"] == 0,
                          f"unresolved {t['unresolved_micro_usd']} micro-USD on calls {t['unresolved_calls']}"))
        try:
            consume(claim_path, "FUND_01", "public-practice", "Qwen/Qwen3-8B", state=state, now=NOW)
            renewed = True
        except ClaimRefused:
            renewed = False
        out.append(_check("a crash does not renew the claim", not renewed, "the consumed claim stays consumed"))
    return out
