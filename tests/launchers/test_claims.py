import datetime
import json
import os

import pytest
from click.testing import CliRunner

from launchers._claims import Grant, authorise, consume, read_claim
from launchers._errors import ClaimRefused, InputError
from fundbook.cli.launch import cli

from .conftest import plan_for

NOW = datetime.datetime(2026, 11, 29, 9, 0, tzinfo=datetime.timezone.utc)
SCOPE = ("FUND_01", "public-practice", "test-model")


def _claim(tmp_path, state, **kw):
    path = str(tmp_path / "claim.json")
    args = dict(
        cap_micro_usd=5000, cap_tokens=10000, hours=2, state=state, now=NOW, plan=plan_for(), accept_partial_budget=True
    )
    args.update(kw)
    caps = [args.pop(k) for k in ("cap_micro_usd", "cap_tokens", "hours")]
    return path, authorise(path, *SCOPE, *caps, grant=Grant(**args))


def test_a_claim_is_consumed_once(tmp_path, state):
    path, doc = _claim(tmp_path, state)
    assert consume(path, *SCOPE, state=state, now=NOW)["sha256"] == doc["sha256"]
    with pytest.raises(ClaimRefused, match="already consumed"):
        consume(path, *SCOPE, state=state, now=NOW)
    assert os.path.exists(os.path.join(state, "consumed", doc["claim"]["id"] + ".json"))


def test_claim_fields(tmp_path, state):
    path, doc = _claim(tmp_path, state)
    claim = read_claim(path)["claim"]
    assert claim["scope"] == {"family": "FUND_01", "split": "public-practice", "model": "test-model"}
    assert claim["cap_micro_usd"] == 5000 and claim["expires"] == "2026-11-29T11:00:00Z"


def test_an_edited_cap_is_refused(tmp_path, state):
    path, doc = _claim(tmp_path, state)
    with open(path) as fh:
        edited = json.load(fh)
    edited["claim"]["cap_micro_usd"] = 10**9
    with open(path, "w") as fh:
        json.dump(edited, fh)
    with pytest.raises(ClaimRefused, match="does not hash"):
        consume(path, *SCOPE, state=state, now=NOW)
    from engine import content_sha256

    edited["sha256"] = content_sha256(edited["claim"])  # re-hashed by the editor: the registry still says no
    with open(path, "w") as fh:
        json.dump(edited, fh)
    with pytest.raises(ClaimRefused, match="differs from the one issued"):
        consume(path, *SCOPE, state=state, now=NOW)


@pytest.mark.parametrize(
    "scope, field",
    [(("FUND_02", "public-practice", "test-model"), "family"), (("FUND_01", "public-practice", "other"), "model")],
)
def test_out_of_scope_is_refused_and_not_consumed(tmp_path, state, scope, field):
    path, _ = _claim(tmp_path, state)
    with pytest.raises(ClaimRefused, match=f"scope.{field}"):
        consume(path, *scope, state=state, now=NOW)
    consume(path, *SCOPE, state=state, now=NOW)  # still usable for its own scope


def test_an_expired_claim_is_refused(tmp_path, state):
    path, _ = _claim(tmp_path, state)
    with pytest.raises(ClaimRefused, match="expired"):
        consume(path, *SCOPE, state=state, now=NOW + datetime.timedelta(hours=2))


def test_a_claim_from_another_registry_is_refused(tmp_path, state):
    path, _ = _claim(tmp_path, state)
    with pytest.raises(ClaimRefused, match="was not issued"):
        consume(path, *SCOPE, state=str(tmp_path / "elsewhere"), now=NOW)


def test_authorise_never_overwrites_and_checks_inputs(tmp_path, state):
    path, _ = _claim(tmp_path, state)
    with pytest.raises(InputError, match="already exists"):
        authorise(path, *SCOPE, 1, 1, 1, grant=Grant(state=state, plan=plan_for(), accept_partial_budget=True))
    with pytest.raises(InputError, match="--family"):
        authorise(str(tmp_path / "x.json"), "FUND_99", "public-practice", "m", 1, 1, 1, grant=Grant(state=state))


def test_authorise_cli(tmp_path, state):
    out = str(tmp_path / "c.json")
    result = CliRunner().invoke(
        cli,
        [
            "authorise",
            "--family",
            "FUND_01",
            "--model",
            "mock",
            "--cap-micro-usd",
            "0",
            "--cap-tokens",
            "20000000",
            "--out",
            out,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "can be consumed once" in result.output and read_claim(out)["claim"]["scope"]["model"] == "mock"
    assert "covers the worker's worst case for 20 checkpoints" in result.output


def test_a_claim_below_the_workers_worst_case_is_refused_unless_accepted(tmp_path, state, project):
    """Held back: a claim whose caps were below `budget`'s worst case was issued, so an attempt could be planned to
    halt. Now it is refused at authorise, or issued with --accept-partial-budget and says so."""
    from launchers._budget import attempt_plan
    from launchers._prices import load_prices
    from launchers._project import ProjectLedger

    plan = attempt_plan(load_prices(), "Qwen/Qwen3-8B")  # the shipped table, the worker's defaults
    assert (plan["worst_case_micro_usd"], plan["worst_case_tokens"], plan["sandbox_micro_usd"]) == (
        1_331_920,
        9_564_160,
        47 * (1200 + 60),
    )
    args = [
        "authorise",
        "--family",
        "FUND_01",
        "--model",
        "Qwen/Qwen3-8B",
        "--cap-micro-usd",
        "1331919",
        "--cap-tokens",
        "9564160",
        "--cap-sandbox-micro-usd",
        "59220",
        "--out",
        str(tmp_path / "c.json"),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert (
        "error: --cap-micro-usd 1331919 is below the worker's worst case of 1331920 micro-USD (budget's figure for "
        "20 checkpoints, --tokens-in 8000"
    ) in result.output
    assert not (tmp_path / "c.json").exists() and not os.path.exists(os.path.join(state, "issued"))
    result = CliRunner().invoke(cli, args + ["--accept-partial-budget"])
    assert result.exit_code == 0 and "PARTIAL BUDGET (accepted, recorded in the claim)" in result.output, result.output
    claim = read_claim(str(tmp_path / "c.json"))["claim"]
    assert claim["partial_budget"] == {
        "accepted": True,
        "shortfalls": ["--cap-micro-usd 1331919 is below the worker's worst case of 1331920 micro-USD"],
    }
    assert claim["plan"] == plan
    (entry,) = ProjectLedger(project).entries  # registered where it will run: the project ledger
    assert entry["kind"] == "authorise" and entry["claim"] == claim
    args[6] = "1331920"
    args[-1] = str(tmp_path / "d.json")
    assert CliRunner().invoke(cli, args).exit_code == 0  # at the worst case exactly: covered
