// build-desk's memory snapshot: the pinned Pyodide with the desk's stdlib and
// the engine bundle imported, as one image the desk's worker restores instead
// of starting Python and importing the engine (site/assets/desk/worker.js).
//
//   node builders/desk/snapshot.mjs --stdlib FILE --bundle ZIP --bundle-sha256 HEX --manifest-sha256 HEX --out FILE
//
// Prints one JSON line: {snapshot_sha256, bytes, key, ...}. The image is a
// function of its inputs: everything the runtime would draw from the host
// while it starts (random bytes, the clock) is fixed here, so two builds give
// the same bytes (tests/desk/test_snapshot.py). The interpreter's seeds are
// therefore the same in every restored desk: the engine draws no randomness,
// and its hash seed is 0, as in every published run.
//
// Exit codes: 0 ok; 1 input or runtime error (one line on stderr); 64 usage.
import nodeCrypto from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

const EXIT_USAGE = 64;
const fail = (message, code = 1) => {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
};

let args;
try {
  args = parseArgs({ options: { stdlib: { type: "string" }, bundle: { type: "string" }, "bundle-sha256": { type: "string" },
    "manifest-sha256": { type: "string" }, out: { type: "string" } } }).values;
} catch (err) {
  fail(err.message, EXIT_USAGE);
}
for (const key of ["stdlib", "bundle", "bundle-sha256", "manifest-sha256", "out"]) {
  if (!args[key]) fail(`usage: snapshot.mjs --stdlib FILE --bundle ZIP --bundle-sha256 HEX --manifest-sha256 HEX --out FILE (missing --${key})`, EXIT_USAGE);
}
const sha256 = (bytes) => nodeCrypto.createHash("sha256").update(bytes).digest("hex");
const read = (path, what) => {
  try {
    return readFileSync(path);
  } catch (err) {
    fail(`${path}: cannot read ${what} (${err.code || err.message})`);
  }
};
const bundle = read(args.bundle, "the engine bundle");
if (sha256(bundle) !== args["bundle-sha256"]) fail(`${args.bundle}: sha256 expected ${args["bundle-sha256"]}, actual ${sha256(bundle)}`);
const stdlib = read(args.stdlib, "the desk's stdlib");

// What the runtime takes from the host while it starts, fixed (see above).
const EPOCH_MS = 1788739200000; // the bundle's SOURCE_DATE_EPOCH
let tick = 0;
nodeCrypto.randomFillSync = (view) => {
  new Uint8Array(view.buffer, view.byteOffset, view.byteLength).fill(7);
  return view;
};
Date.now = () => EPOCH_MS;
performance.now = () => (tick += 1);

let mod;
try {
  mod = await import("pyodide");
} catch {
  fail("the pinned Pyodide runtime is not installed: run `npm ci` (or `make node_modules/.installed`)");
}
// The lock the worker hands Pyodide (site/assets/desk/worker.js MINIMAL_LOCK): no packages.
const lock = JSON.parse(read(new URL("../../node_modules/pyodide/pyodide-lock.json", import.meta.url), "the runtime's lock file"));
const py = await mod.loadPyodide({
  _makeSnapshot: true, args: [], _sysExecutable: "python", stdLibURL: args.stdlib,
  env: { PYTHONHASHSEED: "0", PYTHONNODEBUGRANGES: "1", HOME: "/home/pyodide" },
  lockFileContents: { info: lock.info, packages: {} },
});
// The key the worker checks after restoring (sys._fundbook_snapshot), beside
// the one it reads from runtime.json before fetching the image.
const key = { format: 1, pyodide_version: mod.version, stdlib_sha256: sha256(stdlib), bundle_sha256: args["bundle-sha256"],
  manifest_sha256: args["manifest-sha256"] };
py.FS.mkdirTree("/fundbook");
py.FS.writeFile("/fundbook/fundbook-engine.zip", bundle);
try {
  py.runPython(`import sys\nsys.path.insert(0, "/fundbook/fundbook-engine.zip")\nimport engine._session\n`
    + `sys._fundbook_snapshot = ${JSON.stringify(JSON.stringify(key))}`);
} catch (err) {
  fail(`importing the engine from ${args.bundle}: ${String(err.message || err).trim().split("\n").pop()}`);
}
const image = py.makeMemorySnapshot();
const tmp = `${args.out}.tmp`;
writeFileSync(tmp, image);
renameSync(tmp, args.out);
process.stdout.write(JSON.stringify({ ...key, snapshot_sha256: sha256(image), bytes: image.length }) + "\n");
