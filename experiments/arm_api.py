"""The model arm over an HTTP API (experiments/arm_model.py runs it like the local arm):

  model:openai:MODEL                   the Responses API (launchers/_sampler_openai.py)
  model:anthropic:MODEL                the Messages API (launchers/_sampler_anthropic.py)
  model:openai-compatible:MODEL@URL    any Chat Completions server at URL (http(s)://host[:port]/path,
                                       e.g. http://127.0.0.1:8080/v1): the URL follows the last '@' that
                                       opens http:// or https://, so a model id may hold '@'

The arm's settings are the providers' defaults (openai: reasoning effort low; anthropic and
openai-compatible: greedy), at the arm's fixed limits (arm_limits.LIMITS), the compact prompt and the day's
answer schema. Each item's attempt is a full launcher attempt under its own claim:

- a paid arm (openai, anthropic, an openai-compatible server elsewhere, priced from the price table's row
  for MODEL) runs only against the project's freeze (`<project>/freeze.json`, the project as for
  `fundbook-launch`: `$FUNDBOOK_LAUNCH_PROJECT`, else runs/attempts/): each claim is authorised in the
  project ledger and the claim registry (`$FUNDBOOK_LAUNCH_STATE`) at the freeze's per-claim caps,
  checked against the worker's worst case for the arm's limits (`launchers.projection`), and runs in the
  isolating sandbox `$FUNDBOOK_ARM_SANDBOX` names (default modal); the freeze must hold the arm's
  configuration (`fundbook-launch freeze --sampler P --model MODEL --worker-seconds 3600 --call-deadline 600
  --max-tokens 1024 --max-calls 60 ...`), its families and seeds, and a confirmatory attempt needs a
  passing pilot, as for `execute`;
- an openai-compatible server on this host (a loopback URL: localhost, 127.0.0.0/8, ::1) is free: priced
  at zero, a formality claim in a scratch project and the local sandbox, like the local arm.

The key (OPENAI_API_KEY, ANTHROPIC_API_KEY, FUNDBOOK_OPENAI_COMPATIBLE_API_KEY) is never in the arm, the
sweep's manifest, a claim or a record: its presence and shape are checked when the sweep starts (one line
naming the variable, exit 1, nothing spent), and it is read into the provider's client only when an
attempt is about to run.
"""

import ipaddress
import os
import re
import shutil
import tempfile
import urllib.parse

from .arm_limits import LIMITS
from .errors import ExperimentError

PROVIDERS = ("openai", "anthropic", "openai-compatible")
SANDBOX_ENV = "FUNDBOOK_ARM_SANDBOX"  # the isolating sandbox a paid arm runs in (default modal)
HTTP_CLIENT = None  # the SDKs' transport (tests: a mock transport); None: the SDK's own
_URL = re.compile(r"(.+)@(https?://[^@\s]+)")


def target(provider, rest, text):
    """(model id, base URL or None) of `model:PROVIDER:REST`; a one-line ExperimentError otherwise."""
    from launchers import LaunchError, check_model_id

    url = None
    if provider == "openai-compatible":
        m = _URL.fullmatch(rest)
        if not m:
            raise ExperimentError(f"--arm {text}: expected model:openai-compatible:MODEL@http(s)://HOST[:PORT]/PATH")
        rest, url = m.groups()
        from launchers import recorded_url

        try:
            plain = recorded_url(url, f"--arm {text}") == url.rstrip("/")
        except LaunchError as exc:
            raise ExperimentError(exc.format_message())
        if not plain:  # the arm's text is in the sweep's manifest: nothing secret may be in it
            raise ExperimentError(
                f"--arm {text}: the URL must hold no user, password, query or fragment (the "
                f"server's key comes from FUNDBOOK_OPENAI_COMPATIBLE_API_KEY)"
            )
    if not rest:
        raise ExperimentError(f"--arm {text}: expected model:{provider}:MODEL")
    try:
        check_model_id(rest)
    except LaunchError as exc:
        raise ExperimentError(f"--arm {text}: {exc.format_message()}")
    return rest, url


def is_loopback(url) -> bool:
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def provider_for(arm, online):
    """The arm's sampler provider: `online` reads the key now and asks the service for the model (free);
    otherwise the settings only, from no environment (what parse and the manifest see)."""
    from launchers import LaunchError, SamplerOptions, sampler
    from launchers import NotInstalled as Missing
    from .errors import NotInstalled

    own = {}
    if arm["provider"] == "openai-compatible":
        own = {"base_url": arm["base_url"], "local_server": is_loopback(arm["base_url"])}
    options = SamplerOptions(
        call_deadline_s=LIMITS["call_deadline_s"],
        seed=0,
        own=own,
        model=arm["model"] if online else None,
        offline=not online,
        environ=None if online else {},
        http_client=HTTP_CLIENT if online else None,
    )
    try:
        return sampler(arm["provider"], options)
    except LaunchError as exc:
        kind = NotInstalled if isinstance(exc, Missing) else ExperimentError
        raise kind(f"--arm {arm['text']}: {exc.format_message()}")


def sandbox_name(paid) -> str:
    return (os.environ.get(SANDBOX_ENV) or "modal") if paid else "local"


def configuration(provider, model, url, text) -> dict:
    """The frozen configuration of the arm (hashed into its name), and whether it pays."""
    from launchers import recorded_url, sampler_class, worker_identity
    import engine

    arm = {"provider": provider, "model": model, "base_url": url, "text": text}
    build = provider_for(arm, online=False)
    paid = not sampler_class(provider).free_for(build.sampling)
    ident = worker_identity(build.sampling["prompt"])
    config = {
        "provider": provider,
        "model": model,
        "sampling": build.sampling,
        "limits": dict(LIMITS),
        "sandbox": sandbox_name(paid),
        "prompt": ident["prompt"],
        "output_schema": ident["output_schema"],
        "worker": ident["worker"],
    }
    if url is not None:
        config["base_url"] = recorded_url(url, f"--arm {text}")
    return dict(config, config_hash=engine.content_sha256(config)), paid


def check_key(arm):
    """The key's presence and shape, before the sweep runs anything (nothing read into any client)."""
    from launchers import LaunchError, check_credentials

    try:
        check_credentials(arm["provider"], None, None)
    except LaunchError as exc:
        raise ExperimentError(f"--arm {arm['text']}: {exc.format_message()}")


def run(arm, row, attempt_id, out):
    """One item's attempt: a paid arm under its own claim at the freeze's caps in the project, a local server's
    under a formality claim in a scratch project."""
    from launchers import (
        AttemptSpec,
        Limits,
        Places,
        Planned,
        Task,
        Grant,
        authorise,
        execute,
        load_freeze,
        load_prices,
        project_dir,
        projection,
        sandbox,
    )

    build = provider_for(arm, online=True)  # the key read now, the model asked for (free), nothing consumed
    split = "heldout" if row.get("split") == "heldout" else "public-practice"
    horizon = row.get("horizon") or 20
    limits = Limits(
        LIMITS["worker_seconds"], LIMITS["call_deadline_s"], LIMITS["max_tokens_per_call"], LIMITS["max_calls"]
    )
    scratch = tempfile.mkdtemp(prefix="fundbook-api-arm-")
    try:
        claim = os.path.join(scratch, "claim.json")
        prices = load_prices()
        where = arm["configuration"]["sandbox"]
        if build.paid:
            places = Places(None, None)  # the project's own ledger and claim registry: this arm spends
            path = os.path.join(project_dir(None), "freeze.json")
            if not os.path.exists(path):
                raise ExperimentError(
                    f"--arm {arm['name']}: {path}: no freeze: a paid arm runs only against the "
                    f"project's freeze (`fundbook-launch freeze --sampler {arm['provider']} --model "
                    f"{arm['model']} --worker-seconds {LIMITS['worker_seconds']} --call-deadline "
                    f"{LIMITS['call_deadline_s']} --max-tokens {LIMITS['max_tokens_per_call']} "
                    f"--max-calls {LIMITS['max_calls']} ...`); nothing was spent"
                )
            caps = load_freeze(path)[0]["content"]["caps"]
            plan = projection(
                prices,
                arm["model"],
                Planned(
                    arm["provider"],
                    None,
                    LIMITS["max_tokens_per_call"],
                    LIMITS["max_calls"],
                    horizon,
                    LIMITS["worker_seconds"],
                    where,
                ),
            )
            authorise(
                claim,
                row["family"],
                split,
                arm["model"],
                caps["claim_micro_usd"],
                caps["claim_tokens"],
                24,
                grant=Grant(cap_sandbox_micro_usd=caps["claim_sandbox_micro_usd"], plan=plan),
            )
        else:
            places = Places(os.path.join(scratch, "state"), os.path.join(scratch, "project"))
            authorise(
                claim,
                row["family"],
                split,
                arm["model"],
                0,
                10**9,
                24,
                grant=Grant(state=places.state, local=True, project=places.project),
            )
        return execute(
            AttemptSpec(
                claim=claim,
                out=out,
                task=Task(row["family"], row["seed"], split, horizon),
                model=arm["model"],
                sampler=build,
                sandbox=sandbox(where),
                prices=prices,
                limits=limits,
                attempt_id=attempt_id,
                places=places,
            )
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
