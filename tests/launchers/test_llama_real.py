"""The local sampler's contracts, each run twice: with the real llama-cpp-python and the packaged
SmolLM2-135M-Instruct model (requirements-local.lock, `make local`), marked `long` (`make test-long`, which CI
runs), and with the pure-Python fake of the library's surface (tests/launchers/fake_llama.py) under `make test`,
which needs no compile: a short attempt, its replay from its own cache with no model, the refusal path, what is
refused before a claim is spent, a frozen configuration piloted and run, a stopped attempt's abandoned call.
No test bounds the model's wall time: every deadline is the longest the launcher accepts, so a loaded machine
only makes the real tests slower. Outside `make test-long` (FUNDBOOK_LOCAL_TESTS=required there) the real ones
are skipped when the library is not installed; under it, a missing library fails."""

import json
import os

import pytest

from launchers import _grammar
from tests.launchers.specs import execute_kw as execute
from launchers._claims import Grant, authorise
from launchers._controller import Limits
from launchers._errors import InputError, SamplerError
from launchers._prices import load_prices
from launchers._sandbox_local import LocalSandbox
from launchers._verify import verify_attempt
from launchers.worker import prompt

from . import fake_llama
from .conftest import schema_valid

pytestmark = pytest.mark.xdist_group("llama")  # one worker loads the model once
WORLD = {"family": "FUND_03", "seed": 1, "horizon": 2}  # two checkpoints, one position and two quotes on day 1
# No wall-time bound a loaded machine can reach (a call took 92 s on a loaded CI host, past the default 120 s
# deadline): the longest call deadline and worker time the launcher accepts.
CALL_S, WORKER_S = 3600, 86_400


def _model_file():
    from launchers._sampler_llama import library, packaged_model

    try:
        library()  # never a bare `import llama_cpp`: the sampler sets the OpenMP wait policy before it loads
        path = packaged_model()
    except InputError as exc:
        if os.environ.get("FUNDBOOK_LOCAL_TESTS") == "required":
            pytest.fail(f"the local sampler's library or model is missing under make test-long ({exc}): `make local`")
        pytest.skip(f"llama-cpp-python or the packaged model is not installed ({exc}): `make local`")
    return path


@pytest.fixture(scope="module", params=["fake", pytest.param("real", marks=pytest.mark.long)])
def model_file(request, tmp_path_factory):
    """The packaged model's path (real), or a fake GGUF of the same name with the fake library installed."""
    if request.param == "real":
        yield _model_file()
        return
    with pytest.MonkeyPatch.context() as mp:
        fake_llama.install(mp)
        from launchers._packaged import DEFAULT, MODELS

        yield fake_llama.write_model(tmp_path_factory.mktemp("fake-model") / MODELS[DEFAULT]["file"])


def _run(root, model_file, name, limits=None, max_tokens=1024, **world):
    from tests.launchers.specs import sampler_factory as make_sampler_factory

    build = make_sampler_factory("llama-cpp", None, CALL_S, 0, 0, local={"model_file": model_file})
    w = dict(WORLD, **world)
    state = os.path.join(root, "state")
    claim = os.path.join(root, f"{name}-claim.json")
    authorise(
        claim,
        w["family"],
        "public-practice",
        build.model_id,
        0,
        10**7,
        1,
        grant=Grant(state=state, local=True, project=os.path.join(root, "project")),
    )
    limits = limits or Limits(WORKER_S, CALL_S, max_tokens, 60)
    record = execute(
        claim_path=claim,
        out=os.path.join(root, name),
        family=w["family"],
        seed=w["seed"],
        split="public-practice",
        model=build.model_id,
        sampler_name="llama-cpp",
        sandbox_name="local",
        make_sampler=build,
        make_sandbox=LocalSandbox,
        prices=load_prices(),
        limits=limits,
        horizon=w["horizon"],
        state=state,
        project=os.path.join(root, "project"),
        sampling=build.sampling,
        sandbox_config={"name": "local"},
    )
    return record, os.path.join(root, name), build


@pytest.fixture(scope="module")
def real(tmp_path_factory, model_file):
    return _run(str(tmp_path_factory.mktemp("llama")), model_file, "attempt")


def _read(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _steps(out):
    with open(os.path.join(out, "transcript.json"), encoding="utf-8") as fh:
        return json.load(fh)["steps"]


def test_a_real_attempt_is_decoded_under_the_days_grammar_and_recorded_whole(real, model_file):
    from launchers._sampler_llama import file_sha256

    record, out, build = real
    c = record["content"]
    assert c["termination"]["status"] == "completed" and c["result"] is not None
    assert c["model"] == {"id": "SmolLM2-135M-Instruct.Q4_1", "provider": "llama-cpp"} and c["label"] == "model"
    models = [s for s in _steps(out) if s["role"] == "model"]
    assert len(models) == c["cost"]["calls"] >= 2
    for step in models:  # the grammar: one JSON object, today's day, action ids by position, only shown ids
        batch = prompt.read_answer(step["text"])
        assert batch["day"] == step["day"] and list(batch) == ["day", "actions", "report"]
        assert [a["id"] for a in batch["actions"]] == [f"a{i + 1}" for i in range(len(batch["actions"]))]
        assert {a.get("asset") for a in batch["actions"]} <= {None, "A1"}
    # reproducible: every parameter, the model file and its template pinned; greedy; fixed threads
    s = c["sampling"]
    assert s["temperature_milli"] == 0 and s["n_threads"] == 1 and s["n_threads_batch"] == 2
    assert s["model_sha256"] == file_sha256(model_file) == c["service"]["model_file"]["sha256"]
    assert (
        s["prompt"] == prompt.PROMPT_VERSION and s["grammar"] == _grammar.GRAMMAR_VERSION == "fundbook.desk-grammar/2"
    )
    assert c["service"]["llama_cpp_python"] == "0.3.36" and c["service"]["omp_wait_policy"] == "PASSIVE"
    # honest cost: nothing paid, the CPU time and tokens of each call in the ledger
    charges = [e for e in c["ledger"]["entries"] if e["kind"] == "charge" and e["account"] == "inference"]
    assert c["cost"]["micro_usd"] == 0 and all(e["cpu_ms"] > 0 for e in charges)
    assert c["cost"]["cpu_ms"] == sum(e["cpu_ms"] for e in charges)
    assert c["cost"]["tokens_in"] == sum(e["tokens_in"] for e in charges) > 500
    # the worker ran in the local sandbox with the compact prompt, and held no model
    staged = {f["path"] for f in c["information_boundary"]["staged"]}
    assert c["information_boundary"]["sandbox"] == "local" and {"prompt.py", "worker.json"} <= staged
    assert not any(p.endswith(".gguf") for p in staged)
    assert c["outputs"]["cache"]["path"] == "cache.jsonl"
    verify_attempt(os.path.join(out, "record.json"))
    schema_valid(out)


def test_the_attempt_replays_from_its_own_cache_with_no_model(real, monkeypatch):
    from launchers import _sampler_llama
    from launchers._rederive import rederive

    def no_model(*args, **kwargs):
        raise AssertionError("a replay loaded the model")

    monkeypatch.setattr(_sampler_llama, "library", no_model)
    monkeypatch.setattr(_sampler_llama, "LlamaSampler", no_model)
    record, out, _ = real
    done = rederive(os.path.join(out, "record.json"))
    assert done["answers"] == record["content"]["cost"]["calls"]
    assert done["receipts_head"] == record["content"]["receipts_head"]


def test_a_truncated_answer_is_refused_recorded_and_retried_with_a_new_seed(tmp_path, model_file):
    from launchers._sampler_llama import call_seed

    # a quiet first day (no position yet: the shortest prompt), answers cut at 16 tokens: never a whole batch
    record, out, build = _run(
        str(tmp_path), model_file, "short", limits=Limits(WORKER_S, CALL_S, 16, 3), family="FUND_01", seed=29, horizon=3
    )
    c = record["content"]
    assert c["termination"]["status"] == "budget_halt" and c["termination"]["limit"] == "calls"
    assert c["invalid_artefacts"] == 3 and c["settled_days"] == 0
    steps = _steps(out)
    models = [s for s in steps if s["role"] == "model"]
    assert [s["call"]["stop_reason"] for s in models] == ["length"] * 3
    refusals = [t["output"] for s in steps for t in s["tool_calls"] if t["name"] == "validate_artefact"]
    assert len(refusals) == 3 and all(r.startswith("not one JSON object") for r in refusals)
    requests = [s["call"]["request_sha256"] for s in models]
    assert len(set(requests)) == 3  # each retry asks something new (the refusal, the answer's number)
    seeds = [call_seed(build.sampling, r, i > 0) for i, r in enumerate(requests)]
    assert seeds[0] == (0, False) and seeds[1][1] and seeds[1][0] != seeds[2][0]
    assert any("closed without a batch" in s["text"] for s in steps)
    verify_attempt(os.path.join(out, "record.json"))


def test_what_cannot_run_is_refused_before_a_claim_is_spent(tmp_path, model_file):
    from tests.launchers.specs import sampler_factory as make_sampler_factory
    from launchers._sampler_llama import LlamaSampler, inspect_model, settings_for

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\0" * 64)
    for path, message in (
        (str(tmp_path / "absent.gguf"), "no such file"),
        (str(junk), "llama.cpp cannot load it as a GGUF model"),
    ):
        with pytest.raises(InputError, match=message):
            make_sampler_factory("llama-cpp", None, CALL_S, local={"model_file": path})
    with pytest.raises(InputError, match="n_threads: expected a non-negative integer"):
        make_sampler_factory("llama-cpp", None, CALL_S, local={"model_file": model_file, "n_threads": "2"})
    # a request without a desk view, or one the context cannot hold, fails the call (recorded), never overflows
    identity = inspect_model(model_file)
    small = LlamaSampler("m", identity, settings_for(identity, n_ctx=512))
    with pytest.raises(SamplerError, match="no desk view"):
        small.sample(small.prepare([{"role": "user", "content": "hello"}], 64), 60)
    view = {"day": 1, "horizon": 2, "sources": [{"id": "S1", "day": 1, "text": "word " * 600}]}
    long = [{"role": "system", "content": prompt.SYSTEM}, {"role": "user", "content": prompt.checkpoint_message(view)}]
    prepared = small.prepare(long, 64)
    assert prepared.prompt_tokens > 512 - 64
    with pytest.raises(SamplerError, match="leave 0 of the 512-token context"):
        small.sample(prepared, 60)


def test_a_frozen_local_configuration_is_piloted_and_run_from_the_freeze(tmp_path, model_file, monkeypatch):
    """`fundbook-launch freeze --sampler llama-cpp --model-file`, `pilot --model-file` and a confirmatory execute:
    the freeze binds the file's sha256 and the thread counts; a pilot without the file, or with a file the freeze
    does not name, is refused in one line before a claim is spent. One checkpoint an attempt (FUND_01 seeds 26
    and 33 can be scored observed to day 1): two model calls in all."""
    from click.testing import CliRunner
    from launchers import _attempt, _freeze
    from launchers._sampler_llama import file_sha256
    from fundbook.cli.launch import cli
    from .test_paid_path import CLEAN, PUBLISHED

    for module in (_attempt, _freeze):
        monkeypatch.setattr(module, "code_revision", lambda: dict(CLEAN))
        monkeypatch.setattr(module, "engine_identity", lambda: dict(PUBLISHED))
    state, project = str(tmp_path / "state"), str(tmp_path / "project")
    monkeypatch.setenv("FUNDBOOK_LAUNCH_STATE", state)
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", project)
    runner = CliRunner()
    freeze = os.path.join(project, "freeze.json")
    caps = ["--cap-micro-usd", "0", "--cap-tokens", "10000000", "--cap-sandbox-micro-usd", "0"]
    limits = ["--call-deadline", str(CALL_S), "--worker-seconds", str(WORKER_S)]
    result = runner.invoke(
        cli,
        [
            "freeze",
            "--out",
            freeze,
            "--sampler",
            "llama-cpp",
            "--model-file",
            model_file,
            "--family",
            "FUND_01",
            "--seed",
            "26",
            *caps,
            "--project-cap-micro-usd",
            "0",
            "--project-cap-sandbox-micro-usd",
            "0",
            "--intervention-policy",
            "none",
            "--horizon",
            "1",
            "--threads-batch",
            "2",
            *limits,
        ],
    )
    assert result.exit_code == 0, result.output
    body = _read(freeze)["content"]
    model = "SmolLM2-135M-Instruct.Q4_1"
    assert body["models"] == [model] and body["provider"] == "llama-cpp"
    sampling = body["config"]["sampling"]
    assert sampling["model_sha256"] == file_sha256(model_file)
    assert (sampling["n_threads"], sampling["n_threads_batch"], sampling["temperature_milli"]) == (1, 2, 0)
    assert body["config"]["sandbox"] == {"name": "local"} and set(body["prices"]["models"][model].values()) == {0}
    assert body["pilot"]["estimate"]["expected_micro_usd"] == {model: 0}

    claims = []

    def claim():
        path = str(tmp_path / f"claim-{len(claims)}.json")
        claims.append(path)
        r = runner.invoke(
            cli,
            ["authorise", "--family", "FUND_01", "--model", model, "--local", *caps, "--horizon", "1", "--out", path],
        )
        assert r.exit_code == 0, r.output
        return path

    first = claim()
    result = runner.invoke(cli, ["pilot", "--claim", first, "--seed", "33"])
    assert result.exit_code == 1 and result.output.strip().splitlines() == [
        "error: --model-file: the freeze runs the llama-cpp sampler: name its GGUF file"
    ], result.output
    other = tmp_path / "other.gguf"  # another file: the freeze names the packaged model's sha256
    os.symlink(model_file, other)
    result = runner.invoke(cli, ["pilot", "--claim", first, "--seed", "33", "--model-file", str(other)])
    assert result.exit_code == 0 and "pilot PASS" in result.output, result.output  # the same bytes by another name
    pilot = _read(os.path.join(project, "pilot", "pilot.json"))["content"]
    assert [c["result"] for c in pilot["criteria"]] == ["PASS"] * 4 and pilot["figures"]["calls"] == 1
    result = runner.invoke(
        cli,
        [
            "execute",
            "--claim",
            claim(),
            "--out",
            str(tmp_path / "c"),
            "--family",
            "FUND_01",
            "--seed",
            "26",
            "--horizon",
            "1",
            "--sampler",
            "llama-cpp",
            "--model-file",
            model_file,
            "--threads-batch",
            "1",
            "--freeze",
            freeze,
            *limits,
        ],
    )
    assert result.exit_code == 1 and "n_threads_batch" in result.output, result.output  # not the frozen threads
    assert len(os.listdir(os.path.join(state, "consumed"))) == 1  # refused before its claim was spent
    result = runner.invoke(
        cli,
        [
            "execute",
            "--claim",
            claims[-1],
            "--out",
            str(tmp_path / "c"),
            "--family",
            "FUND_01",
            "--seed",
            "26",
            "--horizon",
            "1",
            "--sampler",
            "llama-cpp",
            "--model-file",
            model_file,
            "--threads-batch",
            "2",
            "--freeze",
            freeze,
            *limits,
        ],
    )
    assert result.exit_code == 0, result.output
    c = _read(tmp_path / "c" / "record.json")["content"]
    assert c["role"] == "confirmatory" and c["config"]["sampling"] == sampling and c["cost"]["micro_usd"] == 0
    assert c["freeze"]["pilot"]["verdict"] == "PASS"


@pytest.mark.parametrize("name", ["two words", "line\nbreak", "a|b", "<b>x</b>", "-dash", "x" * 161])
def test_a_local_model_id_is_a_plain_token(tmp_path, model_file, monkeypatch, name):
    """A local model's id lands in claims, records, titles and table cells: from --model or from the file's
    name, anything but a plain token is refused in one line, before a claim is spent."""
    from click.testing import CliRunner
    from fundbook.cli.launch import cli

    monkeypatch.setenv("FUNDBOOK_LAUNCH_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("FUNDBOOK_LAUNCH_PROJECT", str(tmp_path / "project"))
    runner = CliRunner()
    expected = "expected a model id of letters, digits and . _ : / + @ -"
    r = runner.invoke(
        cli,
        [
            "authorise",
            "--family",
            "FUND_03",
            "--model",
            name,
            "--local",
            "--cap-micro-usd",
            "0",
            "--cap-tokens",
            "10",
            "--out",
            str(tmp_path / "c.json"),
        ],
    )
    assert r.exit_code == 1 and expected in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert not (tmp_path / "c.json").exists()
    link = tmp_path / (name.replace("/", "|") + ".gguf")
    os.symlink(model_file, link)
    r = runner.invoke(
        cli,
        [
            "execute",
            "--claim",
            str(tmp_path / "none.json"),
            "--out",
            str(tmp_path / "o"),
            "--family",
            "FUND_03",
            "--seed",
            "1",
            "--sampler",
            "llama-cpp",
            "--model-file",
            str(link),
        ],
    )
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1, r.output
    assert "its name is not a model id: name the model with --model" in r.output or expected in r.output, r.output
    r = runner.invoke(
        cli,
        [
            "execute",
            "--claim",
            str(tmp_path / "none.json"),
            "--out",
            str(tmp_path / "o"),
            "--family",
            "FUND_03",
            "--seed",
            "1",
            "--sampler",
            "llama-cpp",
            "--model-file",
            str(link),
            "--model",
            name,
        ],
    )
    assert r.exit_code == 1 and expected in r.output, r.output
    assert not (tmp_path / "o").exists()


def test_a_new_attempt_cancels_the_call_a_stopped_attempt_abandoned(model_file):
    """The model is shared by every sampler of the process. An attempt stopped mid-call (SIGTERM, a deadline)
    leaves its call evaluating in its thread; the next attempt's sampler cancels it and waits for it before
    resetting the model (two evaluations on one llama.cpp context abort the process: GGML_ASSERT)."""
    import threading
    from launchers import _sampler_llama as sl
    from launchers._errors import CallTimeout

    identity = inspect_model_once(model_file)
    view = {"day": 1, "horizon": 2, "sources": [{"id": "S1", "day": 1, "text": "a short note"}]}
    messages = [
        {"role": "system", "content": prompt.SYSTEM},
        {"role": "user", "content": prompt.checkpoint_message(view)},
    ]
    first = sl.LlamaSampler("m", identity, sl.settings_for(identity))
    ended = {}
    if isinstance(first.llm, fake_llama.Llama):  # the fake answers at once: it evaluates until cancelled instead
        fake_llama.Llama.stall = threading.Event()
        fake_llama.Llama.stall.set()

    def abandoned():  # the stopped attempt's call, with a long deadline
        try:
            ended["first"] = first.sample(first.prepare(messages, 1024), CALL_S)
        except CallTimeout as exc:
            ended["first"] = exc

    thread = threading.Thread(target=abandoned)
    thread.start()
    while first.key not in sl._IN_FLIGHT and thread.is_alive():  # the call holds the model
        thread.join(0.05)
    second = sl.LlamaSampler("m", identity, sl.settings_for(identity))  # the next attempt: cancel, wait, reset
    if fake_llama.Llama.stall is not None:
        fake_llama.Llama.stall.clear()
    assert not thread.is_alive()
    assert isinstance(ended["first"], CallTimeout), ended  # its answer is never read
    done = second.sample(second.prepare(messages, 24), CALL_S)
    assert done.tokens_out > 0 and second.key not in sl._IN_FLIGHT


def inspect_model_once(model_file, _seen={}):
    from launchers._sampler_llama import inspect_model

    if model_file not in _seen:
        _seen[model_file] = inspect_model(model_file)
    return _seen[model_file]
