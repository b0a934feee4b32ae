// build-desk, the Pyodide half, as a function of a started runtime: compile the
// pinned runtime's stdlib with that runtime, so the desk can hand Pyodide a
// stdlib that needs no compiling. Used by builders/desk/stdlib.mjs (alone) and
// builders/runner/session.mjs (inside `make build`'s one runtime).
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fail, loadHelper } from "../runner/_pyodide.mjs";

export function compileStdlib(runtime, out) {
  const { py } = runtime;
  let pyodideDir;
  try {
    pyodideDir = dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
  } catch {
    fail("the pinned Pyodide runtime is not installed: run `npm ci`");
  }
  py.FS.mkdirTree("/desk");
  py.FS.writeFile("/desk/in.zip", readFileSync(join(pyodideDir, "python_stdlib.zip")));
  const helper = loadHelper(py, "../desk/stdlib_compile.py", "stdlib_compile");
  const t0 = performance.now();
  const facts = helper.build("/desk/in.zip", "/desk/out.zip").toJs({ dict_converter: Object.fromEntries });
  const tmp = `${out}.tmp`;
  writeFileSync(tmp, py.FS.readFile("/desk/out.zip"));
  renameSync(tmp, out);
  py.FS.unlink("/desk/in.zip");
  py.FS.unlink("/desk/out.zip");
  return { ...facts, pyodide_version: runtime.version, compile_ms: Math.round(performance.now() - t0) };
}
