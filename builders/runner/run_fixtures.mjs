// Execute fixtures through the engine bundle in one pinned Pyodide runtime
// (PYTHONHASHSEED=0), each from fresh module state (builders/runner/ops.mjs
// runFixtures). Emits one JSON line per event on stdout. A record's
// command.argv is this command for exactly its fixture:
//
//   node builders/runner/run_fixtures.mjs --bundle build/engine/fundbook-engine.zip \
//        --bundle-sha256 HEX [--manifest build/engine/manifest.json] \
//        [--fixture '{"kind":"reference","episode":"W1"}' ...] [--fixtures PLAN.jsonl --fixtures-sha256 HEX]
//
// Without --fixture/--fixtures it executes every published fixture. (The build
// itself sends its plan to builders/runner/session.mjs, which calls the same code.)
// Exit codes: 0 ok; 1 integrity or input error (one line on stderr); 64 usage.
import { parseArgs } from "node:util";
import { EXIT_USAGE, fail, readBytes, startPyodide } from "./_pyodide.mjs";
import { runFixtures } from "./ops.mjs";

let args;
try {
  args = parseArgs({
    options: {
      bundle: { type: "string" }, "bundle-sha256": { type: "string" }, manifest: { type: "string" },
      fixture: { type: "string", multiple: true }, fixtures: { type: "string" }, "fixtures-sha256": { type: "string" },
    },
  }).values;
} catch (err) {
  fail(err.message, EXIT_USAGE);
}
if (!args.bundle || !args["bundle-sha256"]) fail("usage: run_fixtures.mjs --bundle ZIP --bundle-sha256 HEX [...]", EXIT_USAGE);
if (args.fixtures && !args["fixtures-sha256"]) fail("--fixtures needs --fixtures-sha256", EXIT_USAGE);

const emit = (event) => process.stdout.write(JSON.stringify(event) + "\n");
const plan = args.fixtures
  ? { text: readBytes(args.fixtures, "the fixture plan").toString("utf8"), sha256: args["fixtures-sha256"], label: args.fixtures }
  : undefined;
const runtime = await startPyodide();
const done = runFixtures(runtime, {
  bundle: args.bundle, bundleSha256: args["bundle-sha256"], manifest: args.manifest, plan,
  fixtures: args.fixture, all: !plan && !args.fixture,
}, emit);
emit({ event: "done", ...done });
