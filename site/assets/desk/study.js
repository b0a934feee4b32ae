// The study mode: a practitioner run under the model worker's conditions.
//
// The participant accepts a versioned consent text (its sha256 goes into the
// session), gets a random pseudonym (nothing personal is stored), picks or is
// given a practice world, and works it against a task clock (start, pause
// with a reason from a list, stop), with exactly the model worker's
// affordances: the packet (without raw receipts, as the worker's prompt),
// the sources, the four calculation tools, notes, and the outcomes of the
// last five checkpoints. No report fill, no matched-field count, no engine
// messages the worker's history lacks, no import. The session records which
// affordances were offered and used. Stopped sessions, finished or abandoned,
// export as a practitioner submission (submission.js) that `fundbook
// practitioner import` turns into a record.
import { call } from "./client.js";
import * as clock from "./clock.js";
import { desk, openText } from "./ui.js";
import { sha256hex } from "./checks.js";
import { field, h } from "./dom.js";
import * as store from "./store.js";
import { ABANDON_REASONS, COHORT, CONSENT_VERSION, DEFAULT_COHORT, LAST_OUTCOMES, NOTES_LIMIT, OFFERED, PARTICIPANT,
  PAUSE_REASONS, TOOL_OUTPUT_LIMIT } from "./study_protocol.js";
import { buildSubmission, deskBuild, pseudonym, submissionName } from "./submission.js";

const CONSENT_URL = new URL(`./consent/v${CONSENT_VERSION}.txt`, import.meta.url);
const ARCHIVE_MOST = 8;
const params = new URLSearchParams(location.search);
let consentText = null; // {text, sha256} once fetched
let ticker = null;

function newSession(participant) {
  const cohort = COHORT.test(params.get("cohort") || "") ? params.get("cohort") : DEFAULT_COHORT;
  return { format: 1, participant, cohort, consent: null, source: null, moves: [], finalized: false,
    clock: clock.newClock(), used: [], stop_reason: null, notes: "" };
}

function loadStore() {
  const saved = store.read(store.STUDY_KEY);
  const ok = saved && saved.format === 1 && PARTICIPANT.test(saved.participant || "");
  const root = ok ? saved : { format: 1, participant: pseudonym(), current: null, archive: [] };
  root.archive = Array.isArray(root.archive) ? root.archive.slice(-ARCHIVE_MOST) : [];
  return root;
}

let studies = loadStore();

function load() {
  const s = studies.current && Array.isArray(studies.current.moves) ? studies.current : newSession(studies.participant);
  // a clock that was running when the page went away is paused from its last save
  s.clock = clock.afterReload(s.clock || clock.newClock(), (s.moves || []).length + 1);
  studies.current = s;
  return s;
}

function save(session) {
  studies.current = session;
  return store.write(store.STUDY_KEY, studies);
}

function use(affordance) {
  const s = desk.session;
  if (!OFFERED.includes(affordance) || s.used.includes(affordance) || s.clock.status === "stopped") return;
  s.used = OFFERED.filter((a) => a === affordance || s.used.includes(a));
  desk.persist();
}

const now = () => Date.now();

function setClock(next) {
  desk.session.clock = next;
  desk.persist();
}

// -- the clock ---------------------------------------------------------------------

function clockLine(s) {
  const shown = h("strong", { class: "fb-clock-time", "data-status": s.clock.status }, clock.clockText(clock.openMs(s.clock, now())));
  const total = () => s.clock.per_checkpoint_ms.reduce((a, b) => a + b, 0) + clock.openMs(s.clock, now());
  const whole = h("span", { class: "fb-clock-total" }, clock.clockText(total()));
  clearInterval(ticker);
  ticker = setInterval(() => {
    if (desk.session !== s) return clearInterval(ticker);
    shown.textContent = clock.clockText(clock.openMs(s.clock, now()));
    whole.textContent = clock.clockText(total());
    for (const near of document.querySelectorAll(".fb-clock-near-time")) near.textContent = shown.textContent;
    if (s.clock.status === "running") setClock(clock.tick(s.clock, now()));
  }, 1000);
  const state = { ready: "not started", running: "running", paused: `paused (${PAUSE_REASONS[s.clock.pause?.reason] ?? ""})`,
    stopped: "stopped" }[s.clock.status];
  return h("p", { class: "fb-clock", role: "timer", "aria-live": "off" }, "Task clock: ", shown,
    ` on checkpoint ${Math.min(s.moves.length + 1, desk.current?.horizon ?? 20)} (${state}); `, whole, " in all, pauses excluded.");
}

function reasonSelect(name, reasons, label, choose = false) {
  // `choose`: no reason is preselected (a stop records the participant's reason, never a default one)
  const options = Object.entries(reasons).filter(([k]) => k !== "page-reloaded").map(([value, text]) => h("option", { value }, text));
  if (choose) options.unshift(h("option", { value: "", disabled: true, selected: true }, "choose a reason"));
  const select = h("select", { name }, options);
  if (choose) select.value = "";
  return [select, field(label, select)];
}

/** The open checkpoint's clock beside Submit (the task clock above is off-screen while composing). */
function nearSubmit() {
  const s = desk.session;
  if (!s?.clock || s.clock.status === "stopped" || s.clock.status === "ready") return null;
  return h("span", { class: "fb-clock-near", role: "timer", "aria-live": "off" }, "Clock ",
    h("strong", { class: "fb-clock-near-time" }, clock.clockText(clock.openMs(s.clock, now()))),
    s.clock.status === "paused" ? " (paused)" : " on this checkpoint");
}

function clockControls(s) {
  const out = [];
  if (s.clock.status === "ready") {
    out.push(h("button", { type: "button", class: "fb-primary", onclick: () => {
      setClock(clock.start(s.clock, now()));
      desk.say(`Clock started: day ${desk.current.open_day} is open.`);
      desk.render();
    } }, "Start the clock"));
  } else if (s.clock.status === "running") {
    const [select, box] = reasonSelect("pause_reason", PAUSE_REASONS, "Reason for the pause");
    out.push(box, h("button", { type: "button", onclick: () => {
      setClock(clock.pause(s.clock, now(), select.value, s.moves.length + 1));
      desk.say(`Clock paused (${PAUSE_REASONS[select.value]}). The packet is hidden until you resume.`);
      desk.render();
    } }, "Pause the clock"));
  } else if (s.clock.status === "paused") {
    out.push(h("button", { type: "button", class: "fb-primary", onclick: () => {
      setClock(clock.resume(s.clock, now()));
      desk.say(`Clock resumed. ${openText()}`);
      desk.render();
    } }, "Resume the clock"));
  }
  return out;
}

function stopControls(s) {
  if (s.clock.status === "stopped") return [];
  const [select, box] = reasonSelect("stop_reason", ABANDON_REASONS, "Why you stop here", true);
  const abandon = h("button", { type: "button", onclick: () => {
    if (!Object.hasOwn(ABANDON_REASONS, select.value)) {
      desk.say("Choose why you stop here first: the session records your reason.");
      select.focus();
      return;
    }
    if (abandon.dataset.confirm !== "yes") {
      abandon.dataset.confirm = "yes";
      abandon.textContent = "Confirm: stop here and keep the session as abandoned";
      desk.say(`Stopping ends the session after ${s.moves.length} checkpoint(s); you can still export it. Press again to confirm.`);
      return;
    }
    s.stop_reason = select.value;
    setClock(clock.stop(s.clock, now()));
    desk.say(`Session stopped (${ABANDON_REASONS[select.value]}) after ${s.moves.length} checkpoint(s). Export it below.`);
    desk.render();
  } }, "Stop: abandon the session");
  const open = desk.current?.open_day ? desk.current.horizon - desk.current.open_day + 1 : 0;
  const finish = h("button", { type: "button", onclick: async () => {
    if (open && finish.dataset.confirm !== "yes") {
      finish.dataset.confirm = "yes";
      finish.textContent = `Confirm: close the ${open} remaining day(s) unanswered and finalise`;
      desk.say(`Finishing now closes days ${desk.current.open_day} to ${desk.current.horizon} without batches. Press again to confirm.`);
      return;
    }
    const stopped = clock.stop(s.clock, now());
    if (await desk.finalize()) {
      s.stop_reason = null;
      setClock(stopped);
      desk.say(`Session finished and finalised: ${desk.result.status}. Export it below.`);
      desk.render();
    }
  } }, open ? "Finish: finalise the run" : "Finish: finalise the run (every checkpoint is closed)");
  return [h("div", { class: "fb-inline" }, box, abandon), finish];
}

// -- consent, world, export ------------------------------------------------------------

async function fetchConsent() {
  if (consentText) return consentText;
  const response = await fetch(CONSENT_URL);
  if (!response.ok) throw new Error(`consent/v${CONSENT_VERSION}.txt: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  consentText = { text: new TextDecoder().decode(bytes), sha256: await sha256hex(bytes) };
  return consentText;
}

function consentPanel(s) {
  const box = h("input", { type: "checkbox", name: "consent" });
  const accept = h("button", { type: "button", class: "fb-primary", disabled: true }, "Accept and continue");
  box.addEventListener("change", () => {
    accept.disabled = !box.checked;
  });
  accept.addEventListener("click", () => {
    s.consent = { version: CONSENT_VERSION, sha256: consentText.sha256 };
    desk.persist();
    desk.say(`Consent version ${CONSENT_VERSION} accepted (sha256 ${consentText.sha256.slice(0, 16)}…). Choose the world.`);
    desk.render();
  });
  return [h("h3", {}, `Consent (version ${CONSENT_VERSION})`),
    h("pre", { class: "fb-consent", tabindex: "0", "aria-label": "Consent text", "data-sha256": consentText.sha256 }, consentText.text),
    h("p", { class: "fb-hint" }, `sha256 of this text: ${consentText.sha256}. It goes into your session and its record.`),
    h("div", { class: "fb-field fb-check" }, h("label", {}, box, " I have read this text and I take part on these terms")),
    accept];
}

function worldPanel(s) {
  const family = h("select", { name: "family" }, (desk.info.families || []).map((f) => h("option", { value: f }, f)));
  if (desk.info.families?.includes(params.get("family"))) family.value = params.get("family");
  const given = Number(params.get("seed"));
  // an unpublished world by default: the register publishes baselines of seeds 1 to 3 only
  const drawn = 1000 + (crypto.getRandomValues(new Uint32Array(1))[0] % 999000);
  const seed = h("input", { type: "number", name: "seed", min: 1, step: 1, value: Number.isSafeInteger(given) && given >= 1 ? given : drawn });
  const begin = h("button", { type: "button", class: "fb-primary", onclick: () => {
    const value = Number(seed.value);
    if (!(Number.isSafeInteger(value) && value >= 1)) return desk.fail("Seed: expected a whole number from 1");
    desk.adopt({ ...s, source: { family: family.value, seed: value }, moves: [] },
      `World ${family.value} seed ${value}: start the clock when you are ready; it runs while you work on a checkpoint.`);
  } }, "Begin this session");
  return [h("h3", {}, "The world"),
    h("p", {}, "A practice world, as the model attempts get: one of the four families and a seed. The seed below was drawn for you "
      + "(the register publishes runs of seeds 1 to 3); keep it unless the person who invited you gave you one."),
    h("div", { class: "fb-inline" }, field("Family", family), field("Seed", seed)), begin];
}

async function exportStudy(s) {
  desk.fail("");
  try {
    const state = await call("state", JSON.stringify(s.source), JSON.stringify(s.moves));
    if (!state.ok) throw new Error(state.error);
    let result = null;
    if (s.finalized) {
      const fin = await call("finalize", JSON.stringify(s.source), JSON.stringify(s.moves));
      if (!fin.ok) throw new Error(fin.error);
      result = fin.result;
    }
    const build = await deskBuild(new URL("./", import.meta.url));
    const doc = buildSubmission(s, state, result, desk.info, build);
    const text = JSON.stringify(doc, null, 1) + "\n";
    const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    const a = h("a", { href: url, download: submissionName(s) });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    desk.say(`Exported ${submissionName(s)}: ${doc.termination.status}, ${doc.termination.checkpoints_closed} checkpoint(s), `
      + `receipts head ${doc.receipts_head.size}:${doc.receipts_head.hash.slice(0, 16)}…. Send it to the person who invited you.`);
  } catch (e) {
    desk.fail(`Export failed, nothing written: ${e.message}`);
  }
}

function archivePanel() {
  if (!studies.archive.length) return null;
  return h("details", { class: "fb-archive" }, h("summary", {}, `Earlier sessions in this browser (${studies.archive.length})`),
    h("ul", {}, studies.archive.map((s) => h("li", {},
      `${store.sourceLabel(s.source)}: ${s.finalized ? "completed" : `abandoned (${ABANDON_REASONS[s.stop_reason] ?? s.stop_reason})`}, `
      + `${s.moves.length} checkpoint(s) `, h("button", { type: "button", onclick: () => exportStudy(s) },
        `Export ${store.sourceLabel(s.source)} again`)))));
}

function panel() {
  const s = desk.session;
  const parts = [h("h2", { id: "fb-session-h" }, "Study session"),
    h("p", { class: "fb-where", "data-participant": s.participant, "data-head": desk.current ? `${desk.current.head.size}:${desk.current.head.hash}` : "" },
      `Pseudonym ${s.participant} · cohort ${s.cohort} · ${store.sourceLabel(s.source)}`
      + (desk.current ? ` · receipts ${desk.current.head.size}, head ${desk.current.head.hash.slice(0, 16)}…` : "")),
    h("p", { class: "fb-bundle fb-hint" }, `Engine bundle ${desk.info.bundle_sha256}, engine ${desk.info.engine_version}, Pyodide ${desk.info.pyodide_version}: the bundle every published run and model attempt ran.`)];
  if (!s.consent) {
    if (!consentText) {
      fetchConsent().then(() => desk.render(), (e) => desk.fail(`The consent text did not load (${e.message}); the study cannot start.`));
      parts.push(h("p", {}, "Loading the consent text…"));
    } else {
      parts.push(...consentPanel(s));
    }
  } else if (!s.source) {
    parts.push(...worldPanel(s));
  } else {
    parts.push(clockLine(s), h("div", { class: "fb-buttons fb-clock-controls" }, ...clockControls(s), ...stopControls(s)));
    if (s.clock.status === "stopped") {
      const how = s.finalized ? "completed (finalised)" : `abandoned: ${ABANDON_REASONS[s.stop_reason]}`;
      parts.push(h("p", { class: "fb-stopped", "data-termination": s.finalized ? "completed" : "abandoned" },
        `This session is ${how}, after ${s.moves.length} checkpoint(s). Export it as a practitioner submission and send the file `
        + "to the person who invited you; nothing leaves this browser otherwise."),
      h("div", { class: "fb-buttons" },
        h("button", { type: "button", class: "fb-primary", onclick: () => exportStudy(s) }, "Export the practitioner submission (.json)"),
        h("button", { type: "button", onclick: () => {
          studies.archive = [...studies.archive, s].slice(-ARCHIVE_MOST);
          desk.session = { ...newSession(studies.participant), consent: s.consent };
          desk.current = null;
          desk.result = null;
          desk.last = null;
          desk.persist();
          desk.say("A new study session: choose the world.");
          desk.render();
        } }, "Start another study session")));
    }
  }
  parts.push(archivePanel(),
    h("p", { class: "fb-hint" }, "Affordances offered, exactly the model worker's: ", OFFERED.join(", "),
      `. Used so far: ${s.used.length ? s.used.join(", ") : "none"}.`));
  return h("section", { class: "fb-session fb-study", "aria-labelledby": "fb-session-h", "data-clock": s.clock.status }, parts);
}

// The work area shows only while the clock runs: paused time is not work time.
function blocked(d) {
  const c = d.session.clock.status;
  if (c === "running") return null;
  const text = c === "ready" ? `Start the clock to see day ${d.current.open_day}'s packet: the time on a checkpoint counts from then.`
    : c === "paused" ? "The clock is paused: the packet and your batch are hidden until you resume."
      : "The session is stopped.";
  return h("p", { class: "fb-blocked" }, text);
}

export const mode = {
  name: "study",
  offers: { fill: false, matched: false, messages: false, receipts: false, lastDays: LAST_OUTCOMES, sameWorld: false },
  notesLimit: NOTES_LIMIT,
  toolCut: TOOL_OUTPUT_LIMIT,
  notesHint: "as the model worker's notes; they stay in this browser and are never exported",
  unreplayable: "Stop it (abandoned) and start another study session.",
  load,
  save,
  panel,
  nearSubmit,
  blocked,
  use,
  closed() {
    setClock(clock.closeCheckpoint(desk.session.clock, now()));
  },
  greeting: (d) => (!d.session.consent ? "Read the consent text first." : !d.session.source ? "Choose the world."
    : d.session.clock.status === "paused" ? "The clock is paused: resume it to continue."
      : d.session.clock.status === "stopped" ? "This session is stopped: export it below." : openText()),
};
