// How the engine worker starts Pyodide: from the memory snapshot of the
// started engine when there is one for exactly this runtime and bundle, else
// cold. Both give the same interpreter state for the desk (the same stdlib, the
// engine imported from the same checked zip, hash seed 0 as in every published
// run); tests/desk/test_desk_start.py compares their packets.
import { loadPyodide, version } from "../../vendor/pyodide/pyodide.mjs";

const PYODIDE_URL = new URL("../../vendor/pyodide/", import.meta.url).href;
const RUNTIME_URL = new URL("./runtime/", import.meta.url);

// The engine needs no package from the Pyodide distribution, so the worker
// hands Pyodide a lock file with none instead of fetching the 120 KB one.
// tests/desk/test_assets.py keeps `info` equal to the vendored lock file's.
export const MINIMAL_LOCK = {
  info: { abi_version: "2026_0", arch: "wasm32", platform: "emscripten_5_0_3", python: "3.14.2" },
  packages: {},
};

// The desk's standard library (`make build-desk`): only the modules the engine
// and the desk load, compiled by the pinned runtime. Always this one: the site
// build makes it, so no request probes for it first.
const STDLIB_URL = new URL("python_stdlib.zip", RUNTIME_URL).href;
const OPTIONS = { indexURL: PYODIDE_URL, lockFileContents: MINIMAL_LOCK, stdLibURL: STDLIB_URL, env: { PYTHONHASHSEED: "0" } };

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");

async function fetchJson(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.json();
}

/**
 * The snapshot's bytes, or a one-line reason there is none to use: runtime.json
 * must name this Pyodide and the bundle and manifest the worker checked
 * (`provenance` resolves to their sha256 once the bundle check passed, or null),
 * and the image must hash to what runtime.json says.
 */
async function snapshotBytes(provenance) {
  let key;
  try {
    key = await fetchJson(new URL("runtime.json", RUNTIME_URL));
  } catch (error) {
    throw new Error(`no snapshot key (runtime/runtime.json: ${error.message})`);
  }
  if (key.format !== 1 || key.pyodide_version !== version) throw new Error(`the snapshot is for Pyodide ${key.pyodide_version}, this runtime is ${version}`);
  const image = fetch(new URL(key.snapshot?.file ?? "", RUNTIME_URL)).then(async (r) => {
    if (!r.ok) throw new Error(`runtime/${key.snapshot?.file}: HTTP ${r.status}`);
    return new Uint8Array(await r.arrayBuffer());
  });
  const checked = await provenance;
  if (!checked || checked.bundle_sha256 !== key.bundle_sha256 || checked.manifest_sha256 !== key.manifest_sha256) {
    image.catch(() => {});
    throw new Error(`the snapshot is of bundle ${String(key.bundle_sha256).slice(0, 12)}, not of the bundle checked here`);
  }
  const bytes = await image;
  const digest = hex(await crypto.subtle.digest("SHA-256", bytes));
  if (digest !== key.snapshot.sha256) throw new Error(`runtime/${key.snapshot.file}: sha256 ${digest} is not runtime.json's ${key.snapshot.sha256}`);
  return bytes;
}

/** {py, path: "snapshot" | "cold", note, ms}; onRuntime(path) once Python runs. */
export async function startRuntime({ cold = false, provenance, onRuntime = () => {} }) {
  const t0 = performance.now();
  let note = cold ? "cold start asked for (?start=cold)" : "";
  if (!cold) {
    try {
      const py = await loadPyodide({ ...OPTIONS, _loadSnapshot: snapshotBytes(provenance) });
      onRuntime("snapshot");
      return { py, path: "snapshot", note: "restored from the snapshot of this bundle", ms: performance.now() - t0 };
    } catch (error) {
      note = `cold start: ${String(error?.message ?? error).split("\n")[0]}`;
    }
  }
  const py = await loadPyodide(OPTIONS);
  onRuntime("cold");
  return { py, path: "cold", note, ms: performance.now() - t0 };
}
