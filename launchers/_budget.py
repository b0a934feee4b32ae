"""Budget estimate for a planned attempt, before anything is spent.

From token assumptions and a price table: the number of calls, the expected
cost (tokens the calls are assumed to use) and the worst case the ledger will
reserve (every call at its max_tokens), in integer micro-USD.
"""

from ._errors import InputError
from ._prices import call_cost, format_usd, model_price


def estimate(prices, model, attempts, checkpoints, calls_per_checkpoint, tokens_in, tokens_out, max_tokens,
             worker_seconds=0, sandbox="local") -> dict:
    for name, value in (("attempts", attempts), ("checkpoints", checkpoints),
                        ("calls-per-checkpoint", calls_per_checkpoint), ("max-tokens", max_tokens)):
        if value <= 0:
            raise InputError(f"--{name}: expected a positive integer")
    if tokens_in < 0 or tokens_out < 0 or worker_seconds < 0:
        raise InputError("--tokens-in, --tokens-out and --worker-seconds must not be negative")
    if tokens_out > max_tokens:
        raise InputError(f"--tokens-out ({tokens_out}) cannot exceed --max-tokens ({max_tokens})")
    price = model_price(prices, model)
    calls = attempts * checkpoints * calls_per_checkpoint
    per_call = call_cost(price, tokens_in, tokens_out)
    per_call_reserved = call_cost(price, tokens_in, max_tokens)
    rate = (prices.get("sandboxes") or {}).get(sandbox, {}).get("micro_usd_per_second")
    compute = None if rate is None else rate * worker_seconds * attempts
    expected = calls * per_call + (compute or 0)
    return {"model": model, "price": price, "calls": calls,
            "tokens_in": calls * tokens_in, "tokens_out": calls * tokens_out,
            "expected_micro_usd": expected, "worst_case_micro_usd": calls * per_call_reserved + (compute or 0),
            "worst_case_tokens": calls * (tokens_in + max_tokens),
            "sandbox": sandbox, "sandbox_micro_usd": compute,
            "prices_file": prices["_path"]}


def render(est) -> str:
    sandbox = ("not priced in this table (add sandboxes.%s)" % est["sandbox"] if est["sandbox_micro_usd"] is None
               else format_usd(est["sandbox_micro_usd"]))
    return "\n".join([
        f"model               {est['model']}  (prices: {est['prices_file']})",
        f"calls               {est['calls']:,}",
        f"tokens in / out     {est['tokens_in']:,} / {est['tokens_out']:,}",
        f"sandbox ({est['sandbox']})     {sandbox}",
        f"expected cost       {format_usd(est['expected_micro_usd'])}  ({est['expected_micro_usd']:,} micro-USD)",
        f"worst case reserved {format_usd(est['worst_case_micro_usd'])}  ({est['worst_case_micro_usd']:,} micro-USD, "
        f"{est['worst_case_tokens']:,} tokens)",
        "Authorise at least the worst case: the ledger reserves every call at its max_tokens.",
    ])
