"""The desk's static pieces, without a browser: the bundle check in Node, and what must not drift."""

import io
import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

# Shares the bundle the browser tests build (one build per session, on one worker).
pytestmark = pytest.mark.xdist_group("browser")

ROOT = Path(__file__).resolve().parents[2]
DESK = ROOT / "site" / "assets" / "desk"

CHECK = """
import { readFileSync } from "node:fs";
import { checkBundle } from "%s";
const [zip, manifest, provenance] = process.argv.slice(1).map((p) => readFileSync(p));
try {
  const out = await checkBundle(new Uint8Array(zip), new Uint8Array(manifest), JSON.parse(provenance));
  console.log(JSON.stringify({ ok: true, bundle: out.bundleSha, files: out.manifest.files.length }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: e.message }));
}
"""


def run_check(zip_path, manifest_path, provenance_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = CHECK % (DESK / "bundle.js").as_uri()
    out = subprocess.run([node, "--input-type=module", "-e", script, str(zip_path), str(manifest_path), str(provenance_path)],
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def sha(data: bytes) -> str:
    import hashlib
    return hashlib.sha256(data).hexdigest()


def rezip(src: Path, dst: Path, change):
    """Copy a zip entry by entry, letting `change(name, data)` return new bytes (or None to drop)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = change(info.filename, zin.read(info))
            if data is not None:
                zout.writestr(info, data)


def forged(tmp_path, bundle_dir, change, extra=None):
    """A zip changed by `change` with provenance rewritten to match it: only the manifest can catch it."""
    zip_path = tmp_path / "fundbook-engine.zip"
    rezip(bundle_dir / "fundbook-engine.zip", zip_path, change)
    if extra:
        with zipfile.ZipFile(zip_path, "a") as zf:
            zf.writestr(*extra)
    provenance = json.loads((bundle_dir / "provenance.json").read_text())
    for subject in provenance["subject"]:
        if subject["name"] == "fundbook-engine.zip":
            subject["digest"]["sha256"] = sha(zip_path.read_bytes())
    (tmp_path / "provenance.json").write_text(json.dumps(provenance))
    return run_check(zip_path, bundle_dir / "manifest.json", tmp_path / "provenance.json")


def test_the_real_bundle_passes_the_check(bundle_dir):
    out = run_check(bundle_dir / "fundbook-engine.zip", bundle_dir / "manifest.json", bundle_dir / "provenance.json")
    assert out["ok"], out
    assert out["bundle"] == sha((bundle_dir / "fundbook-engine.zip").read_bytes())


def test_a_zip_that_is_not_the_provenance_subject_is_refused(bundle_dir, tmp_path):
    data = bytearray((bundle_dir / "fundbook-engine.zip").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tmp_path / "z.zip").write_bytes(bytes(data))
    out = run_check(tmp_path / "z.zip", bundle_dir / "manifest.json", bundle_dir / "provenance.json")
    assert not out["ok"] and "does not match the manifest's provenance subject" in out["error"]
    assert out["error"].endswith("nothing was run")


def test_an_edited_engine_file_is_named(bundle_dir, tmp_path):
    out = forged(tmp_path, bundle_dir, lambda n, d: d + b"\n# edited\n" if n == "engine/_grade.py" else d)
    assert not out["ok"] and "engine/_grade.py sha256" in out["error"], out


def test_a_smuggled_or_missing_file_is_named(bundle_dir, tmp_path):
    out = forged(tmp_path, bundle_dir, lambda n, d: d, extra=("engine/sitecustomize.py", "print('hi')\n"))
    assert not out["ok"] and "engine/sitecustomize.py is in the zip but not in the manifest" in out["error"], out
    (tmp_path / "b").mkdir()
    out = forged(tmp_path / "b", bundle_dir, lambda n, d: None if n == "engine/_rules.pyc" else d)
    assert not out["ok"] and "engine/_rules.pyc is listed in the manifest but missing" in out["error"], out


def test_an_inner_manifest_that_differs_is_refused(bundle_dir, tmp_path):
    out = forged(tmp_path, bundle_dir, lambda n, d: d.replace(b"}", b" }", 1) if n == "manifest.json" else d)
    assert not out["ok"] and "the manifest inside the zip differs" in out["error"], out


def test_minimal_lock_matches_the_vendored_runtime():
    """The worker's lock file names no package; its info must be the pinned runtime's."""
    vendored = json.loads((ROOT / "node_modules" / "pyodide" / "pyodide-lock.json").read_text())["info"]
    text = (DESK / "worker.js").read_text()
    match = re.search(r"info: (\{[^}]*\})", text)
    info = json.loads(re.sub(r"(\w+):", r'"\1":', match.group(1)))
    assert info == vendored


def test_the_desk_page_loads_the_desk_module_and_every_import_exists():
    page = (ROOT / "site" / "desk" / "index.md").read_text()
    assert 'id="fb-desk"' in page and 'src="../assets/desk/desk.js"' in page
    for module in DESK.glob("*.js"):
        for target in re.findall(r'(?:from |import\()"(\./[\w.-]+\.js)"', module.read_text()):
            assert (DESK / target).exists(), f"{module.name} imports {target}"
