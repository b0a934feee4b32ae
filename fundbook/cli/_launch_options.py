"""The options `fundbook-launch` commands share: bounded integers, the ledgers' places, the run limits and the
samplers' own options (which sampler takes which is the providers' to say: `launchers.sampler`)."""

import re

import click

from launchers import CHOICES, DEFAULT_HORIZON, DEFAULT_WORKER_SECONDS, MAX_HOURS, MAX_SAFE, SANDBOXES, InputError

prices_option = click.option(
    "--prices", type=click.Path(dir_okay=False), default=None, help="Price table file (default: launchers/prices.json)."
)
state_option = click.option(
    "--state",
    type=click.Path(file_okay=False),
    default=None,
    help="Claim registry directory (default: $FUNDBOOK_LAUNCH_STATE or ~/.fundbook-launch).",
)
project_option = click.option(
    "--project",
    type=click.Path(file_okay=False),
    default=None,
    help="Project directory: project ledger, freeze, deviations (default: $FUNDBOOK_LAUNCH_PROJECT or runs/attempts/).",
)

# Every integer option has a bound: what hashed content can hold, and what the machinery behind it can honour
# without allocating by the option's size (a budget for any number of checkpoints costs the same to compute).
CAP = click.IntRange(0, MAX_SAFE)
SEED = click.IntRange(1, MAX_SAFE)
HOURS = click.IntRange(1, MAX_HOURS)
CHECKPOINTS = click.IntRange(1, 1000)
ATTEMPTS = click.IntRange(1, 100_000)
TOKENS = click.IntRange(0, 10_000_000)
MAX_TOKENS = click.IntRange(1, 1_000_000)
MAX_CALLS = click.IntRange(1, 100_000)
SECONDS = click.IntRange(1, 86_400)  # a day: Modal's own limit for a sandbox
CALL_SECONDS = click.IntRange(1, 3600)
TEMPERATURE = click.IntRange(0, 2000)
PER_CHECKPOINT = click.IntRange(1, 8)
ATTEMPT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,159}")


def text(option, value):
    """An option's text must be Unicode (a lone surrogate from a mis-encoded argv is not): one line otherwise."""
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{option}: not Unicode text (a lone surrogate in the command line)") from None
    return value


def positive(**values):
    for name, value in values.items():
        if value is not None and value <= 0:
            raise InputError(f"--{name.replace('_', '-')}: expected a positive integer")


run_options = [
    click.option(
        "--sandbox",
        "sandbox_name",
        type=click.Choice(list(SANDBOXES)),
        default=None,
        help="Default: modal for a paid sampler, local for the others; local-isolated (bubblewrap on this "
        "host) is isolated too, so a paid sampler may run in it with no Modal account.",
    ),
    click.option("--worker-seconds", type=SECONDS, default=DEFAULT_WORKER_SECONDS, show_default=True),
    click.option(
        "--call-deadline",
        type=CALL_SECONDS,
        default=120,
        show_default=True,
        help="Seconds the controller waits for one call.",
    ),
    click.option("--max-tokens", type=MAX_TOKENS, default=2048, show_default=True, help="Per-call output cap."),
    click.option("--max-calls", type=MAX_CALLS, default=400, show_default=True),
    click.option("--horizon", type=CHECKPOINTS, default=DEFAULT_HORIZON, show_default=True),
    click.option(
        "--temperature-milli",
        type=TEMPERATURE,
        default=None,
        help="Sampling temperature x 1000 (default: 700 for tinker and mock; 0 for llama-cpp, anthropic and "
        "openai-compatible, greedy; openai sends none).",
    ),
    click.option("--sampling-seed", type=click.IntRange(0, MAX_SAFE), default=0, show_default=True),
]


def local_model_options(fn):
    """--model-file and the thread counts: the local open-weights sampler's options (execute and freeze)."""
    for option in reversed(
        [
            click.option(
                "--model-file",
                type=click.Path(dir_okay=False),
                default=None,
                help="With --sampler llama-cpp: the GGUF model file (run in this process; nothing is paid), or a "
                "packaged model: packaged (SmolLM2-135M-Instruct), packaged:gemma3-270m (the Gemma 3 270M base model).",
            ),
            click.option(
                "--threads",
                type=click.IntRange(1, 256),
                default=1,
                show_default=True,
                help="With --sampler llama-cpp: threads generating tokens.",
            ),
            click.option(
                "--threads-batch",
                type=click.IntRange(1, 256),
                default=2,
                show_default=True,
                help="With --sampler llama-cpp: threads evaluating the prompt.",
            ),
        ]
    ):
        fn = option(fn)
    return fn


def api_options(fn):
    """The HTTP API samplers' options (execute and freeze): openai, anthropic, openai-compatible."""
    for option in reversed(
        [
            click.option(
                "--base-url",
                default=None,
                help="With --sampler openai-compatible: the server's URL, e.g. http://127.0.0.1:8080/v1 "
                "(default: $FUNDBOOK_OPENAI_BASE_URL; recorded without credentials or query).",
            ),
            click.option(
                "--server-dialect",
                type=click.Choice(CHOICES["server_dialect"]),
                default="openai",
                show_default=True,
                help="With --sampler openai-compatible: the answer schema as a json_schema response format "
                "(openai), or as llama-cpp-python's server takes it (json_object with the grammar schema, "
                "and the in-process sampler's top_k, top_p, min_p, repeat_penalty).",
            ),
            click.option(
                "--local-server",
                is_flag=True,
                help="With --sampler openai-compatible: the server runs on this host; priced at zero (the claim "
                "comes from `authorise --local`), the local sandbox allowed.",
            ),
            click.option(
                "--reasoning-effort",
                type=click.Choice(CHOICES["reasoning_effort"]),
                default="low",
                show_default=True,
                help="With --sampler openai: the Responses API's reasoning effort (none: not sent).",
            ),
            click.option(
                "--effort",
                type=click.Choice(CHOICES["effort"]),
                default="none",
                show_default=True,
                help="With --sampler anthropic: the Messages API's output_config.effort (seed 002 runs low; "
                "none: not sent, for a model that does not take it); recorded and frozen.",
            ),
        ]
    ):
        fn = option(fn)
    return fn


env_file_option = click.option(
    "--env-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Read the provider keys (OPENAI_API_KEY, ANTHROPIC_API_KEY, FUNDBOOK_OPENAI_COMPATIBLE_API_KEY) and base "
    "URLs from this file, KEY=VALUE a line (strict: no quotes, spaces or export); the values go to the "
    "provider's client only, never to a record, ledger, log or message.",
)


def with_run_options(fn):
    for option in reversed(run_options):
        fn = option(fn)
    return fn


def sampler_own(params) -> dict:
    """The samplers' own options from a command's parameters, in the order a refusal checks them (the provider
    that owns each says whether it goes with the chosen sampler)."""
    names = {
        "base_url": "base_url",
        "server_dialect": "dialect",
        "local_server": "local_server",
        "reasoning_effort": "reasoning_effort",
        "effort": "effort",
        "model_file": "model_file",
        "threads": "n_threads",
        "threads_batch": "n_threads_batch",
    }
    return {own: params[param] for param, own in names.items() if param in params}
