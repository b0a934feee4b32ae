// The engine's home in the browser: a module Web Worker running the vendored
// Pyodide with the published engine bundle on sys.path.
//
// Order matters for the integrity claim: the runtime and the bundle are
// fetched in parallel, the bundle is checked (bundle.js: its sha256 and the
// manifest's against provenance.json, every file against the manifest), and
// only then is the engine answered from. A mismatch is reported as a plain
// error and the worker refuses every call.
//
// Two ways to start (start.js): restore the memory snapshot `make build-desk`
// made of the started engine (runtime/engine.snapshot, keyed by
// runtime/runtime.json to the exact runtime, stdlib, bundle and manifest), or,
// when there is none for the bundle checked here, a cold start (start Python,
// import the engine from the checked zip). `?start=cold` on the worker's URL
// forces the cold start (the tests compare the two).
import { BUNDLE_NAME, checkBundle, MANIFEST_NAME, PROVENANCE_NAME } from "./bundle.js";
import { startRuntime } from "./start.js";
import { bands, decide } from "../fundbook/decisions-worker.js"; // a comparison's verify: its rules rerun here; the board's bands

const ENGINE_URL = new URL("../../engine/", import.meta.url).href;
const now = () => performance.now();

// Start-up progress: "bundle" (fetched and checked), "runtime" (Pyodide
// started or restored), "import" (engine imported). The first two complete in
// either order: they load side by side.
function progress(stage, t0, extra = {}) {
  self.postMessage({ progress: { stage, ms: Math.round(now() - t0), ...extra } });
}

async function fetchBytes(name) {
  const url = ENGINE_URL + name;
  const response = await fetch(url);
  if (!response.ok) throw new Error(`engine/${name}: HTTP ${response.status}; nothing was run`);
  return new Uint8Array(await response.arrayBuffer());
}

function parseProvenance(bytes) {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new Error(`engine/${PROVENANCE_NAME}: not valid JSON; nothing was run`);
  }
}

async function fetchBundle(t0) {
  const provenance = fetchBytes(PROVENANCE_NAME).then(parseProvenance);
  const [zipBytes, manifestBytes, prov] = await Promise.all([fetchBytes(BUNDLE_NAME), fetchBytes(MANIFEST_NAME), provenance]);
  const checked = await checkBundle(zipBytes, manifestBytes, prov);
  progress("bundle", t0);
  return { ...checked, bytes: zipBytes, fetch_ms: now() - t0 };
}

// Python helpers the desk needs beyond engine._session's calls, defined in
// their own namespace once the engine is imported: `desk_replay` is the
// session as desk_state rebuilds it, with its receipts (a practitioner
// record's receipts are checked against them before the run is finalised);
// `grade_batches` is the one rule's grade of an attempt that ended without a
// result (builders/counting.py engine_grade), for the attempt page's verify;
// `policy_points` a scripted policy's points on a world (counted.py
// policy_points), for the home headline's check.
const HELPERS = `
from engine import _session as _s

def desk_replay(source_json, moves_json):
    def go():
        run = _s._rebuild(*_s._session(source_json, moves_json))
        return {"receipts": run.receipts, **_s._state(run)}
    return _s._call(go)

def grade_batches(task_json, batches_json, label):
    # builders/counting.py engine_grade: an attempt that ended without a result counts as the engine's grade
    # of the batches the desk accepted from it, on its task's world
    import json, engine
    def go():
        task, batches = json.loads(task_json), json.loads(batches_json)
        instance = engine.generate(task.get("family"), task.get("seed"))
        horizon = task.get("horizon")
        if isinstance(horizon, int) and not isinstance(horizon, bool) and horizon != instance["horizon"]:
            instance = engine.with_horizon(instance, horizon)
        fixture = engine.fixture_sha256(instance)
        candidate = {"format": 1, "fixture_sha256": fixture, "instance_id": str(task.get("instance_id") or ""),
                     "label": label, "batches": batches}
        return {"result": engine.grade_candidate(candidate, instance), "fixture_sha256": fixture}
    return _s._call(go)

def policy_points(task_json, policy):
    # builders/site/counted.py policy_points: a scripted policy's points on an attempt's world (the headline's
    # baselines on the same worlds)
    import json, engine
    def go():
        task = json.loads(task_json)
        instance = engine.generate(task.get("family"), task.get("seed"))
        horizon = task.get("horizon")
        if isinstance(horizon, int) and not isinstance(horizon, bool) and horizon != instance["horizon"]:
            instance = engine.with_horizon(instance, horizon)
        if task.get("fixture_sha256") not in (None, engine.fixture_sha256(instance)):
            raise engine.DeskError("task.fixture_sha256: another world")
        result = engine.grade_candidate(engine.policy_candidate(instance, policy), instance)
        points = (result.get("score") or {}).get("points")
        return {"points": points if result.get("status") == "SCORED" else 0}
    return _s._call(go)
`;

async function boot() {
  const t0 = now();
  const cold = new URL(self.location.href).searchParams.get("start") === "cold";
  // Start the runtime and the bundle together; answer only after the check.
  const bundle = fetchBundle(t0);
  const provenance = bundle.then((b) => ({ bundle_sha256: b.bundleSha, manifest_sha256: b.manifestSha }), () => null);
  const started = startRuntime({ cold, provenance, onRuntime: (path) => progress("runtime", t0, { path }) });
  const [runtime, checked] = await Promise.all([started, bundle]);
  const { py } = runtime;
  const compiledFor = checked.manifest.runtime?.pyodide_version;
  if (compiledFor !== py.version) {
    throw new Error(`engine bundle ${BUNDLE_NAME}: compiled for Pyodide ${compiledFor}, this runtime is ${py.version}; nothing was run`);
  }
  const t1 = now();
  const path = `/fundbook/${BUNDLE_NAME}`;
  py.FS.mkdirTree("/fundbook");
  py.FS.writeFile(path, checked.bytes);
  if (runtime.path === "snapshot") {
    // The image must be of exactly this bundle: its own key, not only runtime.json's.
    const key = JSON.parse(py.runPython("import sys; getattr(sys, '_fundbook_snapshot', 'null')"));
    if (key?.bundle_sha256 !== checked.bundleSha || key?.manifest_sha256 !== checked.manifestSha) {
      throw new Error(`engine snapshot: made for bundle ${key?.bundle_sha256}, the checked bundle is ${checked.bundleSha}; nothing was run`);
    }
  } else {
    py.runPython(`import sys\nsys.path.insert(0, ${JSON.stringify(path)})\nimport engine._session`);
  }
  const session = py.pyimport("engine._session");
  const engine = py.pyimport("engine");
  const helpers = py.globals.get("dict")();
  py.runPython(HELPERS, { globals: helpers });
  progress("import", t0, { path: runtime.path });
  const info = {
    bundle_sha256: checked.bundleSha,
    manifest_sha256: checked.manifestSha,
    runtime: checked.manifest.runtime,
    stdlib: "desk subset",
    start: runtime.path,
    start_note: runtime.note,
    engine_version: engine.ENGINE_VERSION,
    families: engine.FAMILIES.toJs(),
    episodes: engine.EPISODES.toJs(),
    python_version: py.runPython("import sys; sys.version.split()[0]"),
    pyodide_version: py.version,
    timings: { runtime_ms: runtime.ms, bundle_fetch_ms: checked.fetch_ms, import_ms: now() - t1, ready_ms: now() - t0 },
  };
  return { py, session, helpers, info };
}

const booted = boot();
booted.catch(() => {}); // reported to each caller below, not as an unhandled rejection

// Calls into the engine: each returns its JSON string unchanged. A call is
// (booted worker, args) -> JSON text; another module may add its own
// (`CALLS.name = ...`) before the first message arrives.
export const CALLS = {
  state: ({ session }, a) => session.desk_state(a[0], a[1]),
  submit: ({ session }, a) => session.desk_submit(a[0], a[1], a[2]),
  skip: ({ session }, a) => session.desk_skip(a[0], a[1]),
  finalize: ({ session }, a) => session.desk_finalize(a[0], a[1]),
  tool: ({ session }, a) => session.desk_tool(a[0], a[1], a[2]),
  verify: ({ session }, a) => session.verify_run(a[0]),
  replay: ({ helpers }, a) => helpers.get("desk_replay")(a[0], a[1]),
  grade: ({ helpers }, a) => helpers.get("grade_batches")(a[0], a[1], a[2]),
  policy_points: ({ helpers }, a) => helpers.get("policy_points")(a[0], a[1]),
  decide: ({ py }, a) => decide(py, a[0], a[1]),
  bands: ({ py }, a) => bands(py, a[0], a[1], a[2]),
};

self.onmessage = async (event) => {
  const { id, op, args } = event.data;
  try {
    const worker = await booted;
    if (op === "info") {
      self.postMessage({ id, ok: true, value: worker.info });
      return;
    }
    const call = Object.hasOwn(CALLS, op) ? CALLS[op] : null;
    if (!call) throw new Error(`unknown call ${op}`);
    const t0 = now();
    const text = call(worker, args || []);
    self.postMessage({ id, ok: true, value: text, ms: now() - t0 });
  } catch (error) {
    self.postMessage({ id, ok: false, error: String(error?.message ?? error).split("\n").filter(Boolean).pop() });
  }
};
