"""The paid path end to end through the CLI, with only the network replaced: the real launcher code, tinker
and modal fakes checked against the real SDK signatures, the real worker in the (fake) Modal sandbox.

Isolation is enforced, the freeze and its deviations gate a paid attempt, the record is self-sufficient,
the Modal app and sandbox are accounted for, the hosted tinker service gets its headers and is closed."""

import json
import os
import shutil

import pytest
from click.testing import CliRunner

import engine
from launchers import _attempt, _freeze, _sampler_tinker, _sandbox_modal
from launchers._errors import InputError
from launchers._record import read_record
from launchers._verify import verify_attempt
from fundbook.cli.launch import cli
from launchers.worker.agent import SYSTEM
from tests.launchers.specs import execute_kw

from .conftest import CREDENTIALS, REPO, schema_valid
from .fakes import FakeModal, FakeRetryConfig, FakeTinker, mock_answer

CLEAN = {"commit": "c" * 40, "dirty": False, "trees": {"engine": "e" * 40, "launchers": "l" * 40}}
with open(os.path.join(REPO, "runs", "index.json")) as fh:
    PUBLISHED = dict(json.load(fh)["engine"], sources_match=True, mismatch=None)
CAPS = ["--cap-micro-usd", "5000000", "--cap-tokens", "20000000", "--cap-sandbox-micro-usd", "20000"]
FREEZE = [
    "--model",
    "test-model",
    "--family",
    "FUND_01",
    "--seed",
    "1",
    "--seed",
    "2",
    *CAPS,
    "--project-cap-micro-usd",
    "50000000",
    "--project-cap-sandbox-micro-usd",
    "200000",
    "--intervention-policy",
    "none after launch; one resume with a new claim",
    "--worker-seconds",
    "300",
    "--horizon",
    "6",
]


@pytest.fixture
def paid(monkeypatch, state, project, prices_file, tmp_path):
    """A clean committed tree, the published engine, fake tinker and modal SDKs; returns helpers."""
    for module in (_attempt, _freeze):
        monkeypatch.setattr(module, "code_revision", lambda: dict(CLEAN))
        monkeypatch.setattr(module, "engine_identity", lambda: dict(PUBLISHED))
    for name, value in CREDENTIALS.items():  # of the right shape: the fakes never read them
        monkeypatch.setenv(name, value)
    fakes = {"tinker": FakeTinker(answer=mock_answer), "modal": FakeModal()}
    monkeypatch.setattr(_sampler_tinker, "_default_sdk", lambda: (fakes["tinker"], FakeRetryConfig))
    monkeypatch.setattr(_sandbox_modal, "_default_modal", lambda: fakes["modal"])
    runner = CliRunner()
    counter = {"n": 0}

    def claim(model="test-model", caps=CAPS, family="FUND_01", prices=prices_file, *extra):
        counter["n"] += 1
        path = str(tmp_path / f"claim-{counter['n']}.json")
        result = runner.invoke(
            cli,
            [
                "authorise",
                "--family",
                family,
                "--model",
                model,
                *caps,
                "--out",
                path,
                "--prices",
                prices,
                "--worker-seconds",
                "300",
                "--horizon",
                "6",
                *extra,
            ],
        )
        assert result.exit_code == 0, result.output
        return path

    def freeze(*extra, pilot=False):
        """The freeze; unless `pilot`, with a dated deviation that drops the pilot requirement (tests/launchers/
        test_pilot.py runs real pilots)."""
        result = runner.invoke(
            cli, ["freeze", "--out", os.path.join(project, "freeze.json"), "--prices", prices_file, *FREEZE, *extra]
        )
        if result.exit_code == 0 and not pilot:
            dropped = runner.invoke(
                cli,
                [
                    "deviate",
                    "--field",
                    "pilot.required",
                    "--effective",
                    "false",
                    "--reason",
                    "machinery test: no pilot",
                ],
            )
            assert dropped.exit_code == 0, dropped.output
        return result

    def execute(claim_path, out, *extra):
        return runner.invoke(
            cli,
            [
                "execute",
                "--claim",
                claim_path,
                "--out",
                out,
                "--family",
                "FUND_01",
                "--seed",
                "1",
                "--sampler",
                "tinker",
                "--model",
                "test-model",
                "--prices",
                prices_file,
                "--worker-seconds",
                "300",
                "--horizon",
                "6",
                *extra,
            ],
        )

    return {
        "fakes": fakes,
        "claim": claim,
        "freeze": freeze,
        "execute": execute,
        "runner": runner,
        "consumed": lambda: (
            os.listdir(os.path.join(state, "consumed")) if os.path.isdir(os.path.join(state, "consumed")) else []
        ),
    }


def test_a_paid_sampler_refuses_the_local_sandbox(paid, tmp_path):
    claim = paid["claim"]()
    assert paid["freeze"]().exit_code == 0
    result = paid["execute"](claim, str(tmp_path / "a"), "--sandbox", "local")
    assert result.exit_code == 64 and result.output.count("\n") == 1, result.output
    assert "a paid sampler runs only in an isolated sandbox (modal, or local-isolated" in result.output
    assert paid["consumed"]() == [] and not os.path.exists(tmp_path / "a.partial")


BWRAP = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (.ci/run installs it)")


@BWRAP
def test_a_paid_sampler_runs_in_the_local_isolated_sandbox(paid, tmp_path, project):
    """`--sandbox local-isolated` is an isolation boundary (bubblewrap): accepted on the paid path, no Modal account
    needed (no MODAL_TOKEN_* set, no Modal SDK touched), and named as the sandbox used in the record."""
    for name in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"):
        os.environ.pop(name, None)
    assert paid["freeze"]("--sandbox", "local-isolated").exit_code == 0
    out = str(tmp_path / "attempt")
    result = paid["execute"](paid["claim"](), out, "--sandbox", "local-isolated")
    assert result.exit_code == 0, result.output
    c = read_record(os.path.join(out, "record.json"))["content"]
    assert c["termination"]["status"] == "completed" and c["result"]["score"]["points"] == 100
    boundary = c["information_boundary"]
    assert boundary["sandbox"] == "local-isolated" and "bubblewrap" in boundary["network"]
    assert c["config"]["sandbox"]["name"] == "local-isolated" and c["config"]["sandbox"]["isolation"] == "bubblewrap"
    assert c["prices"]["sandbox"] == {"name": "local-isolated", "micro_usd_per_second": 0} and c["sandbox"] == {}
    assert paid["fakes"]["modal"].sandboxes == [] and paid["fakes"]["modal"].apps == []
    verify_attempt(os.path.join(out, "record.json"), project=project)
    schema_valid(out)
    result = paid["runner"].invoke(cli, ["verify", os.path.join(out, "record.json")])
    assert result.exit_code == 0, result.output


def test_a_missing_bubblewrap_is_one_line_and_spends_nothing(paid, tmp_path, monkeypatch):
    """No `bwrap` on PATH: `--sandbox local-isolated` stops before the claim is consumed, in one line, exit 1."""
    assert paid["freeze"]("--sandbox", "local-isolated").exit_code == 0  # a freeze records the configuration only
    claim = paid["claim"]()
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = paid["execute"](claim, str(tmp_path / "a"), "--sandbox", "local-isolated")
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert result.output.startswith(
        "error: --sandbox local-isolated: bubblewrap (bwrap) is not installed: `apt-get install bubblewrap`"
    )
    assert (
        paid["consumed"]() == [] and not os.path.exists(tmp_path / "a") and not os.path.exists(tmp_path / "a.partial")
    )


def test_the_library_refuses_it_too(tmp_path):
    from launchers._errors import UsageRefused

    with pytest.raises(UsageRefused) as err:
        execute_kw(
            claim_path="c.json",
            out=str(tmp_path / "a"),
            family="FUND_01",
            seed=1,
            split="public-practice",
            model="m",
            sampler_name="tinker",
            sandbox_name="local",
            make_sampler=None,
            make_sandbox=None,
            prices=None,
            limits=None,
            paid=True,
        )
    assert err.value.exit_code == 64


def test_a_paid_attempt_end_to_end(paid, tmp_path, project):
    assert paid["freeze"]().exit_code == 0
    out = str(tmp_path / "attempt")
    result = paid["execute"](paid["claim"](), out)  # no --sandbox: a paid sampler defaults to modal
    assert result.exit_code == 0, result.output
    record = read_record(os.path.join(out, "record.json"))
    c = record["content"]
    assert c["termination"]["status"] == "completed" and c["result"]["score"]["points"] == 100
    assert c["model"] == {"id": "test-model", "provider": "tinker"} and c["label"] == "model"
    # self-sufficient: prices, config and its hash, prompt, command line, engine bundle, freeze
    assert c["prices"]["model"]["input_micro_usd_per_mtok"] == 130000
    assert c["prices"]["sandbox"] == {"name": "modal", "micro_usd_per_second": 40}
    assert c["config_hash"] == engine.content_sha256(c["config"]) and c["config"]["sandbox"]["name"] == "modal"
    assert c["config"]["sampling"] == {"temperature_milli": 700, "seed": 0}
    assert c["prompt"]["sha256"] == engine.sha256_hex(SYSTEM.encode("utf-8"))
    assert c["command_line"][1:3] == ["execute", "--claim"] and "--sampler" in c["command_line"]
    assert c["engine"]["bundle_sha256"] == PUBLISHED["bundle_sha256"] and c["engine"]["sources_match"] is True
    with open(os.path.join(project, "freeze.json")) as fh:
        assert c["freeze"] == {
            "sha256": json.load(fh)["content_sha256"],
            "frozen_at": c["freeze"]["frozen_at"],
            "deviations": c["freeze"]["deviations"],
            "pilot": {"required": False},
        }
    assert [d["field"] for d in c["freeze"]["deviations"]] == ["pilot.required"]
    # the Modal app and sandbox: recorded, network blocked, the app the launcher created stopped
    fake = paid["fakes"]["modal"]
    (sb,), (app,) = fake.sandboxes, fake.apps
    assert c["sandbox"]["sandbox_id"] == sb.object_id and c["sandbox"]["app_id"] == app.app_id
    assert c["sandbox"]["app_created"] is True and c["sandbox"]["app_stopped"] is True and app.stopped == 1
    assert sb.kwargs["block_network"] is True and "secrets" not in sb.kwargs and "env" not in sb.kwargs
    # sandbox compute: its own account, reserved at the limit plus grace, settled from the seconds it ran
    sandbox = [e for e in c["ledger"]["entries"] if e["account"] == "sandbox"]
    assert [e["kind"] for e in sandbox] == ["reserve", "charge", "release"] and sandbox[0]["micro_usd"] == 40 * 360
    assert c["cost"]["sandbox_micro_usd"] == sandbox[1]["micro_usd"] == 40 * record["volatile"]["sandbox_seconds"]
    # the provider session was closed with the attempt's outcome
    assert paid["fakes"]["tinker"].closed == [("success", "every checkpoint closed; the run is finalised")]
    assert c["service"] == {"base_url": None, "proxy_auth": False, "session_closed": True}
    bound = verify_attempt(os.path.join(out, "record.json"), project=project)["bound"]
    with open(os.path.join(project, "freeze.json")) as fh:
        assert bound["freeze"] == json.load(fh)["content_sha256"]  # prices as frozen, the table by its sha256
    assert c["prices"]["table_sha256"] == c["claim"]["plan"]["prices_table_sha256"]
    schema_valid(out)
    result = paid["runner"].invoke(cli, ["ledger", "--attempts", str(tmp_path)])
    assert result.exit_code == 0 and "1 claims (0 open)" in result.output, result.output
    assert "reconciled with 1 attempt records (0 pilot, 1 confirmatory or other): ok" in result.output


def test_the_worker_stderr_reaches_the_record(paid, tmp_path, monkeypatch):
    from launchers import _staging

    real = _staging.stage

    def noisy(packet):
        files = real(packet)
        files["worker.py"] = (
            b"import sys\nsys.stderr.write('worker: boom\\n'); sys.stderr.flush()\nraise SystemExit(3)\n"
        )
        return files

    monkeypatch.setattr("launchers._controller.stage", noisy)
    assert paid["freeze"]().exit_code == 0
    out = str(tmp_path / "a")
    assert paid["execute"](paid["claim"](), out).exit_code == 1
    record = read_record(os.path.join(out, "record.json"))
    assert record["content"]["termination"]["status"] == "worker_exit"
    assert record["content"]["termination"]["worker_exit_code"] == 3
    assert "worker: boom" in record["volatile"]["worker_stderr_tail"]


def test_a_paid_attempt_without_a_freeze_is_refused_before_consumption(paid, tmp_path):
    result = paid["execute"](paid["claim"](), str(tmp_path / "a"))
    assert result.exit_code == 1 and "no freeze" in result.output and paid["consumed"]() == []


def test_a_dirty_tree_is_refused_for_paid_runs_and_for_the_freeze(paid, tmp_path, monkeypatch):
    monkeypatch.setattr(_freeze, "code_revision", lambda: dict(CLEAN, dirty=True))
    result = paid["freeze"]()
    assert result.exit_code == 1 and "uncommitted changes" in result.output
    monkeypatch.setattr(_freeze, "code_revision", lambda: dict(CLEAN))
    assert paid["freeze"]().exit_code == 0
    monkeypatch.setattr(_attempt, "code_revision", lambda: dict(CLEAN, dirty=True))
    result = paid["execute"](paid["claim"](), str(tmp_path / "a"))
    assert result.exit_code == 1 and "committed code only" in result.output and paid["consumed"]() == []


def test_an_engine_unlike_the_published_bundle_is_refused(paid, tmp_path, monkeypatch):
    assert paid["freeze"]().exit_code == 0
    monkeypatch.setattr(
        _attempt, "engine_identity", lambda: dict(PUBLISHED, sources_match=False, mismatch="engine/_run.py differs")
    )
    result = paid["execute"](paid["claim"](), str(tmp_path / "a"))
    assert result.exit_code == 1 and "engine/_run.py differs" in result.output and paid["consumed"]() == []


def test_engine_identity_compares_every_source_with_the_manifest(tmp_path):
    import shutil
    from launchers._provenance import engine_identity

    runs = tmp_path / "runs"
    shutil.copytree(os.path.join(REPO, "runs", "engine"), runs / "engine")
    shutil.copy(os.path.join(REPO, "runs", "index.json"), runs / "index.json")
    assert engine_identity(str(runs))["sources_match"] is True
    manifest = json.loads((runs / "engine" / "manifest.json").read_text())
    entry = next(f for f in manifest["files"] if f["path"] == "engine/_run.py")
    entry["sha256"] = "0" * 64
    (runs / "engine" / "manifest.json").write_text(json.dumps(manifest))
    found = engine_identity(str(runs))
    assert (
        found["sources_match"] is False
        and found["mismatch"] == "engine/_run.py differs from the published bundle's manifest"
    )


@pytest.mark.parametrize(
    "extra, field",
    [
        (["--max-tokens", "4096"], "config.limits.max_tokens_per_call"),
        (["--temperature-milli", "0"], "config.sampling.temperature_milli"),
        (["--horizon", "8"], "config.horizon"),
    ],
)
def test_a_change_after_the_freeze_needs_a_dated_deviation(paid, tmp_path, project, extra, field):
    assert paid["freeze"]().exit_code == 0
    claim = paid["claim"]()
    result = paid["execute"](claim, str(tmp_path / "a"), *extra)
    assert result.exit_code == 1 and f"{field}: frozen" in result.output and paid["consumed"]() == []
    value = extra[1]
    result = paid["runner"].invoke(
        cli, ["deviate", "--field", field, "--effective", value, "--reason", "the pilot showed answers cut at 2048"]
    )
    assert result.exit_code == 0, result.output
    with open(os.path.join(project, "deviations.json")) as fh:
        (entry,) = [e for e in json.load(fh)["entries"] if e["field"] == field]
    assert entry["field"] == field and entry["effective"] == int(value) and entry["date"].endswith("Z")
    out = str(tmp_path / "b")
    result = paid["execute"](claim, out, *extra)
    assert os.path.exists(os.path.join(out, "record.json")), result.output
    deviations = read_record(os.path.join(out, "record.json"))["content"]["freeze"]["deviations"]
    assert [d["field"] for d in deviations] == [field, "pilot.required"] and deviations[0] == entry


def test_a_seed_outside_the_freeze_is_refused(paid, tmp_path, prices_file):
    assert paid["freeze"]().exit_code == 0
    claim = paid["claim"]()
    result = paid["runner"].invoke(
        cli,
        [
            "execute",
            "--claim",
            claim,
            "--out",
            str(tmp_path / "a"),
            "--family",
            "FUND_01",
            "--seed",
            "3",
            "--sampler",
            "tinker",
            "--model",
            "test-model",
            "--worker-seconds",
            "300",
            "--horizon",
            "6",
            "--prices",
            prices_file,
        ],
    )
    assert result.exit_code == 1 and "seeds: 3 is not among the frozen [1, 2]" in result.output
    assert paid["consumed"]() == []


def test_a_claim_above_the_frozen_caps_is_refused(paid, tmp_path):
    assert paid["freeze"]().exit_code == 0
    claim = paid["claim"](
        caps=["--cap-micro-usd", "9000000", "--cap-tokens", "20000000", "--cap-sandbox-micro-usd", "20000"]
    )
    result = paid["execute"](claim, str(tmp_path / "a"))
    assert result.exit_code == 1 and "caps.claim_micro_usd" in result.output and paid["consumed"]() == []


def test_a_freeze_is_never_overwritten_or_edited(paid, project, tmp_path):
    assert paid["freeze"]().exit_code == 0
    result = paid["freeze"]()
    assert result.exit_code == 1 and "never edited" in result.output
    path = os.path.join(project, "freeze.json")
    with open(path) as fh:
        doc = json.load(fh)
    doc["content"]["caps"]["project_micro_usd"] = 10**12
    with open(path, "w") as fh:
        json.dump(doc, fh)
    result = paid["execute"](paid["claim"](), str(tmp_path / "a"))
    assert result.exit_code == 1 and "the freeze was edited" in result.output and paid["consumed"]() == []


def test_the_claims_sandbox_cap_must_cover_the_worker_time(paid, tmp_path, prices_file):
    assert paid["freeze"]().exit_code == 0
    claim = paid["claim"](
        "test-model",
        ["--cap-micro-usd", "5000000", "--cap-tokens", "20000000", "--cap-sandbox-micro-usd", "1000"],
        "FUND_01",
        prices_file,
        "--accept-partial-budget",
    )
    result = paid["execute"](claim, str(tmp_path / "a"))
    assert result.exit_code == 1 and "sandbox cap" in result.output and paid["consumed"]() == []


def test_a_sandbox_created_after_the_setup_deadline_is_terminated(run_attempt):
    fake = FakeModal(create_delay_s=1.0)
    sandbox = _sandbox_modal.ModalSandbox(modal=fake, setup_seconds=0.3, late_wait_s=10)
    record, out = run_attempt(sandbox=sandbox, horizon=6)
    c = record["content"]
    assert (
        c["termination"]["status"] == "infrastructure_interruption"
        and "no sandbox within" in c["termination"]["reason"]
    )
    (sb,), (app,) = fake.sandboxes, fake.apps
    assert sb.terminated >= 1 and app.stopped == 1  # created late, terminated, and its app stopped
    assert c["sandbox"]["late_sandbox_terminated"] is True and c["sandbox"]["app_stopped"] is True


def test_the_hosted_service_gets_its_headers_never_recorded(paid, tmp_path, monkeypatch):
    monkeypatch.setenv("TINKER_BASE_URL", "https://user:pw@tinker--serve.modal.run/v1/?token=x")
    monkeypatch.setenv("TINKER_MODAL_KEY", "wk-secret-key-123")
    monkeypatch.setenv("TINKER_MODAL_SECRET", "ws-secret-456")
    assert paid["freeze"]().exit_code == 0
    out = str(tmp_path / "a")
    result = paid["execute"](paid["claim"](), out)
    assert result.exit_code == 0, result.output
    (kwargs,) = paid["fakes"]["tinker"].service_kwargs
    assert kwargs["default_headers_overrides"] == {"Modal-Key": "wk-secret-key-123", "Modal-Secret": "ws-secret-456"}
    assert kwargs["base_url"] == "https://user:pw@tinker--serve.modal.run/v1/?token=x"
    c = read_record(os.path.join(out, "record.json"))["content"]
    assert c["service"] == {
        "base_url": "https://tinker--serve.modal.run/v1",
        "proxy_auth": True,
        "session_closed": True,
    }
    for name in os.listdir(out):
        with open(os.path.join(out, name), encoding="utf-8") as fh:
            text = fh.read()
        for secret in ("wk-secret-key-123", "ws-secret-456", "user:pw", "token=x"):
            assert secret not in text, (name, secret)


def test_one_proxy_header_alone_is_refused_before_consumption(paid, tmp_path, monkeypatch):
    monkeypatch.setenv("TINKER_BASE_URL", "https://tinker--serve.modal.run")
    monkeypatch.setenv("TINKER_MODAL_KEY", "wk-1")
    assert paid["freeze"]().exit_code == 0
    result = paid["execute"](paid["claim"](), str(tmp_path / "a"))
    assert result.exit_code == 1 and "TINKER_MODAL_KEY: set both" in result.output and paid["consumed"]() == []


def test_recover_stops_the_app_a_dead_host_left_behind(run_attempt, monkeypatch, tmp_path):
    """The host died before its clean-up: `recover` terminates the recorded sandbox and stops the app it created."""
    from launchers._errors import LaunchError

    fake = FakeModal()
    monkeypatch.setattr(_sandbox_modal, "_default_modal", lambda: fake)
    monkeypatch.setattr(_sandbox_modal.ModalSandbox, "shutdown", lambda self, wait_for_late=True: None)
    monkeypatch.setattr(_sandbox_modal.ModalSandbox, "terminate", lambda self, sandbox: None)

    def died(tmp, out, recovered=False, lock=None, project=None):
        lock.release()
        raise LaunchError("the host died")

    monkeypatch.setattr(_attempt, "finish", died)
    with pytest.raises(LaunchError):
        run_attempt(sandbox=_sandbox_modal.ModalSandbox(modal=fake), horizon=6)
    monkeypatch.undo()
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(tmp_path / "project"))  # undo() took the fixtures' too
    monkeypatch.setattr(_sandbox_modal, "_default_modal", lambda: fake)
    (app,), (sb,) = fake.apps, fake.sandboxes
    assert app.stopped == 0
    partial = next(str(p) for p in tmp_path.iterdir() if p.name.endswith(".partial"))
    result = CliRunner().invoke(cli, ["recover", partial, "--out", str(tmp_path / "recovered")])
    assert result.exit_code == 1, result.output
    c = read_record(str(tmp_path / "recovered" / "record.json"))["content"]
    assert app.stopped == 1 and sb.terminated >= 1
    assert c["sandbox"]["app_stopped"] is True and c["sandbox"]["app_id"] == app.app_id


def test_a_price_change_is_a_deviation_too(paid, tmp_path, prices_file):
    from .conftest import TEST_PRICES

    assert paid["freeze"]().exit_code == 0
    dearer = dict(
        TEST_PRICES,
        models=dict(
            TEST_PRICES["models"],
            **{"test-model": {"input_micro_usd_per_mtok": 150000, "output_micro_usd_per_mtok": 400000}},
        ),
    )
    path = tmp_path / "dearer.json"
    path.write_text(json.dumps(dearer))
    claim = paid["claim"]()
    from launchers._prices import load_prices, table_sha256

    result = paid["execute"](claim, str(tmp_path / "a"), "--prices", str(path))  # the table is frozen by its sha256
    assert result.exit_code == 1 and "prices.table_sha256: frozen" in result.output and paid["consumed"]() == []
    result = paid["runner"].invoke(
        cli,
        [
            "deviate",
            "--field",
            "prices.table_sha256",
            "--effective",
            json.dumps(table_sha256(load_prices(str(path)))),
            "--reason",
            "the new table",
        ],
    )
    assert result.exit_code == 0, result.output
    result = paid["execute"](claim, str(tmp_path / "a"), "--prices", str(path))
    assert result.exit_code == 1 and "prices.models.test-model: frozen" in result.output and paid["consumed"]() == []
    row = {
        "input_micro_usd_per_mtok": 150000,
        "output_micro_usd_per_mtok": 400000,
        "cached_input_micro_usd_per_mtok": 150000,
    }
    result = paid["runner"].invoke(
        cli,
        [
            "deviate",
            "--field",
            "prices.models.test-model",
            "--effective",
            json.dumps(row),
            "--reason",
            "tinker raised its prefill price",
        ],
    )
    assert result.exit_code == 0, result.output
    result = paid["execute"](claim, str(tmp_path / "a"), "--prices", str(path))  # the claim was priced at the old row
    assert result.exit_code == 1 and "claim.plan.price: the claim was authorised at" in result.output
    assert paid["consumed"]() == []
    dearer_claim = paid["claim"]("test-model", CAPS, "FUND_01", str(path))
    assert paid["execute"](dearer_claim, str(tmp_path / "b"), "--prices", str(path)).exit_code == 0


def test_a_session_opened_for_an_attempt_that_never_starts_is_closed(paid, tmp_path, monkeypatch):
    def no_sandbox():
        raise RuntimeError("modal is down")

    monkeypatch.setattr(_sandbox_modal.Modal, "build", lambda self: no_sandbox())
    assert paid["freeze"]().exit_code == 0
    out = str(tmp_path / "a")
    assert paid["execute"](paid["claim"](), out).exit_code == 1
    c = read_record(os.path.join(out, "record.json"))["content"]
    assert "modal is down" in c["termination"]["reason"] and c["service"]["session_closed"] is True
    assert [status for status, _ in paid["fakes"]["tinker"].closed] == ["errored"]


def _with_config(build):
    build.config = _sandbox_modal.modal_config()
    return build


def test_the_freeze_covers_every_module_an_attempt_depends_on_and_says_which():
    """Held back: the freeze fingerprinted engine/ and launchers/ only; the launch CLI (fundbook/cli/launch.py) and
    experiments/ could change under a frozen study unseen."""
    from launchers import _provenance

    code = _provenance.code_revision()
    assert list(code["trees"]) == ["engine", "builders", "launchers", "experiments", "fundbook/cli"]
    if code["commit"] is not None:  # a git checkout: each is the object git holds for that path
        assert all(isinstance(v, str) and len(v) == 40 for v in code["trees"].values()), code["trees"]
    assert all("." not in key for key in code["trees"])  # a deviation names a field by dotted path


@pytest.mark.parametrize("changed", ["experiments", "fundbook/cli", "builders"])
def test_a_change_to_any_covered_module_after_the_freeze_is_refused(paid, tmp_path, monkeypatch, changed):
    """The launch CLI and the experiment layer are inside the freeze now: one changed after it is a deviation."""
    trees = {name: "0" * 40 for name in ("engine", "builders", "launchers", "experiments", "fundbook/cli")}
    monkeypatch.setattr(_freeze, "code_revision", lambda: dict(CLEAN, trees=dict(trees)))
    assert paid["freeze"]().exit_code == 0
    monkeypatch.setattr(_freeze, "code_revision", lambda: dict(CLEAN, trees=dict(trees, **{changed: "1" * 40})))
    result = paid["execute"](paid["claim"](), str(tmp_path / "a"))
    assert result.exit_code == 1 and f"code.trees.{changed}: frozen" in result.output, result.output
    assert paid["consumed"]() == []


def test_a_frozen_tier_plan_runs_tiers_in_order_and_cuts_in_the_order_of_sacrifice(
    paid, tmp_path, project, prices_file
):
    """Seed 002's tiers on the paid path (launchers/_tiers.py): the freeze records the plan (budget per tier, the
    pilot's sd table); a T2 seed waits for T1's reconciliation; T1's spend far over its 1 micro-USD plan cuts
    T2's seed, refused before any claim is consumed."""
    plan = {
        "schema": "fundbook.tier-plan/1",
        "overrun_bps": 1000,
        "sd_table": {"score": "12.0"},
        "tiers": [
            {
                "name": "T1",
                "cells": [
                    {
                        "name": "a",
                        "model": "test-model",
                        "family": "FUND_01",
                        "seeds": [1],
                        "micro_usd_per_seed": 1,
                        "keep_at_least": 0,
                    }
                ],
            },
            {
                "name": "T2",
                "cells": [
                    {
                        "name": "b",
                        "model": "test-model",
                        "family": "FUND_01",
                        "seeds": [2],
                        "micro_usd_per_seed": 1,
                        "keep_at_least": 0,
                    }
                ],
            },
        ],
        "sacrifice": [{"tier": "T2", "cell": "b"}],
    }
    path = tmp_path / "tiers.json"
    path.write_text(json.dumps(plan))
    assert paid["freeze"]("--tiers", str(path)).exit_code == 0
    with open(os.path.join(project, "freeze.json")) as fh:
        assert json.load(fh)["content"]["tiers"] == dict(plan, budgets={"T1": 1, "T2": 1})  # the tier budget

    def run(seed, out):
        return paid["runner"].invoke(
            cli,
            [
                "execute",
                "--claim",
                paid["claim"](),
                "--out",
                out,
                "--family",
                "FUND_01",
                "--seed",
                str(seed),
                "--sampler",
                "tinker",
                "--model",
                "test-model",
                "--worker-seconds",
                "300",
                "--horizon",
                "6",
                "--prices",
                prices_file,
            ],
        )

    early = run(2, os.path.join(project, "t2-early"))
    assert early.exit_code == 1 and "T2/b seed 2 waits for tier T1" in early.output and paid["consumed"]() == []
    first = run(1, os.path.join(project, "t1"))
    assert first.exit_code == 0, first.output
    assert read_record(os.path.join(project, "t1", "record.json"))["content"]["cost"]["micro_usd"] > 1
    cut = run(2, os.path.join(project, "t2"))
    assert (
        cut.exit_code == 1
        and (
            "T2/b seed 2 was cut in the order of sacrifice after tier T1 (cumulative spend "
            "over plan by more than 1000 bps)"
        )
        in cut.output
    )
    assert len(paid["consumed"]()) == 1 and not os.path.exists(os.path.join(project, "t2"))


def test_a_frozen_field_under_a_model_id_with_dots_is_found():
    """Every shipped OpenAI model id holds a dot (gpt-5.4-mini): `verify` looks its frozen price row up as
    prices.models.<id>, so a key with dots is one key (it once answered "the freeze has no such field")."""
    body = {"prices": {"models": {"gpt-5.4-mini": {"input_micro_usd_per_mtok": 750000}, "gpt-5": {"x": 1}}}}
    assert _freeze.lookup(body, "prices.models.gpt-5.4-mini") == {"input_micro_usd_per_mtok": 750000}
    assert _freeze.lookup(body, "prices.models.gpt-5.4-mini.input_micro_usd_per_mtok") == 750000
    assert _freeze.lookup(body, "prices.models.gpt-5.x") == 1
    with pytest.raises(InputError, match="the freeze has no such field"):
        _freeze.lookup(body, "prices.models.gpt-5.5")
