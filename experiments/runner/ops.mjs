// The sampled re-execution as a function of an already started runtime, so
// that `make build` runs it in the one Pyodide runtime the build loads
// (builders/runner/session.mjs, op "sample" with this module) and sample.mjs stays a thin
// wrapper that starts a runtime of its own.
//
// Loads the engine bundle, checks it like the fixture runner does, imports the
// engine from the bundle's bytecode, then runs sweep tasks through
// experiments/work.py. Events: {"event": "runtime"}, one {"event": "task"}
// per task, {"event": "done"}.
// args: {bundle, bundleSha256, manifest, tasks, tasksSha256} (paths and hex digests)
import { fail, loadHelper, readBytes, sha256 } from "../../builders/runner/_pyodide.mjs";

const pyError = (err) => String(err.message || err).trim().split("\n").pop().replace(/^[A-Za-z_.]*(Stop|Error): /, "");

export function runSample(runtime, args, emit) {
  const zip = readBytes(args.bundle, "the engine bundle");
  if (sha256(zip) !== args.bundleSha256) fail(`${args.bundle}: sha256 expected ${args.bundleSha256}, actual ${sha256(zip)}`);
  const manifest = readBytes(args.manifest, "the bundle manifest");
  const tasks = readBytes(args.tasks, "the sampled tasks");
  if (sha256(tasks) !== args.tasksSha256) fail(`${args.tasks}: sha256 expected ${args.tasksSha256}, actual ${sha256(tasks)}`);
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
         bundle_sha256: args.bundleSha256, ...facts });
  let index = 0;
  for (const line of tasks.toString("utf8").split("\n")) {
    if (!line.trim()) continue;
    const result = JSON.parse(call(work.run_task_json, line));
    emit({ event: "task", index: index++, result });
  }
  const modules = call(fixtures._modules);  // stops unless every engine module came from the bundle
  emit({ event: "done", tasks: index, engine_modules: modules.length });
  return { tasks: index };
}

// The decision rules in Pyodide: experiments/rules.py, its sha256 checked, recomputes each decision
// from its payload (spec, item ids, rows: experiments/rules.py `payload`), one JSON line each.
// Events: {"event": "rules"}, one {"event": "decision"} per payload, {"event": "done"}.
// args: {rules, rulesSha256, payloads, payloadsSha256}
export function runDecide(runtime, args, emit) {
  const source = readBytes(args.rules, "the decision rules");
  if (sha256(source) !== args.rulesSha256) fail(`${args.rules}: sha256 expected ${args.rulesSha256}, actual ${sha256(source)}`);
  const payloads = readBytes(args.payloads, "the decision payloads");
  if (sha256(payloads) !== args.payloadsSha256) fail(`${args.payloads}: sha256 expected ${args.payloadsSha256}, actual ${sha256(payloads)}`);
  const { py } = runtime;
  py.FS.mkdirTree("/decide");
  py.FS.writeFile("/decide/fundbook_rules.py", source);
  const call = (fn, ...a) => {
    try {
      return fn(...a);
    } catch (err) {
      fail(pyError(err));
    }
  };
  call(() => py.runPython(`import sys\nif "/decide" not in sys.path: sys.path.insert(0, "/decide")`));
  const rules = call(() => py.pyimport("fundbook_rules"));
  emit({ event: "rules", pyodide_version: runtime.version, rules_sha256: args.rulesSha256 });
  let index = 0;
  for (const line of payloads.toString("utf8").split("\n")) {
    if (!line.trim()) continue;
    const t0 = performance.now();
    const text = call(rules.recompute_json, line);
    emit({ event: "decision", index: index++, ms: Math.round(performance.now() - t0), result: JSON.parse(text) });
  }
  emit({ event: "done", decisions: index });
  return { decisions: index };
}

// The ops builders/runner/session.mjs runs from this module ({"op", "module": "experiments/runner/ops.mjs"}).
export const ops = {
  sample: (runtime, req, emit) => runSample(runtime, {
    bundle: req.bundle, bundleSha256: req.bundle_sha256, manifest: req.manifest, tasks: req.tasks, tasksSha256: req.tasks_sha256,
  }, emit),
  decide: (runtime, req, emit) => runDecide(runtime, {
    rules: req.rules, rulesSha256: req.rules_sha256, payloads: req.payloads, payloadsSha256: req.payloads_sha256,
  }, emit),
};
