// Export a session as batch files and import batches back.
//
// The export is a zip holding one file per answered day (batches/day-NN.json,
// exactly what `fundbook desk submit --input` takes), session.json (source and
// moves, skipped days included) and a README with the CLI commands that
// replay it. Import accepts that zip, loose batch files, a candidate file or a
// session file; the engine then replays the result before it is adopted.
import { stableJson } from "./dom.js";
import { readZip } from "./zip.js";

function pad(day) {
  return String(day).padStart(2, "0");
}

function sessionName(source) {
  return source.episode ? `fundbook-desk-${source.episode}` : `fundbook-desk-${source.family}-seed-${source.seed}`;
}

function readme(session, current, name) {
  // The practice desk's world is public, so its receipts start from the public
  // salt; the CLI history is given the same salt to reach the same head.
  const salt = current && current.salt ? ` --salt ${current.salt}` : "";
  const horizon = session.source.horizon ? ` --observation-end-day ${session.source.horizon}` : "";
  const init = session.source.episode
    ? `fundbook desk init --episode ${session.source.episode} --db desk.sqlite${horizon}${salt}`
    : `fundbook families --output families --family ${session.source.family} --seeds ${session.source.seed}\n` +
      `fundbook desk init --family-root families/${session.source.family}/seed-${session.source.seed} --db desk.sqlite${horizon}${salt}`;
  const root = session.source.episode ? "" : ` --family-root families/${session.source.family}/seed-${session.source.seed}`;
  const steps = session.moves.map((m) => m.batch
    ? `fundbook desk submit --db desk.sqlite${root} --input batches/day-${pad(m.batch.day)}.json`
    : `fundbook desk advance --db desk.sqlite${root}   # day ${m.skip}: closed without a batch`);
  const assisted = session.assisted_days?.length
    ? `Assisted mode: the projection tool filled the report on day ${session.assisted_days.join(", ")}.`
    : "Assisted mode: not used (every report was typed).";
  return [
    `${name}: a practice-desk session exported from the browser.`,
    assisted,
    `Fixture sha256 ${current ? current.fixture_sha256 : "(unknown)"}; receipts head ${current ? current.head.size + ":" + current.head.hash : "(unknown)"}.`,
    "",
    "Replay it with the evaluator CLI:",
    "",
    init,
    ...steps,
    `fundbook desk result --db desk.sqlite${root} --finalize`,
    "",
  ].join("\n");
}

/** The files of an export: {name, files: [{name, text}]}. */
export function exportFiles(session, current) {
  const name = sessionName(session.source);
  // assisted_days: the days the projection filled the report (the assisted mode), recorded in any export
  const files = [
    { name: `${name}/session.json`, text: stableJson({ format: 1, source: session.source, moves: session.moves,
      assisted_days: session.assisted_days || [] }) + "\n" },
    { name: `${name}/README.txt`, text: readme(session, current, name) },
  ];
  for (const move of session.moves) {
    if (move.batch) files.push({ name: `${name}/batches/day-${pad(move.batch.day)}.json`, text: stableJson(move.batch) + "\n" });
  }
  return { name, files };
}

function parse(name, text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${name}: not valid JSON (${e.message})`);
  }
}

function isObject(v) {
  return v && typeof v === "object" && !Array.isArray(v);
}

/** What one JSON document holds: a session, or batches. */
function classify(name, doc) {
  if (isObject(doc) && isObject(doc.source) && Array.isArray(doc.moves)) return { session: doc };
  if (isObject(doc) && Array.isArray(doc.batches)) return { batches: doc.batches, fixture: doc.fixture_sha256 };
  if (isObject(doc) && "day" in doc && "actions" in doc) return { batches: [doc] };
  throw new Error(`${name}: expected a batch {day, report, actions}, a candidate {batches} or a session {source, moves}`);
}

// What an import reads at most: a candidate is at most 4 MiB (the engine's
// MAX_CANDIDATE_BYTES) and a session at most 16 MiB (MAX_SESSION_BYTES).
export const IMPORT_LIMITS = { entries: 64, entryBytes: 16 * 1024 * 1024, totalBytes: 32 * 1024 * 1024 };
const MAX_DAY = 1000; // above any world's carry horizon (engine _world MAX_CARRY_END)

function utf8(name, bytes) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`${name}: not UTF-8 text`);
  }
}

async function documents(files) {
  const docs = [];
  let total = 0;
  for (const file of files) {
    total += file.size;
    if (file.size > IMPORT_LIMITS.entryBytes || total > IMPORT_LIMITS.totalBytes) {
      throw new Error(`${file.name}: ${file.size} bytes, more than an import takes (${IMPORT_LIMITS.entryBytes} a file, ${IMPORT_LIMITS.totalBytes} in all)`);
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    if (file.name.toLowerCase().endsWith(".zip")) {
      for (const entry of await readZip(bytes, file.name, IMPORT_LIMITS)) {
        if (entry.name.endsWith(".json")) docs.push([`${file.name}:${entry.name}`, utf8(`${file.name}:${entry.name}`, entry.bytes)]);
      }
    } else {
      docs.push([file.name, utf8(file.name, bytes)]);
    }
  }
  if (!docs.length) throw new Error("no JSON document in the chosen files");
  return docs.map(([name, text]) => [name, classify(name, parse(name, text))]);
}

/** Files -> the next session {format, source, moves}; throws a one-line error. */
export async function importMoves(files, session, current) {
  const docs = await documents(files);
  const sessions = docs.filter(([, d]) => d.session);
  if (sessions.length) {
    // An export carries session.json: it is the whole truth (skips included).
    if (sessions.length > 1) throw new Error("more than one session file chosen");
    const [, { session: s }] = sessions[0];
    const assisted = Array.isArray(s.assisted_days) && s.assisted_days.every((d) => Number.isSafeInteger(d) && d >= 1 && d <= MAX_DAY)
      ? [...new Set(s.assisted_days)].sort((a, b) => a - b) : [];
    return { format: 1, source: s.source, moves: s.moves, assisted_days: assisted };
  }
  const byDay = new Map();
  for (const [name, doc] of docs) {
    if (doc.fixture && current && doc.fixture !== current.fixture_sha256) {
      throw new Error(`${name}: fixture_sha256 ${String(doc.fixture).slice(0, 16)}… is not this session's ${current.fixture_sha256.slice(0, 16)}…`);
    }
    for (const batch of doc.batches) {
      if (!isObject(batch) || !Number.isSafeInteger(batch.day) || batch.day < 1 || batch.day > MAX_DAY) {
        throw new Error(`${name}: batch.day: expected a day number from 1 to ${MAX_DAY}`);
      }
      if (byDay.has(batch.day)) throw new Error(`${name}: a second batch for day ${batch.day}`);
      byDay.set(batch.day, batch);
    }
  }
  const last = Math.max(...byDay.keys());
  const moves = [];
  for (let day = 1; day <= last; day++) moves.push(byDay.has(day) ? { batch: byDay.get(day) } : { skip: day });
  return { format: 1, source: session.source, moves };
}
