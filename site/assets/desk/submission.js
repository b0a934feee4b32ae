// A study session as the practitioner submission `fundbook practitioner
// import` reads (builders/practitioners/_submission.py checks every field):
// the world, the moves, the consent accepted, the clock, the affordances
// offered and used, how it ended, the desk build and the engine bundle, and the
// receipts head the desk reached. Plain module (no DOM) so Node can test it.
import { canonicalJSON, sha256hex } from "./checks.js";
import * as clock from "./clock.js";
import { ABANDON_REASONS, COMPLETED_REASON, DESK_FILES, OFFERED, SUBMISSION_SCHEMA } from "./study_protocol.js";

/** The desk build: sha256 of {"files": {name: sha256}} over the desk's own files, as this page loaded them. */
export async function deskBuild(baseUrl) {
  const files = {};
  for (const name of DESK_FILES) {
    const response = await fetch(new URL(name, baseUrl));
    if (!response.ok) throw new Error(`desk build: ${name}: HTTP ${response.status}`);
    files[name] = await sha256hex(new Uint8Array(await response.arrayBuffer()));
  }
  return sha256hex(canonicalJSON({ files }));
}

/** The session's termination: completed once finalised, else abandoned with its reason. */
export function termination(study, moves) {
  const completed = Boolean(study.finalized);
  return { status: completed ? "completed" : "abandoned", reason: completed ? COMPLETED_REASON : study.stop_reason,
    checkpoints_submitted: moves.filter((m) => m.batch).length, checkpoints_closed: moves.length };
}

/**
 * The submission of a stopped study session. `study`: the stored study
 * (participant, cohort, source, moves, consent, clock, used, finalized,
 * stop_reason); `state`: the engine's state answer (instance, fixture,
 * horizon, head); `result`: the finalised result or null; `info`: the
 * worker's bundle facts; `build`: deskBuild().
 */
export function buildSubmission(study, state, result, info, build) {
  if (study.clock.status !== "stopped") throw new Error("stop the session before you export it");
  if (!study.finalized && !Object.hasOwn(ABANDON_REASONS, study.stop_reason)) throw new Error("an abandoned session needs its reason");
  const head = result ? result.receipts_head : state.head;
  return {
    schema: SUBMISSION_SCHEMA,
    participant: study.participant,
    cohort: study.cohort,
    source: { family: study.source.family, seed: study.source.seed },
    task: { instance_id: state.instance_id, fixture_sha256: state.fixture_sha256, horizon: state.horizon },
    moves: study.moves.map((m) => (m.batch ? { batch: m.batch } : { skip: m.skip })),
    consent: { version: study.consent.version, sha256: study.consent.sha256 },
    clock: clock.recorded(study.clock),
    affordances: { offered: [...OFFERED], used: OFFERED.filter((a) => study.used.includes(a)) },
    termination: termination(study, study.moves),
    desk: { build, bundle_sha256: info.bundle_sha256, manifest_sha256: info.manifest_sha256,
      engine_version: info.engine_version, pyodide_version: info.pyodide_version },
    receipts_head: { size: head.size, hash: head.hash },
  };
}

/** The file name an export gets: the attempt's world and pseudonym. */
export function submissionName(study) {
  return `fundbook-study-${study.participant}-${study.source.family}-seed-${study.source.seed}.json`;
}

/** A fresh pseudonym: p- and 16 hex digits from the browser's random source (nothing personal). */
export function pseudonym() {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `p-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
