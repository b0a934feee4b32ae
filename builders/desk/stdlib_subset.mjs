// build-desk: the desk's standard library. Selects the modules listed in
// stdlib_modules.txt from the pinned runtime's own stdlib zip
// (stdlib_subset.py) and compiles them with that runtime (stdlib_compile.py),
// started with PYTHONNODEBUGRANGES=1 (line numbers but no column ranges: a
// traceback loses only its ^^^ marks) and PYTHONOPTIMIZE=2 (no docstrings and
// no asserts in the stdlib's own code): 0.8 MB against 4.4 MB for the whole
// stdlib compiled as it is. The engine bundle is compiled apart, unchanged;
// tests/desk/test_stdlib_subset.py runs the desk's workload on this subset.
//   node builders/desk/stdlib_subset.mjs --out FILE
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";

const fail = (message, code = 1) => {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
};
let args;
try {
  args = parseArgs({ options: { out: { type: "string" } } }).values;
} catch (err) {
  fail(err.message, 64);
}
if (!args.out) fail("usage: stdlib_subset.mjs --out FILE", 64);

let pyodideDir;
let loadPyodide;
try {
  pyodideDir = dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
  ({ loadPyodide } = await import("pyodide"));
} catch {
  fail("the pinned Pyodide runtime is not installed: run `npm ci`");
}
const py = await loadPyodide({ env: { PYTHONNODEBUGRANGES: "1", PYTHONOPTIMIZE: "2", PYTHONHASHSEED: "0" } });
// with no debug ranges, a code object's positions carry no columns
if (!py.runPython("all(p[2] is None for p in compile('x', '', 'eval').co_positions())")) {
  fail("the runtime ignored PYTHONNODEBUGRANGES");
}
py.FS.mkdirTree("/desk");
py.FS.writeFile("/desk/stock.zip", readFileSync(join(pyodideDir, "python_stdlib.zip")));
for (const name of ["stdlib_subset.py", "stdlib_compile.py", "stdlib_modules.txt"]) {
  py.FS.writeFile(`/desk/${name}`, readFileSync(new URL(`./${name}`, import.meta.url)));
}
py.runPython("import sys\nsys.path.insert(0, '/desk')");
const t0 = performance.now();
let facts;
try {
  facts = JSON.parse(py.runPython(`
import json, stdlib_compile, stdlib_subset
modules = stdlib_subset.read_modules(open("/desk/stdlib_modules.txt", encoding="utf-8").read())
selected = stdlib_subset.select_sources("/desk/stock.zip", modules, "/desk/src.zip")
json.dumps({**selected, **stdlib_compile.build("/desk/src.zip", "/desk/out.zip")})`));
} catch (err) {
  fail(String(err.message || err).trim().split("\n").pop());
}
const tmp = `${args.out}.tmp`;
const bytes = py.FS.readFile("/desk/out.zip");
writeFileSync(tmp, bytes);
renameSync(tmp, args.out);
process.stdout.write(JSON.stringify({ ...facts, bytes: bytes.length, pyodide_version: py.version, compile_ms: Math.round(performance.now() - t0) }) + "\n");
