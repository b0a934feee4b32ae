"""An Inspect attempt published under runs/attempts/ is held at build time to the importer's own checks
(builders/inspect_records.py): the published record passes; a hostile value in each field of its record, its
transcript and its receipts -- re-sealed, as a hand-placed record would be -- is refused in one line naming
the file (and the field), unless the field is one the log carries as data (a message's text, the task
arguments, the generate config, the limit, the usage), which pages show escaped (tests/site/test_hostile.py)."""

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

import engine
from builders import inspect_records as IR
from tests.site import hostile

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = sorted(p for p in (REPO / "runs" / "attempts").glob("inspect-*") if (p / "record.json").is_file())
needs_record = pytest.mark.skipif(not PUBLISHED, reason="needs a published Inspect attempt (runs/attempts/inspect-*)")
# Leaves the log carries as it logged them: data on every page, not checked against a pattern.
DATA = (
    "content.inspect.task_args.",
    "content.inspect.generate_config.",
    "content.inspect.limit.",
    "content.inspect.usage.",
    "content.model.answered_as.",
)
DATA_STEP_KEYS = (
    "text",
    "model",
    "function",
    "tool_call_id",
    "error",
    "tool_calls",
    "arguments",
    "id",
    "type",
    "message",
)


def test_the_importer_and_the_build_read_one_format():
    """builders/inspect_format.py is the one owner: the importer's constants are its objects, not copies."""
    from builders import inspect_format as F
    from launchers.inspect import _import, _kind

    assert _kind.RECORD_SCHEMA is F.RECORD_SCHEMA is IR.RECORD_SCHEMA == "fundbook.inspect-attempt/2"
    assert (
        _import.KIND,
        _import.HARNESS,
        _import.SPLIT,
        _import.EXECUTION_PATH,
        _import.OUTSIDE,
        _import.TRANSCRIPT_SCHEMA,
        _import.MAX_LOG_BYTES,
    ) == (IR.KIND, IR.HARNESS, IR.SPLIT, IR.EXECUTION_PATH, IR.OUTSIDE, IR.TRANSCRIPT_SCHEMA, IR.MAX_LOG_BYTES)
    from builders.site.records import INSPECT_ATTEMPT_SCHEMA

    assert INSPECT_ATTEMPT_SCHEMA is F.RECORD_SCHEMA
    # a model name of any printable shape is data; its folder part is a slug of it
    assert [F.slug(n) for n in ("Meta-Llama 3.1/8B", "/models/My Model.gguf", "***", "..", "x" * 90)] == [
        "Meta-Llama-3.1-8B",
        "models-My-Model.gguf",
        "model",
        "model",
        "x" * 60,
    ]
    assert F.world_of("FUND_01-seed-1") == ("FUND_01", 1)
    assert [F.world_of(w) for w in ("FUND_01-seed-01", "FUND_01-seed-\u0661", "FUND_09-seed-1", "FUND_01-seed-0")] == [
        None,
        None,
        None,
        None,
    ]


def test_credentials_are_replaced_in_every_url_and_redaction_is_idempotent():
    from builders import inspect_format as F

    cases = {
        "http://user:pa55@host:8000/v1": "http://REDACTED@host:8000/v1",
        "https://a@b@host/v1?api_key=sk-1&api-version=2024&sig=x#f": "https://REDACTED@host/v1?api_key=REDACTED"
        "&api-version=2024&sig=REDACTED#f",
        "http://127.0.0.1:51063/v1": "http://127.0.0.1:51063/v1",
    }
    for url, clean in cases.items():
        assert F.redact_url(url) == clean and F.redact_url(clean) == clean
    assert F.credentials({"model_base_url": "http://u:p@h/v1", "args": {"token": "t0k", "max_tokens": 5}}, "eval") == [
        ("eval.model_base_url", "http://u:p@h/v1", "http://REDACTED@h/v1"),
        ("eval.args.token", None, None),
    ]


@pytest.fixture
def runs(tmp_path):
    """A runs folder with the published index (its engine facts) and a copy of the published Inspect attempt."""
    if not PUBLISHED:
        pytest.skip("needs a published Inspect attempt")
    root = tmp_path / "runs"
    (root / "attempts").mkdir(parents=True)
    shutil.copy(REPO / "runs" / "index.json", root / "index.json")
    shutil.copytree(PUBLISHED[0], root / "attempts" / PUBLISHED[0].name)
    return root


def _check(runs, name=None):
    name = name or PUBLISHED[0].name
    return IR.check_published(str(runs), name, IR.published_engine(str(runs)))


def _refused(runs, name=None) -> str:
    with pytest.raises(engine.InputError) as err:
        _check(runs, name)
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message and len(message) < 500, message
    return message


@needs_record
def test_the_published_inspect_attempt_passes_its_build_time_check(runs):
    rec = _check(runs)
    assert rec["content"]["harness"] == "inspect" and rec["content"]["result"]["score"]["points"] == 11


def _seal(folder, record, transcript=None, receipts=None):
    """Write what a hand-placer would: the files, their sha256 named in the record, the content re-hashed."""
    c = record["content"]
    if transcript is not None:
        data = transcript if isinstance(transcript, bytes) else IR.pretty(transcript)
        (folder / "transcript.json").write_bytes(data)
        if isinstance(c.get("transcript"), dict):
            c["transcript"]["sha256"] = hashlib.sha256(data).hexdigest()
    if receipts is not None:
        data = IR.pretty(receipts)
        (folder / "receipts.json").write_bytes(data)
        if isinstance(c.get("outputs"), dict) and isinstance(c["outputs"].get("receipts"), dict):
            c["outputs"]["receipts"]["sha256"] = hashlib.sha256(data).hexdigest()
    try:
        record["content_sha256"] = engine.content_sha256(c)
    except (ValueError, TypeError):
        pass
    (folder / "record.json").write_text(json.dumps(record, indent=2, ensure_ascii=True))


def _dotted(path):
    return ".".join(str(p) for p in path)


def _is_data(file, path) -> bool:
    dotted = _dotted(path) + "."
    if file == "record.json":
        return dotted.startswith(DATA)
    if file == "transcript.json":
        return len(path) >= 3 and path[0] == "steps" and any(str(p) in DATA_STEP_KEYS for p in path[2:])
    return False


def _every_leaf(runs, every):
    """Each leaf (one per field shape unless `every`) in turn holds a payload; -> (refused, shown as data)."""
    folder = runs / "attempts" / PUBLISHED[0].name
    originals = {name: (folder / name).read_bytes() for name in ("record.json", "transcript.json", "receipts.json")}
    refused = data = 0
    for name in ("record.json", "transcript.json", "receipts.json"):
        doc = json.loads(originals[name])
        seen = set()
        for n, path in enumerate(hostile.leaf_paths(doc)):
            shape = tuple("*" if isinstance(p, int) else p for p in path)
            if (name == "record.json" and path[0] == "content_sha256") or (not every and shape in seen):
                continue
            seen.add(shape)
            payload = hostile.hashable(hostile.PAYLOADS[n % len(hostile.PAYLOADS)])
            changed = json.loads(originals[name])
            hostile.set_path(changed, path, payload)
            record = json.loads(originals["record.json"]) if name != "record.json" else changed
            try:
                _seal(
                    folder,
                    record,
                    transcript=changed if name == "transcript.json" else None,
                    receipts=changed if name == "receipts.json" else None,
                )
                if _is_data(name, path) and not (name == "transcript.json" and path[-1] in ("role", "index")):
                    try:
                        _check(runs)
                        data += 1
                        continue
                    except engine.InputError as exc:  # a data field of the wrong type is refused too: say where
                        message = str(exc)
                else:
                    message = _refused(runs)
            finally:
                for fname, original in originals.items():
                    (folder / fname).write_bytes(original)
            assert "\n" not in message and len(message) < 500, message
            assert message.startswith(f"runs/attempts/{PUBLISHED[0].name}"), (name, path, message)
            if name == "record.json" and path[0] == "content":
                assert "content" in message, (path, message)
            refused += 1
    return refused, data


@needs_record
def test_a_hostile_value_in_each_field_of_an_inspect_record_is_refused_or_kept_as_data(runs):
    refused, data = _every_leaf(runs, every=False)
    print(f"\ninspect record: {refused} fields refused in one line, {data} data fields kept (pages escape them)")
    assert refused > 60 and data >= 5


@pytest.mark.long
@needs_record
def test_a_hostile_value_in_every_leaf_of_an_inspect_record_is_refused_or_kept_as_data(runs):
    refused, data = _every_leaf(runs, every=True)
    print(f"\ninspect record: {refused} leaves refused in one line, {data} data leaves kept")
    assert refused > 500 and data > 20


@needs_record
@pytest.mark.parametrize(
    "field, value, expected",
    [
        (("content", "model", "id"), 'local/x" onmouseover="x', "content.model.id"),
        (("content", "model", "as_logged"), "openai-api/local/x\ntemplate: 404.html", "content.model.as_logged"),
        (("content", "inspect", "protocol"), "text\ntemplate: 404.html", "content.inspect.protocol"),
        (("content", "inspect", "created"), "<img src=https://evil.example/x>", "content.inspect.created"),
        (("content", "inspect", "model_base_url"), "javascript:alert(1)", "content.inspect.model_base_url"),
        (("content", "result", "score", "points"), 12, "content.result.score.points"),
        (("content", "receipts_head", "hash"), "0" * 64, "content.receipts_head"),
        (("content", "moves"), 1, "content.moves"),
        (("content", "turns"), 7, "content.turns"),
        (("content", "task", "seed"), 2, "content.task.fixture_sha256"),
        (("content", "engine", "bundle_sha256"), "1" * 64, "content.engine.bundle_sha256"),
        (("volatile", "imported"), "2026-12-05\ntemplate: 404.html", "volatile"),
    ],
)
def test_hand_placed_inspect_records_are_refused_naming_the_field(runs, field, value, expected):
    folder = runs / "attempts" / PUBLISHED[0].name
    record = json.loads((folder / "record.json").read_text())
    hostile.set_path(record, field, value)
    _seal(folder, record)
    message = _refused(runs)
    assert message.startswith(f"runs/attempts/{PUBLISHED[0].name}/record.json: ") and expected in message, message


@needs_record
@pytest.mark.parametrize(
    "tamper, expected",
    [
        ("extra file", "an Inspect record folder holds exactly"),
        ("log bytes", ".eval: sha256 differs from content.inspect.log.sha256"),
        ("log missing", "an Inspect record folder holds exactly"),
        ("receipt", "receipts.json: receipts.json.receipts"),
        ("transcript bytes", "transcript.json: sha256 differs from content.transcript.sha256"),
        ("lone surrogate", "transcript.json: $.steps[2].text: a lone surrogate is not Unicode text"),
        ("folder", "expected an Inspect attempt's folder"),
        ("log a folder", ".eval: not a regular file (the kept Inspect log expected)"),
        ("log a fifo", ".eval: not a regular file (the kept Inspect log expected)"),
    ],
)
def test_the_files_of_an_inspect_record_are_held_to_what_the_import_writes(runs, tamper, expected):
    name = PUBLISHED[0].name
    folder = runs / "attempts" / name
    log = next(folder.glob("inspect-log-*"))
    if tamper == "extra file":
        (folder / "notes.json").write_text("{}")
    elif tamper == "log bytes":
        data = bytearray(log.read_bytes())
        data[len(data) // 2] ^= 1
        log.write_bytes(bytes(data))
    elif tamper == "log missing":
        log.unlink()
    elif tamper == "log a folder":  # the size a folder reports, forged into the record: open() would raise
        log.unlink()
        log.mkdir()
        record = json.loads((folder / "record.json").read_text())
        record["content"]["inspect"]["log"]["bytes"] = os.path.getsize(log)
        _seal(folder, record)
    elif tamper == "log a fifo":
        log.unlink()
        os.mkfifo(log)
    elif tamper == "receipt":  # a forged receipt, the file re-hashed into the record
        record = json.loads((folder / "record.json").read_text())
        receipts = json.loads((folder / "receipts.json").read_text())
        receipts["receipts"][0]["day"] = 2
        _seal(folder, record, receipts=receipts)
    elif tamper == "transcript bytes":
        (folder / "transcript.json").write_bytes((folder / "transcript.json").read_bytes() + b" ")
    elif tamper == "lone surrogate":
        record = json.loads((folder / "record.json").read_text())
        transcript = json.loads((folder / "transcript.json").read_text())
        transcript["steps"][2]["text"] = "lone \ud800"
        _seal(folder, record, transcript=json.dumps(transcript, indent=2).encode("ascii"))
    elif tamper == "folder":
        folder.rename(folder.parent / "evil<script>")
        name = "evil<script>"
    message = _refused(runs, name)
    assert expected in message, message


@needs_record
@pytest.mark.parametrize(
    "field, value, expected",
    [
        (("content", "claims", "established", 0, "text"), "fundbook verified the model.", "content.claims: expected"),
        (("content", "claims", "as_logged"), [], "content.claims: expected"),
        (
            ("content", "inspect", "model_base_url"),
            "http://user:password@127.0.0.1:51063/v1",
            "content.inspect.model_base_url: expected a URL without credentials",
        ),
        (
            ("content", "inspect", "generate_config"),
            {"extra_headers": {"authorization": "Bearer sk-x"}},
            "content.inspect.generate_config.extra_headers.authorization: expected no credential",
        ),
        (("content", "inspect", "task_args", "days"), "3", "content.inspect.task_args.days: expected a whole number"),
        (
            ("content", "inspect", "task_args", "message_limit"),
            14.0,
            "record.json: not valid JSON (the number 14.0 is not an integer",
        ),
        (("content", "inspect", "epoch"), 2, "content.attempt_id: expected '002', got '001'"),
        (("content", "inspect", "bundle_sha256"), "0" * 64, "content.inspect.bundle_sha256: expected the bundle"),
        (
            ("content", "inspect", "created"),
            "2026-12-05T07:52:24+01:00",
            "content.inspect.created: expected the eval's creation time in UTC",
        ),
    ],
)
def test_what_a_record_claims_is_held_to_the_format(runs, field, value, expected):
    folder = runs / "attempts" / PUBLISHED[0].name
    record = json.loads((folder / "record.json").read_text())
    hostile.set_path(record, field, value)
    _seal(folder, record)
    message = _refused(runs)
    assert message.startswith(f"runs/attempts/{PUBLISHED[0].name}/record.json: ") and expected in message, message


@needs_record
def test_an_older_record_is_refused_with_what_to_do(runs):
    folder = runs / "attempts" / PUBLISHED[0].name
    record = json.loads((folder / "record.json").read_text())
    record["schema"] = "fundbook.inspect-attempt/1"
    _seal(folder, record)
    assert _refused(runs) == (
        f"runs/attempts/{PUBLISHED[0].name}/record.json: schema: expected "
        f"fundbook.inspect-attempt/2, got 'fundbook.inspect-attempt/1' (an older record: import "
        f"it again from its kept log with `fundbook inspect import`)"
    )


@needs_record
def test_a_model_named_by_a_path_with_spaces_is_data_and_passes(runs):
    """The name is any printable text (a GGUF path, a space, markup): kept as data, slugged for the folder."""
    from builders import inspect_format as F

    old = runs / "attempts" / PUBLISHED[0].name
    record = json.loads((old / "record.json").read_text())
    c = record["content"]
    c["model"].update(F.model_parts("openai-api//models/My Model <b>.gguf"))
    name = F.ATTEMPT_ID.fullmatch(PUBLISHED[0].name)
    new = f"inspect-models-My-Model-b-.gguf-{name.group(2)}-seed-{name.group(3)}-e{name.group(4)}-{name.group(5)}"
    assert F.slug(c["model"]["id"]) == "models-My-Model-b-.gguf"
    folder = runs / "attempts" / new
    old.rename(folder)
    c["attempt_id"] = new
    transcript = json.loads((folder / "transcript.json").read_text())
    transcript["attempt_id"] = new
    receipts = json.loads((folder / "receipts.json").read_text())
    receipts["run_id"] = new
    _seal(folder, record, transcript=transcript, receipts=receipts)
    assert _check(runs, new)["content"]["model"]["as_logged"] == "openai-api//models/My Model <b>.gguf"


@needs_record
def test_one_eval_sample_and_epoch_is_published_once(runs):
    folder = runs / "attempts" / PUBLISHED[0].name
    record = json.loads((folder / "record.json").read_text())
    twin = dict(record["content"], attempt_id=PUBLISHED[0].name[:-8] + "00000000")
    with pytest.raises(engine.InputError) as err:
        IR.check_unique({PUBLISHED[0].name: record["content"], twin["attempt_id"]: twin})
    ins = record["content"]["inspect"]
    assert err.value.message == (
        f"runs/attempts/{PUBLISHED[0].name}/record.json: content.inspect: eval {ins['eval_id']}, sample "
        f"{ins['sample_id']}, epoch 1 is also runs/attempts/{twin['attempt_id']}: one (eval, sample, epoch) is "
        f"published once"
    )


@needs_record
def test_the_site_loader_refuses_a_failing_inspect_record_in_one_line(runs):
    from builders.site import records

    folder = runs / "attempts" / PUBLISHED[0].name
    record = json.loads((folder / "record.json").read_text())
    record["content"]["harness"] = "worker"
    _seal(folder, record)
    with pytest.raises(records.SiteInputError) as err:
        records.load_attempts(runs)
    assert str(err.value).startswith(f"runs/attempts/{PUBLISHED[0].name}/record.json: content.harness: expected")
