import datetime
import json
import os

import pytest
from click.testing import CliRunner

from launchers._claims import authorise, consume, read_claim
from launchers._errors import ClaimRefused, InputError
from fundbook.cli.launch import cli

NOW = datetime.datetime(2026, 11, 29, 9, 0, tzinfo=datetime.timezone.utc)
SCOPE = ("FUND_01", "public-practice", "test-model")


def _claim(tmp_path, state, **kw):
    path = str(tmp_path / "claim.json")
    args = dict(cap_micro_usd=5000, cap_tokens=10000, hours=2, state=state, now=NOW)
    args.update(kw)
    return path, authorise(path, *SCOPE, **args)


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


@pytest.mark.parametrize("scope, field", [(("FUND_02", "public-practice", "test-model"), "family"),
                                          (("FUND_01", "public-practice", "other"), "model")])
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
        authorise(path, *SCOPE, 1, 1, 1, state=state)
    with pytest.raises(InputError, match="--family"):
        authorise(str(tmp_path / "x.json"), "FUND_99", "public-practice", "m", 1, 1, 1, state=state)


def test_authorise_cli(tmp_path, state):
    out = str(tmp_path / "c.json")
    result = CliRunner().invoke(cli, ["authorise", "--family", "FUND_01", "--model", "mock", "--cap-micro-usd", "0",
                                      "--cap-tokens", "1000", "--out", out])
    assert result.exit_code == 0, result.output
    assert "can be consumed once" in result.output and read_claim(out)["claim"]["scope"]["model"] == "mock"
