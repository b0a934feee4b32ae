// The session survives a reload: its source and its moves, nothing else.
// Everything shown is recomputed from them by the engine, so what is stored
// can never disagree with what the engine says.

const KEY = "fundbook.desk/1";
export const DEFAULT_SOURCE = Object.freeze({ family: "FUND_01", seed: 1 });

export function load() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) || "null");
    if (saved && saved.format === 1 && saved.source && Array.isArray(saved.moves)) return saved;
  } catch {
    // unreadable storage: start fresh rather than fail the page
  }
  return { format: 1, source: { ...DEFAULT_SOURCE }, moves: [], finalized: false };
}

/** Store the session; false when the browser refuses storage (private mode, quota). */
export function save(session) {
  try {
    localStorage.setItem(KEY, JSON.stringify({ format: 1, source: session.source, moves: session.moves,
      finalized: Boolean(session.finalized) }));
    return true;
  } catch {
    return false;
  }
}

export function sourceLabel(source) {
  return source.episode ? `episode ${source.episode}` : `${source.family} seed ${source.seed}`;
}
