// One pinned Pyodide runtime for a whole build: `make build` compiles the
// engine, executes every fixture, compiles the desk's stdlib and re-checks the
// experiments' sample in it, so the runtime is loaded once
// (builders/_session.py drives it).
//
//   node builders/runner/session.mjs      (requests on stdin, events on stdout)
//
// Request, one JSON line:  {"op": "compile", "config": "<json text>", "out": DIR, "root": DIR}
//                          {"op": "run", "bundle", "bundle_sha256", "manifest", "plan", "plan_sha256", "plan_label"}
//                          {"op": "stdlib", "out": FILE}
//                          {"op": NAME, "module": "<layer>/runner/<file>.mjs", ...}: an op a layer above
//                          builders brings in its own module (exported `ops`), e.g. the experiments'
//                          sampled re-execution (experiments/runner/ops.mjs, op "sample"); builders
//                          never names it, so the runner imports nothing above its own layer
// Events, one JSON line each: {"event": "ready", ...} once; per request the
// op's own events, then {"event": "end", "op", ...facts}. End of stdin ends the
// session. Any error: one line on stderr, exit 1 (the build stops).
import { hostname } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";
import { compileStdlib } from "../desk/stdlib_build.mjs";
import { EXIT_USAGE, fail, startPyodide } from "./_pyodide.mjs";
import { compileBundle, runFixtures } from "./ops.mjs";

const emit = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const runtime = await startPyodide();
emit({
  event: "ready", pyodide_version: runtime.version, load_ms: Math.round(runtime.loadMs), node_version: process.version,
  host: `${process.platform}-${process.arch} ${hostname()}`,
});

const ops = {
  compile: (req) => compileBundle(runtime, req.config, req.out, req.root),
  run: (req) => runFixtures(runtime, {
    bundle: req.bundle, bundleSha256: req.bundle_sha256, manifest: req.manifest,
    plan: { text: req.plan, sha256: req.plan_sha256, label: req.plan_label || "fixture plan" },
  }, emit),
  stdlib: (req) => compileStdlib(runtime, req.out),
};

// An op from a module of a layer above, loaded on first use (a build of the
// engine and runs alone loads none); only a runner module inside the checkout.
const OP_MODULE = /^[a-z][a-z_]*\/runner\/[a-z][a-z_]*\.mjs$/;
const modules = new Map();
async function moduleOp(req) {
  if (typeof req.module !== "string" || !OP_MODULE.test(req.module)) {
    fail(`session request: module ${JSON.stringify(req.module)} is not a runner module (expected <layer>/runner/<name>.mjs)`, EXIT_USAGE);
  }
  if (!modules.has(req.module)) modules.set(req.module, await import(pathToFileURL(resolve(req.module)).href));
  const op = (modules.get(req.module).ops || {})[req.op];
  if (typeof op !== "function") fail(`session request: ${req.module} has no op ${JSON.stringify(req.op)}`, EXIT_USAGE);
  return op(runtime, req, emit);
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!line.trim()) continue;
  let req;
  try {
    req = JSON.parse(line);
  } catch (err) {
    fail(`session request does not parse (${err.message})`, EXIT_USAGE);
  }
  const op = req.module !== undefined ? moduleOp : ops[req.op];
  if (!op) fail(`session request: unknown op ${JSON.stringify(req.op)} (expected compile, run, stdlib, or an op with its module)`, EXIT_USAGE);
  const t0 = performance.now();
  const facts = await op(req);
  emit({ event: "end", op: req.op, ms: Math.round(performance.now() - t0), ...facts });
}
