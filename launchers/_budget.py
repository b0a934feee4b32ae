"""Budget estimate for a planned attempt, before anything is spent.

From token assumptions and a price table: the expected calls and cost (each
checkpoint takes `calls_per_checkpoint` calls of the assumed size), and the
worst case, derived from the worker's real limits rather than assumed: every
checkpoint uses all the calls the worker may ask for (the controller refuses
one more), each call's prompt is the checkpoint's opening prompt grown by the
earlier answers at max_tokens and the tool results at their length limit, and
each answer is max_tokens long. The ledger never reserves more than that, so
a claim authorised at the worst case cannot halt for budget. Sandbox compute
is priced separately, per second of the worker's time limit plus the
sandbox's setup grace. Integer micro-USD throughout.
"""

from ._errors import InputError
from ._prices import call_cost, format_usd, model_price, sandbox_rate
from ._sandbox_modal import GRACE_S
from .worker import protocol

MESSAGE_OVERHEAD = 16   # chat-template tokens around one message, generously
FEEDBACK_BOUND = 1024   # tokens of the worker's own feedback (invalid answer, rejected batch): short fixed texts
GRACE = {"modal": GRACE_S, "local": 0}


def step_growth(max_tokens) -> int:
    """Tokens one step adds to the next prompt: the answer, then a tool result (ASCII JSON cut at its limit,
    at most one token a byte) or the worker's feedback, with their template overhead."""
    return max_tokens + max(protocol.TOOL_OUTPUT_LIMIT + 64, FEEDBACK_BOUND) + 2 * MESSAGE_OVERHEAD


def worst_calls(checkpoints, max_calls=None) -> int:
    calls = checkpoints * protocol.MAX_CALLS_PER_CHECKPOINT
    return calls if max_calls is None else min(calls, max_calls)


def estimate(prices, model, attempts, checkpoints, calls_per_checkpoint, tokens_in, tokens_out, max_tokens,
             worker_seconds=0, sandbox="local", max_calls=None) -> dict:
    for name, value in (("attempts", attempts), ("checkpoints", checkpoints),
                        ("calls-per-checkpoint", calls_per_checkpoint), ("max-tokens", max_tokens)):
        if value <= 0:
            raise InputError(f"--{name}: expected a positive integer")
    if max_calls is not None and max_calls <= 0:
        raise InputError("--max-calls: expected a positive integer")
    if tokens_in < 0 or tokens_out < 0 or worker_seconds < 0:
        raise InputError("--tokens-in, --tokens-out and --worker-seconds must not be negative")
    if tokens_out > max_tokens:
        raise InputError(f"--tokens-out ({tokens_out}) cannot exceed --max-tokens ({max_tokens})")
    if calls_per_checkpoint > protocol.MAX_CALLS_PER_CHECKPOINT:
        raise InputError(f"--calls-per-checkpoint: the worker makes at most {protocol.MAX_CALLS_PER_CHECKPOINT} calls "
                         f"a checkpoint")
    price = model_price(prices, model)
    rate = sandbox_rate(prices, sandbox)
    calls = attempts * checkpoints * calls_per_checkpoint
    per_call = call_cost(price, tokens_in, tokens_out)
    # worst case: every call of every checkpoint, prompts grown step by step; capped by --max-calls, keep the dearest
    growth = step_growth(max_tokens)
    day = [(tokens_in + k * growth, max_tokens) for k in range(protocol.MAX_CALLS_PER_CHECKPOINT)]
    one = sorted((call_cost(price, t_in, t_out), t_in + t_out) for t_in, t_out in day * checkpoints)[::-1]
    kept = one[:worst_calls(checkpoints, max_calls)]
    compute = rate * (worker_seconds + GRACE.get(sandbox, 0)) * attempts if worker_seconds else 0
    return {"model": model, "price": price, "calls": calls, "worst_case_calls": attempts * len(kept),
            "max_calls_per_checkpoint": protocol.MAX_CALLS_PER_CHECKPOINT,
            "tokens_in": calls * tokens_in, "tokens_out": calls * tokens_out,
            "expected_micro_usd": calls * per_call, "worst_case_micro_usd": attempts * sum(c for c, _ in kept),
            "worst_case_tokens": attempts * sum(t for _, t in kept),
            "sandbox": sandbox, "sandbox_micro_usd_per_second": rate, "sandbox_micro_usd": compute,
            "prices_file": prices["_path"]}


def render(est) -> str:
    return "\n".join([
        f"model               {est['model']}  (prices: {est['prices_file']})",
        f"calls expected      {est['calls']:,}",
        f"tokens in / out     {est['tokens_in']:,} / {est['tokens_out']:,}",
        f"expected inference  {format_usd(est['expected_micro_usd'])}  ({est['expected_micro_usd']:,} micro-USD)",
        f"worst case calls    {est['worst_case_calls']:,}  ({est['max_calls_per_checkpoint']} a checkpoint, the "
        f"worker's limit)",
        f"worst case reserved {format_usd(est['worst_case_micro_usd'])}  ({est['worst_case_micro_usd']:,} micro-USD, "
        f"{est['worst_case_tokens']:,} tokens)",
        f"sandbox ({est['sandbox']})     {format_usd(est['sandbox_micro_usd'])}  ({est['sandbox_micro_usd_per_second']} "
        f"micro-USD/s over the worker's time limit and setup grace; a separate cap)",
        "Authorise at least the worst case (--cap-micro-usd, --cap-tokens) and the sandbox figure "
        "(--cap-sandbox-micro-usd).",
    ])
