// The three things the build asks of the pinned Pyodide, as functions of an
// already started runtime, so that one runtime can do all of them
// (builders/runner/session.mjs, `make build`) and each single-stage command
// (compile_bundle.mjs, run_fixtures.mjs, builders/desk/stdlib.mjs) stays a thin
// wrapper around the same code.
import { mkdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { fail, loadHelper, readBytes, sha256 } from "./_pyodide.mjs";

const pyError = (err) => String(err.message || err).trim().split("\n").pop().replace(/^[A-Za-z_.]*Stop: /, "");

// build-engine: copy the engine sources into the runtime, compile them there,
// write the bundle and its manifest into `out`.
// config: {"sources": [{"path", "sha256"}], "source_date_epoch": N} (paths relative to `root`).
export function compileBundle(runtime, configText, out, root = ".") {
  const { py } = runtime;
  const config = JSON.parse(configText);
  const helper = loadHelper(py, "./compile_bundle.py", "compile_bundle");
  helper.reset();
  for (const item of config.sources) {
    const path = `/build/src/${item.path}`;
    py.FS.mkdirTree(dirname(path));
    py.FS.writeFile(path, readBytes(join(root, item.path), "an engine source"));
  }
  py.FS.mkdirTree("/build/out");
  const t0 = performance.now();
  let built;
  try {
    built = helper.build(configText, runtime.version).toJs({ dict_converter: Object.fromEntries });
  } catch (err) {
    fail(`compiling the engine under Pyodide ${runtime.version}: ${pyError(err)}`);
  }
  const compileMs = performance.now() - t0;
  mkdirSync(out, { recursive: true });
  const zip = Buffer.from(built.zip);
  const manifest = Buffer.from(built.manifest);
  writeFileSync(join(out, "fundbook-engine.zip"), zip);
  writeFileSync(join(out, "manifest.json"), manifest);
  return {
    pyodide_version: runtime.version, load_ms: Math.round(runtime.loadMs), compile_ms: Math.round(compileMs),
    bundle_sha256: sha256(zip), manifest_sha256: sha256(manifest),
  };
}

// build-runs: check the bundle, then execute fixtures from it, each from fresh
// module state. Emits {"event": "runtime"} then one {"event": "fixture"} per fixture.
// opts: {bundle, bundleSha256, manifest?, plan?: {text, sha256, label}, fixtures?: [json text], all?: bool}
export function runFixtures(runtime, opts, emit) {
  const { py } = runtime;
  const zip = readBytes(opts.bundle, "the engine bundle");
  if (sha256(zip) !== opts.bundleSha256) {
    fail(`${opts.bundle}: sha256 expected ${opts.bundleSha256}, actual ${sha256(zip)}`);
  }
  const manifest = opts.manifest ? readBytes(opts.manifest, "the bundle manifest") : null;
  if (opts.plan && sha256(Buffer.from(opts.plan.text)) !== opts.plan.sha256) {
    fail(`${opts.plan.label}: sha256 expected ${opts.plan.sha256}, actual ${sha256(Buffer.from(opts.plan.text))}`);
  }
  py.FS.mkdirTree("/bundle");
  py.FS.writeFile("/bundle/fundbook-engine.zip", zip);
  const helper = loadHelper(py, "./run_fixtures.py", "run_fixtures");
  const call = (fn, ...a) => {
    try {
      return JSON.parse(fn(...a));
    } catch (err) {
      fail(pyError(err));
    }
  };
  const facts = call(helper.verify, opts.bundle, manifest ? new Uint8Array(manifest) : undefined,
    opts.manifest || undefined, runtime.version);
  runtime.takeOutput();

  let specs = [];
  if (opts.plan) specs.push(...call(helper.plan, opts.plan.text, opts.plan.label));
  for (const text of opts.fixtures || []) {
    try {
      specs.push(JSON.parse(text));
    } catch (err) {
      fail(`--fixture ${text}: fixture does not parse (${err.message}); sha256 of the argument ${sha256(Buffer.from(text))}`);
    }
  }
  if (opts.all) specs = call(helper.all_specs);
  const published = opts.plan ? call(helper.published_run_ids) : undefined;

  emit({
    event: "runtime", pyodide_version: runtime.version, load_ms: Math.round(runtime.loadMs),
    node_version: process.version, host: `${process.platform}-${process.arch} ${hostname()}`,
    bundle_sha256: opts.bundleSha256, fixtures: specs.length, published_run_ids: published, ...facts,
  });
  let index = 0;
  for (const spec of specs) {
    const started = new Date();
    const t0 = performance.now();
    const out = call(helper.execute, JSON.stringify(spec));
    const t1 = performance.now();
    emit({
      event: "fixture", index: index++, spec, ...out, output: runtime.takeOutput(),
      started: started.toISOString(), finished: new Date().toISOString(), duration_ms: Math.round(t1 - t0),
      duration_us: Math.round((t1 - t0) * 1000),
    });
  }
  return { fixtures: specs.length };
}
