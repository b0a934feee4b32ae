// build-engine, the Pyodide half: start the pinned runtime, copy the engine
// sources into it, compile them there and write the bundle + manifest.
//   node builders/runner/compile_bundle.mjs --config CONFIG.json --out DIR
// CONFIG: {"sources": [{"path", "sha256"}], "source_date_epoch": N} (paths repo-relative).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { EXIT_USAGE, fail, loadHelper, readBytes, sha256, startPyodide } from "./_pyodide.mjs";

let args;
try {
  args = parseArgs({ options: { config: { type: "string" }, out: { type: "string" } } }).values;
} catch (err) {
  fail(err.message, EXIT_USAGE);
}
if (!args.config || !args.out) fail("usage: compile_bundle.mjs --config CONFIG.json --out DIR", EXIT_USAGE);

const configBytes = readBytes(args.config, "the build configuration");
const config = JSON.parse(configBytes.toString("utf8"));
const runtime = await startPyodide();
const { py } = runtime;
for (const item of config.sources) {
  const path = `/build/src/${item.path}`;
  py.FS.mkdirTree(dirname(path));
  py.FS.writeFile(path, readBytes(item.path, "an engine source"));
}
py.FS.mkdirTree("/build/out");
const helper = loadHelper(py, "./compile_bundle.py", "compile_bundle");
const t0 = performance.now();
let built;
try {
  built = helper.build(configBytes.toString("utf8"), runtime.version).toJs({ dict_converter: Object.fromEntries });
} catch (err) {
  fail(`compiling the engine under Pyodide ${runtime.version}: ${String(err.message).trim().split("\n").pop()}`);
}
const compileMs = performance.now() - t0;
mkdirSync(args.out, { recursive: true });
const zip = Buffer.from(built.zip);
const manifest = Buffer.from(built.manifest);
writeFileSync(join(args.out, "fundbook-engine.zip"), zip);
writeFileSync(join(args.out, "manifest.json"), manifest);
process.stdout.write(JSON.stringify({
  pyodide_version: runtime.version, load_ms: Math.round(runtime.loadMs), compile_ms: Math.round(compileMs),
  bundle_sha256: sha256(zip), manifest_sha256: sha256(manifest),
}) + "\n");
