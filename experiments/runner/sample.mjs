// The sampled re-execution: load the engine bundle in the pinned Pyodide
// (Node, PYTHONHASHSEED=0), check it like the fixture runner does, then run
// sweep tasks through experiments/work.py against the bundle's engine.
// One JSON line per event on stdout.
//
//   node experiments/runner/sample.mjs --bundle build/engine/fundbook-engine.zip \
//        --bundle-sha256 HEX --manifest build/engine/manifest.json \
//        --tasks TASKS.jsonl --tasks-sha256 HEX
//
// Exit codes: 0 ok; 1 integrity or input error (one line on stderr); 64 usage.
import { parseArgs } from "node:util";
import { EXIT_USAGE, fail, loadHelper, readBytes, sha256, startPyodide } from "../../builders/runner/_pyodide.mjs";

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
const pyError = (err) => String(err.message || err).trim().split("\n").pop().replace(/^[A-Za-z_.]*(Stop|Error): /, "");

const zip = readBytes(args.bundle, "the engine bundle");
if (sha256(zip) !== args["bundle-sha256"]) fail(`${args.bundle}: sha256 expected ${args["bundle-sha256"]}, actual ${sha256(zip)}`);
const manifest = readBytes(args.manifest, "the bundle manifest");
const tasks = readBytes(args.tasks, "the sampled tasks");
if (sha256(tasks) !== args["tasks-sha256"]) fail(`${args.tasks}: sha256 expected ${args["tasks-sha256"]}, actual ${sha256(tasks)}`);

const runtime = await startPyodide();
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
const facts = JSON.parse(call(fixtures.verify, args.bundle, new Uint8Array(manifest), args.manifest, runtime.version));
call(fixtures._engine);  // the engine, imported from the bundle's bytecode
const work = call(() => loadHelper(py, "../../experiments/work.py", "fundbook_work"));
emit({ event: "runtime", pyodide_version: runtime.version, load_ms: Math.round(runtime.loadMs), node_version: process.version,
       bundle_sha256: args["bundle-sha256"], ...facts });
let index = 0;
for (const line of tasks.toString("utf8").split("\n")) {
  if (!line.trim()) continue;
  const result = JSON.parse(call(work.run_task_json, line));
  emit({ event: "task", index: index++, result });
}
const modules = call(fixtures._modules);  // stops unless every engine module came from the bundle
emit({ event: "done", tasks: index, engine_modules: modules.length });
