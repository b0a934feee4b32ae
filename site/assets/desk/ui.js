// The practice desk UI: sit at the desk in the browser, with no model and no
// server. The engine (the published bundle, in a Web Worker) does every
// calculation; this module only shows its answers and collects the desk's
// batches. A session is its source and its moves; each call replays them.
import { call, engineInfo, onProgress, warmUp } from "./client.js";
import { authorityAmount, Composer } from "./compose.js";
import { bps, ensureStyles, field, h, money, stableJson, table } from "./dom.js";
import { basis, expected, gateDetail, moneyText } from "./readable.js";
import * as store from "./store.js";
import { exportFiles, importMoves } from "./transfer.js";
import { renderTools } from "./tools.js";
import { writeZip } from "./zip.js";

const root = document.getElementById("fb-desk");
const t0 = performance.now();

let info = null; // runtime and bundle facts from the worker
let session = store.load();
let current = null; // the engine's state answer: open_day, packet, days, head
let composer = null;
let last = null; // the last submission's decisions and receipts
let result = null; // the final result once finalised

const statusLine = h("p", { class: "fb-status", role: "status", "aria-live": "polite" });
const errorLine = h("p", { class: "fb-error", role: "alert", "aria-live": "assertive" });
const body = h("div", { class: "fb-desk-body" });

function say(text) {
  statusLine.textContent = text;
}
// Storage can be refused (private windows, quota): the desk still works, the note says what is lost.
function persist() {
  if (!store.save(session)) say(`${statusLine.textContent} This browser refused local storage: the session will not survive a reload (export it).`);
}
function fail(text) {
  errorLine.textContent = text;
}
const src = () => JSON.stringify(session.source);
const moves = () => JSON.stringify(session.moves);

// -- engine round trips ---------------------------------------------------------
async function refresh() {
  const answer = await call("state", src(), moves());
  if (!answer.ok) {
    current = null;
    fail(`The saved session cannot be replayed (${answer.error}). Reset it or start a new one.`);
    return false;
  }
  current = answer;
  result = null;
  if (session.finalized) {
    const fin = await call("finalize", src(), moves());
    if (fin.ok) result = fin.result;
    else fail(`Finalising: ${fin.error}`);
  }
  return true;
}

// Replace the session only if the engine can replay the new one; otherwise
// say why and leave the current session exactly as it was.
async function adopt(next, message, refusal = "Not changed: ") {
  fail("");
  const check = await call("state", JSON.stringify(next.source), JSON.stringify(next.moves));
  if (!check.ok) {
    fail(`${refusal}${check.error}`);
    return false;
  }
  session = next;
  last = null;
  await refresh();
  say(message);
  persist();
  render();
  return true;
}

async function submit() {
  fail("");
  let batch;
  try {
    batch = composer.batch();
  } catch (e) {
    fail(`Not submitted: ${e.message}`);
    return;
  }
  await submitBatch(batch);
}

async function submitBatch(batch) {
  const answer = await call("submit", src(), moves(), JSON.stringify(batch));
  if (!answer.ok) {
    fail(`Batch rejected, nothing changed: ${answer.error}`);
    say(`Day ${current.open_day} is still open.`);
    return;
  }
  session.moves.push({ batch });
  current = answer.state;
  last = { day: batch.day, decisions: answer.decisions, receipts: answer.receipts };
  const refused = answer.decisions.filter((d) => d.decision !== "ACCEPTED").length;
  say(`Day ${batch.day} settled: ${answer.decisions.length - refused} accepted, ${refused} refused. ` +
    (current.open_day ? `Day ${current.open_day} is open.` : "Every checkpoint is closed: finalise the run."));
  persist();
  render();
}

async function skip() {
  fail("");
  const day = current.open_day;
  const answer = await call("skip", src(), moves());
  if (!answer.ok) {
    fail(answer.error);
    return;
  }
  session.moves.push({ skip: day });
  current = answer.state;
  last = { day, decisions: [], receipts: answer.receipts };
  say(`Day ${day} closed without a batch (it counts as missed).`);
  persist();
  render();
}

async function finalize() {
  fail("");
  const answer = await call("finalize", src(), moves());
  if (!answer.ok) {
    fail(answer.error);
    return;
  }
  session.finalized = true;
  result = answer.result;
  say(`Run finalised: ${result.status}.`);
  persist();
  render();
}

async function runTool(name, args) {
  return call("tool", JSON.stringify(current.packet), name, JSON.stringify(args));
}

// -- export and import ----------------------------------------------------------
function download(name, bytes, type) {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function exportSession() {
  const { name, files } = exportFiles(session, current);
  download(`${name}.zip`, writeZip(files), "application/zip");
  say(`Exported ${session.moves.length} day(s) as ${name}.zip.`);
}

async function importFiles(fileList) {
  fail("");
  try {
    const next = await importMoves([...fileList], session, current);
    await adopt({ ...next, finalized: false }, `Imported ${next.moves.length} day(s) from ${[...fileList].map((f) => f.name).join(", ")}.`,
      "Import refused, nothing changed: ");
  } catch (e) {
    fail(`Import refused, nothing changed: ${e.message}`);
  }
}

// -- rendering ------------------------------------------------------------------
function renderSession() {
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
  const form = h("form", { class: "fb-session-form", "aria-label": "Start a session" },
    h("fieldset", {}, h("legend", {}, "Start a new session"), field("Source", kind), familyBox, episodeBox,
      h("button", { type: "submit" }, "Start new session")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const seedValue = Number(seed.value);
    if (kind.value === "family" && !(Number.isSafeInteger(seedValue) && seedValue >= 1)) {
      fail("Seed: expected a whole number from 1");
      return;
    }
    const source = kind.value === "family" ? { family: family.value, seed: seedValue } : { episode: episode.value };
    adopt({ format: 1, source, moves: [], finalized: false }, `New session: ${store.sourceLabel(source)}.`);
  });
  const importInput = h("input", { type: "file", name: "import", accept: ".json,.zip,application/json,application/zip", multiple: true });
  importInput.addEventListener("change", () => {
    if (importInput.files.length) importFiles(importInput.files);
  });
  const where = current ? `${store.sourceLabel(session.source)} · fixture ${current.fixture_sha256.slice(0, 16)}… · receipts ${current.head.size}, head ${current.head.hash.slice(0, 16)}…`
    : store.sourceLabel(session.source);
  return h("section", { class: "fb-session", "aria-labelledby": "fb-session-h" },
    h("h2", { id: "fb-session-h" }, "Session"),
    h("p", { class: "fb-where", "data-head": current ? `${current.head.size}:${current.head.hash}` : "" }, where),
    h("p", { class: "fb-bundle" }, `Engine bundle ${info.bundle_sha256} (checked against the manifest), engine ${info.engine_version}, Python ${info.python_version} on Pyodide ${info.pyodide_version} (the desk's subset of the standard library).`),
    form,
    h("div", { class: "fb-buttons" },
      h("button", { type: "button", onclick: () => adopt({ format: 1, source: session.source, moves: [], finalized: false }, "Session reset: day 1 is open.") }, "Reset session"),
      h("button", { type: "button", onclick: exportSession, disabled: !current }, "Export batches (.zip)"),
      finalizeButton()),
    field("Import batches (.zip from an export, batch .json files, a candidate or session .json)", importInput));
}

// Finalising with days still open closes them unanswered and cannot be undone
// (short of a reset), so that case asks for a second, explicit press.
function finalizeButton() {
  const open = current && current.open_day ? current.horizon - current.open_day + 1 : 0;
  const button = h("button", { type: "button", disabled: !current || Boolean(result) }, "Finalise the run");
  button.addEventListener("click", () => {
    if (open && button.dataset.confirm !== "yes") {
      button.dataset.confirm = "yes";
      button.textContent = `Confirm: close the ${open} remaining day(s) unanswered and finalise`;
      say(`Finalising now closes days ${current.open_day} to ${current.horizon} without batches. Press again to confirm.`);
      return;
    }
    finalize();
  });
  return button;
}

function dl(pairs) {
  return h("dl", { class: "fb-facts" }, pairs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function receiptSummary(r) {
  const p = r.payload || {};
  if (r.kind === "ACTION") return `${p.type} ${p.decision}${p.reason ? " " + p.reason : ""}${p.message ? ": " + moneyText(p.message) : ""}`;
  if (r.kind === "CLOSE") return `close (${p.phase}), cash ${money(p.cash)}`;
  if (r.kind === "BATCH") return `batch for day ${p.batch?.day}, ${p.batch?.actions?.length ?? 0} action(s)`;
  return JSON.stringify(p).slice(0, 160);
}

function receiptsTable(caption, receipts) {
  return table(caption, ["seq", "day", "kind", "what", "hash"],
    receipts.map((r) => [String(r.seq), String(r.day), r.kind, receiptSummary(r), h("code", { title: r.hash }, r.hash.slice(0, 12))]));
}

function renderPacket(p) {
  const buffer = p.desk.min_buffer;
  const heading = h("h2", { id: "fb-day-h", tabindex: "-1" }, `Day ${p.day} of ${p.horizon}`);
  return h("section", { class: "fb-packet", "aria-labelledby": "fb-day-h", "data-day": p.day },
    heading,
    dl([["Cash", money(p.cash)], ["Minimum cash buffer", money(buffer)], ["Cash above the buffer", money(p.cash - buffer)],
      ["Funding cost to date", money(p.funding_cost_to_date)], ["Maximum tenor", `${p.desk.max_tenor} days`],
      ["Carry horizon ends", `day ${p.carry_end}`]]),
    table("Positions", ["id", "name", "kind", "rating", "notional", "coupon", "settles", "exits", "title status"],
      p.assets.map((a) => [a.id, a.name, a.kind, a.rating, money(a.notional), bps(a.coupon_bps), `day ${a.settle_day}`, `day ${a.exit_day}`, a.status])),
    table("Funding trades", ["id", "asset", "counterparty", "quote", "notional", "principal", "rate", "haircut", "start", "maturity", "status"],
      p.trades.map((t) => [t.id, t.asset, t.counterparty, t.quote, money(t.notional), money(t.principal), bps(t.rate_bps), bps(t.haircut_bps), `day ${t.start}`, `day ${t.maturity}`, t.status])),
    table("Today's quotes", ["id", "counterparty", "rate", "haircut", "start", "tenor", "valid through", "max notional", "used", "eligible"],
      p.quotes.map((q) => [q.id, q.counterparty, bps(q.rate_bps), bps(q.haircut_bps), `day ${q.start_day}`, `${q.tenor} days`, `day ${q.valid_through}`, money(q.max_notional), money(q.used), q.eligible_kinds.join(", ")])),
    table("Limits and usage", ["counterparty", "name", "capacity", "usage", "headroom", "eligible"],
      p.counterparties.map((c) => [c.id, c.name, money(c.capacity), money(c.usage), money(c.headroom), c.eligible_kinds.join(", ")])),
    table("Approvals", ["id", "kind", "amount", "counterparty", "requested", "status", "resolved", "expires"],
      p.approvals.map((a) => [a.id, a.kind, authorityAmount(a.kind, a.amount), a.counterparty ?? "", `day ${a.requested_day}`, a.status, a.resolved_day ? `day ${a.resolved_day}` : "", a.expires ? `day ${a.expires}` : ""])),
    table("Breaches", ["day", "code"], p.breaches.map((b) => [String(b.day), b.code])),
    h("h3", {}, `Sources (${p.sources.length})`),
    p.sources.length ? p.sources.map((s) => h("details", { class: "fb-source" },
      h("summary", {}, `${s.id} · day ${s.published_day} · ${s.title}`), h("p", {}, s.text))) : h("p", {}, "No source published yet."),
    h("details", { class: "fb-receipts" }, h("summary", {}, `Earlier receipts (${p.receipts.length})`),
      receiptsTable("Receipts of earlier days", p.receipts)));
}

function renderCompose(p) {
  const jsonArea = h("textarea", { name: "batch_json", rows: 12, spellcheck: "false" });
  let built = false;
  const syncJson = () => {
    if (!built) return;
    try {
      jsonArea.value = stableJson(composer.batch());
    } catch {
      jsonArea.value = stableJson({ day: p.day, actions: composer.actions, report: "(complete the report form)" });
    }
  };
  composer = new Composer(p, { onChange: () => syncJson() });
  built = true;
  composer.reportForm.addEventListener("input", syncJson);
  const loadJson = () => {
    fail("");
    try {
      composer.load(JSON.parse(jsonArea.value));
      say("The JSON batch is in the forms: check it and submit.");
    } catch (e) {
      fail(`JSON not loaded, the forms are unchanged: ${e instanceof SyntaxError ? "not valid JSON (" + e.message + ")" : e.message}`);
    }
  };
  const submitRaw = async () => {
    fail("");
    let batch;
    try {
      batch = JSON.parse(jsonArea.value);
    } catch (e) {
      fail(`Not submitted: the JSON is not valid (${e.message})`);
      return;
    }
    await submitBatch(batch);
  };
  const fill = async () => {
    fail("");
    const answer = await runTool("project", { actions: composer.actions });
    if (!answer.ok) return fail(`Projection: ${answer.error}`);
    composer.fillReport(answer.output.report);
    syncJson();
    say(`Report filled from the projection tool. ${expected(answer.output.decisions, answer.output.rejected)}`);
  };
  const section = h("section", { class: "fb-compose", "aria-labelledby": "fb-compose-h" },
    h("h2", { id: "fb-compose-h" }, `Today's batch (day ${p.day})`),
    composer.root,
    h("div", { class: "fb-buttons" },
      h("button", { type: "button", onclick: fill }, "Fill the report from the projection tool"),
      h("button", { type: "button", class: "fb-primary", onclick: submit }, "Submit batch"),
      h("button", { type: "button", onclick: skip }, "Close the day without a batch")),
    h("details", { class: "fb-json" }, h("summary", {}, "Batch as JSON (view, edit, import)"),
      field("Batch JSON", jsonArea), h("button", { type: "button", onclick: loadJson }, "Load JSON into the forms"),
      h("button", { type: "button", onclick: submitRaw }, "Submit the JSON as it is")));
  syncJson();
  return section;
}

function renderLast() {
  if (!last) return null;
  return h("section", { class: "fb-last", "aria-labelledby": "fb-last-h" },
    h("h2", { id: "fb-last-h" }, `Day ${last.day}: what the desk decided`),
    table("Decisions", ["action", "type", "decision", "reason", "message"],
      last.decisions.map((d) => [d.action, d.type, h("span", { class: d.decision === "ACCEPTED" ? "fb-ok" : "fb-bad", "data-decision": d.decision }, d.decision), d.reason ?? "", moneyText(d.message ?? "")]),
      { class: "fb-decisions" }),
    h("details", {}, h("summary", {}, `New receipts (${last.receipts.length})`), receiptsTable("Receipts written", last.receipts)));
}

function renderDays(days) {
  return h("section", { class: "fb-days", "aria-labelledby": "fb-days-h" },
    h("h2", { id: "fb-days-h" }, "Checkpoints so far"),
    table("Settled checkpoints", ["day", "batch", "accepted", "refused", "refusals", "cash", "breaches"],
      days.map((d) => [String(d.day), d.batch, String(d.accepted), String(d.refused),
        d.decisions.filter((x) => x.decision !== "ACCEPTED").map((x) => `${x.action}: ${x.reason}`).join(", "),
        money(d.cash), d.breaches.join(", ")])));
}

function renderResult(r) {
  const score = r.score;
  return h("section", { class: "fb-result", "aria-labelledby": "fb-result-h" },
    h("h2", { id: "fb-result-h", tabindex: "-1" }, "Result"),
    h("p", { class: "fb-result-status" }, "Status: ", h("strong", { "data-status": r.status }, r.status)),
    r.verdict ? h("p", { class: "fb-result-verdict" }, "Verdict: ", h("strong", { "data-verdict": r.verdict }, r.verdict)) : null,
    (r.gates || []).length ? h("ul", { class: "fb-gates" }, r.gates.map((g) => h("li", {}, `${g.passed ? "✓" : "✗"} ${g.gate}: ${typeof g.detail === "string" ? gateDetail(g.detail) : g.detail}`))) : null,
    score ? h("p", { class: "fb-result-score" }, "Score: ", h("strong", { "data-score": `${score.points}/${score.denominator}` }, `${score.points}/${score.denominator}`)) : h("p", {}, "No score."),
    score ? table("Score components", ["component", "points", "max", "basis"],
      Object.entries(score.components).map(([k, c]) => [k.replaceAll("_", " "), String(c.points), String(c.max), basis(c)])) : null,
    score ? h("p", { class: "fb-hint" }, "Costs are money; tails are in money-days (an amount unfunded times the days it stays unfunded; records keep cent-days, 100 times the number shown).") : null,
    dl([["Receipts head", `${r.receipts_head.size}:${r.receipts_head.hash}`]]));
}

function render() {
  const parts = [];
  if (info) parts.push(renderSession());
  if (current) {
    if (result) parts.push(renderResult(result));
    parts.push(renderLast());
    if (current.open_day && !result) {
      parts.push(renderPacket(current.packet), renderCompose(current.packet), renderTools(current.packet, runTool, () => composer.actions));
    } else if (!result) {
      parts.push(h("p", { class: "fb-closed" }, "Every checkpoint is closed. Finalise the run to run the carry horizon and see the grade."));
    }
    parts.push(renderDays(current.days));
  }
  const focusDay = document.activeElement && root.contains(document.activeElement) && document.activeElement.closest(".fb-compose");
  body.replaceChildren(...parts.filter(Boolean));
  if (focusDay) (document.getElementById(result ? "fb-result-h" : "fb-day-h") || statusLine).focus();
}

// Start-up in stages, each ticked off as it completes (the first two run side by side).
const STAGES = [
  ["bundle", "Engine bundle fetched and checked against its manifest"],
  ["runtime", "Python runtime (Pyodide) started"],
  ["import", "Engine imported from the bundle"],
  ["session", "Session replayed: today's packet"],
];

function renderStages() {
  const bar = h("progress", { max: STAGES.length, value: 0, "aria-label": "Engine start-up" });
  const items = new Map(STAGES.map(([key, text]) => [key, h("li", { "data-stage": key }, text)]));
  const box = h("div", { class: "fb-stages" }, bar, h("ol", {}, [...items.values()]));
  let done = 0;
  // each step is stamped with the time since the page opened
  const mark = (stage) => {
    const item = items.get(stage);
    if (!item || item.dataset.done) return;
    item.dataset.done = "true";
    item.append(` (${(performance.now() / 1000).toFixed(1)} s)`);
    done += 1;
    bar.value = done;
    say(`Loading the engine: ${done} of ${STAGES.length} steps done (${STAGES.find(([k]) => k === stage)[1].toLowerCase()}).`);
  };
  return { box, mark };
}

async function boot() {
  const stages = renderStages();
  root.replaceChildren(statusLine, errorLine, stages.box, body);
  root.setAttribute("aria-busy", "true");
  say("Loading the engine: Pyodide and the engine bundle, checked against its manifest…");
  onProgress(({ stage }) => stages.mark(stage));
  try {
    info = await engineInfo();
  } catch (e) {
    root.setAttribute("aria-busy", "false");
    root.dataset.ready = "error";
    fail(`The engine did not start: ${e.message}`);
    return;
  }
  const tReady = performance.now();
  await refresh();
  const tState = performance.now();
  render();
  const tRender = performance.now();
  stages.mark("session");
  // performance.now() counts from navigation start: page open to first packet shown (painted)
  await new Promise((resolve) => requestAnimationFrame(() => resolve()));
  window.fbDeskTimings = { ...info.timings, start: info.start, first_packet_ms: performance.now(), module_start_ms: t0,
    engine_ready_ms: tReady, state_call_ms: tState - tReady, render_ms: tRender - tState };
  root.setAttribute("aria-busy", "false");
  root.dataset.ready = "true";
  stages.box.hidden = true;
  if (!statusLine.textContent.startsWith("Loading")) return;
  say(current ? (result ? "Run finalised." : `${store.sourceLabel(session.source)}: day ${current.open_day} is open.`) : "");
}

if (root) {
  ensureStyles();
  warmUp();
  boot();
}

