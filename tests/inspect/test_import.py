"""fundbook inspect import / verify: a log's samples re-executed (host and bundle in Pyodide) and published;
tampering refused by name; nothing written for a refused log; a replay of a log's outputs gives the same record."""

import json
import os

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log

from engine import InputError
from inspect_fundbook._task import desk
from launchers.inspect._import import import_logs, prepare, verify

from . import policies as P

pytestmark = P.WARNINGS + [pytest.mark.pyodide]


@pytest.fixture(scope="module")
def session():
    """One Pyodide runtime for the module's imports (each import would otherwise load its own)."""
    from builders._session import PyodideSession

    with PyodideSession() as s:
        yield s


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """One .eval log of two worlds (always-fund, tool protocol) and its .json twin; one text-protocol log."""
    root = tmp_path_factory.mktemp("logs")
    (log,) = inspect_eval(
        desk(worlds="FUND_01:1,FUND_03:2", days=5),
        model=P.scripted(P.always_fund),
        log_dir=str(root / "eval"),
        display="none",
    )
    as_json = str(root / "twin.json")
    write_eval_log(read_eval_log(log.location), as_json, format="json")
    (text,) = inspect_eval(
        desk(worlds="FUND_01:1", days=5, protocol="text"),
        model=P.scripted(P.always_fund, "text"),
        log_dir=str(root / "text"),
        display="none",
    )
    return {"eval": log.location, "json": as_json, "text": text.location, "root": root}


def tampered(logs, tmp_path, edit, name="t.json"):
    log = read_eval_log(logs["eval"])
    edit(log)
    out = str(tmp_path / name)
    write_eval_log(log, out, format="json")
    return out


def test_import_round_trip_and_verify(logs, tmp_path, session):
    attempts = str(tmp_path / "attempts")
    done = import_logs([logs["eval"]], attempts, session=session)
    assert [d["status"] for d in done] == ["new", "new"]
    assert [d["sample"] for d in done] == ["FUND_01-seed-1", "FUND_03-seed-2"]
    for d in done:
        folder = os.path.dirname(d["record"])
        rec = json.load(open(d["record"]))
        c = rec["content"]
        assert c["harness"] == "inspect" and c["model"] == {
            "id": "scripted",
            "provider": "mockllm",
            "as_logged": "mockllm/scripted",
            "answered_as": "scripted",
        }
        assert c["inspect"]["version"] == "0.3.285" and c["inspect"]["usage_note"].startswith("usage and cost")
        assert c["result"]["status"] == "SCORED" and c["receipts_head"] == c["result"]["receipts_head"]
        assert sorted(os.listdir(folder)) == sorted(
            ["receipts.json", "record.json", "transcript.json", c["inspect"]["log"]["path"]]
        )
        receipts = json.load(open(os.path.join(folder, "receipts.json")))
        assert (
            receipts["receipts_head"] == c["receipts_head"] and len(receipts["receipts"]) == c["receipts_head"]["size"]
        )
    again = import_logs([logs["eval"]], attempts, session=session)
    assert [d["status"] for d in again] == ["unchanged", "unchanged"]
    assert verify(attempts, session=session) == [(d["attempt_id"], []) for d in done]
    # every other walker of runs/attempts passes an Inspect record by deliberately (export tables, ledger,
    # rederive, the model arm's index); the site's loader publishes it, held to the importer's own checks
    from pathlib import Path
    from builders.site.records import load_attempts
    from experiments.arms import AttemptIndex
    from launchers._export import records_in
    from launchers._rederive import rederive_all

    assert records_in(attempts) == [] and rederive_all(attempts) == []
    assert sorted(a.attempt_id for a in load_attempts(Path(tmp_path))) == sorted(d["attempt_id"] for d in done)
    assert AttemptIndex(attempts).by_fixture == {}
    # the .json twin of the same log re-derives the same attempts (its kept file differs: its own bytes)
    twin = prepare([logs["json"]], session=session)
    assert [p[2] for p in twin] == [d["attempt_id"] for d in done]


def test_text_protocol_log_imports(logs, tmp_path, session):
    done = import_logs([logs["text"]], str(tmp_path / "a"), session=session)
    assert done[0]["result"]["status"] == "SCORED"


def test_verify_names_a_changed_record(logs, tmp_path, session):
    attempts = str(tmp_path / "attempts")
    done = import_logs([logs["eval"]], attempts, session=session)
    path = done[0]["record"]
    rec = json.load(open(path))
    rec["content"]["result"]["score"]["points"] += 1
    open(path, "w").write(json.dumps(rec))
    problems = dict(verify(attempts, session=session))[done[0]["attempt_id"]]
    folder = os.path.dirname(path)
    assert problems == [f"{folder}/record.json: content.result.score.points differs from the re-import"]


def _tool_messages(log, function):
    return [m for s in log.samples[:1] for m in s.messages if m.role == "tool" and m.function == function]


@pytest.mark.parametrize(
    "case, edit, message",
    [
        (
            "tool result",
            lambda log: setattr(_tool_messages(log, "project")[0], "content", '{"output":{}}'),
            "sample FUND_01-seed-1: tool result: message 3 (project): at character 11 (of 13 logged, 249 from the desk): "
            'the log has "{\\"output\\":{}}", the desk gives "{\\"output\\":{\\"cash\\":1500000000,\\"day\\":1,'
            '\\"dec"…',
        ),
        (
            "tool result, late",
            lambda log: setattr(
                _tool_messages(log, "project")[0],
                "content",
                _tool_messages(log, "project")[0].text.replace('"day":1', '"day":2'),
            ),
            "sample FUND_01-seed-1: tool result: message 3 (project): at character 35 (of 249 logged, 249 from the desk): "
            'the log has …"put\\":{\\"cash\\":1500000000,\\"day\\":2,\\"decisions\\":[],\\"rejected\\":nu"…, the '
            'desk gives …"put\\":{\\"cash\\":1500000000,\\"day\\":1,\\"decisions\\":[],\\"rejected\\":nu"…',
        ),
        (
            "score",
            lambda log: setattr(log.samples[0].scores["desk_grade"], "value", 100),
            "sample FUND_01-seed-1: score: score.value",
        ),
        (
            "world id",
            lambda log: setattr(log.samples[0], "id", "FUND_01-seed-2"),
            "sample FUND_01-seed-2: world: expected a published world",
        ),
        (
            "fixture",
            lambda log: log.samples[0].metadata.update(fixture_sha256="0" * 64),
            "sample FUND_01-seed-1: fixture_sha256: expected",
        ),
        (
            "model name",
            lambda log: setattr(log.eval, "model", "openai/gpt-99"),
            "stats.model_usage: the log's model is 'openai/gpt-99', its usage names ['mockllm/scripted'] (a fallback or a "
            "second model)",
        ),
        (
            "model name and stats",
            lambda log: (setattr(log.eval, "model", "openai/gpt-99"), setattr(log.stats, "model_usage", {})),
            "sample FUND_01-seed-1: model: the log's model is 'openai/gpt-99', the sample's usage names "
            "['mockllm/scripted'] (a fallback or a second model)",
        ),
        ("status", lambda log: setattr(log, "status", "error"), "status: expected success, the log says 'error'"),
        (
            "task version",
            lambda log: setattr(log.eval, "task_version", "0.2.0+0000000000000000"),
            "eval.task_version: expected 0.1.0+<16 hex digits of a bundle sha256>",
        ),
        (
            "logged bundle",
            lambda log: setattr(log.eval, "task_version", "0.1.0+0000000000000000"),
            "sample FUND_01-seed-1: bundle_sha256: expected the sha256 of the bundle the task version names "
            "(0000000000000000...)",
        ),
    ],
)
def test_tampered_logs_are_refused_by_name(logs, tmp_path, case, edit, message):
    path = tampered(logs, tmp_path, edit)
    attempts = tmp_path / "attempts"
    with pytest.raises(InputError) as err:
        import_logs([path], str(attempts))
    assert message in err.value.message, err.value.message
    assert err.value.message.startswith(path)
    assert not attempts.exists() or os.listdir(attempts) == []


def test_an_edit_eval_log_entry_is_refused(logs, tmp_path):
    from inspect_ai.log import ProvenanceData, TagsEdit, edit_eval_log

    log = edit_eval_log(
        read_eval_log(logs["eval"]), [TagsEdit(tags_add=["reviewed"])], ProvenanceData(author="someone", reason="tidy")
    )
    path = str(tmp_path / "edited.json")
    write_eval_log(log, path, format="json")
    with pytest.raises(InputError, match=r"edits: the log was edited after the eval \(1 edit_eval_log update"):
        import_logs([path], str(tmp_path / "attempts"))


def test_one_bad_log_writes_nothing(logs, tmp_path):
    bad = tampered(logs, tmp_path, lambda log: setattr(log.samples[1].scores["desk_grade"], "answer", "x"))
    attempts = tmp_path / "attempts"
    with pytest.raises(InputError, match="sample FUND_03-seed-2: score"):
        import_logs([logs["text"], bad], str(attempts))
    assert not attempts.exists() or os.listdir(attempts) == []


def test_not_a_log_is_one_line(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not an Inspect log Inspect can read") as err:
        import_logs([str(path)], str(tmp_path / "attempts"))
    assert "\n" not in err.value.message  # pydantic's many-line message, on one line


def test_a_zip_that_unpacks_past_the_limit_is_refused_before_inspect_reads_it(tmp_path, monkeypatch):
    """A zip bomb: a few KiB that unpack to far more (the limit lowered to 1 MiB for the test, 2 GiB in use)."""
    import zipfile
    from builders import inspect_format

    monkeypatch.setattr(inspect_format, "MAX_UNPACKED_BYTES", 1 << 20)
    path = tmp_path / "bomb.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", b"0" * (2 << 20))
    assert path.stat().st_size < 16 * 1024
    with pytest.raises(InputError) as err:
        import_logs([str(path)], str(tmp_path / "attempts"))
    assert err.value.message == (
        f"{path}: its 1 zip members declare {2 << 20} bytes unpacked, over the limit of "
        f"{1 << 20} bytes for an Inspect log"
    )
    assert not (tmp_path / "attempts").exists()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_log_path_that_is_not_a_file_is_refused_without_reading(tmp_path, kind):
    """A FIFO no program writes to would block the read forever (it did); a device never ends."""
    path = str(tmp_path / "x.eval")
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = os.devnull
    with pytest.raises(InputError) as err:
        import_logs([path], str(tmp_path / "attempts"))
    assert err.value.message == f"{path}: not a regular file (an Inspect log file expected)"
    assert not (tmp_path / "attempts").exists()


def test_replay_of_the_logged_outputs_gives_the_same_record(logs, tmp_path, session):
    """Feed the log's own model outputs back through mockllm: the new log imports as the same attempts."""
    from inspect_ai.model import ModelOutput, get_model

    first = read_eval_log(logs["eval"])
    outputs = []
    for sample in first.samples:
        for m in sample.messages:
            if m.role == "assistant":
                out = ModelOutput(
                    model=m.model, choices=[{"message": m, "stop_reason": "tool_calls" if m.tool_calls else "stop"}]
                )
                out.usage = P.usage()
                outputs.append(out)
    model = get_model("mockllm/scripted", custom_outputs=outputs)
    (again,) = inspect_eval(
        desk(worlds="FUND_01:1,FUND_03:2", days=5),
        model=model,
        log_dir=str(tmp_path / "re"),
        display="none",
        max_samples=1,
    )
    first_plan, again_plan = prepare([logs["eval"]], session=session), prepare([again.location], session=session)
    assert [p[2] for p in again_plan] == [p[2] for p in first_plan]
    a = json.loads(first_plan[0][3]["record.json"])["content"]
    b = json.loads(again_plan[0][3]["record.json"])["content"]
    for key in ("result", "receipts_head", "task", "model", "attempt_id", "transcript"):
        assert a[key] == b[key]


def test_inspect_arm_reads_the_re_executed_samples(logs):
    """The inspect:LOG arm's candidates: each sample's accepted batches, by world (fast sibling of test_arm.py)."""
    from experiments.arm_inspect import InspectLogIndex
    from experiments.arms import parse_arm
    from experiments.errors import ExperimentError

    (arm,) = parse_arm(f"fund=inspect:{logs['eval']}")
    assert arm == {"kind": "inspect", "path": logs["eval"], "name": "fund"}
    with pytest.raises(ExperimentError, match="is not an Inspect log file"):
        parse_arm(f"inspect:{logs['root']}")
    index = InspectLogIndex(logs["eval"])
    cands = sorted((c for c, _ in index.by_fixture.values()), key=lambda c: c["instance_id"])
    assert [c["instance_id"] for c in cands] == ["FUND_01/seed-1", "FUND_03/seed-2"]
    assert [len(c["batches"]) for c in cands] == [5, 5]


def test_cli_refuses_a_tampered_log_in_one_line(logs, tmp_path):
    from click.testing import CliRunner
    from fundbook.cli import cli

    path = tampered(logs, tmp_path, lambda log: setattr(log.samples[0].scores["desk_grade"], "value", 100))
    result = CliRunner().invoke(cli, ["inspect", "import", path, "--attempts", str(tmp_path / "attempts")])
    err = result.stderr.strip()
    assert result.exit_code == 1 and "\n" not in err and "Traceback" not in err
    assert err.startswith(f"error: {path}: sample FUND_01-seed-1: score: score.value")
    result = CliRunner().invoke(cli, ["inspect", "verify", "--attempts", str(tmp_path / "none")])
    assert result.exit_code == 0 and result.stdout == "inspect attempts: 0 of 0 verify (none published yet)\n"


def test_a_message_limit_between_a_call_and_its_result_imports(tmp_path, session):
    """message_limit=5: the day's submit_batch runs, its result is refused by the limit; the desk holds it."""
    (log,) = inspect_eval(
        desk(worlds="FUND_01:1", days=5, message_limit=5),
        model=P.scripted(P.always_fund),
        log_dir=str(tmp_path / "l"),
        display="none",
    )
    (sample,) = log.samples
    assert sample.messages[-1].role == "assistant" and len(sample.store["DeskStore:moves"]) == 1
    done = import_logs([log.location], str(tmp_path / "a"), session=session)
    assert done[0]["result"]["days"][0]["batch"] != "missing"
