"""Launcher test fixtures: a private claim registry, fake adapters at the SDK seams.

The paid opt-in (--run-paid, marker `paid`) is declared in tests/conftest.py.
"""

import json
import os

import pytest

from tests.launchers.specs import execute_kw as execute
from launchers._claims import Grant, authorise
from launchers._controller import Limits
from launchers._prices import load_prices
from launchers._sampler_mock import MockSampler
from launchers._sandbox_local import LocalSandbox

TEST_PRICES = {
    "schema": "fundbook.prices/1",
    "models": {
        "mock": {"input_micro_usd_per_mtok": 0, "output_micro_usd_per_mtok": 0},
        "test-model": {"input_micro_usd_per_mtok": 130000, "output_micro_usd_per_mtok": 400000},
    },
    "sandboxes": {
        "local": {"micro_usd_per_second": 0},
        "local-isolated": {"micro_usd_per_second": 0},
        "modal": {"micro_usd_per_second": 40},
    },
}


@pytest.fixture(autouse=True)
def _private_project(tmp_path, monkeypatch):
    """No test writes to the checkout's project ledger (runs/attempts/), reads this machine's credentials or
    depends on its power supply: the host probes answer "healthy" unless a test says otherwise (tests/launchers/
    test_preflight.py drives every branch of the real probes)."""
    from launchers import _host

    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(tmp_path / "project"))
    for name in (
        "TINKER_API_KEY",
        "TINKER_CREDENTIAL_CMD",
        "MODAL_TOKEN_ID",
        "MODAL_TOKEN_SECRET",
        "MODAL_PROFILE",
        "MODAL_OAUTH_REFRESH_TOKEN",
        "MODAL_OAUTH_CLIENT_ID",
        "MODAL_OAUTH_CLIENT_SECRET",
        "MODAL_OAUTH_JWT_KEY",
        "FUNDBOOK_LAUNCH_DIE_AT",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MODAL_CONFIG_PATH", str(tmp_path / "no-modal.toml"))
    monkeypatch.setattr(_host, "DEFAULT", HealthyHost())


class HealthyHost:
    """Mains power, a host that cannot suspend, room on disk (the probes a test does not look at)."""

    def power(self):
        return {"on_battery": False, "percent": None, "source": "test"}

    def can_sleep(self):
        return {"can_sleep": False, "source": "test"}

    def inhibit(self, why):
        return None

    def free_bytes(self, folder):
        return 10**13


CREDENTIALS = {
    "TINKER_API_KEY": "tml-" + "t" * 40,
    "MODAL_TOKEN_ID": "ak-" + "i" * 22,
    "MODAL_TOKEN_SECRET": "as-" + "s" * 22,
}  # the right shapes; the fakes never read them


def plan_for(model="test-model", sandbox="local", prices=None, **kw):
    """A claim plan (`authorise`'s check) priced from the test table."""
    from launchers._budget import Planned, attempt_plan

    table = dict(TEST_PRICES, _path="test") if prices is None else prices
    return attempt_plan(table, model, Planned(sandbox=sandbox, **kw))


@pytest.fixture
def state(tmp_path, monkeypatch):
    """A private claim registry, and a private project (project ledger, freeze) beside it."""
    path = tmp_path / "state"
    monkeypatch.setenv("FUNDBOOK_LAUNCH_STATE", str(path))
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(tmp_path / "project"))
    return str(path)


@pytest.fixture
def project(state, tmp_path):
    return str(tmp_path / "project")


@pytest.fixture
def prices_file(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(TEST_PRICES))
    return str(path)


class PricedMock(MockSampler):
    """The scripted mock, billed like a paid model (to exercise the ledger)."""

    provider = "fake"

    def __init__(self, model_id="test-model", invalid_per_mille=0, delay_s=0.0, fail=None):
        super().__init__(model_id, invalid_per_mille)
        self.delay_s = delay_s
        self.fail = fail

    def sample(self, prepared, deadline_s):
        if self.fail is not None:
            raise self.fail
        if self.delay_s:
            import time

            time.sleep(self.delay_s)
        return super().sample(prepared, deadline_s)


@pytest.fixture
def run_attempt(tmp_path, state, prices_file):
    """Authorise and execute one attempt; returns (record, out_dir)."""
    counter = {"n": 0}

    def go(
        sampler=None,
        sandbox=None,
        model="test-model",
        cap_micro_usd=10_000_000,
        cap_tokens=20_000_000,
        limits=None,
        horizon=20,
        sampler_name="fake",
        family="FUND_01",
        seed=1,
        cap_sandbox_micro_usd=10**9,
        partial=False,
        local=False,
        **kw,
    ):
        """A priced fake sampler (sampler_name "fake": billed, but not a paid provider) in the local sandbox.
        `partial`: the claim's caps may be below the worst case (a test of a budget halt); `local`: a claim for a
        model run on this host (planned at zero cost, as `authorise --local`)."""
        counter["n"] += 1
        claim = str(tmp_path / f"claim-{counter['n']}.json")
        the_sandbox = sandbox if sandbox is not None else LocalSandbox()
        authorise(
            claim,
            family,
            "public-practice",
            model,
            cap_micro_usd,
            cap_tokens,
            1,
            grant=Grant(
                state=state,
                cap_sandbox_micro_usd=cap_sandbox_micro_usd,
                accept_partial_budget=partial,
                plan=None
                if local
                else plan_for(model, getattr(the_sandbox, "name", "local"), load_prices(prices_file)),
                local=local,
            ),
        )
        out = str(tmp_path / f"attempt-{counter['n']}")
        record = execute(
            claim_path=claim,
            out=out,
            family=family,
            seed=seed,
            split="public-practice",
            model=model,
            sampler_name=sampler_name,
            sandbox_name=getattr(the_sandbox, "name", "local"),
            make_sampler=lambda m: sampler if sampler is not None else PricedMock(m),
            make_sandbox=lambda: the_sandbox,
            prices=load_prices(prices_file),
            limits=limits or Limits(),
            horizon=horizon,
            state=state,
            **dict({"environ": dict(CREDENTIALS)}, **kw),
        )
        return record, out

    return go


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def schema_valid(out):
    """Validate an attempt folder's record and transcript against the published schemas."""
    import jsonschema

    for name, schema in (("record.json", "attempt.schema.json"), ("transcript.json", "transcript.schema.json")):
        with open(os.path.join(REPO, "launchers", "schemas", schema)) as fh:
            spec = json.load(fh)
        with open(os.path.join(out, name)) as fh:
            jsonschema.validate(json.load(fh), spec, cls=jsonschema.Draft202012Validator)
