"""Imported means only what fundbook knows (issue 39): a log forged consistently (its answers rewritten, every tool
result and score recomputed; or renamed to another model) imports, but its record claims only what fundbook
re-derived and labels the rest as logged; one (eval, sample, epoch) imports once; epochs are tries counted by a
written rule; the header's metric, the reductions, the summaries and a score's explanation are the engine's
grade or the log is refused; fallbacks, invalidations, other models' roles, non-canonical world ids and task
arguments of the wrong type are refused by name; a model of any shape and a server URL holding a password
import into records the build accepts, with the password out of every byte written."""

import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log

import engine
from builders import inspect_format as F
from builders import inspect_records as IR
from engine import InputError
from inspect_fundbook._task import desk
from launchers.inspect._import import import_logs, verify

from . import policies as P

pytestmark = P.WARNINGS + [pytest.mark.pyodide]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def session():
    from builders._session import PyodideSession

    with PyodideSession() as s:
        yield s


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Two policies on one world (3 checkpoints), and one eval of two epochs."""
    root = tmp_path_factory.mktemp("forged")
    out = {"root": root}
    for name, plan, epochs in (("idle", P.do_nothing, 1), ("fund", P.always_fund, 1), ("epochs", P.do_nothing, 2)):
        (log,) = inspect_eval(
            desk(worlds="FUND_01:1", days=3),
            model=P.scripted(plan),
            log_dir=str(root / name),
            display="none",
            epochs=epochs,
        )
        assert log.status == "success"
        out[name] = log.location
    return out


def edited(logs, tmp_path, edit, base="idle", fmt="json", name=None):
    log = read_eval_log(logs[base])
    edit(log)
    path = str(tmp_path / (name or f"edited.{fmt if fmt == 'json' else 'eval'}"))
    write_eval_log(log, path, format=fmt)
    return path


def rename(log, model):
    """The model renamed everywhere a log names it: consistent, so nothing in the log gives it away."""
    old = log.eval.model
    log.eval.model = model
    log.stats.model_usage = {model: u for u in log.stats.model_usage.values()}
    for sample in log.samples:
        sample.model_usage = {model: u for u in sample.model_usage.values()}
        for m in sample.messages:
            if m.role == "assistant" and m.model:
                m.model = model.split("/", 1)[-1]
        assert old not in {m.model for m in sample.messages if m.role == "assistant"}


def refused(path, tmp_path) -> str:
    attempts = tmp_path / "attempts"
    with pytest.raises(InputError) as err:
        import_logs([path], str(attempts))
    message = err.value.message
    assert "\n" not in message and "Traceback" not in message and message.startswith(str(path)), message
    assert not attempts.exists() or os.listdir(attempts) == []
    return message[len(str(path)) + 2 :]


def test_a_renamed_log_imports_with_its_name_as_logged_and_claims_nothing_about_the_model(logs, tmp_path, session):
    path = edited(logs, tmp_path, lambda log: rename(log, "openai/gpt-5"), base="fund")
    (done,) = import_logs([path], str(tmp_path / "a"), session=session)
    c = json.load(open(done["record"]))["content"]
    assert c["model"] == {"id": "gpt-5", "provider": "openai", "as_logged": "openai/gpt-5", "answered_as": "gpt-5"}
    assert c["claims"] == F.CLAIMS
    established = {f for claim in c["claims"]["established"] for f in claim["fields"]}
    logged = {f for claim in c["claims"]["as_logged"] for f in claim["fields"]}
    assert "content.model" in logged and not any(f.startswith("content.model") for f in established)
    assert {"content.result", "content.receipts_head", "content.task"} <= established
    assert {"content.inspect.task_version", "content.inspect.bundle_sha256", "content.inspect.model_base_url"} <= logged
    texts = " ".join(claim["text"] for side in c["claims"].values() for claim in side).lower()
    assert "run with" not in texts and "verified by" not in texts


def test_the_inspect_page_says_what_fundbook_established_and_what_is_as_logged():
    """builders/site/templates/inspect_attempt.md.j2 (restyled elsewhere) renders the record's claims and never
    says the attempt was run with a command or that fundbook verified the model."""
    text = (REPO / "builders" / "site" / "templates" / "inspect_attempt.md.j2").read_text()
    assert "was run with" not in text and "verified by fundbook" not in text
    assert "claims.established" in text and "claims.as_logged" in text


def test_one_eval_sample_and_epoch_imports_once(logs, tmp_path, session):
    """Another transcript under the same eval id, sample and epoch: refused by name, in one import or later."""
    idle = read_eval_log(logs["idle"])
    twin = edited(logs, tmp_path, lambda log: setattr(log.eval, "eval_id", idle.eval.eval_id), base="fund")
    attempts = tmp_path / "attempts"
    (first,) = import_logs([logs["idle"]], str(attempts), session=session)
    with pytest.raises(InputError) as err:
        import_logs([twin], str(attempts), session=session)
    assert err.value.message == (
        f"{twin}: sample FUND_01-seed-1: eval {idle.eval.eval_id}, sample FUND_01-seed-1, epoch 1 is already "
        f"published as {attempts / first['attempt_id']} with other content: one (eval, sample, epoch) imports once"
    )
    assert os.listdir(attempts) == [first["attempt_id"]]
    with pytest.raises(InputError) as err:
        import_logs([logs["idle"], twin], str(tmp_path / "both"), session=session)
    assert err.value.message == (
        f"{twin}: sample FUND_01-seed-1: eval {idle.eval.eval_id}, sample FUND_01-seed-1, "
        f"epoch 1 is also {logs['idle']} sample FUND_01-seed-1: one (eval, sample, epoch) "
        f"imports once"
    )


def test_epochs_are_tries_in_epoch_order_and_the_last_counts(logs, tmp_path, session):
    from builders.site import counted
    from builders.site.records import load_attempts

    runs = tmp_path / "runs"
    done = import_logs([logs["epochs"]], str(runs / "attempts"), session=session)
    ids = [d["attempt_id"] for d in done]
    assert [i.split("-")[-2] for i in ids] == ["e001", "e002"]

    class Pub:
        attempts = load_attempts(runs)

    got = counted.counting_map(Pub)
    assert [(got[i]["try"], got[i]["tries"], got[i]["counted"]) for i in ids] == [(1, 2, False), (2, 2, True)]


@pytest.mark.parametrize(
    "case, edit, message",
    [
        (
            "header metric",
            lambda log: setattr(log.results.scores[0].metrics["mean"], "value", 100.0),
            "results.scores.desk_grade.metrics: expected mean 0.0 of the re-derived samples, got {'mean': 100.0} (the "
            "engine's grade of the re-derived samples differs)",
        ),
        (
            "NaN metric",
            lambda log: setattr(log.results.scores[0].metrics["mean"], "value", float("nan")),
            "results.scores.desk_grade.metrics: expected mean 0.0 of the re-derived samples, got {'mean': nan} (the "
            "engine's grade of the re-derived samples differs)",
        ),
        (
            "total samples",
            lambda log: setattr(log.results, "total_samples", 5),
            "results.total_samples: expected 1 samples scored, the header says 5 (1 completed) (the engine's grade of the "
            "re-derived samples differs)",
        ),
        (
            "second score",
            lambda log: log.results.scores.append(log.results.scores[0].model_copy(update={"name": "x"})),
            "results.scores: expected one score, desk_grade, got ['desk_grade', 'x'] (the engine's grade of the re-derived "
            "samples differs)",
        ),
        (
            "reduction",
            lambda log: setattr(log.reductions[0].samples[0], "value", 100.0),
            "reductions.desk_grade['FUND_01-seed-1']: expected value 0.0 and no explanation, got 100.0, explanation None "
            "(the engine's grade of the re-derived samples differs)",
        ),
        (
            "explanation",
            lambda log: setattr(
                log.samples[0].scores["desk_grade"], "explanation", "graded 100/100 by a human reviewer"
            ),
            "sample FUND_01-seed-1: score: score.explanation: the log's desk_grade is not the engine's grade of these "
            "moves",
        ),
        (
            "fallback",
            lambda log: setattr(
                log.samples[0],
                "model_fallbacks",
                [
                    __import__("inspect_ai.model", fromlist=["ModelFallback"]).ModelFallback(
                        model="mockllm/scripted", fallback_model="mockllm/other"
                    )
                ],
            ),
            "sample FUND_01-seed-1: model_fallbacks: the sample records 1 fallback(s) ('mockllm/scripted -> "
            "mockllm/other'): one model answers throughout",
        ),
        (
            "invalidation",
            lambda log: setattr(
                log.samples[0],
                "invalidation",
                __import__("inspect_ai.log", fromlist=["ProvenanceData"]).ProvenanceData(
                    author="someone", reason="bad run"
                ),
            ),
            "sample FUND_01-seed-1: invalidation: the sample was invalidated after the eval",
        ),
        (
            "roles",
            lambda log: setattr(
                log.eval,
                "model_roles",
                {"grader": __import__("inspect_ai.model", fromlist=["ModelConfig"]).ModelConfig(model="openai/gpt-5")},
            ),
            "eval.model_roles: expected none (the desk is answered by one model), got ['grader']",
        ),
        (
            "seed 01",
            lambda log: (
                setattr(log.samples[0], "id", "FUND_01-seed-01"),
                log.samples[0].metadata.update(world="FUND_01-seed-01"),
            ),
            "sample 'FUND_01-seed-01': world: expected a published world FUND_0N-seed-S (ASCII digits, no leading zero) as "
            "the sample id and metadata.world, got id 'FUND_01-seed-01', world 'FUND_01-seed-01'",
        ),
        (
            "arabic digit",
            lambda log: (
                setattr(log.samples[0], "id", "FUND_01-seed-\u0661"),
                log.samples[0].metadata.update(world="FUND_01-seed-\u0661"),
            ),
            "sample 'FUND_01-seed-\u0661': world: expected a published world FUND_0N-seed-S (ASCII digits, no leading zero) "
            "as the sample id and metadata.world, got id 'FUND_01-seed-\u0661', world 'FUND_01-seed-\u0661'",
        ),
        (
            "days as text",
            lambda log: log.eval.task_args.update(days="3"),
            "eval.task_args.days: expected a whole number from 1 to 60, got '3'",
        ),
        (
            "limit as float",
            lambda log: log.eval.task_args.update(message_limit=14.5),
            "eval.task_args.message_limit: expected a whole number from 2 to 40000, got 14.5",
        ),
        (
            "protocol",
            lambda log: log.eval.task_args.update(protocol=1),
            "eval.task_args.protocol: expected one of tool, text, got 1",
        ),
        (
            "over the limit",
            lambda log: log.eval.task_args.update(message_limit=3),
            "sample FUND_01-seed-1: messages: 9 messages, over the task's message_limit 3 (Inspect stops a sample there)",
        ),
        (
            "long answer",
            lambda log: setattr(log.samples[0].messages[2], "content", "x" * (F.MAX_MESSAGE_BYTES + 1)),
            "sample FUND_01-seed-1: transcript: message 2: over 1048576 bytes of text (no desk answer or model turn comes "
            "near)",
        ),
        (
            "model with a newline",
            lambda log: rename(log, "openai/gpt\n5"),
            "eval.model: expected Inspect's <provider>/<model>: 1 to 300 printable characters, got 'openai/gpt\\n5'",
        ),
        (
            "token in config",
            lambda log: setattr(
                log.eval.model_generate_config, "extra_headers", {"Authorization": "Bearer sk-live-123"}
            ),
            "eval.model_generate_config.extra_headers.Authorization: a credential the log holds in a field named like one; "
            "fundbook keeps and publishes the log with the record: remove it from the log and import again",
        ),
    ],
)
def test_what_fundbook_cannot_know_or_does_not_allow_is_refused_by_name(logs, tmp_path, case, edit, message):
    assert refused(edited(logs, tmp_path, edit), tmp_path) == message


@pytest.mark.parametrize("depth", [80, 5000])
def test_a_deeply_nested_answer_is_one_line(logs, tmp_path, depth):
    """Tool call arguments nested past what the desk keeps (80), or past any parser's stack (5000)."""
    path = edited(logs, tmp_path, lambda log: None)
    doc = json.loads(Path(path).read_text())
    call = next(m for m in doc["samples"][0]["messages"] if m["role"] == "assistant" and m.get("tool_calls"))
    call["tool_calls"][0]["arguments"]["deep"] = "DEEP"
    Path(path).write_text(json.dumps(doc).replace('"DEEP"', '{"x":' * depth + "1" + "}" * depth))
    message = refused(path, tmp_path)
    assert message.startswith("sample FUND_01-seed-1: " if depth < 100 else "not an Inspect log Inspect can read"), (
        message
    )


def _members(path):
    import inspect_ai._util.zipfile  # noqa: F401  (zstd in zipfile)

    with zipfile.ZipFile(path) as archive:
        return [(i.filename, archive.read(i)) for i in archive.infolist()]


def _rezip(path, members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    Path(path).write_bytes(buf.getvalue())


def test_a_kept_log_s_sample_summaries_are_the_engine_s_grade(logs, tmp_path):
    """Inspect View lists a .eval log's samples from its summaries: a forged score there is refused."""
    path = str(tmp_path / "summaries.eval")
    members = []
    for name, data in _members(logs["idle"]):
        if name == "summaries.json":
            doc = json.loads(data)
            doc[0]["scores"]["desk_grade"]["value"] = 100
            data = json.dumps(doc).encode()
        members.append((name, data))
    _rezip(path, members)
    assert refused(path, tmp_path).startswith(
        "zip member summaries.json: expected each summary's desk_grade to be its sample's re-derived score with no "
        "explanation, got "
    )


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_a_model_of_any_shape_and_a_password_in_the_server_url(logs, tmp_path, session, fmt):
    """A GGUF path with a space as the model, served at a URL with user:password@: the import succeeds, the
    record keeps the name as data and the URL as REDACTED, no byte written holds the password, the build's check
    passes and the kept log re-imports to the same record."""

    def edit(log):
        rename(log, "openai-api//models/My Model.Q4.gguf")
        log.eval.model_base_url = "http://fundbook:s3cret-pw@127.0.0.1:8080/v1?api_key=sk-also-secret"

    path = edited(logs, tmp_path, edit, fmt=fmt, name=f"creds.{fmt}")
    runs = tmp_path / "runs"
    (done,) = import_logs([path], str(runs / "attempts"), session=session)
    folder = Path(done["record"]).parent
    assert folder.name.startswith("inspect-models-My-Model.Q4.gguf-FUND_01-seed-1-e001-")
    c = json.loads((folder / "record.json").read_text())["content"]
    assert c["model"]["as_logged"] == "openai-api//models/My Model.Q4.gguf"
    assert c["inspect"]["model_base_url"] == "http://REDACTED@127.0.0.1:8080/v1?api_key=REDACTED"
    for f in folder.iterdir():
        blobs = [b for _, b in _members(f)] if f.suffix == ".eval" else [f.read_bytes()]
        assert not any(b"s3cret" in b or b"sk-also-secret" in b for b in blobs), f.name
    (runs / "index.json").write_bytes((REPO / "runs" / "index.json").read_bytes())
    assert IR.check_published(str(runs), folder.name, IR.published_engine(str(runs)))["content"] == c
    assert verify(str(runs / "attempts"), session=session) == [(folder.name, [])]
    (again,) = import_logs([path], str(runs / "attempts"), session=session)  # the original again: the same bytes kept
    assert again["status"] == "unchanged"
    assert engine.content_sha256(c) == json.loads((folder / "record.json").read_text())["content_sha256"]
