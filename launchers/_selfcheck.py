"""`self-check`: the controls that guard paid calls, exercised deterministically, no cloud, no model.

Each check runs against a fresh state directory, project and ledger file in a
temp dir, with a fixed clock and a fixed price, and reports what it saw. A
failing check means a control is broken: exit 1.
"""

import datetime
import os
import tempfile

import engine

from ._claims import Grant, authorise, consume
from ._errors import AttemptLive, BudgetHalt, CacheMiss, ClaimRefused, FreezeRefused, UsageRefused
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
        doc = authorise(
            claim_path,
            "FUND_01",
            "public-practice",
            "Qwen/Qwen3-8B",
            cap_micro_usd=5000,
            cap_tokens=100000,
            hours=1,
            grant=Grant(state=state, now=NOW, accept_partial_budget=True, project=os.path.join(root, "project")),
        )
        consumed = consume(claim_path, "FUND_01", "public-practice", "Qwen/Qwen3-8B", state=state, now=NOW)
        out.append(_check("claim consumed once", consumed["sha256"] == doc["sha256"], f"claim {doc['claim']['id']}"))

        ledger_path = os.path.join(root, "ledger.jsonl")
        ledger = Ledger(doc["sha256"], 5000, 100000, PRICE, path=ledger_path)
        r = ledger.reserve(1, 6000, 2000)  # 6000*0.13 + 2000*0.40 = 780 + 800 = 1580 micro-USD
        ledger.settle(1, 6000, 500)  # 780 + 200 = 980 charged, 600 released
        t = ledger.totals()
        out.append(
            _check(
                "reserve, charge, release",
                r["micro_usd"] == 1580
                and t["charged_micro_usd"] == 980
                and t["unresolved_micro_usd"] == 0
                and [e["kind"] for e in ledger.entries] == ["reserve", "charge", "release"],
                f"reserved {r['micro_usd']}, charged {t['charged_micro_usd']}, open {t['unresolved_micro_usd']}",
            )
        )

        ledger.reserve(2, 6000, 2000)  # committed 980 + 1580 = 2560
        ledger.settle(2, 6000, 2000)  # charged 2560
        try:
            ledger.reserve(3, 6000, 2000)  # 2560 + 1580 = 4140 <= 5000: allowed
            ledger.settle(3, 6000, 2000)  # charged 4140
            size = len(ledger.entries)
            ledger.reserve(4, 6000, 2000)  # 4140 + 1580 > 5000: refused
            refused = None
        except BudgetHalt as exc:
            refused = exc
        out.append(
            _check(
                "refusal at the cap",
                refused is not None
                and refused.limit == "cost"
                and len(ledger.entries) == size
                and ledger.totals()["charged_micro_usd"] == 4140,
                refused.format_message() if refused else "the fourth reservation was NOT refused",
            )
        )

        try:
            consume(claim_path, "FUND_01", "public-practice", "Qwen/Qwen3-8B", state=state, now=NOW)
            reused = None
        except ClaimRefused as exc:
            reused = exc
        out.append(
            _check(
                "reused claim refused",
                reused is not None and "already consumed" in reused.format_message(),
                reused.format_message() if reused else "the claim was accepted twice",
            )
        )

        crash_path = os.path.join(root, "crash-ledger.jsonl")
        crashed = Ledger(doc["sha256"], 5000, 100000, PRICE, path=crash_path)
        try:
            crashed.reserve(1, 6000, 2000)
            raise RuntimeError("simulated crash after the reservation, before the provider answered")
        except RuntimeError:
            pass
        del crashed  # the process state is gone; only the file remains
        reloaded = load_ledger(crash_path, doc["sha256"], 5000, 100000, PRICE)
        t = reloaded.totals()
        out.append(
            _check(
                "crash keeps the reservation as a liability",
                t["unresolved_micro_usd"] == 1580 and t["unresolved_calls"] == [1] and t["charged_micro_usd"] == 0,
                f"unresolved {t['unresolved_micro_usd']} micro-USD on calls {t['unresolved_calls']}",
            )
        )
        try:
            consume(claim_path, "FUND_01", "public-practice", "Qwen/Qwen3-8B", state=state, now=NOW)
            renewed = True
        except ClaimRefused:
            renewed = False
        out.append(_check("a crash does not renew the claim", not renewed, "the consumed claim stays consumed"))
        out += _new_controls(root, state, claim_path, doc)
    return out


def _preflights(root, state):
    """The checks made before a claim is consumed: the claim's caps at authorise, credentials, the host, the cache."""
    from . import _host
    from ._budget import attempt_plan
    from ._credentials import check as credentials
    from ._errors import InputError
    from ._prices import load_prices
    from ._sampler_cache import open_store

    out = []
    low = _refused(
        lambda: authorise(
            os.path.join(root, "low.json"),
            "FUND_01",
            "public-practice",
            "Qwen/Qwen3-8B",
            cap_micro_usd=5000,
            cap_tokens=100000,
            hours=1,
            grant=Grant(state=state, now=NOW, project=os.path.join(root, "project")),
        ),
        InputError,
    )
    plan = attempt_plan(load_prices(), "Qwen/Qwen3-8B")
    out.append(
        _check(
            "a claim below the worker's worst case is refused at authorise",
            low is not None
            and "--accept-partial-budget" in low.format_message()
            and not os.path.exists(os.path.join(root, "low.json")),
            f"worst case {plan['worst_case_micro_usd']} micro-USD, {plan['worst_case_tokens']} tokens"
            if low
            else "a 5000 micro-USD claim was issued",
        )
    )
    missing = _refused(lambda: credentials("tinker", "modal", environ={"HOME": root}), InputError)
    shape = _refused(
        lambda: credentials(
            "mock", "modal", environ={"HOME": root, "MODAL_TOKEN_ID": "ak-x", "MODAL_TOKEN_SECRET": "secret"}
        ),
        InputError,
    )
    out.append(
        _check(
            "missing or malformed credentials are refused before consumption",
            missing is not None and "TINKER_API_KEY" in missing.format_message() and shape is not None,
            missing.format_message() if missing else "no credential was accepted",
        )
    )

    class Healthy(_host.Host):
        def power(self):
            return {"on_battery": False, "percent": None, "source": "self-check"}

        def can_sleep(self):
            return {"can_sleep": False, "source": "self-check"}

        def free_bytes(self, folder):
            return 10**12

    class Battery(Healthy):
        def power(self):
            return {"on_battery": True, "percent": 80, "source": "self-check"}

    class Sleepy(Healthy):
        def can_sleep(self):
            return {"can_sleep": True, "source": "self-check"}

        def inhibit(self, why):
            return None

    class Full(Healthy):
        def free_bytes(self, folder):
            return 1024

    refusals = {
        name: _refused(lambda h=h: _host.preflight(root, 10**6, "self-check", h), InputError)
        for name, h in (("battery", Battery()), ("sleep", Sleepy()), ("disk", Full()))
    }
    healthy = _host.preflight(root, 10**6, "self-check", Healthy())
    out.append(
        _check(
            "the host preflight refuses battery power, an uninhibited sleep and a full disk",
            all(refusals.values()) and healthy[1] is None,
            "; ".join(f"{k}: {v.format_message()[:60]}" if v else f"{k}: NOT refused" for k, v in refusals.items()),
        )
    )
    other = os.path.join(root, "not-a-cache.json")
    with open(other, "w", encoding="utf-8") as fh:
        fh.write("{}")
    cache = _refused(lambda: open_store(other), InputError)
    with open(other, encoding="utf-8") as fh:
        kept = fh.read() == "{}"
    out.append(
        _check(
            "a --cache that is not a decision cache is refused, untouched",
            cache is not None and kept,
            cache.format_message() if cache else "the file became a database",
        )
    )
    return out


def _refused(fn, kind):
    try:
        fn()
    except kind as exc:
        return exc
    return None


def _new_controls(root, state, claim_path, doc):
    from . import _attempt, _freeze
    from ._providers import Given, GivenSandbox
    from ._spec import AttemptSpec, Task
    from ._budget import Planned, estimate
    from ._lock import AttemptLock
    from ._prices import load_prices
    from ._project import ProjectLedger
    from ._sampler_cache import CacheSampler, open_store
    from .worker import protocol

    out = []

    project = ProjectLedger(os.path.join(root, "project"))
    project.open_claim(dict(doc, consumption={"nonce": "0" * 32, "consumed_at": "2026-11-29T09:00:00Z"}), "check", None)
    os.remove(os.path.join(state, "consumed", doc["claim"]["id"] + ".json"))  # same-user tampering
    seen = _refused(lambda: project.check_claim(doc["claim"], None), ClaimRefused)
    out.append(
        _check(
            "a deleted consumed marker does not renew the claim",
            seen is not None,
            seen.format_message() if seen else "the project ledger accepted the claim again",
        )
    )
    elsewhere = _refused(
        lambda: ProjectLedger(os.path.join(root, "fresh")).check_claim(doc["claim"], None), ClaimRefused
    )
    out.append(
        _check(
            "a claim is refused in a project that never authorised it",
            elsewhere is not None,
            elsewhere.format_message() if elsewhere else "a fresh project folder accepted the claim",
        )
    )
    out += _preflights(root, state)

    paid_in_local = AttemptSpec(
        claim=claim_path,
        out=os.path.join(root, "paid"),
        task=Task("FUND_01", 1),
        model="Qwen/Qwen3-8B",
        sampler=Given("tinker", None, paid=True),
        sandbox=GivenSandbox("local", None),
        prices=None,
        limits=None,
    )
    local = _refused(lambda: _attempt.execute(paid_in_local), UsageRefused)
    out.append(
        _check(
            "a paid sampler refuses the local sandbox",
            local is not None and local.exit_code == 64 and not os.path.exists(os.path.join(root, "paid.partial")),
            local.format_message() if local else "the local sandbox was accepted",
        )
    )

    frozen = {"content": {"config": {"limits": {"max_tokens_per_call": 2048}}, "models": ["m"], "seeds": [1, 2]}}
    changed = {"config": {"limits": {"max_tokens_per_call": 4096}}, "models": ["m"], "seeds": [1]}
    mismatch = _refused(lambda: _freeze.check(frozen, [], changed, "freeze.json"), FreezeRefused)
    entry = {
        "date": "2026-11-29T09:00:00Z",
        "field": "config.limits.max_tokens_per_call",
        "original": 2048,
        "effective": 4096,
        "reason": "answers were cut",
    }
    used = _freeze.check(frozen, [entry], changed, "freeze.json")
    out.append(
        _check(
            "a change after the freeze needs a dated deviation",
            mismatch is not None and "max_tokens_per_call" in mismatch.format_message() and used == [entry],
            mismatch.format_message() if mismatch else "an unfrozen change was accepted",
        )
    )

    split = Ledger(doc["sha256"], 10**9, 10**9, PRICE, cap_sandbox_micro_usd=1000, sandbox_rate=40)
    over = _refused(lambda: split.reserve_sandbox(1200), BudgetHalt)
    split.reserve(1, 6000, 2000)
    out.append(
        _check(
            "sandbox compute is capped apart from inference",
            over is not None and over.limit == "sandbox" and split.totals()["committed_micro_usd"] == 1580,
            over.format_message() if over else "the sandbox reservation passed its cap",
        )
    )

    store = os.path.join(root, "cache.sqlite")
    open_store(store)  # an empty recording
    replay = CacheSampler(store, "m")
    miss = _refused(lambda: replay.prepare([{"role": "user", "content": "x"}], 16), CacheMiss)
    out.append(
        _check(
            "a cache-only replay miss is an error, never debt",
            miss is not None,
            miss.format_message() if miss else "a miss was prepared for a paid call",
        )
    )

    est = estimate(
        dict(load_prices(), _path="prices.json"),
        "Qwen/Qwen3-8B",
        Planned(tokens_in=6000, max_tokens=2048, max_calls=None, checkpoints=20),
        calls_per_checkpoint=3,
        tokens_out=600,
    )
    out.append(
        _check(
            "the budget's worst case is the worker's call limit",
            est["worst_case_calls"] == 20 * protocol.MAX_CALLS_PER_CHECKPOINT,
            f"{est['worst_case_calls']} calls for 20 checkpoints",
        )
    )

    from engine import policy_batch
    from . import _recover

    run = engine.Run(engine.generate("FUND_01", 1))
    batch = policy_batch("reference", run.packet())
    run.submit(batch)  # the desk committed the batch; the host died before journaling its answer
    intent = {"index": 0, "day": 1, "batch_sha256": engine.content_sha256(batch), "batch": batch}
    (reconciled,) = _recover._proposals([("submit", "", intent)], run.receipts, 0)
    out.append(
        _check(
            "a committed batch missing from the journal is reconciled from the receipts",
            reconciled["outcome"] == "accepted",
            f"outcome {reconciled['outcome']}",
        )
    )

    folder = os.path.join(root, "live.partial")
    os.makedirs(folder)
    held = AttemptLock(folder).acquire()
    live = _refused(lambda: AttemptLock(folder).acquire(), AttemptLive)
    held.release()
    out.append(
        _check(
            "recover refuses a live attempt",
            live is not None,
            live.format_message() if live else "a second holder took the attempt's lock",
        )
    )
    return out
