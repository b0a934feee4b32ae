// What a study session records and what the import accepts: the names and
// bounds of builders/practitioners/_protocol.py, kept equal to them by
// tests/desk/test_practitioner_import.py. Plain module (no DOM) so Node can
// test it too. A change of meaning is a new SUBMISSION_SCHEMA.

export const SUBMISSION_SCHEMA = "fundbook.practitioner-submission/1";
export const RECORD_SCHEMA = "fundbook.practitioner/1";
export const RECORD_SCHEMA_VERSION = 1;
export const KIND = "practitioner-attempt";
export const SPLIT = "public-practice";
export const EXECUTION_PATH = "compiled bundle in Pyodide";

// Exactly the model worker's affordances (launchers/worker/agent.py): the
// packet, the published sources (its read_source), the four calculation
// tools, notes kept across checkpoints (its note tool), and the outcomes of
// the last five checkpoints (its "Your last outcomes").
export const OFFERED = ["packet", "sources", "tool:project", "tool:exposure", "tool:headroom", "tool:interest", "notes",
  "last-outcomes"];

// Reasons are picked from lists, never typed: nothing personal can slip in.
export const PAUSE_REASONS = {
  break: "a break",
  interruption: "an interruption",
  "technical-problem": "a technical problem",
  "page-reloaded": "the page was closed or reloaded (paused by the desk)",
  other: "another reason",
};
export const ABANDON_REASONS = {
  "out-of-time": "I ran out of time",
  "too-hard": "I found the task too hard",
  "technical-problem": "a technical problem",
  "chose-to-stop": "I chose to stop",
  other: "another reason",
};
export const COMPLETED_REASON = "finalised";

export const MAX_MS = 7 * 24 * 3600 * 1000; // one checkpoint's clock or one pause
export const NOTES_LIMIT = 16000; // bytes of notes, as the model worker's (launchers/worker/protocol.py)
export const TOOL_OUTPUT_LIMIT = 12000; // characters of a tool's result the model reads (the rest is cut, the cut marked)
export const LAST_OUTCOMES = 5; // checkpoints of outcomes shown, as the model worker's history
export const CONSENT_VERSION = "1"; // site/assets/desk/consent/v1.txt: never edited, a new text is a new version
export const COHORT = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
export const DEFAULT_COHORT = "open";
export const PARTICIPANT = /^p-[0-9a-f]{16}$/;

// The desk's own files: their sha256 make the desk build a session records
// (tests/desk/test_practitioner_import.py keeps the list equal to the folder).
export const DESK_FILES = ["attempt.js", "bundle.js", "checks.js", "client.js", "clock.js", "compose.js", "desk.css", "desk.js", "dom.js",
  "early.js", "marks.js", "money.js", "outcome.js", "packet.js", "practice.js", "practitioner.js", "readable.js", "start.js",
  "store.js", "study.js", "study_protocol.js", "submission.js", "tools.js", "transfer.js", "ui.js", "verify.js",
  "worker.js", "zip.js"];
