// build-desk, the Pyodide half: compile the pinned runtime's stdlib with that
// runtime, so the desk can hand Pyodide a stdlib that needs no compiling.
//   node builders/desk/stdlib.mjs --out FILE
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
if (!args.out) fail("usage: stdlib.mjs --out FILE", 64);

let pyodideDir;
let loadPyodide;
try {
  pyodideDir = dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
  ({ loadPyodide } = await import("pyodide"));
} catch {
  fail("the pinned Pyodide runtime is not installed: run `npm ci`");
}
const py = await loadPyodide();
py.FS.mkdirTree("/desk");
py.FS.writeFile("/desk/in.zip", readFileSync(join(pyodideDir, "python_stdlib.zip")));
py.FS.writeFile("/desk/stdlib_compile.py", readFileSync(new URL("./stdlib_compile.py", import.meta.url)));
py.runPython("import sys\nsys.path.insert(0, '/desk')");
const t0 = performance.now();
const facts = py.pyimport("stdlib_compile").build("/desk/in.zip", "/desk/out.zip").toJs({ dict_converter: Object.fromEntries });
const tmp = `${args.out}.tmp`;
writeFileSync(tmp, py.FS.readFile("/desk/out.zip"));
renameSync(tmp, args.out);
process.stdout.write(JSON.stringify({ ...facts, pyodide_version: py.version, compile_ms: Math.round(performance.now() - t0) }) + "\n");
