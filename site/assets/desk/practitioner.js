// "Verify in your browser" for a practitioner record (runs/practitioners/<id>/):
// its submission re-executed by the bundle this page loaded, the record
// rebuilt from the two and compared field by field, and every figure the page
// shows checked against it. Checks, each on its own line:
//   files        the record hashes to its content_sha256; its receipts and submission files hash to
//                what it names;
//   re-execution the submission's moves, replayed (and finalised if the participant finalised),
//                give the record's days, result, receipts head and receipts, and the record is
//                exactly what the import makes of the submission (`expectedContent`, kept in step
//                with builders/practitioners/_record.py `content`);
//   engine       the record names the bundle that ran and the compiled-bundle execution path;
//   page         every mark on the page (data-fb-path) equals the verified record, none it must
//                show is missing or outside the verifiable regions, and no region shows a figure
//                outside a mark (marks.js).
import { call } from "./client.js";
import * as checks from "./checks.js";
import * as marks from "./marks.js";
import { EXECUTION_PATH, KIND, RECORD_SCHEMA, RECORD_SCHEMA_VERSION, SPLIT } from "./study_protocol.js";

async function fetchBytes(url, what) {
  const response = await fetch(url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`${what} ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

function parse(bytes, what) {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new Error(`${what}: not valid JSON`);
  }
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

/** The record's content as the import makes it from `submission` and the re-execution (_record.py content). */
export async function expectedContent(submission, execution, info) {
  const subSha = await checks.contentSha256(submission);
  const src = submission.source;
  const attempt = `${submission.participant}-${src.family}-seed-${src.seed}-${subSha.slice(0, 8)}`;
  const where = `runs/practitioners/${attempt}`;
  const { state, result } = execution;
  const head = result ? result.receipts_head : state.head;
  const clock = submission.clock;
  return {
    schema_version: RECORD_SCHEMA_VERSION,
    kind: KIND,
    attempt_id: attempt,
    participant: submission.participant,
    cohort: submission.cohort,
    task: { instance_id: state.instance_id, family: src.family, seed: src.seed, split: SPLIT,
      fixture_sha256: state.fixture_sha256, horizon: state.horizon },
    engine: { bundle_sha256: info.bundle_sha256, manifest_sha256: info.manifest_sha256, engine_version: info.engine_version,
      pyodide_version: info.pyodide_version, python_version: info.python_version },
    desk_build: submission.desk.build,
    consent: { version: submission.consent.version, sha256: submission.consent.sha256 },
    affordances: { offered: [...submission.affordances.offered], used: [...submission.affordances.used] },
    clock: { per_checkpoint_ms: [...clock.per_checkpoint_ms], open_checkpoint_ms: clock.open_checkpoint_ms,
      pauses: clock.pauses.map((p) => ({ ...p })), active_ms: sum(clock.per_checkpoint_ms) + clock.open_checkpoint_ms,
      paused_ms: sum(clock.pauses.map((p) => p.ms)) },
    termination: { ...submission.termination },
    days: state.days,
    result,
    receipts_head: head,
    // the files' own sha256 are checked against the fetched bytes (the files check)
    outputs: { receipts: { path: `${where}/receipts.json`, sha256: execution.receiptsSha },
      submission: { path: `${where}/submission.json`, sha256: execution.submissionSha } },
    submission_sha256: subSha,
    execution_path: EXECUTION_PATH,
  };
}

/** Differences between two JSON values: [{field, published, computed}] (at most `most`). */
export function differences(published, computed, path = "content", most = 20, out = []) {
  if (out.length >= most) return out;
  const isObj = (v) => v !== null && typeof v === "object";
  if (isObj(published) && isObj(computed) && Array.isArray(published) === Array.isArray(computed)) {
    if (Array.isArray(computed) && published.length !== computed.length) {
      out.push({ field: `${path} (length)`, published: String(published.length), computed: String(computed.length) });
      return out;
    }
    const keys = [...new Set([...Object.keys(published), ...Object.keys(computed)])].sort();
    for (const k of keys) {
      const sub = Array.isArray(computed) ? `${path}[${k}]` : `${path}.${k}`;
      if (!(k in computed)) out.push({ field: sub, published: checks.compact(published[k]).slice(0, 300), computed: "(absent)" });
      else if (!(k in published)) out.push({ field: sub, published: "(absent)", computed: checks.compact(computed[k]).slice(0, 300) });
      else differences(published[k], computed[k], sub, most, out);
      if (out.length >= most) break;
    }
    return out;
  }
  if (checks.compact(published) !== checks.compact(computed)) {
    out.push({ field: path, published: checks.compact(published ?? null).slice(0, 300), computed: checks.compact(computed ?? null).slice(0, 300) });
  }
  return out;
}

/** The figures a practitioner page must show (a removed mark cannot hide an edited figure). */
export function requiredPaths(content) {
  const out = [["content", "attempt_id"], ["content", "participant"], ["content", "termination", "status"],
    ["content", "termination", "reason"], ["content", "termination", "checkpoints_closed"], ["content", "receipts_head", "hash"],
    ["content", "consent", "sha256"], ["content", "consent", "version"], ["content", "affordances", "used"],
    ["content", "affordances", "offered"], ["content", "clock", "active_ms"], ["content", "clock", "paused_ms"],
    ["content", "receipts_head", "size"], ["content", "cohort"], ["content", "task", "instance_id"]];
  if (content.result) out.push(["content", "result", "status"], ["content", "result", "verdict"], ["content", "result", "score"]);
  (content.clock?.per_checkpoint_ms || []).forEach((_, i) => out.push(["content", "clock", "per_checkpoint_ms", i]));
  (content.clock?.pauses || []).forEach((_, i) => out.push(["content", "clock", "pauses", i, "checkpoint"],
    ["content", "clock", "pauses", i, "ms"], ["content", "clock", "pauses", i, "reason"]));
  return out;
}

/** Verify one practitioner record; `doc` is the page whose figures must agree (or null). */
export async function verifyPractitioner({ recordUrl, siteRoot, doc, info }) {
  const recordBytes = await fetchBytes(recordUrl, "record");
  const record = parse(recordBytes, "record");
  const content = record?.content || {};
  const files = [];
  if (record?.schema !== RECORD_SCHEMA) files.push({ field: "schema", published: String(record?.schema), computed: RECORD_SCHEMA });
  const ownSha = await checks.contentSha256(content).catch((e) => `(${e.message})`);
  if (ownSha !== record?.content_sha256) files.push({ field: "content_sha256", published: String(record?.content_sha256), computed: ownSha });
  const fetchOutput = async (key) => {
    const path = content.outputs?.[key]?.path;
    if (typeof path !== "string" || !path.startsWith("runs/practitioners/")) throw new Error(`record: outputs.${key}.path is not a published file`);
    const bytes = await fetchBytes(new URL(path, siteRoot).href, key);
    const sha = await checks.sha256hex(bytes);
    if (sha !== content.outputs[key].sha256) files.push({ field: `outputs.${key}.sha256`, published: content.outputs[key].sha256, computed: sha });
    return { doc: parse(bytes, key), sha };
  };
  const [submission, receipts] = [await fetchOutput("submission"), await fetchOutput("receipts")];
  const sub = submission.doc;
  const source = JSON.stringify(sub.source);
  const moves = JSON.stringify(sub.moves);
  const replay = await call("replay", source, moves);
  const reexec = [];
  let computed = null;
  if (!replay.ok) {
    reexec.push({ field: "submission.moves", published: "(the record's moves)", computed: `the engine refuses them: ${replay.error}` });
  } else {
    const { receipts: replayed, ok, ms, ...state } = replay;
    let result = null;
    let allReceipts = replayed;
    if (sub.termination?.status === "completed") {
      const fin = await call("finalize", source, moves);
      if (!fin.ok) reexec.push({ field: "result", published: "(finalised)", computed: `the engine refuses to finalise: ${fin.error}` });
      else ({ result, receipts: allReceipts } = fin);
    }
    computed = await expectedContent(sub, { state, result, receiptsSha: receipts.sha, submissionSha: submission.sha }, info);
    reexec.push(...differences(content, computed));
    const want = { schema: "fundbook.receipts/1", run_id: computed.attempt_id, receipts_head: computed.receipts_head, receipts: allReceipts };
    reexec.push(...differences(receipts.doc, want, "receipts.json", 5));
  }
  const engine = checks.engineProblems(content, info);
  const figures = doc ? marks.figuresIn(doc) : [];
  const required = requiredPaths(computed || content);
  const page = doc ? checks.figureProblems(figures, { content: computed || content, record }, required)
    .concat(marks.regionProblems(doc, figures, required)) : [];
  const results = [
    { id: "files", label: "Files", problems: files,
      ok: "the record hashes to its content_sha256, and its receipts and submission files to the sha256 it names." },
    { id: "reexecution", label: "Re-execution", problems: reexec,
      ok: `the submission's ${sub.moves?.length ?? 0} moves, re-executed by the bundle this page loaded, give this record, field for field, `
        + `and its receipts (head ${computed?.receipts_head?.size}:${String(computed?.receipts_head?.hash).slice(0, 12)}…).` },
    { id: "engine", label: "Engine", problems: engine,
      ok: `the record names the bundle that ran (${String(info.bundle_sha256).slice(0, 12)}…, Pyodide ${info.pyodide_version}) and the path "${EXECUTION_PATH}".` },
    { id: "page", label: doc ? "Page" : "Register row", problems: page,
      ok: `all ${figures.length} marked figures equal the verified record, and the outlined regions show no figure outside a mark.` },
  ];
  return { results, match: results.every((r) => !r.problems.length), record, computed };
}
