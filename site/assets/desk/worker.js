// The engine's home in the browser: a module Web Worker running the vendored
// Pyodide with the published engine bundle on sys.path.
//
// Order matters for the integrity claim: the runtime and the bundle are
// fetched in parallel, the bundle's sha256 is checked against the manifest,
// and only then is anything of the engine imported. A mismatch is reported
// as a plain error and the worker refuses every call.
import { loadPyodide } from "../../vendor/pyodide/pyodide.mjs";

const ROOT = new URL("../../", import.meta.url);
const PYODIDE_URL = new URL("vendor/pyodide/", ROOT).href;
const ENGINE_URL = new URL("engine/", ROOT).href;
const BUNDLE_NAME = "fundbook-engine.zip";

// The engine needs no package from the Pyodide distribution, so the worker
// hands Pyodide a lock file with none instead of fetching the 120 KB one.
// tests/desk/test_assets.py keeps `info` equal to the vendored lock file's.
const MINIMAL_LOCK = {
  info: { abi_version: "2026_0", arch: "wasm32", platform: "emscripten_5_0_3", python: "3.14.2" },
  packages: {},
};

const now = () => performance.now();

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

// Where the manifest states the zip's digest. The build's manifest is the
// authority; these are the shapes it may take, and anything else is an error.
export function bundleDigest(manifest, name = BUNDLE_NAME) {
  const candidates = [
    manifest?.bundle?.sha256,
    manifest?.bundle_sha256,
    manifest?.files?.[name]?.sha256,
    typeof manifest?.files?.[name] === "string" ? manifest.files[name] : undefined,
    manifest?.artifacts?.[name]?.sha256,
  ];
  const found = candidates.find((v) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v));
  if (!found) throw new Error(`engine/manifest.json: no sha256 for ${name} (expected bundle.sha256)`);
  return found;
}

function bundleName(manifest) {
  const path = manifest?.bundle?.path ?? manifest?.bundle?.file;
  return typeof path === "string" && /^[\w.-]+\.zip$/.test(path) ? path : BUNDLE_NAME;
}

async function fetchOk(url, what) {
  const response = await fetch(url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} for ${url}`);
  return response;
}

async function fetchBundle() {
  const t0 = now();
  const manifest = await (await fetchOk(ENGINE_URL + "manifest.json", "engine manifest")).json();
  const name = bundleName(manifest);
  const expected = bundleDigest(manifest, name);
  const bytes = new Uint8Array(await (await fetchOk(ENGINE_URL + name, "engine bundle")).arrayBuffer());
  const actual = hex(await crypto.subtle.digest("SHA-256", bytes));
  if (actual !== expected) {
    throw new Error(`engine bundle ${name}: sha256 ${actual} does not match the manifest's ${expected}; nothing was run`);
  }
  return { manifest, name, bytes, sha256: actual, fetch_ms: now() - t0 };
}

async function boot() {
  const t0 = now();
  // Start the runtime and the bundle together; import only after the check.
  const runtime = loadPyodide({ indexURL: PYODIDE_URL, lockFileContents: MINIMAL_LOCK, fullStdLib: false })
    .then((py) => ({ py, runtime_ms: now() - t0 }));
  const [{ py, runtime_ms }, bundle] = await Promise.all([runtime, fetchBundle()]);
  const t1 = now();
  const path = `/fundbook/${bundle.name}`;
  py.FS.mkdirTree("/fundbook");
  py.FS.writeFile(path, bundle.bytes);
  py.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(path)})\nimport engine._session`);
  const session = py.pyimport("engine._session");
  const engine = py.pyimport("engine");
  const info = {
    bundle_sha256: bundle.sha256,
    bundle_name: bundle.name,
    manifest: bundle.manifest,
    engine_version: engine.ENGINE_VERSION,
    families: engine.FAMILIES.toJs(),
    episodes: engine.EPISODES.toJs(),
    python_version: py.runPython("import sys; sys.version.split()[0]"),
    pyodide_version: py.version,
    timings: { runtime_ms, bundle_fetch_ms: bundle.fetch_ms, import_ms: now() - t1, ready_ms: now() - t0 },
  };
  return { py, session, info };
}

const booted = boot();

// Calls into engine._session: each returns its JSON string unchanged.
const CALLS = {
  state: (s, a) => s.desk_state(a[0], a[1]),
  submit: (s, a) => s.desk_submit(a[0], a[1], a[2]),
  skip: (s, a) => s.desk_skip(a[0], a[1]),
  finalize: (s, a) => s.desk_finalize(a[0], a[1]),
  tool: (s, a) => s.desk_tool(a[0], a[1], a[2]),
  verify: (s, a) => s.verify_run(a[0]),
};

self.onmessage = async (event) => {
  const { id, op, args } = event.data;
  try {
    const { session, info } = await booted;
    if (op === "info") {
      self.postMessage({ id, ok: true, value: info });
      return;
    }
    const call = CALLS[op];
    if (!call) throw new Error(`unknown call ${op}`);
    const t0 = now();
    const text = call(session, args || []);
    self.postMessage({ id, ok: true, value: text, ms: now() - t0 });
  } catch (error) {
    self.postMessage({ id, ok: false, error: String(error?.message ?? error).split("\n").filter(Boolean).pop() });
  }
};
