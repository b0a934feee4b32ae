"""Budget estimate for a planned attempt, before anything is spent.

From token assumptions and a price table: the expected calls and cost (each
checkpoint takes `calls_per_checkpoint` calls of the assumed size), and the
worst case, derived from the worker's real limits rather than assumed: every
checkpoint uses all the calls the worker may ask for (the controller refuses
one more), each call's prompt is the checkpoint's opening prompt grown by the
earlier answers at max_tokens and the tool results at their length limit, and
each answer is max_tokens long. The ledger never reserves more than that, so
a claim authorised at the worst case cannot halt for budget: `authorise`
refuses caps below it (`attempt_plan`) unless a partial budget is accepted.
Sandbox compute is priced separately, per second of the worker's time limit
(1,200 s unless told otherwise, as `execute`) plus the sandbox's setup grace.
Integer micro-USD throughout, and no list as long as the attempt: a figure
for any number of checkpoints costs the same to compute.
"""

from dataclasses import dataclass, replace

from ._controller import Limits
from ._errors import InputError
from ._prices import call_cost, format_usd, model_price, sandbox_rate, table_sha256
from ._sandbox_modal import GRACE_S
from .worker import protocol

MESSAGE_OVERHEAD = 16  # chat-template tokens around one message, generously
TOOL_RESULT_FRAME = (
    128  # characters around a tool result: its 'TOOL RESULT name (exit n): ' prefix and the cut's marker
)
FEEDBACK_BOUND = 1024  # tokens of the worker's own feedback (invalid answer, rejected batch): short fixed texts
GRACE = {"modal": GRACE_S, "local": 0}
DEFAULT_WORKER_SECONDS = Limits.worker_seconds  # the same default as `execute`
DEFAULT_TOKENS_IN = 8000  # an opening prompt (system text + checkpoint packet) the shipped families stay under
DEFAULT_HORIZON = 20


def step_growth(max_tokens) -> int:
    """Tokens one step adds to the next prompt: the answer, then a tool result (ASCII JSON cut at its limit,
    with the cut's marker, at most one token a byte) or the worker's feedback, with their template overhead."""
    return max_tokens + max(protocol.TOOL_OUTPUT_LIMIT + TOOL_RESULT_FRAME, FEEDBACK_BOUND) + 2 * MESSAGE_OVERHEAD


def worst_calls(checkpoints, max_calls=None) -> int:
    calls = checkpoints * protocol.MAX_CALLS_PER_CHECKPOINT
    return calls if max_calls is None else min(calls, max_calls)


def worst(price, tokens_in, max_tokens, checkpoints, max_calls):
    """(calls, micro-USD, tokens) of the dearest `worst_calls` calls: each of the day's call sizes occurs once a
    checkpoint, so the dearest sizes are taken `checkpoints` times each, in order, until the call limit."""
    growth = step_growth(max_tokens)
    sizes = sorted(
        (
            (call_cost(price, tokens_in + k * growth, max_tokens), tokens_in + k * growth + max_tokens)
            for k in range(protocol.MAX_CALLS_PER_CHECKPOINT)
        ),
        reverse=True,
    )
    left = worst_calls(checkpoints, max_calls)
    calls = usd = tokens = 0
    for cost, size in sizes:
        take = min(checkpoints, left)
        calls, usd, tokens, left = calls + take, usd + take * cost, tokens + take * size, left - take
    return calls, usd, tokens


# a model run on this host (the llama-cpp sampler) costs nothing: its claims are planned at this row
FREE_PRICE = {"input_micro_usd_per_mtok": 0, "output_micro_usd_per_mtok": 0, "cached_input_micro_usd_per_mtok": 0}


@dataclass(frozen=True)
class Planned:
    """What one attempt is planned for, as `budget` and `authorise` are told it: the sampler (whose own plan
    gives the opening prompt when `tokens_in` is None), the worker's limits and the sandbox (None: local for the
    mock model or a model run on this host, modal otherwise). `local`: priced at zero (a model on this host)."""

    sampler: str = None
    tokens_in: int = None
    max_tokens: int = Limits.max_tokens_per_call
    max_calls: int = Limits.max_calls
    checkpoints: int = DEFAULT_HORIZON
    worker_seconds: int = DEFAULT_WORKER_SECONDS
    sandbox: str = None
    local: bool = False


def estimate(prices, model, planned: Planned, *, attempts=1, calls_per_checkpoint=1, tokens_out=0, price=None) -> dict:
    """`planned`'s limits (its `tokens_in` the opening prompt, its sandbox default local) for `attempts`
    attempts of `calls_per_checkpoint` calls a checkpoint, each answering `tokens_out` tokens.
    `price`: a row to use instead of the table's (a free local sampler's zero row, `FREE_PRICE`)."""
    checkpoints, tokens_in, max_tokens = planned.checkpoints, planned.tokens_in, planned.max_tokens
    worker_seconds, max_calls, sandbox = planned.worker_seconds, planned.max_calls, planned.sandbox or "local"
    for name, value in (
        ("attempts", attempts),
        ("checkpoints", checkpoints),
        ("calls-per-checkpoint", calls_per_checkpoint),
        ("max-tokens", max_tokens),
    ):
        if value <= 0:
            raise InputError(f"--{name}: expected a positive integer")
    if max_calls is not None and max_calls <= 0:
        raise InputError("--max-calls: expected a positive integer")
    if tokens_in < 0 or tokens_out < 0 or worker_seconds < 0:
        raise InputError("--tokens-in, --tokens-out and --worker-seconds must not be negative")
    if tokens_out > max_tokens:
        raise InputError(f"--tokens-out ({tokens_out}) cannot exceed --max-tokens ({max_tokens})")
    if calls_per_checkpoint > protocol.MAX_CALLS_PER_CHECKPOINT:
        raise InputError(
            f"--calls-per-checkpoint: the worker makes at most {protocol.MAX_CALLS_PER_CHECKPOINT} calls a checkpoint"
        )
    price = model_price(prices, model) if price is None else dict(price)
    rate = sandbox_rate(prices, sandbox)
    calls = attempts * checkpoints * calls_per_checkpoint
    per_call = call_cost(price, tokens_in, tokens_out)
    kept, worst_usd, worst_tokens = worst(price, tokens_in, max_tokens, checkpoints, max_calls)
    compute = rate * (worker_seconds + GRACE.get(sandbox, 0)) * attempts if worker_seconds else 0
    return {
        "model": model,
        "price": price,
        "calls": calls,
        "worst_case_calls": attempts * kept,
        "max_calls_per_checkpoint": protocol.MAX_CALLS_PER_CHECKPOINT,
        "tokens_in": calls * tokens_in,
        "tokens_out": calls * tokens_out,
        "expected_micro_usd": calls * per_call,
        "worst_case_micro_usd": attempts * worst_usd,
        "worst_case_tokens": attempts * worst_tokens,
        "worker_seconds": worker_seconds,
        "sandbox": sandbox,
        "sandbox_micro_usd_per_second": rate,
        "sandbox_micro_usd": compute,
        "prices_file": prices["_path"],
    }


def attempt_plan(prices, model, planned: Planned = Planned(), price=None) -> dict:
    """What a claim's caps are checked against: one attempt's worst case (`estimate`'s figures) for these limits,
    with the price row and the table it came from (recorded in the claim, so the attempt is bound to them)."""
    planned = replace(
        planned,
        tokens_in=DEFAULT_TOKENS_IN if planned.tokens_in is None else planned.tokens_in,
        sandbox=planned.sandbox or "modal",
    )
    est = estimate(prices, model, planned, price=price)
    return {
        "tokens_in": planned.tokens_in,
        "max_tokens": planned.max_tokens,
        "max_calls": planned.max_calls,
        "checkpoints": planned.checkpoints,
        "worker_seconds": planned.worker_seconds,
        "sandbox": planned.sandbox,
        "price": est["price"],
        "sandbox_micro_usd_per_second": est["sandbox_micro_usd_per_second"],
        "prices_table_sha256": table_sha256(prices),
        "worst_case_calls": est["worst_case_calls"],
        "worst_case_micro_usd": est["worst_case_micro_usd"],
        "worst_case_tokens": est["worst_case_tokens"],
        "sandbox_micro_usd": est["sandbox_micro_usd"],
    }


def planned_tokens_in(sampler=None):
    """The opening prompt tokens a plan assumes when told none: the sampler's own plan (the compact prompt's for
    the HTTP APIs), else DEFAULT_TOKENS_IN."""
    from ._providers import sampler_class

    own = sampler_class(sampler).PLAN.get("tokens_in") if sampler else None
    return DEFAULT_TOKENS_IN if own is None else own


def projection(prices, model, planned: Planned = Planned()) -> dict:
    """The one projection behind `budget`'s worst case and `authorise`'s check: one attempt's plan
    (`attempt_plan`) with every default resolved the same way, so the caps `budget` prints are the caps
    `authorise` accepts. A sampler that pays nothing (llama-cpp) is planned as `local`."""
    from ._providers import sampler_class

    local = planned.local or bool(planned.sampler and sampler_class(planned.sampler).FREE)
    tokens_in = planned_tokens_in(planned.sampler) if planned.tokens_in is None else planned.tokens_in
    sandbox = planned.sandbox or ("local" if model == "mock" or local else "modal")
    return attempt_plan(
        prices, model, replace(planned, tokens_in=tokens_in, sandbox=sandbox), price=FREE_PRICE if local else None
    )


def authorise_args(plan, planned: Planned) -> list:
    """The `authorise` options for the caps and plan of `plan` (one attempt): what `budget` prints."""
    args = []
    if planned.sampler:
        args += ["--sampler", planned.sampler]
    if planned.local:
        args += ["--local"]
    args += [
        "--cap-micro-usd",
        str(plan["worst_case_micro_usd"]),
        "--cap-tokens",
        str(plan["worst_case_tokens"]),
        "--cap-sandbox-micro-usd",
        str(plan["sandbox_micro_usd"]),
        "--tokens-in",
        str(plan["tokens_in"]),
        "--max-tokens",
        str(plan["max_tokens"]),
        "--max-calls",
        str(plan["max_calls"]),
        "--horizon",
        str(plan["checkpoints"]),
        "--worker-seconds",
        str(plan["worker_seconds"]),
        "--sandbox",
        plan["sandbox"],
    ]
    return args


def render(est) -> str:
    return "\n".join(
        [
            f"model               {est['model']}  (prices: {est['prices_file']})",
            f"calls expected      {est['calls']:,}",
            f"tokens in / out     {est['tokens_in']:,} / {est['tokens_out']:,}",
            f"expected inference  {format_usd(est['expected_micro_usd'])}  ({est['expected_micro_usd']:,} micro-USD)",
            f"worst case calls    {est['worst_case_calls']:,}  ({est['max_calls_per_checkpoint']} a checkpoint, the "
            f"worker's limit)",
            f"worst case reserved {format_usd(est['worst_case_micro_usd'])}  ({est['worst_case_micro_usd']:,} micro-USD, "
            f"{est['worst_case_tokens']:,} tokens)",
            f"sandbox ({est['sandbox']})     {format_usd(est['sandbox_micro_usd'])}  ({est['sandbox_micro_usd_per_second']} "
            f"micro-USD/s over the worker's {est['worker_seconds']:,} s and setup grace; a separate cap)",
            "Authorise at least the worst case (--cap-micro-usd, --cap-tokens) and the sandbox figure "
            "(--cap-sandbox-micro-usd); `authorise` refuses less unless --accept-partial-budget.",
        ]
        + ([f"authorise each attempt with: {' '.join(est['authorise'])}"] if est.get("authorise") else [])
    )
