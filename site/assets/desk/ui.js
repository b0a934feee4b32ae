// The practice desk: sit at the desk in the browser, with no model and no
// server. The engine (the published bundle, in a Web Worker) does every
// calculation; this module only shows its answers and collects the desk's
// batches. A session is its source and its moves; each call replays them.
//
// Two modes share it (the page's data-mode): free practice (practice.js:
// any world, import and export, the projection's report fill as an assisted
// mode, how many report fields matched) and the study mode (study.js: consent,
// a task clock, exactly the model worker's affordances, an export as a
// practitioner submission). The mode decides what is shown and offered.
import { call, engineInfo, onProgress, warmUp } from "./client.js";
import { Composer } from "./compose.js";
import { ensureStyles, field, h, stableJson } from "./dom.js";
import { expected } from "./readable.js";
import { renderPacket } from "./packet.js";
import { fieldsMatched, renderDays, renderLast, renderResult, reportScale } from "./outcome.js";
import { renderTools } from "./tools.js";

const root = document.getElementById("fb-desk");
const t0 = performance.now();
const SITE_ROOT = new URL("../../", import.meta.url);

const statusLine = h("p", { class: "fb-status", role: "status", "aria-live": "polite" });
const errorLine = h("p", { class: "fb-error", role: "alert", "aria-live": "assertive" });
const body = h("div", { class: "fb-desk-body" });

/** The desk's state and its round trips to the engine, shared with the mode. */
export const desk = {
  info: null, // runtime and bundle facts from the worker
  session: null, // the mode's stored session: {source, moves, ...}
  current: null, // the engine's state answer: open_day, packet, days, head
  composer: null,
  last: null, // the last closed day's decisions and receipts (and, in practice, its matched fields)
  result: null, // the final result once finalised
  mode: null,
  siteRoot: SITE_ROOT,

  say(text) {
    statusLine.textContent = text;
  },
  fail(text) {
    errorLine.textContent = text;
  },
  persist() {
    // Storage can be refused (private windows, quota): the desk still works, the note says what is lost.
    if (!desk.mode.save(desk.session)) {
      desk.say(`${statusLine.textContent} This browser refused local storage: the session will not survive a reload (export it).`);
    }
  },
  src: () => JSON.stringify(desk.session.source),
  moves: () => JSON.stringify(desk.session.moves),

  async refresh() {
    const answer = await call("state", desk.src(), desk.moves());
    if (!answer.ok) {
      desk.current = null;
      desk.fail(`The saved session cannot be replayed (${answer.error}). ${desk.mode.unreplayable}`);
      return false;
    }
    desk.current = answer;
    desk.result = null;
    if (desk.session.finalized) {
      const fin = await call("finalize", desk.src(), desk.moves());
      if (fin.ok) desk.result = fin.result;
      else desk.fail(`Finalising: ${fin.error}`);
    }
    return true;
  },

  /** Replace the session only if the engine can replay the new one; otherwise say why and keep the current one. */
  async adopt(next, message, refusal = "Not changed: ") {
    desk.fail("");
    const check = await call("state", JSON.stringify(next.source), JSON.stringify(next.moves));
    if (!check.ok) {
      desk.fail(`${refusal}${check.error}`);
      return false;
    }
    desk.session = next;
    desk.last = null;
    await desk.refresh();
    desk.say(message);
    desk.persist();
    desk.render();
    return true;
  },

  async submitBatch(batch, submitErrors = null) {
    const packet = desk.current.packet;
    const answer = await call("submit", desk.src(), desk.moves(), JSON.stringify(batch));
    if (!answer.ok) {
      showSubmitErrors(submitErrors, [`Batch rejected, nothing changed: ${answer.error}`]);
      desk.say(`Day ${desk.current.open_day} is still open.`);
      return false;
    }
    let matched = null;
    if (desk.mode.offers.matched) {
      // the exact report for these actions on this packet, which the grade compares with
      const exact = await call("tool", JSON.stringify(packet), "project", JSON.stringify({ actions: batch.actions }));
      if (exact.ok && !exact.output.rejected) matched = fieldsMatched(exact.output.report, batch.report, reportScale(packet));
    }
    desk.session.moves.push({ batch });
    desk.mode.closed?.("batch");
    desk.current = answer.state;
    desk.last = { day: batch.day, decisions: answer.decisions, receipts: answer.receipts, matched };
    const refused = answer.decisions.filter((d) => d.decision !== "ACCEPTED").length;
    desk.say(`Day ${batch.day} settled: ${answer.decisions.length - refused} accepted, ${refused} refused. ${openText()}`);
    desk.persist();
    desk.render();
    return true;
  },

  async skip() {
    desk.fail("");
    const day = desk.current.open_day;
    const answer = await call("skip", desk.src(), desk.moves());
    if (!answer.ok) {
      desk.fail(answer.error);
      return;
    }
    desk.session.moves.push({ skip: day });
    desk.mode.closed?.("skip");
    desk.current = answer.state;
    desk.last = { day, decisions: [], receipts: answer.receipts, matched: null };
    desk.say(`Day ${day} closed without a batch (it counts as missed). ${openText()}`);
    desk.persist();
    desk.render();
  },

  async finalize() {
    desk.fail("");
    const answer = await call("finalize", desk.src(), desk.moves());
    if (!answer.ok) {
      desk.fail(answer.error);
      return false;
    }
    desk.session.finalized = true;
    desk.result = answer.result;
    desk.say(`Run finalised: ${desk.result.status}.`);
    desk.persist();
    desk.render();
    return true;
  },

  runTool(name, args) {
    desk.mode.use?.(`tool:${name}`);
    return call("tool", JSON.stringify(desk.current.packet), name, JSON.stringify(args));
  },

  render,
};

/** What the status line says of the open day ("Day 4 is open." / every checkpoint closed). */
export function openText() {
  const c = desk.current;
  if (!c) return "";
  if (desk.result) return "Run finalised.";
  return c.open_day ? `Day ${c.open_day} is open.` : "Every checkpoint is closed: finalise the run.";
}

// Problems with the batch are listed next to Submit, each field at fault marked
// in the form (aria-invalid) and the first one focused.
function showSubmitErrors(box, messages, inputs = []) {
  if (!box) {
    desk.fail(messages.join(" "));
    return;
  }
  box.replaceChildren(...(messages.length ? [h("p", {}, messages.length === 1 ? "Not submitted:" : `Not submitted: ${messages.length} problems`),
    h("ul", {}, messages.map((m) => h("li", {}, m)))] : []));
  if (inputs.length) inputs[0].focus();
}

function renderCompose(p) {
  const jsonArea = h("textarea", { name: "batch_json", rows: 12, spellcheck: "false" });
  const submitErrors = h("div", { class: "fb-submit-errors", role: "alert", "aria-live": "assertive" });
  let built = false;
  const syncJson = () => {
    if (!built) return;
    try {
      jsonArea.value = stableJson(desk.composer.batch());
    } catch {
      jsonArea.value = stableJson({ day: p.day, actions: desk.composer.actions, report: "(complete the report form)" });
    }
  };
  desk.composer = new Composer(p, { onChange: () => syncJson() });
  built = true;
  desk.composer.reportForm.addEventListener("input", syncJson);
  const submit = async () => {
    desk.fail("");
    showSubmitErrors(submitErrors, []);
    let batch;
    try {
      batch = desk.composer.batch();
    } catch (e) {
      const problems = e.problems || [{ message: e.message }];
      showSubmitErrors(submitErrors, problems.map((x) => x.message), problems.map((x) => x.input).filter(Boolean));
      return;
    }
    await desk.submitBatch(batch, submitErrors);
  };
  const loadJson = () => {
    desk.fail("");
    try {
      desk.composer.load(JSON.parse(jsonArea.value));
      desk.say("The JSON batch is in the forms: check it and submit.");
    } catch (e) {
      showSubmitErrors(submitErrors, [`JSON not loaded, the forms are unchanged: ${e instanceof SyntaxError ? "not valid JSON (" + e.message + ")" : e.message}`]);
    }
  };
  const submitRaw = async () => {
    desk.fail("");
    let batch;
    try {
      batch = JSON.parse(jsonArea.value);
    } catch (e) {
      showSubmitErrors(submitErrors, [`the JSON is not valid (${e.message})`]);
      return;
    }
    await desk.submitBatch(batch, submitErrors);
  };
  const buttons = [];
  if (desk.mode.offers.fill) {
    // The projection hands over the whole report: an assisted mode, recorded in the session and its export.
    const fill = async () => {
      desk.fail("");
      const answer = await desk.runTool("project", { actions: desk.composer.actions });
      if (!answer.ok) return showSubmitErrors(submitErrors, [`Projection: ${answer.error}`]);
      desk.composer.fillReport(answer.output.report);
      desk.mode.assisted?.(p.day);
      syncJson();
      desk.say(`Report filled from the projection tool (assisted mode, recorded for day ${p.day}). ${expected(answer.output.decisions, answer.output.rejected)}`);
    };
    buttons.push(h("button", { type: "button", class: "fb-assisted", onclick: fill }, "Fill the report from the projection (assisted mode)"));
  }
  buttons.push(h("button", { type: "button", class: "fb-primary", onclick: submit }, "Submit batch"),
    h("button", { type: "button", onclick: () => desk.skip() }, "Close the day without a batch"));
  const section = h("section", { class: "fb-compose", "aria-labelledby": "fb-compose-h" },
    h("h2", { id: "fb-compose-h" }, `Today's batch (day ${p.day})`),
    desk.composer.root,
    h("div", { class: "fb-buttons fb-submit-row" }, buttons, desk.mode.nearSubmit?.() ?? null),
    submitErrors,
    desk.mode.offers.fill ? h("p", { class: "fb-hint" }, "Assisted mode: the projection fills the report exactly; the session "
      + "records each day it was used, and so does its export.") : null,
    h("details", { class: "fb-json" }, h("summary", {}, "Batch as JSON (view, edit, load)"),
      field("Batch JSON", jsonArea), h("button", { type: "button", onclick: loadJson }, "Load JSON into the forms"),
      h("button", { type: "button", onclick: submitRaw }, "Submit the JSON as it is")));
  syncJson();
  return section;
}

function renderNotes() {
  const area = h("textarea", { name: "notes", rows: 5, maxlength: desk.mode.notesLimit });
  area.value = desk.session.notes || "";
  area.addEventListener("input", () => {
    desk.session.notes = area.value;
    if (area.value.trim()) desk.mode.use?.("notes");
    desk.persist();
  });
  return h("section", { class: "fb-notes", "aria-labelledby": "fb-notes-h" }, h("h2", { id: "fb-notes-h" }, "Notes"),
    field("Your notes (kept across checkpoints, in this browser only)", area, desk.mode.notesHint));
}

function render() {
  const parts = [desk.mode.panel(desk)];
  const c = desk.current;
  if (c) {
    if (desk.result) parts.push(renderResult(desk.result, desk.mode.offers.sameWorld ? { fixture: c.fixture_sha256, siteRoot: SITE_ROOT } : {}));
    parts.push(renderLast(desk.last, { messages: desk.mode.offers.messages, receipts: desk.mode.offers.receipts,
      matched: desk.mode.offers.matched ? desk.last?.matched : null }));
    if (c.open_day && !desk.result) {
      const blocked = desk.mode.blocked?.(desk);
      if (blocked) {
        parts.push(blocked);
      } else {
        desk.mode.use?.("packet");
        // Two columns on a wide screen: the packet beside the batch and the tools.
        parts.push(h("div", { class: "fb-work" },
          h("div", { class: "fb-work-packet" }, renderPacket(c.packet, { receipts: desk.mode.offers.receipts, onUse: (a) => desk.mode.use?.(a) })),
          h("div", { class: "fb-work-batch" }, renderCompose(c.packet),
            renderTools(c.packet, desk.runTool, () => desk.composer.actions, { cut: desk.mode.toolCut }), renderNotes())));
      }
    } else if (!desk.result) {
      parts.push(h("p", { class: "fb-closed" }, "Every checkpoint is closed. Finalise the run to run the carry horizon and see the grade."));
    }
    parts.push(renderDays(c.days, { last: desk.mode.offers.lastDays, onUse: (a) => desk.mode.use?.(a) }));
  }
  const focusDay = document.activeElement && root.contains(document.activeElement) && document.activeElement.closest(".fb-compose");
  body.replaceChildren(...parts.filter(Boolean));
  if (focusDay) (document.getElementById(desk.result ? "fb-result-h" : "fb-day-h") || statusLine).focus();
}

// Start-up in stages, each ticked off as it completes (the first two run side by side).
const STAGES = [
  ["bundle", "Engine bundle fetched and checked against its manifest"],
  ["runtime", "Python runtime (Pyodide) started"],
  ["import", "Engine imported from the bundle"],
  ["session", "Session replayed: today's packet"],
];
const FROM_SNAPSHOT = { runtime: "Python runtime (Pyodide) restored from the snapshot of this bundle",
  import: "Engine imported from the bundle (in the snapshot, checked against it)" };

function renderStages() {
  const bar = h("progress", { max: STAGES.length, value: 0, "aria-label": "Engine start-up" });
  const items = new Map(STAGES.map(([key, text]) => [key, h("li", { "data-stage": key }, text)]));
  const box = h("div", { class: "fb-stages" }, bar, h("ol", {}, [...items.values()]));
  let done = 0;
  // each step is stamped with the time since the page opened
  const mark = ({ stage, path }) => {
    const item = items.get(stage);
    if (!item || item.dataset.done) return;
    if (path === "snapshot" && FROM_SNAPSHOT[stage]) item.textContent = FROM_SNAPSHOT[stage];
    item.dataset.done = "true";
    item.append(` (${(performance.now() / 1000).toFixed(1)} s)`);
    done += 1;
    bar.value = done;
    desk.say(`Loading the engine: ${done} of ${STAGES.length} steps done (${item.textContent.replace(/ \([^)]*s\)$/, "").toLowerCase()}).`);
  };
  return { box, mark };
}

async function boot(mode) {
  desk.mode = mode;
  desk.session = mode.load();
  const stages = renderStages();
  root.replaceChildren(statusLine, errorLine, stages.box, body);
  root.setAttribute("aria-busy", "true");
  desk.say("Loading the engine: Pyodide and the engine bundle, checked against its manifest…");
  onProgress((p) => stages.mark(p));
  try {
    desk.info = await engineInfo();
  } catch (e) {
    root.setAttribute("aria-busy", "false");
    root.dataset.ready = "error";
    desk.fail(`The engine did not start: ${e.message}`);
    return;
  }
  const tReady = performance.now();
  if (desk.session.source) await desk.refresh();
  await mode.ready?.(desk);
  const tState = performance.now();
  render();
  const tRender = performance.now();
  stages.mark({ stage: "session" });
  // performance.now() counts from navigation start: page open to first packet shown (painted)
  await new Promise((resolve) => requestAnimationFrame(() => resolve()));
  window.fbDeskTimings = { ...desk.info.timings, start: desk.info.start, first_packet_ms: performance.now(), module_start_ms: t0,
    engine_ready_ms: tReady, state_call_ms: tState - tReady, render_ms: tRender - tState };
  root.setAttribute("aria-busy", "false");
  root.dataset.ready = "true";
  stages.box.hidden = true;
  if (!statusLine.textContent.startsWith("Loading")) return;
  desk.say(mode.greeting(desk));
}

if (root) {
  ensureStyles();
  warmUp();
  const study = root.dataset.mode === "study";
  import(study ? "./study.js" : "./practice.js").then((m) => boot(m.mode));
}
