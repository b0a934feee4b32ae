// Start the pinned Pyodide runtime in Node, offline, with Python's output
// captured as bytes (so a trace can carry digests of what the engine printed).
// Shared by the bundle compiler and the fixture runner.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

export const EXIT_ERROR = 1;
export const EXIT_USAGE = 64;

export function fail(message, code = EXIT_ERROR) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
}

export function sha256(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

export function readBytes(path, what) {
  try {
    return readFileSync(path);
  } catch (err) {
    fail(`${path}: cannot read ${what} (${err.code || err.message})`);
  }
}

// Never fall back to anything else: no runtime, no run.
export async function startPyodide() {
  let mod;
  try {
    mod = await import("pyodide");
  } catch (err) {
    fail("the pinned Pyodide runtime is not installed: run `npm ci` (or `make node_modules/.installed`)");
  }
  const captured = { stdout: [], stderr: [] };
  const t0 = performance.now();
  // No column ranges in compiled code (line numbers stay: a traceback loses only
  // its ^^^ marks): the bundle and the desk's stdlib are smaller, and every
  // stage of the build compiles alike in the one runtime it shares.
  const py = await mod.loadPyodide({ env: { PYTHONHASHSEED: "0", PYTHONNODEBUGRANGES: "1" } });
  const loadMs = performance.now() - t0;
  if (!py.runPython("all(p[2] is None for p in compile('x', '', 'eval').co_positions())")) {
    fail("the runtime ignored PYTHONNODEBUGRANGES");
  }
  for (const stream of ["stdout", "stderr"]) {
    const setter = stream === "stdout" ? "setStdout" : "setStderr";
    py[setter]({
      write: (buf) => {
        captured[stream].push(Buffer.from(buf));
        return buf.length;
      },
    });
  }
  const takeOutput = () => {
    const out = {};
    for (const stream of ["stdout", "stderr"]) {
      const bytes = Buffer.concat(captured[stream]);
      captured[stream] = [];
      out[stream] = { sha256: sha256(bytes), bytes: bytes.length };
    }
    return out;
  };
  return { py, version: mod.version, loadMs, takeOutput };
}

// Run a Python helper module that sits beside this file inside the runtime.
export function loadHelper(py, url, name) {
  const source = readFileSync(new URL(url, import.meta.url), "utf8");
  py.FS.mkdirTree("/helpers");
  py.FS.writeFile(`/helpers/${name}.py`, source);
  py.runPython(`import sys\nif "/helpers" not in sys.path: sys.path.insert(0, "/helpers")`);
  return py.pyimport(name);
}
