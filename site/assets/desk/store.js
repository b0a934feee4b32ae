// The session survives a reload: its source and its moves (and, for free
// practice, the days the assisted mode was used and the notes), nothing else.
// Everything shown is recomputed from them by the engine, so what is stored
// can never disagree with what the engine says. The study mode keeps its own
// sessions under their own key (study.js).

const KEY = "fundbook.desk/1";
export const STUDY_KEY = "fundbook.study/1";
export const DEFAULT_SOURCE = Object.freeze({ family: "FUND_01", seed: 1 });

export function read(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null");
  } catch {
    return null; // unreadable storage: start fresh rather than fail the page
  }
}

/** Store a value; false when the browser refuses storage (private mode, quota). */
export function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

export function load() {
  const saved = read(KEY);
  if (saved && saved.format === 1 && saved.source && Array.isArray(saved.moves)) {
    return { ...saved, assisted_days: Array.isArray(saved.assisted_days) ? saved.assisted_days : [],
      notes: typeof saved.notes === "string" ? saved.notes : "" };
  }
  return { format: 1, source: { ...DEFAULT_SOURCE }, moves: [], finalized: false, assisted_days: [], notes: "" };
}

export function save(session) {
  return write(KEY, { format: 1, source: session.source, moves: session.moves, finalized: Boolean(session.finalized),
    assisted_days: session.assisted_days || [], notes: session.notes || "" });
}

export function sourceLabel(source) {
  if (!source) return "no world chosen yet";
  return source.episode ? `episode ${source.episode}` : `${source.family} seed ${source.seed}`;
}
