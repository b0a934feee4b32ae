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
//   counting     the tries of this world the page names (data-tries) are this agent's records of it,
//                and the one rule (builders/counting.py) applied to them gives the page's `counted`
//                root: which try counts, and its score -- the re-executed grade, or for an attempt
//                that ended without one the engine's grade of its accepted batches, computed here;
//   page         every mark on the page (data-fb-path) equals the verified record or the counted
//                root, none of the figures an attempt page must show is missing or outside the
//                verifiable regions, and no region shows a figure outside a mark (marks.js).
// The same rule as launchers/_verify.py `_verify`, in the reader's browser.
// An Inspect-imported attempt (harness "inspect", launchers/inspect/_import.py) differs in its fields: its
// receipts.json is {schema, run_id, receipts_head, receipts}; its batches are re-executed and always finalised
// (Inspect's scorer closes the run); it records `moves` (the batches the desk accepted) instead of a worker's
// proposals, termination, settled days and accepted actions.
import { call } from "./client.js";
import * as checks from "./checks.js";
import { differences } from "./practitioner.js";
import * as marks from "./marks.js";

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

/** The figures a model attempt's page must show (a removed mark cannot hide an edited figure), given how the
 * one rule counts it (`counted`, countedRoot). */
export function requiredPaths(content, counted = null) {
  const out = [["content", "model"], ["content"], ["counted", "world"]];
  if (counted?.counted) out.push(["counted", "points"], ["counted", "status"], ["counted", "verdict"]);
  if (counted && (!counted.counted || counted.tries > 1)) out.push(["counted", "try"], ["counted", "tries"]);
  if (counted?.gates?.length) out.push(["counted", "gates"]);
  const components = Object.keys(content?.result?.score?.components || {});
  if (content?.harness === "inspect") {
    out.push(["content", "moves"], ["content", "receipts_head", "hash"], ["content", "receipts_head", "size"],
      ["content", "result", "score"], ["content", "result", "verdict"], ["content", "result", "status"],
      ["content", "model", "as_logged"], ["content", "inspect", "limit"]);
  } else {
    out.push(["content", "termination"], ["content", "accepted_actions"], ["content", "settled_days"],
      ["content", "receipts_head", "hash"], ["content", "receipts_head", "size"]);
    if (content.result) out.push(["content", "result", "score"], ["content", "result", "verdict"], ["content", "result", "status"]);
  }
  for (const name of components) out.push(["content", "result", "score", "components", name]);
  return out;
}

// ---- the one rule (builders/counting.py, builders/site/counted.py), in the reader's browser ----

const pyStr = (v) => (v === null ? "None" : typeof v === "string" ? v : checks.compact(v));
const dictOf = (v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? v : {});

/** counted.model_key: which agent made an attempt. */
export function modelKey(content) {
  const model = dictOf(content?.model);
  const provider = "provider" in model ? pyStr(model.provider) : "?";
  const id = "id" in model ? pyStr(model.id) : "?";
  const kind = model.provider !== undefined && model.provider !== null && model.provider !== "mock" ? "model" : "machinery";
  const harness = typeof content?.harness === "string" && content.harness ? `:${content.harness}` : "";
  return `${kind}:${provider}:${id}${harness}`;
}

/** counting.world_of: the world an attempt tried. */
export function worldOf(content, fallback = "") {
  const task = dictOf(content?.task);
  if (typeof task.instance_id === "string" && task.instance_id) return task.instance_id;
  if (typeof task.family === "string" && Number.isInteger(task.seed)) return `${task.family}/seed-${task.seed}`;
  if (typeof task.fixture_sha256 === "string" && task.fixture_sha256) return task.fixture_sha256;
  return String(fallback);
}

/** counted.started_of: the worker's volatile.started, or the eval's creation time Inspect logged. */
export function startedOf(record) {
  let value = dictOf(record?.volatile).started;
  if ((value === undefined || value === null) && record?.content?.harness === "inspect") value = dictOf(record.content.inspect).created;
  return typeof value === "string" ? value : null;
}

/** counting.try_number: "NAME.2" is the second try of NAME. */
export function tryNumber(id) {
  const m = /\.([2-9][0-9]*)$/.exec(String(id));
  return m ? Number(m[1]) : 1;
}

const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** counting.score of a result: points only for SCORED, the gates it did not pass. */
function scoreOf(result, source) {
  const points = result?.score?.points;
  const scored = result?.status === "SCORED";
  return { points: scored && Number.isInteger(points) ? points : 0, status: result?.status ?? null,
    verdict: result?.verdict ?? null, source,
    gates: (Array.isArray(result?.gates) ? result.gates : []).filter((g) => dictOf(g).passed === false).map((g) => g.gate) };
}

/**
 * The `counted` root of an attempt page (pages.py counted_root), from the records of the tries the page names:
 * {root, problems}. `result` is this attempt's re-executed result (null when it ended without one).
 */
export async function countedRoot({ record, recordUrl, triesUrls, result }) {
  const content = record?.content || {};
  const id = content.attempt_id;
  const problems = [];
  const agent = modelKey(content);
  const world = worldOf(content, id);
  const tries = [];
  const urls = Array.isArray(triesUrls) ? triesUrls.map((u) => new URL(u, recordUrl).href) : [recordUrl];
  if (!urls.includes(recordUrl)) problems.push({ field: "page: tries", published: "(this attempt not among them)", computed: String(id) });
  for (const url of urls) {
    let other = record;
    if (url !== recordUrl) {
      other = parse(await fetchBytes(url, "a try's record"), "a try's record");
      const sha = await checks.contentSha256(other?.content ?? null).catch((e) => `(${e.message})`);
      if (sha !== other?.content_sha256) problems.push({ field: `try ${url.split("/").slice(-2, -1)[0]}: content_sha256`, published: String(other?.content_sha256), computed: sha });
    }
    const c = other?.content || {};
    if (modelKey(c) !== agent || worldOf(c, c.attempt_id) !== world) {
      problems.push({ field: `page: tries`, published: String(c.attempt_id), computed: `an attempt of ${agent} on ${world}` });
    }
    tries.push({ id: String(c.attempt_id), started: startedOf(other) });
  }
  tries.sort((a, b) => cmp(tryNumber(a.id), tryNumber(b.id)) || cmp(a.started ?? "", b.started ?? "") || cmp(a.id, b.id));
  const last = tries[tries.length - 1];
  const position = tries.findIndex((t) => t.id === String(id));
  const root = { world, try: position + 1, tries: tries.length, counted: last?.id === String(id), counted_id: last?.id ?? null,
    points: null, status: null, verdict: null, gates: [], source: null };
  if (root.counted) {
    let got;
    if (result && typeof result.status === "string") got = scoreOf(result, "record");
    else {  // no result of its own: the engine grades the batches the desk accepted from it, here
      const batches = (Array.isArray(content.proposals) ? content.proposals : [])
        .filter((p) => dictOf(p).outcome === "accepted").map((p) => p.batch);
      const answer = await call("grade", JSON.stringify(content.task ?? {}), JSON.stringify(batches), String(id));
      if (!answer.ok) problems.push({ field: "counted score", published: "(the engine's grade)", computed: `the engine refuses: ${answer.error}` });
      got = scoreOf(answer.ok ? answer.result : null, "engine");
    }
    Object.assign(root, got);
  }
  return { root, problems };
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
export async function verifyAttempt({ recordUrl, doc, info, triesUrls = null }) {
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
  const counting = await countedRoot({ record, recordUrl, triesUrls, result: computed ? computed.result : content.result });
  const figures = doc ? marks.figuresIn(doc) : [];
  const roots = { content: computed || content, record, counted: counting.root };
  const required = requiredPaths(computed || content, counting.root);
  const page = doc ? checks.figureProblems(figures, roots, required).concat(marks.regionProblems(doc, figures, required)) : [];
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
    { id: "counting", label: "Counting", problems: counting.problems,
      ok: `the ${counting.root.tries} tr${counting.root.tries === 1 ? "y" : "ies"} of ${counting.root.world} this page names ${counting.root.tries === 1 ? "is" : "are"} this agent's; by the one rule ${counting.root.counted ? "this attempt counts" : `${counting.root.counted_id} counts`}${counting.root.counted ? `, ${counting.root.points}/100 (${counting.root.source === "engine" ? "the engine's grade of its accepted batches, computed here" : "its re-executed grade"})` : ""}.` },
    { id: "page", label: "Page", problems: page,
      ok: `all ${figures.length} marked figures equal the verified record and the count, and the outlined regions show no figure outside a mark.` },
  ];
  return { results, match: results.every((r) => !r.problems.length), record, computed, ms };
}
