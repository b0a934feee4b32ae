// "Verify in your browser". A run page has
//   <div class="fb-verify" data-run-id data-record-url data-index-url></div>
// and the register has <div class="fb-verify-register" data-index-url data-runs-url></div>.
// Verifying a run re-executes its fixture in the engine worker (the published
// bundle, checked against its manifest) and reports four checks, each on its
// own line, each mismatch naming the field with the published value beside the
// computed one:
//   re-execution  the fixture, re-executed by the loaded bundle, gives the record's content;
//   engine        the record names the bundle that ran, and the compiled-bundle execution path;
//   index         the record's content and file hashes equal its index entry, and the index
//                 chain is intact up to the published head;
//   page          every mark on the page (data-fb-path) equals the verified record -- a mark of
//                 another run (the same world's scale) its own record, as its index entry seals
//                 it --, none of the figures a run page must show is missing or outside the
//                 verifiable regions, and no region shows a figure outside a mark (marks.js).
// The register's button does the same for every run in the index, reading each
// run page too, and then checks the register's own figures. A practitioner
// record's page has <div class="fb-verify-practitioner" data-record-url
// data-site-root></div>: its submission is re-executed and the record rebuilt
// from the two (practitioner.js). A model attempt's transcript page has
// <div class="fb-verify-attempt" data-record-url></div>: its accepted batches
// are re-executed and its receipts, grade and page figures checked (attempt.js).
import { call, engineInfo } from "./client.js";
import { ensureStyles } from "./dom.js";
import * as checks from "./checks.js";
import { verifyPractitioner } from "./practitioner.js";
import { verifyAttempt } from "./attempt.js";
import * as marks from "./marks.js";

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, v);
  for (const c of children) if (c !== undefined && c !== null) node.append(c);
  return node;
}

const short = (sha) => (typeof sha === "string" ? `${sha.slice(0, 12)}…` : String(sha));

async function fetchBytes(url, what) {
  const response = await fetch(url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`${what} ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function fetchJSON(url, what) {
  const bytes = await fetchBytes(url, what);
  const text = new TextDecoder().decode(bytes);
  try {
    return { bytes, text, value: JSON.parse(text) };
  } catch {
    throw new Error(`${what} ${url}: not valid JSON`);
  }
}

/** The index and its chain check, once per URL. */
const indexes = new Map();
function loadIndex(url) {
  if (!indexes.has(url)) {
    indexes.set(url, (async () => {
      const { value } = await fetchJSON(url, "run index");
      return { index: value, chain: await checks.checkChain(value) };
    })());
  }
  return indexes.get(url);
}

const runOf = (node, runId) => node.dataset.fbRun || node.closest("[data-run-id]")?.dataset.runId || runId;

/** Figures of `runId` marked in `root` (a Document or an element). */
function figuresIn(root, runId) {
  return marks.figuresIn(root, (node) => runOf(node, runId) === runId);
}

/** Another run's published record, as its index entry seals it (content_sha256 checked both ways). */
const others = new Map();
function otherRecord(index, indexUrl, runId) {
  const key = `${indexUrl} ${runId}`;
  if (!others.has(key)) {
    others.set(key, (async () => {
      const entry = (index.entries || []).find((e) => e.run_id === runId);
      if (!entry) return { problem: "(no index entry)" };
      const { value } = await fetchJSON(new URL(entry.record, new URL("../", new URL(indexUrl, location.href))).href, "record");
      const sha = await checks.contentSha256(value?.content ?? null).catch((e) => `(${e.message})`);
      if (sha !== entry.content_sha256 || value?.content_sha256 !== entry.content_sha256) {
        return { problem: `record ${entry.record} does not hash to its index entry's content_sha256` };
      }
      return { roots: { content: value.content, record: value, entry, index, receipts: [] } };
    })());
  }
  return others.get(key);
}

/** Problems of the marks of runs other than `runId` on a page (a baseline's scale line). */
async function otherRunProblems(doc, runId, index, indexUrl) {
  const out = [];
  const nodes = [...doc.querySelectorAll("[data-fb-path][data-fb-run]")].filter((n) => runOf(n, runId) !== runId);
  for (const node of nodes) {
    const other = await otherRecord(index, indexUrl, node.dataset.fbRun);
    const figure = { path: checks.parsePath(node.dataset.fbPath), format: node.dataset.fbFormat || "text", shown: node.textContent };
    if (other.problem) out.push({ field: `page: run ${node.dataset.fbRun}`, published: node.textContent, computed: other.problem });
    else out.push(...checks.figureProblems([figure], other.roots).map((p) => ({ ...p, field: `${p.field} (run ${node.dataset.fbRun})` })));
  }
  return { problems: out, count: nodes.length };
}

/** Chart data rows of a run page: [{id, values}] (the inline Vega-Lite specs). */
function chartsIn(doc) {
  const out = [];
  for (const node of doc.querySelectorAll(".fb-chart[data-fb-chart]")) {
    const island = doc.getElementById(node.dataset.specId);
    let values = null;
    try {
      values = JSON.parse(island?.textContent ?? "null")?.data?.values ?? null;
    } catch {
      values = null;
    }
    out.push({ id: node.dataset.fbChart, values });
  }
  return out;
}

function pageRequired(computed, receipts) {
  const out = checks.requiredPaths(computed);
  out.push(["receipts"]);
  receipts.forEach((_, i) => out.push(["receipts", i, "hash"]));
  return out;
}

/**
 * Verify one run. `doc` is the run page to check (this document or a fetched
 * one), `rows` extra elements whose figures must agree too (a register row).
 */
async function verifyRun({ runId, recordUrl, indexUrl, doc, rows = [] }) {
  const [{ index, chain }, info, record] = await Promise.all([
    loadIndex(indexUrl), engineInfo(), fetchJSON(recordUrl, "record")]);
  const content = record.value?.content || {};
  let answer = await call("verify", record.text);
  if (!answer.ok) {
    // The engine refused the record's fixture: nothing was re-executed, the other checks still run.
    answer = { match: false, ms: answer.ms, computed: {}, receipts: [], computed_content_sha256: "(not computed)",
      published_content_sha256: record.value?.content_sha256,
      differences: [{ field: "content.fixture", published: checks.compact(content.fixture ?? null),
        computed: `the engine refuses it: ${answer.error}` }] };
  }
  const computed = { ...content, ...answer.computed };
  const fileSha = await checks.sha256hex(record.bytes);
  const entries = Array.isArray(index.entries) ? index.entries : [];
  const position = entries.findIndex((e) => e.run_id === runId);
  const entry = entries[position];
  const roots = { content: computed, record: record.value, entry, index, receipts: answer.receipts || [] };

  const reexec = answer.differences?.length ? answer.differences
    : answer.match ? [] : [{ field: answer.first_difference || "content_sha256",
      published: String(answer.published_content_sha256), computed: String(answer.computed_content_sha256) }];
  const indexProblems = checks.entryProblems(entry, record.value, fileSha, computed);
  if (!chain.ok) indexProblems.push({ field: `index ${chain.at}`, published: chain.published ?? "", computed: chain.computed ?? chain.detail });
  const figures = doc ? figuresIn(doc, runId) : [];
  const required = pageRequired(computed, roots.receipts);
  let pageProblems = doc ? checks.figureProblems(figures, roots, required).concat(marks.regionProblems(doc, figures, required)) : [];
  let otherCount = 0;
  if (doc) {
    const other = await otherRunProblems(doc, runId, index, indexUrl);
    pageProblems = pageProblems.concat(other.problems);
    otherCount = other.count;
  }
  if (doc) for (const chart of chartsIn(doc)) pageProblems = pageProblems.concat(checks.chartProblems(chart.id, chart.values, computed.days));
  let rowCount = 0;
  for (const row of rows) {
    const shown = figuresIn(row, runId);
    rowCount += shown.length;
    pageProblems = pageProblems.concat(checks.figureProblems(shown, roots, checks.requiredRowPaths()));
  }
  const results = [
    { id: "reexecution", label: "Re-execution", problems: reexec,
      ok: `the fixture, re-executed by the bundle this page loaded, gives the record's content (content_sha256 ${short(answer.computed_content_sha256)}).` },
    { id: "engine", label: "Engine", problems: checks.engineProblems(content, info),
      ok: `the record names the bundle that ran (${short(info.bundle_sha256)}, Pyodide ${info.pyodide_version}) and the path "${checks.COMPILED_PATH}".` },
    { id: "index", label: "Index", problems: indexProblems,
      ok: `the record's content and file hashes equal index entry ${position + 1}, and the chain of ${chain.size} entries is intact up to the head ${short(chain.head)}.` },
    { id: "page", label: doc ? "Page" : "Register row", problems: pageProblems,
      ok: doc ? `all ${figures.length + rowCount} marked figures equal the verified record${otherCount ? ` (and ${otherCount} of other runs their own records)` : ""}, and the outlined regions show no figure outside a mark.`
        : `all ${rowCount} figures of the row equal the verified record.` },
  ];
  return { runId, results, match: results.every((r) => !r.problems.length), answer, info, computed, roots };
}

const SHOWN_PROBLEMS = 20;

function problemTable(problems) {
  const body = el("tbody");
  for (const p of problems.slice(0, SHOWN_PROBLEMS)) {
    body.append(el("tr", { "data-field": p.field }, el("td", {}, el("code", {}, p.field)),
      el("td", {}, el("code", { class: "fb-published" }, String(p.published))),
      el("td", {}, el("code", { class: "fb-computed" }, String(p.computed)))));
  }
  if (problems.length > SHOWN_PROBLEMS) {
    body.append(el("tr", {}, el("td", { colspan: "3" }, `and ${problems.length - SHOWN_PROBLEMS} more`)));
  }
  return el("table", { class: "fb-verify-problems" },
    el("thead", {}, el("tr", {}, el("th", {}, "Field"), el("th", {}, "Published"), el("th", {}, "Computed"))), body);
}

function checkLines(results) {
  const list = el("ul", { class: "fb-verify-checks" });
  for (const r of results) {
    const ok = !r.problems.length;
    const item = el("li", { "data-check": r.id, "data-ok": String(ok) },
      `${ok ? "✓" : "✗"} ${r.label}: `, ok ? r.ok : `${r.problems.length} difference${r.problems.length === 1 ? "" : "s"}, first `,
      ok ? null : el("code", { "data-field": r.problems[0].field }, r.problems[0].field));
    if (!ok) item.append(problemTable(r.problems));
    list.append(item);
  }
  return list;
}

function verdictLine(outcome) {
  if (outcome.match) {
    return el("p", { class: "fb-verify-result fb-match", "data-result": "match" },
      "✓ match: every check below passed.");
  }
  const failed = outcome.results.filter((r) => r.problems.length);
  const first = failed[0].problems[0].field;
  return el("p", { class: "fb-verify-result fb-mismatch", "data-result": "mismatch" },
    `✗ mismatch: ${failed.length} of ${outcome.results.length} checks failed; first differing field `,
    el("code", { "data-field": first }, first));
}

function errorLine(error) {
  return el("p", { class: "fb-verify-result fb-error", "data-result": "error", role: "alert" },
    `Could not verify: ${error.message}`);
}

async function verifyPage(box, button, out) {
  button.disabled = true;
  out.replaceChildren(el("p", {}, "Loading the engine and re-executing the fixture…"));
  try {
    const outcome = await verifyRun({ runId: box.dataset.runId, recordUrl: box.dataset.recordUrl,
      indexUrl: box.dataset.indexUrl || new URL("index.json", new URL(box.dataset.recordUrl, location.href)).href,
      doc: document });
    const facts = el("dl", { class: "fb-facts" });
    const fact = (term, value) => facts.append(el("dt", {}, term), el("dd", {}, el("code", {}, value)));
    fact("computed content_sha256", String(outcome.answer.computed_content_sha256));
    fact("published content_sha256", String(outcome.answer.published_content_sha256));
    fact("engine bundle loaded", outcome.info.bundle_sha256);
    fact("re-execution time", `${Math.round(outcome.answer.ms)} ms`);
    out.replaceChildren(verdictLine(outcome), checkLines(outcome.results), facts);
    marks.outline(document, outcome.match);
  } catch (error) {
    out.replaceChildren(errorLine(error));
  } finally {
    button.disabled = false;
  }
}

// ---- the whole register ----

async function verifyRegister(box, button, out) {
  button.disabled = true;
  const indexUrl = new URL(box.dataset.indexUrl, location.href).href;
  const runsUrl = new URL(box.dataset.runsUrl || "./", location.href);
  const progress = el("progress", { max: "1", value: "0", "aria-label": "runs verified" });
  const status = el("p", { "aria-live": "polite" }, "Loading the engine…");
  out.replaceChildren(progress, status);
  const started = performance.now();
  try {
    const { index } = await loadIndex(indexUrl);
    const entries = Array.isArray(index.entries) ? index.entries : [];
    progress.max = entries.length;
    const siteRoot = new URL("../", indexUrl);
    const rows = new Map([...document.querySelectorAll("tr[data-run-id]")].map((r) => [r.dataset.runId, r]));
    const outcomes = [];
    for (const [i, entry] of entries.entries()) {
      status.textContent = `Re-executing ${i + 1} of ${entries.length}: ${entry.run_id}`;
      try {
        const html = await fetchBytes(new URL(`${encodeURIComponent(entry.run_id)}/`, runsUrl).href, "run page");
        const doc = new DOMParser().parseFromString(new TextDecoder().decode(html), "text/html");
        const row = rows.get(entry.run_id);
        const outcome = await verifyRun({ runId: entry.run_id, recordUrl: new URL(entry.record, siteRoot).href,
          indexUrl, doc, rows: row ? [row] : [] });
        if (!row) outcome.results.push({ id: "register", label: "Register", ok: "",
          problems: [{ field: "register row", published: "(absent)", computed: entry.run_id }] });
        outcome.match = outcome.results.every((r) => !r.problems.length);
        outcomes.push(outcome);
      } catch (error) {
        outcomes.push({ runId: entry.run_id, match: false, error });
      }
      progress.value = i + 1;
    }
    // Rows of runs the index does not hold, and the figures of other runs (the scale column).
    const byId = new Map(outcomes.filter((o) => o.roots).map((o) => [o.runId, o]));
    for (const [runId, row] of rows) {
      if (!entries.some((e) => e.run_id === runId)) {
        outcomes.push({ runId, match: false, results: [{ id: "register", label: "Register", ok: "",
          problems: [{ field: "index entry", published: "(absent)", computed: runId }] }] });
      }
      for (const node of row.querySelectorAll("[data-fb-run]")) {
        const other = byId.get(node.dataset.fbRun);
        const problems = other ? checks.figureProblems([{ path: checks.parsePath(node.dataset.fbPath),
          format: node.dataset.fbFormat || "text", shown: node.textContent }], other.roots)
          : [{ field: `register row ${runId}: ${node.dataset.fbRun}`, published: node.textContent, computed: "(not a verified run)" }];
        const own = outcomes.find((o) => o.runId === runId);
        if (problems.length && own?.results) {
          own.results.push({ id: "scale", label: "Scale", ok: "", problems });
          own.match = false;
        }
      }
    }
    // The register's own figures (entries, head) against the verified index.
    const own = checks.figureProblems(figuresIn(document, undefined), { index })
      .concat(marks.regionProblems(document, []));  // the tables' bodies: no figure outside a mark
    const { chain } = await loadIndex(indexUrl);
    if (!chain.ok) own.push({ field: `index ${chain.at}`, published: chain.published ?? "", computed: chain.computed ?? chain.detail });
    const matched = outcomes.filter((o) => o.match).length;
    const all = matched === outcomes.length && !own.length;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const summary = el("p", { class: `fb-verify-result ${all ? "fb-match" : "fb-mismatch"}`,
      "data-result": all ? "match" : "mismatch", "data-matched": String(matched),
      "data-total": String(outcomes.length), "data-seconds": seconds },
      `${all ? "✓" : "✗"} ${matched} of ${outcomes.length} runs match (re-executed in this browser in ${seconds} s)`
      + (own.length ? "; the register's own figures do not." : "."));
    const list = el("ul", { class: "fb-verify-failures" });
    if (own.length) {
      list.append(el("li", { "data-run-id": "" }, "this register: ",
        checkLines([{ id: "register", label: "Register", ok: "", problems: own }])));
    }
    for (const o of outcomes.filter((x) => !x.match)) {
      const item = el("li", { "data-run-id": o.runId }, el("a", { href: new URL(`${encodeURIComponent(o.runId)}/`, runsUrl).href }, o.runId), ": ");
      if (o.error) item.append(`could not verify: ${o.error.message}`);
      else item.append(checkLines(o.results.filter((r) => r.problems.length)));
      list.append(item);
    }
    status.textContent = `Done: ${outcomes.length} runs.`;
    out.replaceChildren(progress, summary, ...(list.children.length ? [list] : []));
    marks.outline(document, all);
  } catch (error) {
    out.replaceChildren(errorLine(error));
  } finally {
    button.disabled = false;
  }
}

// ---- a practitioner record ----

async function verifyPractitionerPage(box, button, out) {
  button.disabled = true;
  out.replaceChildren(el("p", {}, "Loading the engine and re-executing the session…"));
  try {
    const info = await engineInfo();
    const t0 = performance.now();
    const outcome = await verifyPractitioner({ recordUrl: new URL(box.dataset.recordUrl, location.href).href,
      siteRoot: new URL(box.dataset.siteRoot || "../../", location.href), doc: document, info });
    const facts = el("dl", { class: "fb-facts" });
    const fact = (term, value) => facts.append(el("dt", {}, term), el("dd", {}, el("code", {}, value)));
    fact("published content_sha256", String(outcome.record?.content_sha256));
    fact("engine bundle loaded", info.bundle_sha256);
    fact("re-execution time", `${Math.round(performance.now() - t0)} ms`);
    out.replaceChildren(verdictLine(outcome), checkLines(outcome.results), facts);
    marks.outline(document, outcome.match);
  } catch (error) {
    out.replaceChildren(errorLine(error));
  } finally {
    button.disabled = false;
  }
}

// ---- a model attempt ----

async function verifyAttemptPage(box, button, out) {
  button.disabled = true;
  out.replaceChildren(el("p", {}, "Loading the engine and re-executing the attempt's batches…"));
  try {
    const info = await engineInfo();
    let triesUrls = null;
    try {
      triesUrls = box.dataset.tries ? JSON.parse(box.dataset.tries).map((u) => new URL(u, location.href).href) : null;
    } catch {
      throw new Error("this page's list of tries (data-tries) is not JSON");
    }
    const outcome = await verifyAttempt({ recordUrl: new URL(box.dataset.recordUrl, location.href).href, doc: document, info, triesUrls });
    const facts = el("dl", { class: "fb-facts" });
    const fact = (term, value) => facts.append(el("dt", {}, term), el("dd", {}, el("code", {}, value)));
    fact("published content_sha256", String(outcome.record?.content_sha256));
    fact("engine bundle loaded", info.bundle_sha256);
    fact("re-execution time", `${Math.round(outcome.ms)} ms`);
    out.replaceChildren(verdictLine(outcome), checkLines(outcome.results), facts);
    out.dataset.ms = String(Math.round(outcome.ms));
    marks.outline(document, outcome.match);
  } catch (error) {
    out.replaceChildren(errorLine(error));
  } finally {
    button.disabled = false;
  }
}

const runBoxes = document.querySelectorAll(".fb-verify");
const registerBoxes = document.querySelectorAll(".fb-verify-register");
const practitionerBoxes = document.querySelectorAll(".fb-verify-practitioner");
const attemptBoxes = document.querySelectorAll(".fb-verify-attempt");
if (runBoxes.length || registerBoxes.length || practitionerBoxes.length || attemptBoxes.length) ensureStyles();
for (const box of attemptBoxes) {
  const out = el("div", { class: "fb-verify-output", "aria-live": "polite" });
  const button = el("button", { type: "button", class: "md-button fb-verify-button" }, "Verify this attempt in your browser");
  button.addEventListener("click", () => verifyAttemptPage(box, button, out));
  const note = el("p", { class: "fb-verify-note" },
    "Runs the published engine bundle in this page (Pyodide in a Web Worker), re-executes the attempt's accepted batches "
    + "from its receipts and checks the receipts, their head and the grade against the record; applies the one counting "
    + "rule to the tries this page names (grading here an attempt that ended without a result); then checks every marked "
    + "figure on this page: the score, status and verdict badges, the Counts line, the components, how it ended, the "
    + "receipts, the cost and the dates, in the regions outlined after the check (a figure there that is not a mark "
    + "fails it). The cost, the model's name and the dates are compared with the record as published (the record "
    + "hashes to its content_sha256), not re-derived; the messages below are not checked. Nothing leaves your browser.");
  box.replaceChildren(button, note, out);
}
for (const box of practitionerBoxes) {
  const out = el("div", { class: "fb-verify-output", "aria-live": "polite" });
  const button = el("button", { type: "button", class: "md-button fb-verify-button" }, "Verify this practitioner run in your browser");
  button.addEventListener("click", () => verifyPractitionerPage(box, button, out));
  const note = el("p", { class: "fb-verify-note" },
    "Runs the published engine bundle in this page, re-executes the participant's batches from the submission file, rebuilds "
    + "the record from the two and checks it and its receipts, then every marked figure on this page (the grade, the "
    + "clock, the consent, the receipts head) in the region outlined after the check: a figure there that is not a mark "
    + "fails it. Nothing leaves your browser.");
  box.replaceChildren(button, note, out);
}
for (const box of runBoxes) {
  const out = el("div", { class: "fb-verify-output", "aria-live": "polite" });
  const button = el("button", { type: "button", class: "md-button fb-verify-button" }, "Verify this run in your browser");
  button.addEventListener("click", () => verifyPage(box, button, out));
  const note = el("p", { class: "fb-verify-note" },
    "Runs the published engine bundle in this page (Pyodide in a Web Worker), re-executes this fixture and checks "
    + "the record and its index entry against the result, then every marked figure on this page: the status, verdict, "
    + "gates, score and its components, economics, days, receipts and hashes in the regions outlined after the check "
    + "(a figure there that is not a mark fails it). The duration is the record's own (not re-executed); the "
    + "explanations, the command's trace and the downloads are not checked. Nothing leaves your browser.");
  box.replaceChildren(button, note, out);
}
for (const box of registerBoxes) {
  const out = el("div", { class: "fb-verify-output" });
  const button = el("button", { type: "button", class: "md-button fb-verify-button" }, "Verify the whole register");
  button.addEventListener("click", () => verifyRegister(box, button, out));
  const note = el("p", { class: "fb-verify-note" },
    "Re-executes every run of the index in this browser with the published engine bundle, and checks each record, "
    + "its index entry, its run page (as that page's own button does) and every marked figure of its row here against "
    + "the result (a row's other-run scale figures against those runs), and that the tables' rows, outlined after the "
    + "check, show no figure outside a mark. The column headings and their explanations are not checked.");
  box.replaceChildren(button, note, out);
}
