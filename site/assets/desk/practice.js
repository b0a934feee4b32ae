// Free practice: any world, the whole packet with its receipts, the engine's
// messages, how many report fields matched after each day, the projection's
// report fill (an assisted mode, recorded per day), import and export of
// batches, and a result linked to the same world's published runs. Starting a
// new session or resetting asks first when there is something to lose.
import { desk, openText } from "./ui.js";
import { confirmButton, field, h } from "./dom.js";
import * as store from "./store.js";
import { exportFiles, importMoves } from "./transfer.js";
import { writeZip } from "./zip.js";

function download(name, bytes, type) {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function exportSession() {
  const { name, files } = exportFiles(desk.session, desk.current);
  download(`${name}.zip`, writeZip(files), "application/zip");
  const assisted = desk.session.assisted_days?.length ? ` (assisted mode on day ${desk.session.assisted_days.join(", ")}: in session.json)` : "";
  desk.say(`Exported ${desk.session.moves.length} day(s) as ${name}.zip${assisted}.`);
}

async function importFiles(fileList) {
  desk.fail("");
  try {
    const next = await importMoves([...fileList], desk.session, desk.current);
    await desk.adopt({ ...next, finalized: false }, `Imported ${next.moves.length} day(s) from ${[...fileList].map((f) => f.name).join(", ")}.`,
      "Import refused, nothing changed: ");
  } catch (e) {
    desk.fail(`Import refused, nothing changed: ${e.message}`);
  }
}

// What a new session or a reset would discard, or "" when there is nothing to lose.
function atStake() {
  const n = desk.session.moves.length;
  return n ? `${store.sourceLabel(desk.session.source)}: ${n} day(s) played${desk.session.finalized ? ", finalised" : ""}` : "";
}

function panel() {
  const { info, session, current } = desk;
  const kind = h("select", { name: "kind" }, h("option", { value: "family" }, "practice family"), h("option", { value: "episode" }, "episode"));
  const family = h("select", { name: "family" }, (info.families || []).map((f) => h("option", { value: f }, f)));
  const seed = h("input", { type: "number", name: "seed", min: 1, step: 1, value: session.source.seed ?? 1 });
  const episode = h("select", { name: "episode" }, (info.episodes || []).map((e) => h("option", { value: e }, e)));
  kind.value = session.source.episode ? "episode" : "family";
  if (session.source.family) family.value = session.source.family;
  if (session.source.episode) episode.value = session.source.episode;
  const familyBox = h("div", { class: "fb-inline" }, field("Family", family), field("Seed", seed));
  const episodeBox = h("div", { class: "fb-inline" }, field("Episode", episode));
  const sync = () => {
    familyBox.hidden = kind.value !== "family";
    episodeBox.hidden = kind.value !== "episode";
  };
  kind.addEventListener("change", sync);
  sync();
  const startNew = () => {
    const seedValue = Number(seed.value);
    if (kind.value === "family" && !(Number.isSafeInteger(seedValue) && seedValue >= 1)) {
      desk.fail("Seed: expected a whole number from 1");
      return;
    }
    const source = kind.value === "family" ? { family: family.value, seed: seedValue } : { episode: episode.value };
    desk.adopt({ format: 1, source, moves: [], finalized: false }, `New session: ${store.sourceLabel(source)}.`);
  };
  const stake = atStake();
  const startButton = confirmButton("Start new session", stake && `Confirm: discard ${stake}, and start the new one`, startNew,
    { say: desk.say, warning: stake && `Starting a new session discards ${stake}. Export it first to keep it; press again to confirm.` });
  const form = h("form", { class: "fb-session-form", "aria-label": "Start a session" },
    h("fieldset", {}, h("legend", {}, "Start a new session"), field("Source", kind), familyBox, episodeBox, startButton));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    startButton.click();
  });
  const reset = confirmButton("Reset session", stake && `Confirm: discard ${stake}`,
    () => desk.adopt({ format: 1, source: session.source, moves: [], finalized: false }, "Session reset: day 1 is open."),
    { say: desk.say, warning: stake && `Reset discards ${stake}. Export it first to keep it; press again to confirm.` });
  const importInput = h("input", { type: "file", name: "import", accept: ".json,.zip,application/json,application/zip", multiple: true });
  importInput.addEventListener("change", () => {
    if (importInput.files.length) importFiles(importInput.files);
  });
  const where = current ? `${store.sourceLabel(session.source)} · fixture ${current.fixture_sha256.slice(0, 16)}… · receipts ${current.head.size}, head ${current.head.hash.slice(0, 16)}…`
    : store.sourceLabel(session.source);
  const assisted = session.assisted_days?.length
    ? h("p", { class: "fb-assisted-note", "data-assisted": session.assisted_days.join(",") },
      `Assisted mode (the projection filled the report) on day ${session.assisted_days.join(", ")}: recorded in this session and its export.`)
    : null;
  return h("section", { class: "fb-session", "aria-labelledby": "fb-session-h" },
    h("h2", { id: "fb-session-h" }, "Session"),
    h("p", { class: "fb-where", "data-head": current ? `${current.head.size}:${current.head.hash}` : "" }, where),
    h("p", { class: "fb-bundle fb-hint" }, `Engine bundle ${info.bundle_sha256} (checked against the manifest), engine ${info.engine_version}, Python ${info.python_version} on Pyodide ${info.pyodide_version} (the desk's subset of the standard library${info.start === "snapshot" ? ", restored from the snapshot of this bundle" : ""}).`),
    assisted,
    h("div", { class: "fb-buttons" }, reset,
      h("button", { type: "button", onclick: exportSession, disabled: !current }, "Export batches (.zip)"),
      finalizeButton()),
    // out of the way once a session runs, so the packet and the batch come first
    h("details", { class: "fb-more", open: !current || undefined }, h("summary", {}, "Start another session, or import batches"),
      form, field("Import batches (.zip from an export, batch .json files, a candidate or session .json)", importInput),
      h("p", { class: "fb-hint" }, "For a practitioner run (recorded, under the model worker's conditions), use the ",
        h("a", { href: new URL("desk/study/", desk.siteRoot).href }, "study mode"), ".")));
}

// Finalising with days still open closes them unanswered and cannot be undone
// (short of a reset), so that case asks for a second, explicit press.
function finalizeButton() {
  const c = desk.current;
  const open = c && c.open_day ? c.horizon - c.open_day + 1 : 0;
  return confirmButton("Finalise the run", open && `Confirm: close the ${open} remaining day(s) unanswered and finalise`,
    () => desk.finalize(), { disabled: !c || Boolean(desk.result), say: desk.say,
      warning: open && `Finalising now closes days ${c.open_day} to ${c.horizon} without batches. Press again to confirm.` });
}

export const mode = {
  name: "practice",
  offers: { fill: true, matched: true, messages: true, receipts: true, lastDays: null, sameWorld: true },
  notesLimit: 16000,
  notesHint: "kept with the session in this browser; not exported",
  unreplayable: "Reset it or start a new one.",
  load: store.load,
  save: store.save,
  panel,
  assisted(day) {
    const days = new Set(desk.session.assisted_days || []);
    days.add(day);
    desk.session.assisted_days = [...days].sort((a, b) => a - b);
    desk.persist();
  },
  greeting: () => (desk.current ? `${store.sourceLabel(desk.session.source)}: ${openText()}` : ""),
};
