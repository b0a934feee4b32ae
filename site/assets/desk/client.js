// One engine worker per page, shared by the desk and the verify button.
// `call(op, ...args)` resolves with the parsed answer of engine._session
// ({ok: true, ...} or {ok: false, error, exit_code}); a worker failure (bundle
// mismatch, runtime missing) rejects with a one-line message.

let worker = null;
let counter = 0;
const pending = new Map();
const progressListeners = new Set();
const progressSeen = [];

// ?start=cold on the page: the worker skips the snapshot (the tests and the benchmark compare the two).
function workerUrl() {
  const url = new URL("./worker.js", import.meta.url);
  if (new URLSearchParams(location.search).get("start") === "cold") url.search = "?start=cold";
  return url;
}

function start() {
  if (worker) return worker;
  // The desk page starts its worker from <head> (early.js): adopt it.
  // If this module runs before early.js (both are async), it starts the one
  // worker and early.js stands down.
  const early = window.fbEarlyWorker;
  delete window.fbEarlyWorker;
  window.fbEngineStarted = true;
  worker = early?.worker ?? new Worker(workerUrl(), { type: "module" });
  worker.onmessage = (event) => {
    if (event.data.progress) {
      progressSeen.push(event.data.progress);
      for (const listener of progressListeners) listener(event.data.progress);
      return;
    }
    const { id, ok, value, error, ms } = event.data;
    const entry = pending.get(id);
    if (!entry) return;
    pending.delete(id);
    if (ok) entry.resolve({ value, ms });
    else entry.reject(new Error(error));
  };
  worker.onerror = (event) => {
    const message = event.message || "the engine worker failed to start (is the module worker allowed?)";
    for (const entry of pending.values()) entry.reject(new Error(message));
    pending.clear();
  };
  for (const event of early?.early ?? []) (event.type === "error" ? worker.onerror : worker.onmessage)(event);
  return worker;
}

function post(op, args) {
  const w = start();
  const id = ++counter;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.postMessage({ id, op, args });
  });
}

/** Runtime and bundle facts once the worker is ready (bundle sha256, versions, timings). */
export async function engineInfo() {
  return (await post("info", [])).value;
}

/** Call engine._session; returns the parsed JSON answer plus `ms` spent in the engine. */
export async function call(op, ...args) {
  const { value, ms } = await post(op, args);
  return { ...JSON.parse(value), ms };
}

/** Start-up stages as the worker completes them ({stage, ms}); stages already seen are replayed. */
export function onProgress(listener) {
  progressListeners.add(listener);
  for (const p of progressSeen) listener(p);
}

/** Start loading early (the page may call this before the first real call). */
export function warmUp() {
  start();
}
