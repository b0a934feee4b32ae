// "Verify this attempt in your browser" for a model attempt (local, provider or
// imported): its accepted batches, re-executed by the bundle this page loaded,
// must give the record's receipts, receipts head and grade, and every figure
// the page shows must equal the verified record. Checks, each on its own line:
//   files        the record hashes to its content_sha256, and receipts.json to the sha256 it names;
//   re-execution the batches of receipts.json (and the checkpoints it closed without one),
//                replayed from the task's world under the record's salt and finalised when the
//                attempt was, give receipts.json itself, the record's receipts head, its result
//                (the grade, field for field), its settled days and accepted actions, and the
//                accepted proposals are exactly those batches;
//   engine       the record names a bundle: the one loaded here, or the earlier one that judged it when it ran
//                (as recorded: the checks above hold under the bundle loaded here);
//   page         every figure the page shows (data-fb-path marks) equals the verified record, and
//                none of the figures an attempt page must show is missing.
// The same rule as launchers/_verify.py `_verify`, in the reader's browser.
// An Inspect-imported attempt (harness "inspect", launchers/inspect/_import.py) differs in its fields: its
// receipts.json is {schema, run_id, receipts_head, receipts}; its batches are re-executed and always finalised
// (Inspect's scorer closes the run); it records `moves` (the batches the desk accepted) instead of a worker's
// proposals, termination, settled days and accepted actions.
import { call } from "./client.js";
import * as checks from "./checks.js";
import { differences } from "./practitioner.js";

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

/** The session moves a receipts list settles: [{batch} | {skip: day}], and whether it was finalised
 * (launchers/_desk.py `rebuild` reads receipts alike). */
export function movesOf(receipts) {
  const moves = [];
  let finalized = false;
  for (const r of Array.isArray(receipts) ? receipts : []) {
    if (r?.kind === "BATCH") moves.push({ batch: r.payload?.batch });
    else if (r?.kind === "CLOSE" && r.payload?.phase === "checkpoint" && !r.payload?.batch) moves.push({ skip: r.day });
    else if (r?.kind === "FINAL") finalized = true;
  }
  return { moves, finalized };
}

/** What the receipts say was settled (launchers/_desk.py `counts`). */
async function counted(receipts) {
  const batches = receipts.filter((r) => r.kind === "BATCH");
  const actions = receipts.filter((r) => r.kind === "ACTION");
  return {
    settled_days: batches.length,
    accepted_actions: actions.filter((r) => r.payload?.decision === "ACCEPTED").length,
    batch_sha256: await Promise.all(batches.map((r) => checks.contentSha256(r.payload.batch))),
  };
}

/** An Inspect attempt's session moves: its accepted batches, in order (the environment's moves). */
export function inspectMoves(receipts) {
  return (Array.isArray(receipts) ? receipts : []).filter((r) => r?.kind === "BATCH").map((r) => ({ batch: r.payload?.batch }));
}

/** The figures a model attempt's page must show (a removed mark cannot hide an edited figure). */
export function requiredPaths(content) {
  if (content?.harness === "inspect") {
    return [["content", "moves"], ["content", "receipts_head", "hash"], ["content", "receipts_head", "size"],
      ["content", "result", "score"], ["content", "result", "verdict"], ["content", "result", "status"]];
  }
  const out = [["content", "termination", "status"], ["content", "accepted_actions"], ["content", "settled_days"],
    ["content", "receipts_head", "hash"], ["content", "receipts_head", "size"]];
  if (content.result) out.push(["content", "result", "score"], ["content", "result", "verdict"], ["content", "result", "status"]);
  return out;
}

function figuresIn(root) {
  return [...root.querySelectorAll("[data-fb-path]")].map((node) => ({ path: checks.parsePath(node.dataset.fbPath),
    format: node.dataset.fbFormat || "text", shown: node.textContent }));
}

/** A worker attempt's own fields: its accepted proposals are exactly the batches re-executed, and it says it
 * completed exactly when the receipts hold a finalised run. */
function workerChecks(content, counts, result) {
  const out = [];
  const offset = content.resumed_from?.settled_days || 0;
  const accepted = (Array.isArray(content.proposals) ? content.proposals : [])
    .filter((p) => p?.outcome === "accepted").map((p) => p.batch_sha256);
  const batches = counts.batch_sha256.slice(offset);
  if (checks.compact(accepted) !== checks.compact(batches)) {
    out.push({ field: "content.proposals", published: `${accepted.length} accepted`, computed: `${batches.length} batches re-executed` });
  }
  if ((content.termination?.status === "completed") !== (result !== null)) {
    out.push({ field: "content.termination.status", published: String(content.termination?.status),
      computed: result ? "completed (the receipts hold a finalised run)" : "not completed (no finalised run)" });
  }
  return out;
}

/** Verify one model attempt; `doc` is the page whose figures must agree (or null). */
export async function verifyAttempt({ recordUrl, doc, info }) {
  const t0 = performance.now();
  const recordBytes = await fetchBytes(recordUrl, "record");
  const record = parse(recordBytes, "record");
  const content = record?.content || {};
  const files = [];
  const ownSha = await checks.contentSha256(content).catch((e) => `(${e.message})`);
  if (ownSha !== record?.content_sha256) files.push({ field: "content_sha256", published: String(record?.content_sha256), computed: ownSha });
  const receiptsRef = content.outputs?.receipts;
  if (typeof receiptsRef?.path !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(receiptsRef.path)) {
    throw new Error("record: outputs.receipts.path names no receipts file beside the record (nothing to re-execute)");
  }
  const receiptsBytes = await fetchBytes(new URL(receiptsRef.path, recordUrl).href, "receipts");
  const receiptsSha = await checks.sha256hex(receiptsBytes);
  if (receiptsSha !== receiptsRef.sha256) files.push({ field: "content.outputs.receipts.sha256", published: String(receiptsRef.sha256), computed: receiptsSha });
  const inspect = content.harness === "inspect";
  const receiptsDoc = parse(receiptsBytes, "receipts");
  const published = inspect ? receiptsDoc?.receipts : receiptsDoc;

  const task = content.task || {};
  const source = JSON.stringify({ family: task.family, seed: task.seed, horizon: task.horizon,
    ...(content.salt ? { salt: content.salt } : {}) });
  const { moves, finalized } = inspect ? { moves: inspectMoves(published), finalized: true } : movesOf(published);
  const reexec = [];
  let computed = null;
  const answer = await call(finalized ? "finalize" : "replay", source, JSON.stringify(moves));
  if (!answer.ok) {
    reexec.push({ field: "receipts.json", published: `${moves.length} moves`, computed: `the engine refuses them: ${answer.error}` });
  } else {
    const receipts = answer.receipts || [];
    const result = finalized ? answer.result : null;
    const head = finalized ? answer.result?.receipts_head : answer.head;
    const counts = await counted(receipts);
    if (answer.fixture_sha256 !== undefined && answer.fixture_sha256 !== task.fixture_sha256) {
      reexec.push({ field: "content.task.fixture_sha256", published: String(task.fixture_sha256), computed: answer.fixture_sha256 });
    }
    computed = inspect ? { ...content, receipts_head: head, result, moves: moves.length }
      : { ...content, receipts_head: head, result, settled_days: counts.settled_days, accepted_actions: counts.accepted_actions };
    for (const key of inspect ? ["receipts_head", "result", "moves"] : ["receipts_head", "result", "settled_days", "accepted_actions"]) {
      reexec.push(...differences(content[key] ?? null, computed[key] ?? null, `content.${key}`, 10));
    }
    if (inspect) {  // the whole file as the import writes it: its schema, its attempt, the head and the receipts
      const expected = { schema: "fundbook.receipts/1", run_id: content.attempt_id, receipts_head: head, receipts };
      reexec.push(...differences(receiptsDoc, expected, "receipts.json", 5));
    } else {
      reexec.push(...differences(published, receipts, "receipts.json", 5));
    }
    if (!inspect) reexec.push(...workerChecks(content, counts, result));
  }
  // The bundle that judged the attempt when it ran is as recorded: an attempt judged by an earlier bundle (an
  // engine release that changed no answer) is re-derived here by this one, and every check above holds under it.
  const engineFacts = content.engine || {};
  const engine = [];
  for (const key of ["bundle_sha256", "manifest_sha256"]) {
    if (!/^[0-9a-f]{64}$/.test(String(engineFacts[key]))) engine.push({ field: `content.engine.${key}`, published: String(engineFacts[key] ?? "(absent)"), computed: "a sha256" });
  }
  const sameBundle = engineFacts.bundle_sha256 === info.bundle_sha256;
  const figures = doc ? figuresIn(doc) : [];
  const roots = { content: computed || content, record };
  const page = doc ? checks.figureProblems(figures, roots, requiredPaths(computed || content)) : [];
  const ms = performance.now() - t0;
  const results = [
    { id: "files", label: "Files", problems: files,
      ok: "the record hashes to its content_sha256, and receipts.json to the sha256 the record names." },
    { id: "reexecution", label: "Re-execution", problems: reexec,
      ok: `the ${moves.length} ${inspect ? "accepted batches" : "checkpoints"} of receipts.json, re-executed by the bundle this page loaded${finalized ? " and finalised" : ""}, `
        + `give its ${Array.isArray(published) ? published.length : 0} receipts, the head ${computed?.receipts_head?.size}:${String(computed?.receipts_head?.hash).slice(0, 12)}…, `
        + `${finalized ? "the record's grade field for field" : "no grade (the attempt was not finalised)"}, and ${inspect ? "the record's count of accepted batches" : "the accepted proposals"}.` },
    { id: "engine", label: "Engine", problems: engine,
      ok: sameBundle ? `the record names the bundle that ran here (${String(info.bundle_sha256).slice(0, 12)}…, Pyodide ${info.pyodide_version}).`
        : `the record was judged by bundle ${String(engineFacts.bundle_sha256).slice(0, 12)}… when it ran (as recorded); this page re-derived it with ${String(info.bundle_sha256).slice(0, 12)}… (Pyodide ${info.pyodide_version}), and the checks above hold under it.` },
    { id: "page", label: "Page", problems: page, ok: `all ${figures.length} figures shown equal the verified record.` },
  ];
  return { results, match: results.every((r) => !r.problems.length), record, computed, ms };
}
