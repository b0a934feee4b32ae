// The engine's home in the browser: a module Web Worker running the vendored
// Pyodide with the published engine bundle on sys.path.
//
// Order matters for the integrity claim: the runtime and the bundle are
// fetched in parallel, the bundle is checked (bundle.js: its sha256 and the
// manifest's against provenance.json, every file against the manifest), and
// only then is anything of the engine imported. A mismatch is reported as a
// plain error and the worker refuses every call.
import { loadPyodide } from "../../vendor/pyodide/pyodide.mjs";
import { BUNDLE_NAME, checkBundle, MANIFEST_NAME, PROVENANCE_NAME } from "./bundle.js";
import { decide } from "../fundbook/decisions-worker.js"; // a comparison's verify: its rules rerun here

const ROOT = new URL("../../", import.meta.url);
const PYODIDE_URL = new URL("vendor/pyodide/", ROOT).href;
const ENGINE_URL = new URL("engine/", ROOT).href;

// The engine needs no package from the Pyodide distribution, so the worker
// hands Pyodide a lock file with none instead of fetching the 120 KB one.
// tests/desk/test_assets.py keeps `info` equal to the vendored lock file's.
const MINIMAL_LOCK = {
  info: { abi_version: "2026_0", arch: "wasm32", platform: "emscripten_5_0_3", python: "3.14.2" },
  packages: {},
};

// The desk's standard library (`make build-desk`): only the modules the engine
// and the desk load, compiled by the pinned runtime. Always this one: the site
// build makes it, so no request probes for it first.
const STDLIB_URL = new URL("./runtime/python_stdlib.zip", import.meta.url).href;

const now = () => performance.now();

// Start-up progress: "bundle" (fetched and checked), "runtime" (Pyodide
// started), "import" (engine imported). The first two complete in either
// order: they load side by side.
function progress(stage, t0) {
  self.postMessage({ progress: { stage, ms: Math.round(now() - t0) } });
}

async function fetchBytes(name) {
  const url = ENGINE_URL + name;
  const response = await fetch(url);
  if (!response.ok) throw new Error(`engine/${name}: HTTP ${response.status}; nothing was run`);
  return new Uint8Array(await response.arrayBuffer());
}

async function fetchBundle(t0) {
  const [zipBytes, manifestBytes, provenanceBytes] = await Promise.all(
    [BUNDLE_NAME, MANIFEST_NAME, PROVENANCE_NAME].map(fetchBytes));
  let provenance;
  try {
    provenance = JSON.parse(new TextDecoder().decode(provenanceBytes));
  } catch {
    throw new Error(`engine/${PROVENANCE_NAME}: not valid JSON; nothing was run`);
  }
  const checked = await checkBundle(zipBytes, manifestBytes, provenance);
  progress("bundle", t0);
  return { ...checked, bytes: zipBytes, fetch_ms: now() - t0 };
}

async function boot() {
  const t0 = now();
  // Start the runtime and the bundle together; import only after the check.
  const bundle = fetchBundle(t0);
  const runtime = loadPyodide({ indexURL: PYODIDE_URL, lockFileContents: MINIMAL_LOCK, stdLibURL: STDLIB_URL })
    .then((py) => {
      progress("runtime", t0);
      return { py, runtime_ms: now() - t0 };
    });
  const [{ py, runtime_ms }, checked] = await Promise.all([runtime, bundle]);
  const compiledFor = checked.manifest.runtime?.pyodide_version;
  if (compiledFor !== py.version) {
    throw new Error(`engine bundle ${BUNDLE_NAME}: compiled for Pyodide ${compiledFor}, this runtime is ${py.version}; nothing was run`);
  }
  const t1 = now();
  const path = `/fundbook/${BUNDLE_NAME}`;
  py.FS.mkdirTree("/fundbook");
  py.FS.writeFile(path, checked.bytes);
  py.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(path)})\nimport engine._session`);
  const session = py.pyimport("engine._session");
  const engine = py.pyimport("engine");
  progress("import", t0);
  const info = {
    bundle_sha256: checked.bundleSha,
    manifest_sha256: checked.manifestSha,
    runtime: checked.manifest.runtime,
    stdlib: "desk subset",
    engine_version: engine.ENGINE_VERSION,
    families: engine.FAMILIES.toJs(),
    episodes: engine.EPISODES.toJs(),
    python_version: py.runPython("import sys; sys.version.split()[0]"),
    pyodide_version: py.version,
    timings: { runtime_ms, bundle_fetch_ms: checked.fetch_ms, import_ms: now() - t1, ready_ms: now() - t0 },
  };
  return { py, session, info };
}

const booted = boot();
booted.catch(() => {}); // reported to each caller below, not as an unhandled rejection

// Calls into engine._session: each returns its JSON string unchanged.
const CALLS = {
  state: (s, a) => s.desk_state(a[0], a[1]),
  submit: (s, a) => s.desk_submit(a[0], a[1], a[2]),
  skip: (s, a) => s.desk_skip(a[0], a[1]),
  finalize: (s, a) => s.desk_finalize(a[0], a[1]),
  tool: (s, a) => s.desk_tool(a[0], a[1], a[2]),
  verify: (s, a) => s.verify_run(a[0]),
  decide: (s, a, py) => decide(py, a[0], a[1]),
};

self.onmessage = async (event) => {
  const { id, op, args } = event.data;
  try {
    const { session, info, py } = await booted;
    if (op === "info") {
      self.postMessage({ id, ok: true, value: info });
      return;
    }
    const call = CALLS[op];
    if (!call) throw new Error(`unknown call ${op}`);
    const t0 = now();
    const text = call(session, args || [], py);
    self.postMessage({ id, ok: true, value: text, ms: now() - t0 });
  } catch (error) {
    self.postMessage({ id, ok: false, error: String(error?.message ?? error).split("\n").filter(Boolean).pop() });
  }
};
