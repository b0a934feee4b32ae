"""The evaluator id and the host-sources check."""

import copy
import hashlib
import json

import pytest

from experiments import work
from experiments.errors import ExperimentError
from experiments.evaluator import check_sources, evaluator_id, load_bundle, provenance

FAKE_BUNDLE = {"bundle_sha256": "a" * 64, "manifest_sha256": "b" * 64, "manifest": {"engine_version": "0.1.0"}}


def test_the_id_is_the_sha256_of_the_contract_s_canonical_json():
    prov = provenance(FAKE_BUNDLE, "c" * 64, 12)
    text = json.dumps(prov, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    assert evaluator_id(prov) == hashlib.sha256(text.encode()).hexdigest()
    assert set(prov) == {"version", "engine", "grader", "metrics", "items"}
    assert prov["metrics"]["definitions"] == work.METRICS
    assert prov["items"] == {"manifest_sha256": "c" * 64, "count": 12}


@pytest.mark.parametrize(
    "path",
    [
        ("engine", "bundle_sha256"),
        ("engine", "manifest_sha256"),
        ("grader", "gates"),
        ("grader", "mutations"),
        ("metrics", "code_sha256"),
        ("metrics", "definitions"),
        ("items", "manifest_sha256"),
        ("items", "count"),
    ],
)
def test_changing_any_part_of_the_provenance_changes_the_id(path):
    prov = provenance(FAKE_BUNDLE, "c" * 64, 12)
    changed = copy.deepcopy(prov)
    changed[path[0]][path[1]] = "changed"
    assert evaluator_id(changed) != evaluator_id(prov)


def test_host_sources_must_be_the_bundle_s(bundle_dir):
    bundle = load_bundle(bundle_dir)
    assert check_sources(bundle)["matched"] is True
    tampered = copy.deepcopy(bundle)
    entry = next(f for f in tampered["manifest"]["files"] if f["path"] == "engine/_grade.py")
    entry["sha256"] = "0" * 64
    with pytest.raises(ExperimentError) as err:
        check_sources(tampered)
    assert err.value.message.startswith("engine/_grade.py: sha256") and "make build-engine" in err.value.message
    missing = copy.deepcopy(bundle)
    missing["manifest"]["files"] = [f for f in missing["manifest"]["files"] if f["path"] != "engine/_rng.py"]
    with pytest.raises(ExperimentError, match="engine/_rng.py: sha256 .* missing in the bundle manifest"):
        check_sources(missing)


def test_a_missing_or_damaged_bundle_is_one_line(tmp_path, bundle_dir):
    with pytest.raises(ExperimentError, match="engine bundle: .*missing"):
        load_bundle(str(tmp_path))
    import shutil

    shutil.copytree(bundle_dir, tmp_path / "b")
    with open(tmp_path / "b" / "fundbook-engine.zip", "ab") as fh:
        fh.write(b"x")
    with pytest.raises(ExperimentError, match="sha256 expected"):
        load_bundle(str(tmp_path / "b"))
