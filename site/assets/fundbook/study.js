// "Verify this study in your browser" (the Studies page). Each study has
//   <div class="fb-verify-study" data-study data-study-url></div>
// and its figures are marks: data-fb-path into its committed files (roots
// status, study, spec.<comparison>, freeze.<comparison>) and, for a drawn
// decision, data-fb-decision (decisions.js), each carrying data-fb-of. The
// checks, each mismatch naming the field with the published value beside the
// computed one:
//   decisions  each drawn decision, recomputed from its evidence as its own page does
//              (decisions.js verifyDecision), its marks on this page included;
//   files      each comparison's spec.json and freeze.json are the bytes its evidence pins, and each
//              world's tries are published records hashing to their content_sha256 (their ends shown);
//   state      the study's state for a stopped comparison (n, verdict, reason, threshold, both
//              wealths in status.json) is the recomputed decision's;
//   worlds     each world's score of each arm in status.json is the observation row the
//              decisions were computed from (a world no decision read is status.json's alone);
//   page       every mark of the study equals its file, none the page must show is missing or
//              outside the verifiable regions, and no region shows a figure outside a mark.
import { contentSha256, figureProblems, sha256hex } from "../desk/checks.js";
import { ensureStyles, h } from "../desk/dom.js";
import * as marks from "../desk/marks.js";
import { verifyDecision } from "./decisions.js";

const decoder = new TextDecoder();
const STUDY_REQUIRED = ["verdict", "n", "report.mean_difference", "lower_bound", "upper_bound"];

async function fetchBytes(url, what) {
  const response = await fetch(url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`${what} ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

function parseJSON(bytes, what) {
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch {
    throw new Error(`${what}: not valid JSON`);
  }
}

const shown = (v) => (v === null || v === undefined ? "null" : typeof v === "object" ? JSON.stringify(v) : String(v));

/** The figures the page must show of a study (a removed mark cannot hide an edited one). */
function requiredPaths(study, status) {
  const out = [["status", "name"], ["status", "state"], ["status", "worlds"]];
  for (const comp of study.comparisons || []) {
    for (const key of ["n", "wealth_for", "wealth_against"]) out.push(["status", "comparisons", comp, key]);
  }
  (status.per_world || []).forEach((w, i) => {
    out.push(["status", "per_world", i, "item_id"]);
    (Array.isArray(w?.tries) ? w.tries : []).forEach((id, j) => out.push(["status", "per_world", i, "tries", j],
      ["attempts", id, "termination", "status"]));
    for (const arm of Object.keys(w?.score || {})) out.push(["status", "per_world", i, "score", arm]);
  });
  return out;
}

export async function verifyStudy(studyUrl, name, doc) {
  const base = new URL(studyUrl, location.href);
  const study = parseJSON(await fetchBytes(new URL("study.json", base).href, "study.json"), "study.json");
  const status = parseJSON(await fetchBytes(new URL("status.json", base).href, "status.json"), "status.json");
  const spec = {};
  const freeze = {};
  const decided = [];
  const files = [];
  const state = [];
  const worlds = [];
  let read = 0;
  for (const comp of Array.isArray(study.comparisons) ? study.comparisons : []) {
    const specBytes = await fetchBytes(new URL(`${comp}/spec.json`, base).href, "spec.json");
    const freezeBytes = await fetchBytes(new URL(`${comp}/freeze.json`, base).href, "freeze.json");
    spec[comp] = parseJSON(specBytes, `${comp}/spec.json`);
    freeze[comp] = parseJSON(freezeBytes, `${comp}/freeze.json`);
    // a comparison whose rule has stopped (status.json names its verdict) has a drawn decision; a running one not yet
    if (!status.comparisons?.[comp]?.verdict) continue;
    const evidenceUrl = new URL(`${comp}/evidence.json`, base).href;
    const outcome = await verifyDecision(evidenceUrl, doc, comp, STUDY_REQUIRED);
    decided.push({ comp, outcome });
    for (const [kind, bytes] of [["spec", specBytes], ["freeze", freezeBytes]]) {
      const entry = (outcome.evidence.files || []).find((f) => f.kind === kind);
      const sha = await sha256hex(bytes);
      if (!entry || entry.sha256 !== sha) files.push({ field: `${comp}/${kind}.json`, published: sha, computed: entry ? entry.sha256 : "(not in the evidence)" });
    }
    const d = outcome.recomputed || outcome.published;
    const seq = d.sequential || {};
    const st = status.comparisons?.[comp] || {};
    const pairs = { n: d.n, verdict: d.verdict, reason: seq.reason, threshold: seq.threshold,
      wealth_for: seq.wealth_for, wealth_against: seq.wealth_against };
    for (const [key, want] of Object.entries(pairs)) {
      if (shown(st[key]) !== shown(want)) state.push({ field: `status.json comparisons.${comp}.${key}`, published: shown(st[key]), computed: shown(want) });
    }
    const rows = decoder.decode(outcome.blobs.observations.bytes).split("\n").filter(Boolean).map((l) => JSON.parse(l))
      .filter((r) => r.metric === spec[comp].metric);
    const byKey = new Map(rows.map((r) => [`${r.item_id} ${r.arm}`, r.value]));
    (status.per_world || []).forEach((w, i) => {
      for (const arm of Object.keys(spec[comp].arms || {})) {
        const key = `${w?.item_id} ${arm}`;
        if (!byKey.has(key)) continue;
        read += 1;
        if (shown(w?.score?.[arm]) !== shown(byKey.get(key))) {
          worlds.push({ field: `status.json per_world[${i}].score.${arm}`, published: shown(w?.score?.[arm]), computed: shown(byKey.get(key)) });
        }
      }
    });
  }
  const decisionProblems = decided.flatMap(({ comp, outcome }) => outcome.results.flatMap((r) => r.problems
    .map((p) => ({ ...p, field: `${comp} ${r.id}: ${p.field}` }))));
  // each world's tries as status.json lists them: their published records (each hashing to its content_sha256)
  const attempts = {};
  for (const id of (status.per_world || []).flatMap((w) => (Array.isArray(w?.tries) ? w.tries : []))) {
    const url = new URL(`../../attempts/${encodeURIComponent(id)}/record.json`, base).href;
    const response = await fetch(url, { cache: "no-cache" });
    if (!response.ok) {
      attempts[id] = null;
      continue;
    }
    const record = parseJSON(new Uint8Array(await response.arrayBuffer()), `attempt ${id}`);
    const sha = await contentSha256(record?.content ?? null).catch((e) => `(${e.message})`);
    if (sha !== record?.content_sha256) files.push({ field: `attempt ${id}: content_sha256`, published: String(record?.content_sha256), computed: sha });
    attempts[id] = record?.content ?? null;
  }
  const figures = marks.figuresIn(doc, (n) => n.dataset.fbOf === name);
  const required = requiredPaths(study, status);
  const page = figureProblems(figures, { status, study, spec, freeze, attempts }, required)
    .concat(marks.regionProblems(doc, figures, required));
  const results = [
    { id: "decisions", label: "Decisions", problems: decisionProblems,
      ok: `${decided.length} drawn decision${decided.length === 1 ? "" : "s"} recomputed from ${decided.length === 1 ? "its" : "their"} evidence in this browser, every check passing.` },
    { id: "files", label: "Files", problems: files,
      ok: `each decided comparison's spec and freeze are the files its evidence pins, and the ${Object.keys(attempts).length} tries listed are published records.` },
    { id: "state", label: "State", problems: state, ok: "the study's state of each decided comparison is its recomputed decision's." },
    { id: "worlds", label: "Worlds", problems: worlds,
      ok: `${read} world score${read === 1 ? "" : "s"} equal the observation rows the decisions were computed from (the rest are status.json's alone).` },
    { id: "page", label: "Page", problems: page,
      ok: `all ${figures.length} marked figures of the study equal its files, and the outlined regions show no figure outside a mark.` },
  ];
  return { results, match: results.every((r) => !r.problems.length) };
}

function render(outcome) {
  const failed = outcome.results.filter((r) => r.problems.length);
  const head = outcome.match
    ? h("p", { class: "fb-verify-result fb-match", "data-result": "match" }, "✓ match: every check below passed.")
    : h("p", { class: "fb-verify-result fb-mismatch", "data-result": "mismatch" },
      `✗ mismatch: ${failed.length} of ${outcome.results.length} checks failed; first differing field `,
      h("code", { "data-field": failed[0].problems[0].field }, failed[0].problems[0].field));
  const list = h("ul", { class: "fb-verify-checks" }, outcome.results.map((r) => {
    const ok = !r.problems.length;
    return h("li", { "data-check": r.id, "data-ok": String(ok) }, `${ok ? "✓" : "✗"} ${r.label}: `,
      ok ? r.ok : `${r.problems.length} difference${r.problems.length === 1 ? "" : "s"}`,
      ok ? null : h("table", { class: "fb-verify-problems" },
        h("thead", {}, h("tr", {}, h("th", {}, "Field"), h("th", {}, "Published"), h("th", {}, "Computed"))),
        h("tbody", {}, r.problems.slice(0, 20).map((p) => h("tr", { "data-field": p.field },
          h("td", {}, h("code", {}, p.field)), h("td", {}, h("code", { class: "fb-published" }, String(p.published))),
          h("td", {}, h("code", { class: "fb-computed" }, String(p.computed))))))));
  }));
  return [head, list];
}

const boxes = document.querySelectorAll(".fb-verify-study");
if (boxes.length) ensureStyles();
for (const box of boxes) {
  const out = h("div", { class: "fb-verify-output", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "md-button fb-verify-button" }, "Verify this study in your browser");
  button.addEventListener("click", async () => {
    button.disabled = true;
    out.replaceChildren(h("p", {}, "Loading Pyodide and recomputing the study's decisions from their evidence…"));
    try {
      const outcome = await verifyStudy(box.dataset.studyUrl, box.dataset.study, document);
      out.replaceChildren(...render(outcome));
      marks.outline(document, outcome.match);
    } catch (error) {
      out.replaceChildren(h("p", { class: "fb-verify-result fb-error", "data-result": "error", role: "alert" },
        `Could not verify: ${error.message}`));
    } finally {
      button.disabled = false;
    }
  });
  const note = h("p", { class: "fb-verify-note" },
    "Recomputes each drawn decision of this study from its evidence with its own published rules, in Pyodide in this "
    + "page; checks the specs and freezes against the files the evidence pins, the study's state against the recomputed "
    + "decisions and each world's scores against the observation rows they were computed from; then every marked figure "
    + "of the study in the regions outlined after the check (a figure there that is not a mark fails it). A world no "
    + "decision read, and a running comparison's interim wealth, are compared with status.json alone; each world's tries "
    + "are compared with their published records (how each counts and scores is verified on its own page). Nothing "
    + "leaves your browser.");
  box.replaceChildren(button, note, out);
}
