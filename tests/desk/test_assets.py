"""The desk's static pieces, without a browser: the bundle check and batch files in Node, and what must not drift."""

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
    out = subprocess.run(
        [node, "--input-type=module", "-e", script, str(zip_path), str(manifest_path), str(provenance_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
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
    text = (DESK / "start.js").read_text()
    match = re.search(r"info: (\{[^}]*\})", text)
    info = json.loads(re.sub(r"(\w+):", r'"\1":', match.group(1)))
    assert info == vendored


def test_the_desk_page_loads_the_desk_module_and_every_import_exists():
    page = (ROOT / "site" / "desk" / "index.md").read_text()
    assert 'id="fb-desk"' in page and 'src="../assets/desk/desk.js"' in page
    for module in DESK.glob("*.js"):
        for target in re.findall(r'(?:from |import\()"(\./[\w.-]+\.js)"', module.read_text()):
            assert (DESK / target).exists(), f"{module.name} imports {target}"


IMPORT = """
import { importMoves, exportFiles } from "%s";
const file = (name, doc) => new File([typeof doc === "string" ? doc : JSON.stringify(doc)], name);
const batch = (day) => ({ day, report: {}, actions: [] });
const session = { source: { episode: "W1" }, moves: [] };
const current = { fixture_sha256: "f".repeat(64), head: { size: 1, hash: "h" } };
const out = {};
const attempt = async (key, files) => {
  try { out[key] = await importMoves(files, session, current); } catch (e) { out[key] = { error: e.message }; }
};
await attempt("gaps", [file("day-03.json", batch(3)), file("day-01.json", batch(1))]);
await attempt("duplicate", [file("a.json", batch(2)), file("b.json", batch(2))]);
await attempt("candidate", [file("c.json", { format: 1, fixture_sha256: "f".repeat(64), batches: [batch(1), batch(2)] })]);
await attempt("foreign", [file("c.json", { format: 1, fixture_sha256: "e".repeat(64), batches: [batch(1)] })]);
await attempt("session", [file("session.json", { format: 1, source: { family: "FUND_02", seed: 3 }, moves: [{ skip: 1 }] })]);
await attempt("assisted", [file("session.json", { format: 1, source: { episode: "W1" }, moves: [], assisted_days: [3, 1, 3] })]);
await attempt("assisted_bad", [file("session.json", { format: 1, source: { episode: "W1" }, moves: [], assisted_days: ["x"] })]);
await attempt("broken", [file("x.json", "{")]);
await attempt("stranger", [file("x.json", { hello: 1 })]);
await attempt("badday", [file("x.json", batch(0))]);
out.export = exportFiles({ source: { family: "FUND_01", seed: 1 }, moves: [{ batch: batch(1) }, { skip: 2 }] }, current);
out.assistedExport = exportFiles({ source: { episode: "W1" }, moves: [{ batch: batch(1) }], assisted_days: [1] }, current);
console.log(JSON.stringify(out));
"""


def batch(day):
    return {"day": day, "report": {}, "actions": []}


def test_import_and_export_of_batch_files():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    out = subprocess.run(
        [node, "--input-type=module", "-e", IMPORT % (DESK / "transfer.js").as_uri()],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    got = json.loads(out.stdout)
    # loose batch files: ordered by day, a missing day is a day closed without a batch
    assert got["gaps"] == {
        "format": 1,
        "source": {"episode": "W1"},
        "moves": [{"batch": batch(1)}, {"skip": 2}, {"batch": batch(3)}],
    }
    assert got["duplicate"]["error"] == "b.json: a second batch for day 2"
    assert got["candidate"]["moves"] == [{"batch": batch(1)}, {"batch": batch(2)}]
    assert "is not this session's" in got["foreign"]["error"]
    assert got["session"] == {
        "format": 1,
        "source": {"family": "FUND_02", "seed": 3},
        "moves": [{"skip": 1}],
        "assisted_days": [],
    }
    # the assisted mode's days travel with a session file (sorted, once each); anything else is dropped, not trusted
    assert got["assisted"]["assisted_days"] == [1, 3] and got["assisted_bad"]["assisted_days"] == []
    assert got["broken"]["error"].startswith("x.json: not valid JSON")
    assert got["stranger"]["error"].startswith("x.json: expected a batch {day, report, actions}")
    assert got["badday"]["error"] == "x.json: batch.day: expected a day number from 1 to 1000"
    files = {f["name"]: f["text"] for f in got["export"]["files"]}
    assert sorted(files) == [
        "fundbook-desk-FUND_01-seed-1/README.txt",
        "fundbook-desk-FUND_01-seed-1/batches/day-01.json",
        "fundbook-desk-FUND_01-seed-1/session.json",
    ]
    readme = files["fundbook-desk-FUND_01-seed-1/README.txt"]
    assert "fundbook families --output families --family FUND_01 --seeds 1" in readme
    assert "fundbook desk advance --db desk.sqlite --family-root families/FUND_01/seed-1" in readme
    assert "Assisted mode: not used (every report was typed)." in readme
    assert json.loads(files["fundbook-desk-FUND_01-seed-1/session.json"])["assisted_days"] == []
    assisted = {f["name"]: f["text"] for f in got["assistedExport"]["files"]}
    assert json.loads(assisted["fundbook-desk-W1/session.json"])["assisted_days"] == [1]
    assert "Assisted mode: the projection tool filled the report on day 1." in assisted["fundbook-desk-W1/README.txt"]


def test_every_desk_make_target_is_documented():
    readme = (ROOT / "builders" / "desk" / "README.md").read_text()
    targets = re.findall(r"^([\w-]+):", (ROOT / "mk" / "desk.mk").read_text(), re.M)
    assert {"build-desk", "bench-desk", "test-desk"} <= set(targets)
    for target in targets:
        assert f"make {target}" in readme, target


def test_the_site_policy_allows_what_the_desk_needs():
    from builders.site.csp import policy

    directives = {d.split()[0]: d.split()[1:] for d in policy([]).split("; ")}
    assert {"'self'", "'wasm-unsafe-eval'"} <= set(directives["script-src"])  # modules and Pyodide's wasm
    assert "'self'" in directives["worker-src"]  # the module worker
    assert "'self'" in directives["connect-src"]  # engine files, records, the precompiled stdlib
    assert not any(src.startswith("http") for values in directives.values() for src in values)


HOSTILE_IMPORT = """
import { readFileSync } from "node:fs";
import { importMoves, exportFiles } from "%s";
import { writeZip } from "%s";
const cases = JSON.parse(process.argv[1]);
const session = { source: { episode: "W1" }, moves: [] };
const current = { fixture_sha256: "f".repeat(64), head: { size: 1, hash: "h" } };
const out = {};
for (const [key, name, path] of cases) {
  try {
    const moves = await importMoves([new File([readFileSync(path)], name)], session, current);
    out[key] = { ok: moves.moves.length };
  } catch (e) {
    out[key] = { error: e.message };
  }
}
// the desk's own export reads back
const own = exportFiles({ source: { episode: "W1" }, moves: [{ batch: { day: 1, report: {}, actions: [] } }] }, current);
const zip = writeZip(own.files);
out.own = (await importMoves([new File([zip], "own.zip")], session, current)).moves.length;
console.log(JSON.stringify(out));
"""


def _zip(path, entries, method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", method) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return path


def _lie_about_size(path, declared):
    """Rewrite the uncompressed size of the first entry (local and central headers) to `declared`."""
    data = bytearray(path.read_bytes())
    for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.index(sig)
        data[at + offset : at + offset + 4] = declared.to_bytes(4, "little")
    path.write_bytes(bytes(data))
    return path


def test_a_hostile_import_is_refused_in_one_line_before_it_fills_the_tab(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    big = json.dumps(batch(1)).encode() + b" " * (17 * 1024 * 1024)  # deflates to a few KB: a zip bomb in small
    bomb = _zip(tmp_path / "bomb.zip", [("day-01.json", big)])
    liar = _lie_about_size(
        _zip(tmp_path / "liar.zip", [("day-01.json", b" " * 100_000 + json.dumps(batch(1)).encode())]), 10
    )
    many = _zip(tmp_path / "many.zip", [(f"d{i}.json", b"{}") for i in range(65)])
    cut = tmp_path / "cut.zip"
    cut.write_bytes(_zip(tmp_path / "whole.zip", [("day-01.json", json.dumps(batch(1)))]).read_bytes()[:-30])
    latin = tmp_path / "latin.json"
    latin.write_bytes(
        json.dumps({"day": 1, "report": {}, "actions": [], "note": "caf\u00e9"}, ensure_ascii=False).encode("latin-1")
    )
    far = tmp_path / "far.json"
    far.write_text(json.dumps(batch(2**53 - 1)))
    loose = tmp_path / "loose.json"
    loose.write_bytes(b" " * (16 * 1024 * 1024 + 1))
    cases = [
        ["bomb", "bomb.zip", str(bomb)],
        ["liar", "liar.zip", str(liar)],
        ["many", "many.zip", str(many)],
        ["cut", "cut.zip", str(cut)],
        ["latin", "latin.json", str(latin)],
        ["far", "far.json", str(far)],
        ["loose", "loose.json", str(loose)],
    ]
    script = HOSTILE_IMPORT % ((DESK / "transfer.js").as_uri(), (DESK / "zip.js").as_uri())
    got = json.loads(
        subprocess.run(
            [node, "--input-type=module", "-e", script, json.dumps(cases)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    )
    assert got["bomb"] == {"error": f"bomb.zip: day-01.json is {len(big)} bytes, more than 16777216"}
    assert got["liar"] == {"error": "liar.zip: day-01.json inflates to more than its declared size"}
    assert got["many"] == {"error": "many.zip: 65 entries, more than 64"}
    assert got["cut"] == {"error": "cut.zip: not a zip archive"}
    assert got["latin"] == {"error": "latin.json: not UTF-8 text"}
    assert got["far"] == {"error": "far.json: batch.day: expected a day number from 1 to 1000"}
    assert got["loose"]["error"].startswith("loose.json: 16777217 bytes, more than an import takes")
    assert got["own"] == 1
    assert all("\n" not in v["error"] for k, v in got.items() if isinstance(v, dict) and "error" in v)
