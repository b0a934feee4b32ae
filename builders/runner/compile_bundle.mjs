// build-engine alone, the Pyodide half: start the pinned runtime and compile
// the engine in it (builders/runner/ops.mjs compileBundle).
//   node builders/runner/compile_bundle.mjs --config CONFIG.json --out DIR
// CONFIG: {"sources": [{"path", "sha256"}], "source_date_epoch": N} (paths repo-relative).
import { parseArgs } from "node:util";
import { EXIT_USAGE, fail, readBytes, startPyodide } from "./_pyodide.mjs";
import { compileBundle } from "./ops.mjs";

let args;
try {
  args = parseArgs({ options: { config: { type: "string" }, out: { type: "string" } } }).values;
} catch (err) {
  fail(err.message, EXIT_USAGE);
}
if (!args.config || !args.out) fail("usage: compile_bundle.mjs --config CONFIG.json --out DIR", EXIT_USAGE);
const configText = readBytes(args.config, "the build configuration").toString("utf8");
const runtime = await startPyodide();
process.stdout.write(JSON.stringify(compileBundle(runtime, configText, args.out)) + "\n");
