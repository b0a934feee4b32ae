"""One attempt through a provider's whole command-line path against the stand-in server (tests/launchers/
api_standin.py): what tests/launchers/test_api_e2e.py asserts on and `make bench-providers` times.

Every step is the real `fundbook-launch` command (click's runner invoking the real CLI group, in this process,
so the paid path's checks of the checkout can be answered as for a clean tree). For a paid sampler (openai,
anthropic): freeze (in the chosen sandbox), a dated deviation that drops the pilot requirement (the pilot is
`fundbook-launch pilot`, tested in test_pilot.py), authorise, execute. For openai-compatible, a server on this
host (`--local-server`, free: `authorise --local`); for mock, no HTTP at all. The SDKs reach the stand-in by
their documented base-URL variables (OPENAI_BASE_URL, ANTHROPIC_BASE_URL) or `--base-url`, with keys of the
right shape that no real service ever sees."""

import json
import os
import time
from contextlib import contextmanager

from click.testing import CliRunner

from fundbook.cli.launch import cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = {
    "openai": "gpt-5.4-mini",
    "anthropic": "claude-sonnet-4-5",
    "openai-compatible": "stand-in-model",
    "mock": "mock",
}
KEYS = {"OPENAI_API_KEY": "sk-standin-" + "o" * 32, "ANTHROPIC_API_KEY": "sk-ant-standin-" + "a" * 32}
LIMITS = ["--max-tokens", "1024", "--max-calls", "60"]
CAPS = ["--cap-micro-usd", "50000000", "--cap-tokens", "50000000"]


def environment(server, state, project) -> dict:
    """The variables an attempt runs with: fake keys, the SDKs' base URLs at the stand-in, a private claim
    registry and project; no Modal account."""
    env = dict(
        KEYS,
        OPENAI_BASE_URL=server.base_url,
        ANTHROPIC_BASE_URL=server.root,
        FUNDBOOK_LAUNCH_STATE=state,
        FUNDBOOK_LAUNCH_PROJECT=project,
    )
    for name in (
        "MODAL_TOKEN_ID",
        "MODAL_TOKEN_SECRET",
        "MODAL_PROFILE",
        "FUNDBOOK_OPENAI_BASE_URL",
        "FUNDBOOK_OPENAI_COMPATIBLE_API_KEY",
        "FUNDBOOK_LAUNCH_DIE_AT",
    ):
        env[name] = None  # CliRunner: unset for the call
    return env


def published_engine() -> dict:
    with open(os.path.join(REPO, "runs", "index.json"), encoding="utf-8") as fh:
        return dict(json.load(fh)["engine"], sources_match=True, mismatch=None)


CLEAN = {"commit": "c" * 40, "dirty": False, "trees": {"engine": "e" * 40, "launchers": "l" * 40}}


@contextmanager
def clean_checkout():
    """The paid path's checks of the checkout (a clean tree, the published engine) answered as for a committed
    checkout: these runs test the path, not the state of the tree they run from."""
    from launchers import _attempt, _freeze

    saved = [(m, n, getattr(m, n)) for m in (_attempt, _freeze) for n in ("code_revision", "engine_identity")]
    for module in (_attempt, _freeze):
        module.code_revision = lambda: dict(CLEAN)
        module.engine_identity = published_engine
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


class Cli:
    def __init__(self, env):
        self.runner = CliRunner()
        self.env = env

    def __call__(self, *args, ok=True):
        result = self.runner.invoke(cli, [str(a) for a in args], env=self.env, catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, (args[:1], result.output)
        return result


def attempt(server, folder, provider, sandbox="local-isolated", family="FUND_01", seed=1, horizon=20):
    """One attempt through `provider`'s path in `folder` (new): -> {"out", "record", "seconds" (execute's wall
    time), "cli"}. The stand-in plays the reference policy on the world."""
    server.play(family, seed, horizon)
    state, project = os.path.join(folder, "state"), os.path.join(folder, "project")
    run = Cli(environment(server, state, project))
    model = MODELS[provider]
    world = ["--family", family, "--seed", seed, "--horizon", horizon]
    claim, out = os.path.join(folder, "claim.json"), os.path.join(folder, "attempt")
    sampler = ["--sampler", provider, "--model", model]
    if provider in ("openai", "anthropic"):
        run(
            "freeze",
            "--out",
            os.path.join(project, "freeze.json"),
            *sampler,
            *world,
            *LIMITS,
            *CAPS,
            "--cap-sandbox-micro-usd",
            0,
            "--project-cap-micro-usd",
            500000000,
            "--project-cap-sandbox-micro-usd",
            0,
            "--intervention-policy",
            "no intervention after launch",
            "--sandbox",
            sandbox,
        )
        run(
            "deviate",
            "--field",
            "pilot.required",
            "--effective",
            "false",
            "--reason",
            "stand-in server: the path under test, not a study",
        )
        run(
            "authorise",
            "--family",
            family,
            "--model",
            model,
            *LIMITS,
            "--horizon",
            horizon,
            *CAPS,
            "--sandbox",
            sandbox,
            "--out",
            claim,
        )
    else:  # free: a server on this host (`--local`), or the mock
        run(
            "authorise",
            "--family",
            family,
            "--model",
            model,
            "--cap-micro-usd",
            0,
            "--cap-tokens",
            10**8,
            *(["--local"] if provider != "mock" else []),
            "--horizon",
            horizon,
            "--sandbox",
            sandbox,
            "--out",
            claim,
        )
        if provider == "openai-compatible":
            sampler += ["--local-server", "--base-url", server.base_url]
    started = time.perf_counter()
    result = run("execute", "--claim", claim, "--out", out, *sampler, *world, *LIMITS, "--sandbox", sandbox)
    seconds = time.perf_counter() - started
    with open(os.path.join(out, "record.json"), encoding="utf-8") as fh:
        record = json.load(fh)
    return {"out": out, "record": record, "seconds": seconds, "cli": run, "output": result.output}
