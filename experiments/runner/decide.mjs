// The decision rules in a Pyodide runtime of their own: see ./ops.mjs runDecide,
// which `make build` runs in the build's one runtime instead.
// One JSON line per event on stdout.
//
//   node experiments/runner/decide.mjs --rules experiments/rules.py --rules-sha256 HEX \
//        --payloads PAYLOADS.jsonl --payloads-sha256 HEX
//
// Exit codes: 0 ok; 1 integrity or input error (one line on stderr); 64 usage.
import { parseArgs } from "node:util";
import { EXIT_USAGE, fail, startPyodide } from "../../builders/runner/_pyodide.mjs";
import { runDecide } from "./ops.mjs";

let args;
try {
  args = parseArgs({
    options: {
      rules: { type: "string" }, "rules-sha256": { type: "string" },
      payloads: { type: "string" }, "payloads-sha256": { type: "string" },
    },
  }).values;
} catch (err) {
  fail(err.message, EXIT_USAGE);
}
for (const key of ["rules", "rules-sha256", "payloads", "payloads-sha256"]) {
  if (!args[key]) fail(`usage: decide.mjs --rules PY --rules-sha256 HEX --payloads JSONL --payloads-sha256 HEX (missing --${key})`, EXIT_USAGE);
}
const emit = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const runtime = await startPyodide();
runDecide(runtime, {
  rules: args.rules, rulesSha256: args["rules-sha256"], payloads: args.payloads, payloadsSha256: args["payloads-sha256"],
}, emit);
