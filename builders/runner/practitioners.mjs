// Practitioner sessions re-executed through the engine bundle in the pinned
// Pyodide: an op of builders/runner/session.mjs ({"op": "practitioners",
// "module": "builders/runner/practitioners.mjs", ...}), so an import runs on
// the path every published run ran on. The bundle is checked as the fixture
// runner checks it (run_fixtures.py verify), then each session is executed by
// practitioners.py from fresh engine module state.
// Request: {bundle, bundle_sha256, manifest, sessions: JSONL text, sessions_sha256}
// Events: {"event": "runtime", ...}, one {"event": "session", index, ...} per line.
import { hostname } from "node:os";
import { fail, loadHelper, readBytes, sha256 } from "./_pyodide.mjs";

const pyError = (err) => String(err.message || err).trim().split("\n").pop().replace(/^[A-Za-z_.]*(Stop|Error): /, "");

export function runPractitioners(runtime, req, emit) {
  const zip = readBytes(req.bundle, "the engine bundle");
  if (sha256(zip) !== req.bundle_sha256) fail(`${req.bundle}: sha256 expected ${req.bundle_sha256}, actual ${sha256(zip)}`);
  const manifest = readBytes(req.manifest, "the bundle manifest");
  if (sha256(Buffer.from(req.sessions)) !== req.sessions_sha256) fail("practitioner sessions: sha256 differs after transport");
  const { py } = runtime;
  py.FS.mkdirTree("/bundle");
  py.FS.writeFile("/bundle/fundbook-engine.zip", zip);
  const call = (fn, ...a) => {
    try {
      return fn(...a);
    } catch (err) {
      fail(pyError(err));
    }
  };
  const fixtures = loadHelper(py, "./run_fixtures.py", "run_fixtures");
  const facts = JSON.parse(call(fixtures.verify, req.bundle, new Uint8Array(manifest), req.manifest, runtime.version));
  const helper = loadHelper(py, "./practitioners.py", "practitioners");
  runtime.takeOutput();
  emit({ event: "runtime", pyodide_version: runtime.version, load_ms: Math.round(runtime.loadMs), node_version: process.version,
         host: `${process.platform}-${process.arch} ${hostname()}`, bundle_sha256: req.bundle_sha256, ...facts });
  let index = 0;
  for (const line of req.sessions.split("\n")) {
    if (!line.trim()) continue;
    const t0 = performance.now();
    const out = JSON.parse(call(helper.execute, line));
    emit({ event: "session", index: index++, ...out, output: runtime.takeOutput(), duration_ms: Math.round(performance.now() - t0) });
  }
  return { sessions: index };
}

export const ops = { practitioners: runPractitioners };
