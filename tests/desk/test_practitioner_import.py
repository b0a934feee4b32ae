"""`fundbook practitioner import` and `verify`, and the practitioners: arm.

A submission is read strictly and checked before anything runs; every
session of an import is re-executed through the compiled bundle in one
Pyodide runtime (shared by this module's tests); a record is written only
when every file passes. Hostile files -- edited batches, a wrong bundle, no
consent, oversized or malformed -- are refused in one line naming the file
and the field, and change nothing."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import engine
from builders.practitioners import _protocol as P
from builders.practitioners import import_submissions, read_submission, verify_records
from engine import InputError
from fundbook.cli import cli
from tests.desk.practitioners import engine_block, runs_folder, submission, write

# No browser: its own group, so it runs beside the browser tests (build/engine is the bundle, or one built once)
pytestmark = pytest.mark.xdist_group("practitioners")
ROOT = Path(__file__).resolve().parents[2]
DESK = ROOT / "site" / "assets" / "desk"


@pytest.fixture(scope="module")
def runtime(pyodide_runtime):
    return pyodide_runtime  # the worker's one runtime (tests/conftest.py)


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -- the desk and the import speak the same protocol ----------------------------------------


def test_the_study_mode_and_the_import_name_the_same_protocol():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = f"""import * as p from "{(DESK / "study_protocol.js").as_uri()}";
console.log(JSON.stringify({{...p, COHORT: p.COHORT.source, PARTICIPANT: p.PARTICIPANT.source}}));"""
    js = json.loads(
        subprocess.run(
            [node, "--input-type=module", "-e", script], capture_output=True, text=True, check=True, timeout=60
        ).stdout
    )
    assert js["OFFERED"] == list(P.OFFERED)
    assert list(js["PAUSE_REASONS"]) == list(P.PAUSE_REASONS) and list(js["ABANDON_REASONS"]) == list(P.ABANDON_REASONS)
    assert (
        js["SUBMISSION_SCHEMA"],
        js["RECORD_SCHEMA"],
        js["RECORD_SCHEMA_VERSION"],
        js["KIND"],
        js["SPLIT"],
        js["COMPLETED_REASON"],
        js["MAX_MS"],
    ) == (P.SUBMISSION_SCHEMA, P.RECORD_SCHEMA, P.RECORD_SCHEMA_VERSION, P.KIND, P.SPLIT, P.COMPLETED_REASON, P.MAX_MS)
    assert js["COHORT"] == f"^{P.COHORT}$" and js["PARTICIPANT"] == f"^{P.PARTICIPANT}$"
    assert js["CONSENT_VERSION"] in P.consent_versions()
    # the desk build covers every file of the desk, and nothing else
    assert js["DESK_FILES"] == sorted(p.name for p in DESK.iterdir() if p.suffix in (".js", ".css"))
    # the notes and tool-output limits are the model worker's
    from launchers.worker import protocol

    assert js["NOTES_LIMIT"] == protocol.NOTES_LIMIT and js["TOOL_OUTPUT_LIMIT"] == protocol.TOOL_OUTPUT_LIMIT


def test_a_long_tool_result_is_shown_as_the_model_reads_it():
    """The study mode shows a result longer than the worker's TOOL_OUTPUT_LIMIT cut as the worker reads it."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    from launchers.worker import protocol

    outputs = [
        {"decisions": [{"action": f"a{i}", "message": "é ☃ \U0001f600 quote", "n": i} for i in range(400)], "z": None},
        {"short": [1, 2, {"b": True, "a": "x"}]},
    ]
    script = f"""import {{ modelCut, pythonJson }} from "{(DESK / "tools.js").as_uri()}";
const outs = JSON.parse(process.argv[1]);
console.log(JSON.stringify(outs.map((o) => [pythonJson(o), modelCut(o, {protocol.TOOL_OUTPUT_LIMIT})])));"""
    got = json.loads(
        subprocess.run(
            [node, "--input-type=module", "-e", script, json.dumps(outputs)],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    )
    for (text, cut), output in zip(got, outputs):
        assert text == json.dumps(output, sort_keys=True)
        full = json.dumps(output, sort_keys=True)
        want = (
            None
            if len(full) <= protocol.TOOL_OUTPUT_LIMIT
            else (
                full[: protocol.TOOL_OUTPUT_LIMIT]
                + f"...[output truncated: {protocol.TOOL_OUTPUT_LIMIT} of {len(full)} characters]..."
            )
        )
        assert cut == want
        if hasattr(protocol, "tool_result_text") and want:  # the launchers' own cut, once it has one
            assert cut == protocol.tool_result_text(output)
    assert got[0][1] is not None and got[1][1] is None


def test_the_offered_affordances_are_the_model_workers_tools():
    """The study offers exactly the tool-using worker's tools (launchers/worker/agent.py's prompt lists them; the
    compact one-call prompt of the local sampler, launchers/worker/prompt.py, offers fewer, not more)."""
    from launchers.worker.agent import SYSTEM

    tools = SYSTEM.split("Tools (they read only the packet):", 1)[1].split("\n\n", 1)[0]
    named = sorted(line.split()[0] for line in tools.strip().splitlines())
    assert named == sorted(["project", "exposure", "headroom", "interest", "read_source", "note"])
    offered = {a.split(":", 1)[1] for a in P.OFFERED if a.startswith("tool:")}
    assert offered | {"read_source", "note"} == set(named)  # read_source: the sources; note: the notes
    assert {"sources", "notes", "packet", "last-outcomes"} <= set(P.OFFERED)


# -- a session in, a record out -----------------------------------------------------------


def test_abandoned_and_completed_sessions_import_verify_and_reimport_unchanged(tmp_path, bundle_dir, runtime):
    runs = runs_folder(tmp_path, bundle_dir)
    abandoned = submission(bundle_dir, seed=7, days=3, skip=(2,))
    completed = submission(bundle_dir, seed=8, days=20, finalize=True)
    files = [write(tmp_path / "a.json", abandoned), write(tmp_path / "c.json", completed)]
    done = import_submissions(files, str(runs), str(bundle_dir), runtime)
    assert [d["status"] for d in done] == ["new", "new"]
    a, c = (json.loads((runs / "practitioners" / d["attempt_id"] / "record.json").read_text()) for d in done)
    assert a["schema"] == "fundbook.practitioner/1" and a["content_sha256"] == engine.content_sha256(a["content"])
    ca, cc = a["content"], c["content"]
    assert ca["kind"] == cc["kind"] == "practitioner-attempt" and ca["execution_path"] == "compiled bundle in Pyodide"
    assert ca["attempt_id"] == f"p-00112233445566aa-FUND_01-seed-7-{engine.content_sha256(abandoned)[:8]}"
    assert ca["task"] == {
        "instance_id": "FUND_01/seed-7",
        "family": "FUND_01",
        "seed": 7,
        "split": "public-practice",
        "fixture_sha256": abandoned["task"]["fixture_sha256"],
        "horizon": 20,
    }
    assert ca["engine"] == engine_block(bundle_dir)
    assert ca["termination"] == {
        "status": "abandoned",
        "reason": "out-of-time",
        "checkpoints_submitted": 2,
        "checkpoints_closed": 3,
    }
    assert ca["result"] is None and [d["batch"] for d in ca["days"]] == ["accepted", "missing", "accepted"]
    assert ca["clock"] == {**abandoned["clock"], "active_ms": 61_000 + 61_001 + 61_002 + 1_500, "paused_ms": 30_000}
    assert ca["consent"] == abandoned["consent"] and ca["affordances"] == abandoned["affordances"]
    assert ca["receipts_head"] == abandoned["receipts_head"]
    # the completed one is graded, and its grade is the engine's for the same batches
    graded = engine.grade_candidate(
        {
            "format": 1,
            "fixture_sha256": completed["task"]["fixture_sha256"],
            "batches": [m["batch"] for m in completed["moves"]],
        },
        engine.generate("FUND_01", 8),
    )
    assert cc["result"]["status"] == "SCORED" and cc["result"]["score"] == graded["score"]
    assert cc["receipts_head"] == graded["receipts_head"] == completed["receipts_head"]
    # the files are what the record says
    for content in (ca, cc):
        for key in ("receipts", "submission"):
            out = content["outputs"][key]
            assert engine.sha256_hex((tmp_path / out["path"]).read_bytes()) == out["sha256"]
    receipts = json.loads((tmp_path / ca["outputs"]["receipts"]["path"]).read_text())
    assert receipts["receipts_head"] == ca["receipts_head"] and len(receipts["receipts"]) == ca["receipts_head"]["size"]

    # importing again changes nothing; verify re-executes both and finds them whole
    before = snapshot(runs)
    assert [d["status"] for d in import_submissions(files, str(runs), str(bundle_dir), runtime)] == ["unchanged"] * 2
    assert snapshot(runs) == before
    assert verify_records(str(runs), str(bundle_dir), runtime) == [
        (d["attempt_id"], []) for d in sorted(done, key=lambda d: d["attempt_id"])
    ]

    # a forged record (a better clock, resealed) and a stray file are named by verify
    path = runs / "practitioners" / done[0]["attempt_id"] / "record.json"
    original = path.read_bytes()
    rec = json.loads(original)
    rec["content"]["clock"]["per_checkpoint_ms"][0] = 1
    rec["content_sha256"] = engine.content_sha256(rec["content"])
    path.write_text(engine.pretty_json(rec))
    stray = runs / "practitioners" / done[1]["attempt_id"] / "notes.txt"
    stray.write_text("hi")
    found = dict(verify_records(str(runs), str(bundle_dir), runtime))
    assert found[done[0]["attempt_id"]] == [
        f"runs/practitioners/{done[0]['attempt_id']}/record.json: content.clock.per_checkpoint_ms[0] differs from the re-execution (content)"
    ]
    assert "holds ['notes.txt', 'receipts.json', 'record.json', 'submission.json']" in found[done[1]["attempt_id"]][0]
    path.write_bytes(original)
    stray.unlink()

    # the arm reads the records as candidates (the batches, by world), and refuses a record whose files do not hold together
    from experiments.arm_practitioners import PractitionerIndex
    from experiments.errors import ExperimentError

    index = PractitionerIndex(str(runs / "practitioners"))
    assert index.by_fixture[abandoned["task"]["fixture_sha256"]][0]["batches"] == [
        m["batch"] for m in abandoned["moves"] if "batch" in m
    ]
    candidate, sha = index.by_fixture[completed["task"]["fixture_sha256"]]
    assert (
        candidate["batches"] == [m["batch"] for m in completed["moves"]] and candidate["label"] == done[1]["attempt_id"]
    )
    assert sha == engine.sha256_hex((runs / "practitioners" / done[1]["attempt_id"] / "record.json").read_bytes())
    sub = runs / "practitioners" / done[0]["attempt_id"] / "submission.json"
    sub.write_text(sub.read_text().replace('"cohort": "test-cohort"', '"cohort": "another"'))
    with pytest.raises(ExperimentError, match="submission.json: sha256 is not the one the record names"):
        PractitionerIndex(str(runs / "practitioners"))


# -- hostile submissions: one line, nothing changes --------------------------------------------


def _edited(doc):
    doc = json.loads(json.dumps(doc))
    doc["moves"][0]["batch"]["report"]["cash"] += 100  # an edited batch; the head is the desk's
    return doc


def _other_bundle(doc):
    doc = json.loads(json.dumps(doc))
    doc["desk"]["bundle_sha256"] = "e" * 64
    return doc


def _no_consent(doc):
    return {k: v for k, v in doc.items() if k != "consent"}


def _consent(sha):
    def change(doc):
        doc = json.loads(json.dumps(doc))
        doc["consent"]["sha256"] = sha
        return doc

    return change


def _set(path, value):
    def change(doc):
        doc = json.loads(json.dumps(doc))
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return doc

    return change


PRE_RUN = [  # refused before anything runs: (name, change, the one line's expected part)
    ("other bundle", _other_bundle, "desk.bundle_sha256: expected "),  # (the import's sha256 follows)
    (
        "no consent",
        _no_consent,
        "submission.consent: missing (a practitioner submission needs the participant's accepted consent)",
    ),
    ("consent not shown", _consent("0" * 64), "consent.sha256: expected "),
    (
        "consent version unknown",
        _set(["consent", "version"], "9"),
        "consent.version: expected a consent text the desk has shown (1)",
    ),
    ("unknown field", _set(["score"], 100), "submission.score: expected no such field"),
    (
        "newer schema",
        _set(["schema"], "fundbook.practitioner-submission/2"),
        "schema: expected fundbook.practitioner-submission/1 (other versions are refused)",
    ),
    (
        "other affordances",
        _set(["affordances", "offered"], ["packet", "gold"]),
        "affordances.offered: expected the study mode's affordances",
    ),
    (
        "used not offered",
        _set(["affordances", "used"], ["fill-from-projection"]),
        "affordances.used: expected offered affordances",
    ),
    (
        "clock per checkpoint",
        _set(["clock", "per_checkpoint_ms"], [1]),
        "clock.per_checkpoint_ms: expected one time per closed checkpoint (3), got 1",
    ),
    (
        "negative time",
        _set(["clock", "open_checkpoint_ms"], -1),
        "clock.open_checkpoint_ms: expected an integer in 0..604800000",
    ),
    (
        "pause reason typed",
        _set(["clock", "pauses"], [{"checkpoint": 1, "ms": 5, "reason": "my name is Ann"}]),
        "clock.pauses[0].reason: expected one of",
    ),
    (
        "participant not a pseudonym",
        _set(["participant"], "ann@example.org"),
        "participant: expected a pseudonym p- and 16 hexadecimal digits",
    ),
    ("wrong world", _set(["task", "fixture_sha256"], "0" * 64), "task.fixture_sha256: expected "),
    ("episode", _set(["source"], {"episode": "W1"}), "source.family: missing"),
    (
        "completed not finalised",
        _set(["termination", "reason"], "finalised"),
        "termination.reason: expected one of out-of-time",
    ),
    (
        "counts",
        _set(["termination", "checkpoints_submitted"], 3),
        "termination.checkpoints_submitted: expected an integer in 2..2",
    ),
    ("a skip out of order", _set(["moves", 1], {"skip": 5}), "moves[1].skip: expected an integer in 2..2"),
]
MALFORMED = [  # (name, bytes, expected part)
    ("not JSON", b"{not json", "not valid JSON at line 1 column 2"),
    ("NaN", b'{"schema": NaN}', "not valid JSON (NaN is not a JSON number this engine accepts"),
    ("duplicate name", b'{"schema": 1, "schema": 2}', "duplicate name 'schema' in an object"),
    ("deep", b"[" * 5000 + b"]" * 5000, "JSON nested deeper than"),
    ("lone surrogate", b'{"cohort": "\\ud800"}', "lone surrogate"),
    ("huge integer", b'{"participant": ' + b"9" * 5000 + b"}", "an integer far outside +-(2^53-1)"),
    ("float", b'{"participant": 1.5}', "the number 1.5 is not an integer"),
    ("not UTF-8", b'{"cohort": "\xff"}', "not UTF-8 text"),
    ("a list", b"[]", "submission: expected an object with schema"),
]


@pytest.fixture(scope="module")
def good(tmp_path_factory, bundle_dir):
    return submission(bundle_dir, seed=9, days=3, skip=(2,))


class NoRuntime:
    """A session that fails the test if anything asks it to run."""

    def request(self, *args, **kwargs):
        raise AssertionError("the import started the runtime for a file it should have refused before")


def _refused(paths, runs, bundle_dir, runtime, expected):
    runtime = runtime or NoRuntime()
    before = snapshot(runs)
    with pytest.raises(InputError) as info:
        import_submissions(paths, str(runs), str(bundle_dir), runtime)
    message = info.value.message
    assert "\n" not in message and expected in message, message
    assert snapshot(runs) == before  # nothing changed
    return message


@pytest.mark.parametrize("name, change, expected", PRE_RUN, ids=[c[0] for c in PRE_RUN])
def test_a_hostile_submission_is_refused_before_anything_runs(tmp_path, bundle_dir, good, name, change, expected):
    runs = runs_folder(tmp_path, bundle_dir)
    path = write(tmp_path / "hostile.json", change(good))
    # these never reach Pyodide (NoRuntime fails the test if asked to run)
    message = _refused([path], runs, bundle_dir, None, expected)
    assert message.startswith(f"{path}: ")


@pytest.mark.parametrize("name, data, expected", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_files_are_refused_in_one_line(tmp_path, bundle_dir, name, data, expected):
    runs = runs_folder(tmp_path, bundle_dir)
    _refused([write(tmp_path / "bad.json", data)], runs, bundle_dir, None, expected)


def test_oversized_fifo_and_directory_are_refused(tmp_path, bundle_dir):
    runs = runs_folder(tmp_path, bundle_dir)
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(P_MAX + 1)
    _refused([str(big)], runs, bundle_dir, None, f"larger than the {P_MAX}-byte limit for a practitioner submission")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    _refused([str(fifo)], runs, bundle_dir, None, "not valid JSON")  # read without blocking: empty
    _refused([str(tmp_path)], runs, bundle_dir, None, "is a directory")
    _refused([str(tmp_path / "absent.json")], runs, bundle_dir, None, "no such file")


P_MAX = 16 * 1024 * 1024


def test_edited_batches_are_refused_after_the_re_execution_and_nothing_is_written(tmp_path, bundle_dir, good, runtime):
    runs = runs_folder(tmp_path, bundle_dir)
    fine = write(tmp_path / "fine.json", good)
    edited = write(tmp_path / "edited.json", _edited(good))
    message = _refused([fine, edited], runs, bundle_dir, runtime, "receipts_head: the batches re-execute to ")
    assert message.startswith(f"{edited}: ") and "(changed after the export?)" in message
    # a batch the desk itself rejects (a day out of order) is named by the engine
    rejected = json.loads(json.dumps(good))
    rejected["moves"][0]["batch"]["day"] = 2
    message = _refused(
        [write(tmp_path / "r.json", rejected)],
        runs,
        bundle_dir,
        runtime,
        "the desk refuses the session's moves: moves[0]: the desk rejects this batch: batch.day",
    )
    assert not (runs / "practitioners").exists()


def test_the_import_bundle_must_be_the_published_runs_bundle(tmp_path, bundle_dir, good):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "index.json").write_text(json.dumps({"engine": {"bundle_sha256": "a" * 64}}))
    from builders._errors import BuildError

    with pytest.raises(BuildError, match="is not the one of the published runs"):
        import_submissions([write(tmp_path / "s.json", good)], str(runs), str(bundle_dir))


def test_the_command_line_says_one_line_and_exits_1(tmp_path, bundle_dir, good):
    runs = runs_folder(tmp_path, bundle_dir)
    path = write(tmp_path / "s.json", _no_consent(good))
    result = CliRunner().invoke(cli, ["practitioner", "import", path, "--runs", str(runs), "--bundle", str(bundle_dir)])
    assert result.exit_code == 1
    assert (
        result.output
        == f"error: {path}: submission.consent: missing (a practitioner submission needs the participant's accepted consent)\n"
    )
    result = CliRunner().invoke(cli, ["practitioner", "import", "--runs", str(runs)])
    assert result.exit_code == 64  # no FILE: usage
    result = CliRunner().invoke(cli, ["practitioner", "verify", "--runs", str(runs), "--bundle", str(bundle_dir)])
    assert result.exit_code == 0 and result.output == "practitioner records: 0 of 0 verify (none published yet)\n"


def test_a_read_submission_is_exactly_what_the_desk_wrote(tmp_path, bundle_dir, good):
    path = write(tmp_path / "s.json", good)
    assert read_submission(path, engine_block(bundle_dir)) == good


def test_missing_evidence_says_how_many_practitioner_runs_exist():
    """Never fabricate one: the page says none exist exactly while runs/practitioners/ holds no record."""
    from builders.site.practitioner_page import load_records

    text = (ROOT / "site" / "missing-evidence.md").read_text()
    if not load_records(ROOT / "runs"):
        assert "**Practitioner runs: none yet.**" in text and "no practitioner run." in text
    else:
        assert "none yet" not in text
