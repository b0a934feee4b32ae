"""The desk's memory snapshot is reproducible and keyed, and the site is served
as a static host serves precompressed twins. (That the snapshot and a cold
start give the same packets in Chromium: tests/desk/test_desk_start.py.)"""

import gzip
import http.client
import json
from pathlib import Path

import pytest

from builders._errors import BuildError
from builders.desk.precompress import candidates, precompress
from builders.desk.snapshot_stage import RUNTIME, SNAPSHOT, build_snapshot, run_snapshot, snapshot_inputs
from builders.site.serve import Serving

ROOT = Path(__file__).resolve().parents[2]
STDLIB = ROOT / "site" / "assets" / "desk" / "runtime" / "python_stdlib.zip"


pytestmark = pytest.mark.xdist_group("practitioners")  # no browser: beside the browser tests


def test_two_builds_of_the_snapshot_give_the_same_bytes(bundle_dir, tmp_path):
    """The image is a function of its inputs: a fresh one has the bytes `make desk-snapshot` wrote (or, when the
    checkout's image is of another bundle, a second fresh one has the first one's)."""
    if not STDLIB.is_file():
        pytest.fail(f"{STDLIB} is missing: run `make build-desk`")
    inputs = snapshot_inputs(str(bundle_dir), str(STDLIB))
    zip_path = inputs.pop("zip_path")
    fresh = run_snapshot(zip_path, dict(inputs, stdlib=str(STDLIB)), str(tmp_path / SNAPSHOT))
    key_file = STDLIB.parent / RUNTIME
    key = json.loads(key_file.read_text()) if key_file.is_file() else {}
    if key.get("bundle_sha256") == inputs["bundle_sha256"] and key.get("stdlib_sha256") == inputs["stdlib_sha256"]:
        assert fresh["snapshot_sha256"] == key["snapshot"]["sha256"]
        assert key["snapshot"]["bytes"] == fresh["bytes"] and key["pyodide_version"] == inputs["pyodide"]
        assert key["manifest_sha256"] == inputs["manifest_sha256"]
    else:
        again = run_snapshot(zip_path, dict(inputs, stdlib=str(STDLIB)), str(tmp_path / "again"))
        assert again["snapshot_sha256"] == fresh["snapshot_sha256"]
    # the image names the key the worker checks after restoring it
    assert (fresh["bundle_sha256"], fresh["manifest_sha256"]) == (inputs["bundle_sha256"], inputs["manifest_sha256"])


def test_a_snapshot_of_a_bundle_that_does_not_check_is_not_made(bundle_dir, tmp_path):
    forged = tmp_path / "engine"
    forged.mkdir()
    for name in ("fundbook-engine.zip", "manifest.json", "provenance.json"):
        (forged / name).write_bytes((Path(bundle_dir) / name).read_bytes())
    data = bytearray((forged / "fundbook-engine.zip").read_bytes())
    data[100] ^= 1
    (forged / "fundbook-engine.zip").write_bytes(bytes(data))
    with pytest.raises(BuildError, match="fundbook-engine.zip: sha256 expected"):
        build_snapshot(str(forged), str(STDLIB))


def test_precompressed_twins_are_served_with_their_encoding(tmp_path):
    (tmp_path / "big.js").write_text("const x = 1;\n" * 2000)
    (tmp_path / "small.css").write_text("a{}")
    (tmp_path / "runtime.wasm").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "linked.js").symlink_to(tmp_path / "big.js")  # links are the sources: never written beside
    assert [Path(p).name for p in candidates(tmp_path)] == ["big.js", "runtime.wasm"]
    facts = precompress(tmp_path, paths=[str(tmp_path / "big.js")])
    assert facts["files"] == 1 and facts["br_bytes"] < facts["gz_bytes"] < facts["bytes"] // 10
    assert gzip.decompress((tmp_path / "big.js.gz").read_bytes()) == (tmp_path / "big.js").read_bytes()
    first = (tmp_path / "big.js.br").read_bytes()
    assert precompress(tmp_path, paths=[str(tmp_path / "big.js")])["cached"] == 2  # from the cache, same bytes
    assert (tmp_path / "big.js.br").read_bytes() == first
    with Serving(tmp_path) as url:
        host = url.split("/")[2]

        def get(path, accept):
            conn = http.client.HTTPConnection(host)
            conn.request("GET", path, headers={"Accept-Encoding": accept} if accept else {})
            r = conn.getresponse()
            body = r.read()
            conn.close()
            return r.getheader("Content-Encoding"), r.getheader("Content-Type"), body

        assert get("/big.js", "gzip, deflate, br") == ("br", "text/javascript", first)
        enc, ctype, body = get("/big.js", "gzip")
        assert (enc, ctype, gzip.decompress(body)) == ("gzip", "text/javascript", (tmp_path / "big.js").read_bytes())
        assert get("/big.js", "") == (None, "text/javascript", (tmp_path / "big.js").read_bytes())
        assert get("/small.css", "br")[0] is None  # no twin: the file as it is
