// The desk's standard-library import trace: start the pinned Pyodide as the
// browser worker does (the engine bundle on sys.path, engine._session
// imported), run builders/desk/stdlib_workload.py and print, as one JSON
// line, the stdlib modules that were loaded and any call that failed for want
// of a module.
//   node builders/desk/stdlib_trace.mjs --bundle ZIP [--stdlib ZIP] [--record RUN.json ...]
// --stdlib starts the runtime from that stdlib zip (the subset under test)
// instead of the runtime's own. Exit codes: 0 ok (failures are in the JSON);
// 1 the runtime or the bundle could not be loaded; 64 usage.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

const fail = (message, code = 1) => {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
};
let args;
try {
  args = parseArgs({ options: { bundle: { type: "string" }, stdlib: { type: "string" }, record: { type: "string", multiple: true } } }).values;
} catch (err) {
  fail(err.message, 64);
}
if (!args.bundle) fail("usage: stdlib_trace.mjs --bundle ZIP [--stdlib ZIP] [--record RUN.json ...]", 64);
const read = (path, what) => {
  try {
    return readFileSync(path);
  } catch (err) {
    fail(`${path}: cannot read ${what} (${err.code || err.message})`);
  }
};
const bundle = read(args.bundle, "the engine bundle");
const records = (args.record || []).map((p) => read(p, "a run record").toString("utf8"));
if (args.stdlib) read(args.stdlib, "the stdlib zip");

let loadPyodide;
try {
  ({ loadPyodide } = await import("pyodide"));
} catch {
  fail("the pinned Pyodide runtime is not installed: run `npm ci`");
}
// As the worker starts it: no package lock entries, the stdlib given or the runtime's own.
const options = { env: { PYTHONHASHSEED: "0" } };
if (args.stdlib) options.stdLibURL = resolve(args.stdlib);
const py = await loadPyodide(options);
py.FS.mkdirTree("/fundbook");
py.FS.writeFile("/fundbook/fundbook-engine.zip", bundle);
py.FS.mkdirTree("/helpers");
py.FS.writeFile("/helpers/stdlib_workload.py", readFileSync(new URL("./stdlib_workload.py", import.meta.url)));
// the worker's own calls, in its order
py.runPython('import sys\nsys.path.insert(0, "/fundbook/fundbook-engine.zip")\nimport engine._session');
const engine = py.pyimport("engine");
engine.FAMILIES.toJs();
engine.EPISODES.toJs();
py.runPython("import sys; sys.version.split()[0]");
// an exception that reaches JavaScript is formatted by the runtime
try {
  py.runPython("raise ValueError('probe')");
} catch {
  // expected
}
py.runPython('import sys\nsys.path.insert(0, "/helpers")');
const out = JSON.parse(py.pyimport("stdlib_workload").run(JSON.stringify(records)));
process.stdout.write(JSON.stringify({ ...out, pyodide_version: py.version }) + "\n");
