"""A ledger cut after any entry -- where a kill -9 leaves it -- is completed by `recover` into one the ledger's rules
book (the verifier's re-booking accepts it), whatever the calls' tokens (hypothesis).

The controller journals an answer's step (with `charge_for`'s figures) after the reservation and before the
charge; a cut after a reservation is tried with and without that step journaled.
"""

from hypothesis import given, settings, strategies as st

from launchers._ledger import Ledger, load_ledger
from launchers._verify import _rederive

PRICE = {
    "input_micro_usd_per_mtok": 130000,
    "output_micro_usd_per_mtok": 400000,
    "cached_input_micro_usd_per_mtok": 13000,
}
CLAIM = "a" * 64
CAPS = dict(cap_micro_usd=10**9, cap_tokens=10**9, price=PRICE, cap_sandbox_micro_usd=10**6, sandbox_rate=40)

calls = st.lists(
    st.tuples(st.integers(1, 9000), st.integers(1, 2048), st.integers(0, 2048), st.booleans(), st.integers(0, 9000)),
    min_size=1,
    max_size=5,
)


def _book(path, plan, sandbox_seconds):
    """Run the plan through a file-backed ledger as the controller does; returns (entries, steps by call, the index
    of each call's reservation)."""
    ledger = Ledger(CLAIM, path=path, **CAPS)
    ledger.reserve_sandbox(300)
    steps, reserved_at = {}, {}
    for call, (tokens_in, max_tokens, tokens_out, cached, hit) in enumerate(plan, start=1):
        tokens_out = min(tokens_out, max_tokens)
        ledger.reserve(call, tokens_in, max_tokens, free=cached)
        reserved_at[call] = len(ledger.entries) - 1
        note = "cache hit" if cached else "stop"
        c = ledger.charge_for(call, tokens_in, tokens_out, note, free=cached, cached_in=hit)
        steps[call] = {
            "index": call,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "cached": cached,
            "prompt_cache_hit_tokens": c["cached_tokens_in"],
            "micro_usd": c["micro_usd"],
            "stop_reason": "stop",
        }
        ledger.settle(call, tokens_in, tokens_out, note, free=cached, cached_in=hit)
    ledger.settle_sandbox(sandbox_seconds)
    return ledger.entries, steps, reserved_at


@settings(max_examples=15, deadline=None)
@given(plan=calls, sandbox_seconds=st.integers(0, 400))
def test_a_ledger_cut_anywhere_is_completed_into_one_the_rules_book(tmp_path_factory, plan, sandbox_seconds):
    folder = tmp_path_factory.mktemp("ledger")
    whole = str(folder / "whole.jsonl")
    entries, steps, reserved_at = _book(whole, plan, sandbox_seconds)
    with open(whole, "rb") as fh:
        lines = fh.read().splitlines(keepends=True)
    for cut in range(len(lines) + 1):
        for step_written in (False, True):
            path = str(folder / f"cut-{cut}-{step_written}.jsonl")
            with open(path, "wb") as fh:
                fh.write(b"".join(lines[:cut]))
            # the steps journaled by this moment: every call whose reservation is in, except (maybe) the last one's
            answered = {
                call: step
                for call, step in steps.items()
                if reserved_at[call] < cut and (step_written or reserved_at[call] != cut - 1)
            }
            ledger = load_ledger(
                path,
                CLAIM,
                CAPS["cap_micro_usd"],
                CAPS["cap_tokens"],
                PRICE,
                tolerate_torn_tail=True,
                cap_sandbox_micro_usd=CAPS["cap_sandbox_micro_usd"],
                sandbox_rate=CAPS["sandbox_rate"],
            )
            ledger.path = None
            ledger.complete(answered)
            _rederive(ledger, path)  # raises InputError naming the first entry the rules would not book
            assert ledger.entries[:cut] == entries[:cut]  # completed by appending only
            kinds = [(e["account"], e["call"], e["kind"]) for e in ledger.entries]
            for i, (account, call, kind) in enumerate(kinds):
                if kind == "charge":
                    assert kinds[i + 1] == (account, call, "release")
            charged = {call for account, call, kind in kinds if account == "inference" and kind == "charge"}
            assert charged == set(answered)  # every journaled answer charged, nothing else
            assert ledger.complete(answered) == 0  # a second recover adds nothing
