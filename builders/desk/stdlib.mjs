// build-desk alone: start the pinned runtime and compile its stdlib with it
// (builders/desk/stdlib_build.mjs). `make build` does the same inside its one
// runtime (builders/runner/session.mjs).
//   node builders/desk/stdlib.mjs --out FILE
import { parseArgs } from "node:util";
import { EXIT_USAGE, fail, startPyodide } from "../runner/_pyodide.mjs";
import { compileStdlib } from "./stdlib_build.mjs";

let args;
try {
  args = parseArgs({ options: { out: { type: "string" } } }).values;
} catch (err) {
  fail(err.message, EXIT_USAGE);
}
if (!args.out) fail("usage: stdlib.mjs --out FILE", EXIT_USAGE);
const runtime = await startPyodide();
process.stdout.write(JSON.stringify({ ...compileStdlib(runtime, args.out), load_ms: Math.round(runtime.loadMs) }) + "\n");
