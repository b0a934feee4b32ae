// The study's task clock: start, pause with a reason, resume, stop, and the
// time it ran for each checkpoint. A plain value (no DOM, no timers) that the
// study keeps in local storage; every change takes the time `now` (ms since
// the epoch) from the caller, so Node can test it and a reload can resume it.
//
// A checkpoint's time is the time the clock ran while it was open; closing it
// (a batch accepted, or the day closed without one) starts the next one's. A
// pause counts for no checkpoint and is recorded with the checkpoint that was
// open and its reason. A reload cannot know how long the page was away: the
// clock is saved as it runs (`tick`), and a clock found running after a reload
// is paused from its last save with the reason "page-reloaded".
import { MAX_MS, PAUSE_REASONS } from "./study_protocol.js";

const clamp = (ms) => Math.min(Math.max(0, Math.round(ms)), MAX_MS);

export function newClock() {
  return { status: "ready", per_checkpoint_ms: [], open_ms: 0, pauses: [], since: null, pause: null };
}

function fold(clock, now) {
  // the running time since the last change, into the open checkpoint
  if (clock.status === "running") clock.open_ms = clamp(clock.open_ms + (now - clock.since));
  clock.since = now;
}

export function start(clock, now) {
  if (clock.status !== "ready") throw new Error(`the clock is ${clock.status}, not ready to start`);
  return { ...clock, status: "running", since: now };
}

export function pause(clock, now, reason, checkpoint) {
  if (clock.status !== "running") throw new Error("the clock is not running");
  if (!Object.hasOwn(PAUSE_REASONS, reason)) throw new Error(`pause reason: expected one of ${Object.keys(PAUSE_REASONS).join(", ")}`);
  const next = structuredClone(clock);
  fold(next, now);
  next.status = "paused";
  next.pause = { checkpoint, reason };
  return next;
}

export function resume(clock, now) {
  if (clock.status !== "paused") throw new Error("the clock is not paused");
  const next = structuredClone(clock);
  next.pauses.push({ checkpoint: next.pause.checkpoint, ms: clamp(now - next.since), reason: next.pause.reason });
  next.status = "running";
  next.pause = null;
  next.since = now;
  return next;
}

/** The open checkpoint closed: its time is recorded and the next one's starts (a pause stays open). */
export function closeCheckpoint(clock, now) {
  if (clock.status !== "running" && clock.status !== "paused") throw new Error(`the clock is ${clock.status}: start it before you close a checkpoint`);
  const next = structuredClone(clock);
  if (next.status === "running") fold(next, now);
  next.per_checkpoint_ms.push(next.open_ms);
  next.open_ms = 0;
  return next;
}

export function stop(clock, now) {
  let next = structuredClone(clock);
  if (next.status === "paused") next = resume(next, now);
  if (next.status === "running") fold(next, now);
  next.status = "stopped";
  next.since = null;
  return next;
}

/** Save the running time (every second or so), so a reload loses at most that much. */
export function tick(clock, now) {
  if (clock.status !== "running") return clock;
  const next = structuredClone(clock);
  fold(next, now);
  return next;
}

/** After a reload: a clock that was running is paused from its last save. */
export function afterReload(clock, checkpoint) {
  if (clock.status !== "running") return clock;
  return { ...structuredClone(clock), status: "paused", pause: { checkpoint, reason: "page-reloaded" } };
}

/** Milliseconds on the open checkpoint as of `now` (for the display). */
export function openMs(clock, now) {
  return clock.status === "running" ? clamp(clock.open_ms + (now - clock.since)) : clock.open_ms;
}

/** "1:02:03" or "2:03". */
export function clockText(ms) {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60));
  const ss = String(s % 60).padStart(2, "0");
  return h ? `${h}:${mm.padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}

/** The clock as a submission records it. */
export function recorded(clock) {
  return { per_checkpoint_ms: [...clock.per_checkpoint_ms], open_checkpoint_ms: clock.open_ms,
    pauses: clock.pauses.map((p) => ({ checkpoint: p.checkpoint, ms: p.ms, reason: p.reason })) };
}
