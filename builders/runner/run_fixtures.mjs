// build-runs, the Pyodide half: load the engine bundle in one pinned Pyodide
// runtime (PYTHONHASHSEED=0) and execute fixtures from it, each from fresh
// module state. Emits one JSON line per event on stdout.
//
//   node builders/runner/run_fixtures.mjs --bundle build/engine/fundbook-engine.zip \
//        --bundle-sha256 HEX [--manifest build/engine/manifest.json] \
//        [--fixture '{"kind":"reference","episode":"W1"}' ...] [--fixtures PLAN.jsonl --fixtures-sha256 HEX]
//
// Without --fixture/--fixtures it executes every published fixture.
// Exit codes: 0 ok; 1 integrity or input error (one line on stderr); 64 usage.
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { EXIT_USAGE, fail, loadHelper, readBytes, sha256, startPyodide } from "./_pyodide.mjs";

let args;
try {
  args = parseArgs({
    options: {
      bundle: { type: "string" }, "bundle-sha256": { type: "string" }, manifest: { type: "string" },
      fixture: { type: "string", multiple: true }, fixtures: { type: "string" }, "fixtures-sha256": { type: "string" },
    },
  }).values;
} catch (err) {
  fail(err.message, EXIT_USAGE);
}
if (!args.bundle || !args["bundle-sha256"]) fail("usage: run_fixtures.mjs --bundle ZIP --bundle-sha256 HEX [...]", EXIT_USAGE);
if (args.fixtures && !args["fixtures-sha256"]) fail("--fixtures needs --fixtures-sha256", EXIT_USAGE);

const emit = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const pyError = (err) => String(err.message || err).trim().split("\n").pop().replace(/^[A-Za-z_.]*Stop: /, "");

const zip = readBytes(args.bundle, "the engine bundle");
if (sha256(zip) !== args["bundle-sha256"]) {
  fail(`${args.bundle}: sha256 expected ${args["bundle-sha256"]}, actual ${sha256(zip)}`);
}
const manifest = args.manifest ? readBytes(args.manifest, "the bundle manifest") : null;
let plan = null;
if (args.fixtures) {
  plan = readBytes(args.fixtures, "the fixture plan");
  if (sha256(plan) !== args["fixtures-sha256"]) {
    fail(`${args.fixtures}: sha256 expected ${args["fixtures-sha256"]}, actual ${sha256(plan)}`);
  }
}

const runtime = await startPyodide();
const { py } = runtime;
py.FS.mkdirTree("/bundle");
py.FS.writeFile("/bundle/fundbook-engine.zip", zip);
const helper = loadHelper(py, "./run_fixtures.py", "run_fixtures");
const call = (fn, ...a) => {
  try {
    return JSON.parse(fn(...a));
  } catch (err) {
    fail(pyError(err));
  }
};
const facts = call(helper.verify, args.bundle, manifest ? new Uint8Array(manifest) : undefined, args.manifest || undefined, runtime.version);
runtime.takeOutput();

let specs = [];
if (plan) specs.push(...call(helper.plan, plan.toString("utf8"), args.fixtures));
for (const text of args.fixture || []) {
  try {
    specs.push(JSON.parse(text));
  } catch (err) {
    fail(`--fixture ${text}: fixture does not parse (${err.message}); sha256 of the argument ${sha256(Buffer.from(text))}`);
  }
}
if (!plan && !args.fixture) specs = call(helper.all_specs);
const published = plan ? call(helper.published_run_ids) : undefined;

emit({
  event: "runtime", pyodide_version: runtime.version, load_ms: Math.round(runtime.loadMs),
  node_version: process.version, host: `${process.platform}-${process.arch} ${hostname()}`,
  bundle_sha256: args["bundle-sha256"], fixtures: specs.length, published_run_ids: published, ...facts,
});
let index = 0;
for (const spec of specs) {
  const started = new Date();
  const t0 = performance.now();
  const out = call(helper.execute, JSON.stringify(spec));
  const durationMs = performance.now() - t0;
  emit({
    event: "fixture", index: index++, spec, ...out, output: runtime.takeOutput(),
    started: started.toISOString(), finished: new Date().toISOString(), duration_ms: Math.round(durationMs),
    duration_us: Math.round(durationMs * 1000),
  });
}
emit({ event: "done", fixtures: specs.length });
