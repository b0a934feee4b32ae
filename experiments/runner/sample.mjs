// The sampled re-execution alone (its own runtime): see ./ops.mjs runSample,
// which `make build` runs in the build's one runtime instead.
// One JSON line per event on stdout.
//
//   node experiments/runner/sample.mjs --bundle build/engine/fundbook-engine.zip \
//        --bundle-sha256 HEX --manifest build/engine/manifest.json \
//        --tasks TASKS.jsonl --tasks-sha256 HEX
//
// Exit codes: 0 ok; 1 integrity or input error (one line on stderr); 64 usage.
import { parseArgs } from "node:util";
import { EXIT_USAGE, fail, startPyodide } from "../../builders/runner/_pyodide.mjs";
import { runSample } from "./ops.mjs";

let args;
try {
  args = parseArgs({
    options: {
      bundle: { type: "string" }, "bundle-sha256": { type: "string" }, manifest: { type: "string" },
      tasks: { type: "string" }, "tasks-sha256": { type: "string" },
    },
  }).values;
} catch (err) {
  fail(err.message, EXIT_USAGE);
}
for (const key of ["bundle", "bundle-sha256", "manifest", "tasks", "tasks-sha256"]) {
  if (!args[key]) fail(`usage: sample.mjs --bundle ZIP --bundle-sha256 HEX --manifest JSON --tasks JSONL --tasks-sha256 HEX (missing --${key})`, EXIT_USAGE);
}
const emit = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const runtime = await startPyodide();
runSample(runtime, {
  bundle: args.bundle, bundleSha256: args["bundle-sha256"], manifest: args.manifest,
  tasks: args.tasks, tasksSha256: args["tasks-sha256"],
}, emit);
