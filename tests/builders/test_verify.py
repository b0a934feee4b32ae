"""`make verify`: a rebuild that matches the committed head passes; one that
does not names the first differing record and field."""

import shutil

import engine
import pytest

from builders._errors import BuildError
from builders.runs._index import build_index
from builders.runs._verify import compare, first_difference

from .conftest import load, pyodide_test


def _write(path, doc):
    path.write_text(engine.pretty_json(doc))


@pyodide_test
def test_a_matching_rebuild_verifies(published, tmp_path):
    committed = tmp_path / "runs"
    shutil.copytree(published["dir"], committed)
    assert compare(str(committed), published["dir"]).startswith("verify: ")


@pyodide_test
def test_a_changed_record_is_named_with_its_first_differing_field(published, tmp_path):
    committed = tmp_path / "runs"
    shutil.copytree(published["dir"], committed)
    index = load(committed / "index.json")
    victim = index["entries"][3]["run_id"]
    record = load(committed / f"{victim}.json")
    record["content"]["verdict"] = "TAMPERED"
    record["content_sha256"] = engine.content_sha256(record["content"])
    _write(committed / f"{victim}.json", record)
    file_sha = engine.sha256_hex((committed / f"{victim}.json").read_bytes())
    rows = [dict({k: e[k] for k in e if k not in ("prev_hash", "hash")},
                 **({"content_sha256": record["content_sha256"], "file_sha256": file_sha} if e["run_id"] == victim else {}))
            for e in index["entries"]]
    _write(committed / "index.json", build_index(rows, index["engine"], {}, "then"))
    with pytest.raises(BuildError) as err:
        compare(str(committed), published["dir"])
    message = err.value.format_message()
    assert message.startswith(f"runs/{victim}.json: first difference at content.verdict: committed \"TAMPERED\"")
    assert "content_sha256 expected" in message


@pyodide_test
def test_a_broken_committed_chain_is_reported(published, tmp_path):
    committed = tmp_path / "runs"
    shutil.copytree(published["dir"], committed)
    index = load(committed / "index.json")
    index["entries"][5]["content_sha256"] = "0" * 64
    _write(committed / "index.json", index)
    with pytest.raises(BuildError, match=f"hash chain breaks at {index['entries'][5]['run_id']}"):
        compare(str(committed), published["dir"])


def test_first_difference_walks_sorted_keys_and_lists():
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}) == "content.b[1]"
    assert first_difference({"a": 1}, {"a": 1, "z": 0}) == "content.z"
    assert first_difference([1], [1, 2]) == "content (length 1 vs 2)"
    assert first_difference({"x": {"y": None}}, {"x": {"y": None}}) is None


@pyodide_test
def test_a_committed_record_edited_without_its_index_is_named(published, tmp_path):
    committed = tmp_path / "runs"
    shutil.copytree(published["dir"], committed)
    victim = load(committed / "index.json")["entries"][2]["run_id"]
    record = load(committed / f"{victim}.json")
    record["volatile"]["host"] = "elsewhere"
    _write(committed / f"{victim}.json", record)
    with pytest.raises(BuildError, match=f"runs/{victim}.json: sha256 expected [0-9a-f]{{64}} \\(committed index\\), actual"):
        compare(str(committed), published["dir"])
