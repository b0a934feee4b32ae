"""build-engine: the bundle's layout, bytecode, manifest and provenance."""

import hashlib
import io
import json
import os
import time
import zipfile

import jsonschema
import pytest

from builders._errors import BuildError
from builders.bundle import engine_sources
from tests.conftest import REPO

from .conftest import read_bytes, load, pyodide_test

SCHEMAS = os.path.join(os.path.dirname(__file__), "..", "..", "builders", "schemas")


def _zip(bundle_dir):
    with open(os.path.join(bundle_dir, "fundbook-engine.zip"), "rb") as fh:
        return fh.read()


def test_sources_are_the_whole_engine_package_without_caches():
    paths = [s["path"] for s in engine_sources()]
    assert "engine/__init__.py" in paths and "engine/episodes/W1.json" in paths
    assert not [p for p in paths if "__pycache__" in p]
    assert paths == sorted(paths)


def test_a_stray_file_in_engine_stops_the_build(tmp_path):
    """engine/ is exactly the bundle: a file of another kind is refused, not shipped or skipped."""
    import shutil

    shutil.copytree(os.path.join(REPO, "engine"), tmp_path / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "engine" / "notes.txt").write_text("x")
    with pytest.raises(BuildError, match=r"^engine/notes.txt: not an engine file"):
        engine_sources(str(tmp_path))


@pyodide_test
def test_zip_entries_are_sorted_fixed_and_plain(bundle_dir):
    epoch = int(os.environ["SOURCE_DATE_EPOCH"])
    with zipfile.ZipFile(io.BytesIO(_zip(bundle_dir))) as zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
        assert names == sorted(names)
        for info in infos:
            assert info.date_time == time.gmtime(epoch)[:6]
            assert info.external_attr == 0o100644 << 16
            assert info.extra == b"" and info.comment == b""
        sources = [s["path"] for s in engine_sources()]
        for path in sources:
            assert path in names
            if path.endswith(".py"):
                assert path + "c" in names, f"{path} has no .pyc beside it"
        assert set(names) == set(sources) | {p + "c" for p in sources if p.endswith(".py")} | {"manifest.json"}


@pyodide_test
def test_bytecode_is_unchecked_hash_and_from_the_pinned_runtime(bundle_dir):
    manifest = load(os.path.join(bundle_dir, "manifest.json"))
    magic = bytes.fromhex(manifest["runtime"]["pyc_magic"])
    with zipfile.ZipFile(io.BytesIO(_zip(bundle_dir))) as zf:
        for name in zf.namelist():
            if name.endswith(".pyc"):
                data = zf.read(name)
                assert data[:4] == magic
                assert int.from_bytes(data[4:8], "little") == 0b01, f"{name}: not an unchecked-hash pyc"
    assert manifest["runtime"]["pyodide_version"] == "314.0.7"
    assert manifest["runtime"]["python_version"].startswith("3.14.")
    assert manifest["runtime"]["abi"] == "cpython-314-wasm32-emscripten"


@pyodide_test
def test_manifest_lists_every_file_and_is_inside_and_beside(bundle_dir):
    beside = read_bytes(os.path.join(bundle_dir, "manifest.json"))
    manifest = json.loads(beside)
    jsonschema.validate(manifest, load(os.path.join(SCHEMAS, "manifest.schema.json")))
    with zipfile.ZipFile(io.BytesIO(_zip(bundle_dir))) as zf:
        assert zf.read("manifest.json") == beside
        listed = {f["path"]: f["sha256"] for f in manifest["files"]}
        assert set(listed) == set(zf.namelist()) - {"manifest.json"}
        for name, digest in listed.items():
            assert hashlib.sha256(zf.read(name)).hexdigest() == digest
    assert manifest["format_version"] == 1 and manifest["engine_version"] == __import__("engine").ENGINE_VERSION


@pyodide_test
def test_provenance_is_an_slsa_v1_statement_for_the_bundle(bundle_dir):
    doc = load(os.path.join(bundle_dir, "provenance.json"))
    jsonschema.validate(doc, load(os.path.join(SCHEMAS, "provenance.schema.json")))
    assert doc["_type"] == "https://in-toto.io/Statement/v1"
    assert doc["predicateType"] == "https://slsa.dev/provenance/v1"
    subjects = {s["name"]: s["digest"]["sha256"] for s in doc["subject"]}
    assert subjects["fundbook-engine.zip"] == hashlib.sha256(_zip(bundle_dir)).hexdigest()
    assert (
        subjects["manifest.json"] == hashlib.sha256(read_bytes(os.path.join(bundle_dir, "manifest.json"))).hexdigest()
    )
    build = doc["predicate"]["buildDefinition"]
    assert build["internalParameters"]["slsa_build_level"] == "L1" and build["internalParameters"]["signed"] is False
    assert set(doc["predicate"]["runDetails"]["metadata"]) == {"startedOn", "finishedOn"}


def _strict_slsa_parse(doc):
    """The in-toto project's own protobuf bindings, unknown fields refused."""
    from google.protobuf import json_format
    from in_toto_attestation.predicates.provenance.v1 import provenance_pb2
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
    from in_toto_attestation.v1.statement import Statement

    envelope = {k: v for k, v in doc.items() if k != "predicate"}
    statement = json_format.ParseDict(dict(envelope, predicate={}), statement_pb2.Statement())
    statement.predicate.update(doc["predicate"])
    Statement.copy_from_pb(statement).validate()
    provenance = json_format.ParseDict(doc["predicate"], provenance_pb2.Provenance(), ignore_unknown_fields=False)
    assert provenance.build_definition.build_type and provenance.run_details.builder.id
    for rd in list(provenance.build_definition.resolved_dependencies) + list(
        provenance.run_details.builder.builder_dependencies
    ):
        ResourceDescriptor.copy_from_pb(rd).validate()
    return provenance


@pyodide_test
def test_provenance_passes_a_strict_slsa_v1_parse(bundle_dir):
    provenance = _strict_slsa_parse(load(os.path.join(bundle_dir, "provenance.json")))
    assert provenance.run_details.metadata.started_on.seconds > 0


def test_the_old_provenance_fails_the_strict_parse():
    """What the issue reported: timings inside runDetails.metadata."""
    import pytest
    from google.protobuf.json_format import ParseError

    doc = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "a", "digest": {"sha256": "00"}}],
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {"buildType": "urn:x", "externalParameters": {}},
            "runDetails": {"builder": {"id": "urn:y"}, "metadata": {"compile_ms": 128}},
        },
    }
    with pytest.raises(ParseError, match="compile_ms"):
        _strict_slsa_parse(doc)
    schema = load(os.path.join(SCHEMAS, "provenance.schema.json"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(doc, subject=doc["subject"] * 2), schema)


@pyodide_test
def test_provenance_names_every_input_without_a_commit(bundle_dir):
    """Dependencies by package URL where one exists (the runtime); every repo
    file by name, sha256 and the blob id git gives it; no commit or dirty flag
    (a committed provenance cannot name its own commit)."""
    import subprocess
    from builders._files import ROOT

    doc = load(os.path.join(bundle_dir, "provenance.json"))
    deps = doc["predicate"]["buildDefinition"]["resolvedDependencies"]
    assert deps[0]["uri"] == "pkg:npm/pyodide@314.0.7" and set(deps[0]["digest"]) == {"sha512"}
    text = json.dumps(doc)
    assert "gitCommit" not in text and "dirty" not in text
    by_name = {d["name"]: d["digest"] for d in deps[1:]}
    for source in engine_sources():
        assert by_name[source["path"]]["sha256"] == source["sha256"]
    for path in (
        "builders/runner/ops.mjs",
        "builders/runner/compile_bundle.py",
        "package-lock.json",
        "engine/__init__.py",
    ):
        blob = subprocess.run(
            ["git", "hash-object", path], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        assert by_name[path]["gitBlob"] == blob
