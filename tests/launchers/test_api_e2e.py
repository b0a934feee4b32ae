"""Every HTTP provider end to end from the command line (issue 40, item 5): `fundbook-launch execute --sampler
openai` (Responses API) and `--sampler anthropic` (Messages API) through the real SDKs against a local stand-in
server speaking each provider's wire format (tests/launchers/api_standin.py, reached by OPENAI_BASE_URL and
ANTHROPIC_BASE_URL with fake keys), in the local isolated sandbox (bubblewrap), on the paid path (freeze,
claim, the shipped prices); then `fundbook-launch verify` against the project ledger, and, with the server
stopped, the attempt re-derived from its own cache.jsonl and replayed by `execute --sampler cache --replay-of`.
The stand-in plays the reference policy, so each attempt is a full 20-checkpoint QUALIFIED 100/100. The
OpenAI-compatible path's sibling against a real server is test_openai_compatible_real.py (`long`)."""

import json
import os
import shutil
import socket

import pytest

from launchers._rederive import rederive

from .api_standin import StandIn
from .conftest import schema_valid
from .provider_runs import KEYS, MODELS, attempt, clean_checkout

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (.ci/run installs it)"
)

ROUTES = {
    "openai": ("/v1/models/gpt-5.4-mini", "/v1/responses"),
    "anthropic": ("/v1/models/claude-sonnet-4-5", "/v1/messages"),
}
OFFICIAL = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}


def _listening(port) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _files_text(folder) -> str:
    out = []
    for base, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(base, name), "rb") as fh:
                out.append(fh.read().decode("utf-8", "replace"))
    return "\n".join(out)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_provider_end_to_end_in_the_isolated_sandbox_verified_and_replayed_with_the_server_stopped(
    provider, tmp_path
):
    with StandIn() as server, clean_checkout():
        done = attempt(server, str(tmp_path), provider)
        verified = done["cli"]("verify", os.path.join(done["out"], "record.json"))
        port, base = server.port, server.base_url if provider == "openai" else server.root
        seen = list(server.requests)
    assert not _listening(port)  # stopped: nothing answers on its port any more

    c = done["record"]["content"]
    assert c["termination"]["status"] == "completed", c["termination"]
    result = c["result"]
    assert (result["status"], result["verdict"], result["score"]["points"]) == ("SCORED", "QUALIFIED", 100)
    assert c["settled_days"] == 20 and c["model"] == {"id": MODELS[provider], "provider": provider}
    assert c["information_boundary"]["sandbox"] == c["config"]["sandbox"]["name"] == "local-isolated"
    # the service named is the one reached: the stand-in's URL, never the official API's
    assert c["service"]["base_url"] == base and c["service"]["model_reported"] == [MODELS[provider]]
    assert OFFICIAL[provider] not in json.dumps(done["record"]) and OFFICIAL[provider] not in done["output"]
    # the SDK's own routes, the key sent to the stand-in only, and never written anywhere
    preflight, generate = ROUTES[provider]
    assert [r["path"] for r in seen] == [preflight] + [generate] * c["cost"]["calls"]
    key = KEYS["OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"]
    sent = {r["authorization"] if provider == "openai" else r["x-api-key"] for r in seen}
    assert sent == ({f"Bearer {key}"} if provider == "openai" else {key})
    assert key not in _files_text(str(tmp_path))
    # billed at the shipped price from the provider's usage, within the claim
    assert c["cost"]["calls"] == 20 and c["cost"]["micro_usd"] > 0 and c["cost"]["unresolved_micro_usd"] == 0
    assert "bound to" in verified.output and "content verified" in verified.output
    schema_valid(done["out"])

    # the server is gone: every answer from the attempt's own cache, the same receipts head
    again = rederive(os.path.join(done["out"], "record.json"))
    assert again["answers"] == 20 and again["receipts_head"] == c["receipts_head"]
    run, replay_claim = done["cli"], str(tmp_path / "replay-claim.json")
    run(
        "authorise",
        "--family",
        "FUND_01",
        "--model",
        MODELS[provider],
        "--cap-micro-usd",
        0,
        "--cap-tokens",
        10**9,
        "--local",
        "--out",
        replay_claim,
    )
    replayed = run(
        "execute",
        "--claim",
        replay_claim,
        "--out",
        tmp_path / "replay",
        "--sampler",
        "cache",
        "--replay-of",
        done["out"],
        "--sandbox",
        "local-isolated",
    )
    assert "20/20 calls from the cache, 0 micro-USD; receipts head matches the recorded one" in replayed.output
