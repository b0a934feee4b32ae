// An Inspect log's engine calls answered by the engine bundle in the pinned Pyodide: an op of
// builders/runner/session.mjs ({"op": "inspect_calls", "module": "launchers/runner/inspect_calls.mjs", ...}),
// so `fundbook inspect import` checks every tool result on the path every published run ran on.
// Request: {bundle, bundle_sha256, manifest, samples: JSONL text (a run of one sample's calls a line, each distinct
// argument text once: launchers/runner/inspect_calls.py), samples_sha256}
// Events: {"event": "runtime", ...}, one {"event": "sample", index, answers: [sha256 of each answer]} per line.
import { fail, loadHelper, readBytes, sha256 } from "../../builders/runner/_pyodide.mjs";

const pyError = (err) => String(err.message || err).trim().split("\n").pop().replace(/^[A-Za-z_.]*(Stop|Error): /, "");

export function runInspectCalls(runtime, req, emit) {
  const zip = readBytes(req.bundle, "the engine bundle");
  if (sha256(zip) !== req.bundle_sha256) fail(`${req.bundle}: sha256 expected ${req.bundle_sha256}, actual ${sha256(zip)}`);
  const manifest = readBytes(req.manifest, "the bundle manifest");
  if (sha256(Buffer.from(req.samples)) !== req.samples_sha256) fail("inspect calls: sha256 differs after transport");
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
  const helper = loadHelper(py, "../../launchers/runner/inspect_calls.py", "inspect_calls");
  runtime.takeOutput();
  emit({ event: "runtime", pyodide_version: runtime.version, node_version: process.version,
         bundle_sha256: req.bundle_sha256, ...facts });
  let index = 0;
  for (const line of req.samples.split("\n")) {
    if (!line.trim()) continue;
    const out = JSON.parse(call(helper.answer, line));
    emit({ event: "sample", index: index++, ...out, output: runtime.takeOutput() });
  }
  return { samples: index };
}

export const ops = { inspect_calls: runInspectCalls };
