// build-desk, the Pyodide half, as a function of a started runtime: select the
// stdlib modules the engine and the desk load (stdlib_subset.py, the list in
// stdlib_modules.txt) from the pinned runtime's own stdlib and compile them
// with that runtime (stdlib_compile.py: no docstrings or asserts, and no column
// ranges since every runtime of the build starts without them), so the desk
// hands Pyodide a small stdlib that needs no compiling: 0.8 MB against 4.4 MB. Used by builders/desk/stdlib.mjs (alone) and
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
  const subset = loadHelper(py, "../desk/stdlib_subset.py", "stdlib_subset");
  const helper = loadHelper(py, "../desk/stdlib_compile.py", "stdlib_compile");
  const t0 = performance.now();
  // only the modules the engine and the desk load (stdlib_modules.txt, from an import trace)
  const modules = subset.read_modules(readFileSync(new URL("./stdlib_modules.txt", import.meta.url), "utf8"));
  const selected = subset.select_sources("/desk/in.zip", modules, "/desk/src.zip").toJs({ dict_converter: Object.fromEntries });
  const facts = helper.build("/desk/src.zip", "/desk/out.zip").toJs({ dict_converter: Object.fromEntries });
  const tmp = `${out}.tmp`;
  writeFileSync(tmp, py.FS.readFile("/desk/out.zip"));
  renameSync(tmp, out);
  for (const f of ["/desk/in.zip", "/desk/src.zip", "/desk/out.zip"]) py.FS.unlink(f);
  return { ...selected, ...facts, pyodide_version: runtime.version, compile_ms: Math.round(performance.now() - t0) };
}
