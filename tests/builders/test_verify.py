"""`make verify` is exact: every published byte of runs/ is checked against a
rebuild, and each tampering is named by file, field and kind (content,
volatile, index, build input, unlisted), never passed."""

import json
import os
import shutil

import engine
import pytest

from builders._errors import BuildError
from builders.run_index import build_index, check_chain, entry_hash
from builders.runs._verify import compare, compare_inputs, first_difference, Report, verify_runs

from .conftest import load, pyodide_test


def _write(path, doc):
    path.write_text(engine.pretty_json(doc))


@pytest.fixture
def committed(published, tmp_path):
    """A private copy of a fresh build, standing for the committed runs/."""
    target = tmp_path / "runs"
    shutil.copytree(published["dir"], target)
    (target / "attempts" / "mock").mkdir(parents=True)  # out of scope: never flagged
    (target / "attempts" / "mock" / "record.json").write_text("{}\n")
    # the parts with their own check in `make verify` (export --check, verify-experiments): never flagged here
    for part in ("comparisons/heldout-baselines/sweep.json", "certificates/grader/certificate.json"):
        (target / part).parent.mkdir(parents=True)
        (target / part).write_text("{}\n")
    for table in ("attempts.parquet", "calls.parquet"):
        (target / table).write_bytes(b"PAR1")
    return target


def _reindex(committed):
    """Rewrite index.json consistently for the record files as they are now
    (what a forger who edits records would do)."""
    index = load(committed / "index.json")
    rows = []
    for e in index["entries"]:
        data = (committed / f"{e['run_id']}.json").read_bytes()
        doc = json.loads(data)
        rows.append(
            dict(
                {k: e[k] for k in e if k not in ("prev_hash", "hash")},
                content_sha256=doc["content_sha256"],
                file_sha256=engine.sha256_hex(data),
            )
        )
    durations = {
        e["run_id"]: load(committed / f"{e['run_id']}.json")["volatile"]["duration_ms"] for e in index["entries"]
    }
    new = build_index(rows, index["engine"], durations)
    _write(committed / "index.json", new)
    return index["head"]["hash"], new["head"]["hash"]


def _kinds(report):
    return [kind for kind, _ in report.items]


@pyodide_test
def test_a_matching_rebuild_verifies(committed, published):
    report = compare(str(committed), published["dir"])
    assert report.items == []
    assert any("chain from genesis" in line for line in report.checked)


@pyodide_test
def test_a_content_edit_is_named_by_record_and_field_with_both_values(committed, published):
    victim = "reference-W2"
    record = load(committed / f"{victim}.json")
    record["content"]["verdict"] = "TAMPERED"
    record["content_sha256"] = engine.content_sha256(record["content"])
    _write(committed / f"{victim}.json", record)
    _reindex(committed)
    report = compare(str(committed), published["dir"])
    kinds = _kinds(report)
    assert "content" in kinds and "volatile" not in kinds
    line = next(text for kind, text in report.items if text.startswith(f"runs/{victim}.json"))
    assert line.startswith(f'runs/{victim}.json: content.verdict: published "TAMPERED", rebuilt "QUALIFIED"')
    assert "content_sha256 published" in line


@pyodide_test
def test_a_volatile_only_edit_is_named_as_volatile(committed, published):
    victim = load(committed / "index.json")["entries"][2]["run_id"]
    record = load(committed / f"{victim}.json")
    record["volatile"]["host"] = "elsewhere"
    _write(committed / f"{victim}.json", record)
    report = compare(str(committed), published["dir"])
    assert _kinds(report) == ["volatile"]
    assert report.items[0][1].startswith(f"runs/{victim}.json: content matches the rebuild, but the file's sha256")
    assert "volatile part changed" in report.items[0][1]


@pyodide_test
def test_a_volatile_edit_with_a_rewritten_index_moves_the_head(committed, published):
    """file_sha256 is inside the chain: the forger must rechain, which changes
    the head, which the published head then catches (and names the record
    when the published copy is at hand)."""
    victim = load(committed / "index.json")["entries"][5]["run_id"]
    record = load(committed / f"{victim}.json")
    record["volatile"]["duration_ms"] += 1
    _write(committed / f"{victim}.json", record)
    published_head, forged_head = _reindex(committed)
    assert forged_head != published_head
    anchor = {"head": published_head, "source": "--expect-head", "index": None, "files": {}}
    report = compare(str(committed), published["dir"], anchor)
    assert _kinds(report) == ["index"]
    assert report.items[0][1] == (
        f"runs/index.json: head {forged_head} is not the published head {published_head} (--expect-head)"
    )
    with open(os.path.join(published["dir"], f"{victim}.json"), "rb") as fh:
        original = fh.read()
    git_like = {
        "head": published_head,
        "source": "git HEAD:runs/index.json",
        "index": load(os.path.join(published["dir"], "index.json")),
        "files": {f"{victim}.json": original},
    }
    ((kind, line),) = compare(str(committed), published["dir"], git_like).items
    assert kind == "index" and line.endswith(
        f"(git HEAD:runs/index.json); first changed entry: runs/{victim}.json file_sha256 (volatile part); "
        f"first at volatile.duration_ms: published {record['volatile']['duration_ms'] - 1}, "
        f"here {record['volatile']['duration_ms']}"
    )


@pyodide_test
def test_file_sha256_and_the_engine_block_are_inside_the_chain(committed):
    index = load(committed / "index.json")
    assert check_chain(index) is None
    edited = json.loads(json.dumps(index))
    edited["entries"][7]["file_sha256"] = "f" * 64
    assert check_chain(edited) == index["entries"][7]["run_id"]
    edited = json.loads(json.dumps(index))
    edited["engine"]["bundle_sha256"] = "0" * 64
    assert check_chain(edited) == index["entries"][0]["run_id"]  # the genesis covers the engine block
    assert all(entry_hash(e) == e["hash"] for e in index["entries"])


@pyodide_test
def test_an_edited_engine_block_is_named(committed, published):
    index = load(committed / "index.json")
    index["engine"]["manifest_sha256"] = "0" * 64
    _write(committed / "index.json", index)
    report = compare(str(committed), published["dir"])
    assert report.items[0] == (
        "content",
        "runs/index.json: engine.manifest_sha256: published "
        f'"{"0" * 64}", rebuilt "{load(published["dir"] + "/index.json")["engine"]["manifest_sha256"]}"',
    )
    assert "index" in _kinds(report)  # and the chain from its genesis breaks


@pyodide_test
def test_stray_files_are_unlisted_and_attempts_are_out_of_scope(committed, published):
    (committed / "reference-W9.json").write_text("{}\n")
    (committed / "receipts" / "extra.json").write_text("{}\n")
    (committed / "notes.txt").write_text("hello\n")
    (committed / "studies" / "a-study" / "sweep").mkdir(parents=True)  # a study: make verify-study checks it
    (committed / "studies" / "a-study" / "study.json").write_text("{}\n")
    (committed / "studies" / "a-study" / "sweep" / "journal.jsonl").write_text("")
    (committed / "studies" / "loose.txt").write_text("hello\n")  # not a study: nothing would check it
    report = compare(str(committed), published["dir"])
    assert report.items == [
        ("unlisted", f"runs/{name}: not part of the publication (no index entry or record lists it)")
        for name in ("notes.txt", "receipts/extra.json", "reference-W9.json", "studies/loose.txt")
    ]


@pyodide_test
def test_listed_files_are_checked_byte_for_byte(committed, published):
    index = load(committed / "index.json")
    rid = index["entries"][0]["run_id"]
    receipts = load(committed / "receipts" / f"{rid}.json")
    receipts["receipts"][0]["day"] += 1
    _write(committed / "receipts" / f"{rid}.json", receipts)
    (committed / "traces" / f"{index['entries'][1]['run_id']}.json").unlink()
    (committed / "schemas" / "run.schema.json").write_text("{}\n")
    data = bytearray((committed / "days.parquet").read_bytes())
    data[-20] ^= 1
    (committed / "days.parquet").write_bytes(bytes(data))
    lines = dict((text.split(":")[0], (kind, text)) for kind, text in compare(str(committed), published["dir"]).items)
    assert lines[f"runs/receipts/{rid}.json"][1].endswith(
        f"$.receipts[0].day: published {receipts['receipts'][0]['day']}, rebuilt {receipts['receipts'][0]['day'] - 1}"
    )
    assert lines[f"runs/traces/{index['entries'][1]['run_id']}.json"][0] == "missing"
    assert "runs/schemas/run.schema.json" in lines and "runs/days.parquet" in lines


@pyodide_test
def test_the_published_provenance_metadata_is_volatile_but_must_stay_slsa(committed, published):
    path = committed / "engine" / "provenance.json"
    doc = load(path)
    doc["predicate"]["runDetails"]["metadata"]["startedOn"] = "2020-01-01T00:00:00Z"
    _write(path, doc)
    assert compare(str(committed), published["dir"]).items == []
    doc["predicate"]["runDetails"]["metadata"]["compile_ms"] = 5
    _write(path, doc)
    ((kind, line),) = compare(str(committed), published["dir"]).items
    assert kind == "file" and line.startswith("runs/engine/provenance.json: predicate/runDetails/metadata")


def _provenance(published):
    return load(os.path.join(published["dir"], "engine", "provenance.json"))


@pyodide_test
@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            lambda d: d["predicate"]["buildDefinition"]["externalParameters"].update(source_date_epoch=1700000000),
            "buildDefinition.externalParameters.source_date_epoch: published 1700000000, this build 1788739200 "
            "(SOURCE_DATE_EPOCH: this build used 1788739200, the published bundle 1700000000; the Makefile pins 1700000000)",
        ),
        (
            lambda d: d["predicate"]["buildDefinition"]["externalParameters"]["runtime"].update(
                pyodide_version="0.27.0"
            ),
            'buildDefinition.externalParameters.runtime.pyodide_version: published "0.27.0", this build "314.0.7" '
            "(a different Pyodide runtime in node_modules: run `npm ci`)",
        ),
        (
            lambda d: next(
                x
                for x in d["predicate"]["buildDefinition"]["resolvedDependencies"]
                if x.get("name") == "engine/_grade.py"
            )["digest"].update(sha256="ab" * 32),
            f"build input engine/_grade.py: published sha256 {'ab' * 32}, this checkout ",
        ),
    ],
)
def test_a_differing_build_input_is_named(published, edit, expected):
    doc = _provenance(published)
    edit(doc)
    report = Report()
    assert compare_inputs(doc, _provenance(published), report) is False
    assert report.items[0][0] == "input"
    assert expected in report.items[0][1]


@pyodide_test
def test_verify_names_an_ambient_source_date_epoch(published, tmp_path, monkeypatch):
    """End to end: the whole rebuild under another SOURCE_DATE_EPOCH fails, and
    its first line says which build input moved."""
    committed = tmp_path / "runs"
    shutil.copytree(published["dir"], committed)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    with pytest.raises(BuildError) as err:
        verify_runs(str(committed), str(tmp_path / "scratch"))
    message = err.value.format_message()
    assert message.startswith(
        "runs/engine/provenance.json: buildDefinition.externalParameters.source_date_epoch: "
        "published 1788739200, this build 1700000000 (SOURCE_DATE_EPOCH"
    )
    assert "[input; in all: " in message and "content" in message


def test_first_difference_walks_sorted_keys_and_lists():
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}) == "content.b[1]"
    assert first_difference({"a": 1}, {"a": 1, "z": 0}) == "content.z"
    assert first_difference([1], [1, 2]) == "content (length 1 vs 2)"
    assert first_difference({"x": {"y": None}}, {"x": {"y": None}}) is None


@pyodide_test
@pytest.mark.parametrize("index", ["[]\n", '{"schema": "fundbook.index/2"}\n', '{"schema": "fundbook.index/1"}\n'])
def test_a_malformed_index_is_one_line_not_a_traceback(committed, published, index):
    (committed / "index.json").write_text(index)
    report = compare(str(committed), published["dir"])
    assert report.items[0][0] == "index" and report.items[0][1].startswith("runs/index.json: ")
