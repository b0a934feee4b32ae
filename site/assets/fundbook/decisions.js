// "Verify this decision in your browser". A comparison page has
//   <div class="fb-verify-decision" data-evidence-url></div>
// and marks each figure it shows with data-fb-decision (a "."-path into
// decision.json, or a JSON array of keys). Verifying fetches evidence.json and
// every file it lists, and reports five checks, each mismatch naming the field
// with the published value beside the computed one:
//   evidence       every listed file hashes to its sha256 in evidence.json;
//   rules          the rules the decision ran (its rules.py, pinned in the evidence)
//                  are the ones the decision names;
//   recomputation  those rules, run in the engine worker's Pyodide on the published
//                  observation rows, give every figure of decision.json;
//   order          the sweep journal's hash chain is intact up to the head the sweep
//                  manifest records, and it served this spec (its freeze's sha256)
//                  before the first row of the spec's arms;
//   page           every mark this page shows (data-fb-decision) equals the recomputed decision
//                  (decision.json itself, hash-checked above, for the fields its rules do not
//                  recompute), none of the decision's headline figures is missing or outside the
//                  verifiable regions, and no region shows a figure outside a mark
//                  (builders/site/marks.py; ../desk/marks.js).
// A page that shows several decisions (the Studies page) names each mark's decision in
// data-fb-of; verifyDecision(url, doc, of) then reads only that decision's marks.
import { call } from "../desk/client.js";
import { roundDecimal, sha256hex } from "../desk/checks.js";
import { ensureStyles, h } from "../desk/dom.js";
import * as marks from "../desk/marks.js";

const decoder = new TextDecoder();

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

function jsonLines(bytes, what) {
  return decoder.decode(bytes).split("\n").filter((l) => l.length).map((l, i) => {
    try {
      return JSON.parse(l);
    } catch {
      throw new Error(`${what} line ${i + 1}: not valid JSON`);
    }
  });
}

const shown = (v) => (v === null || v === undefined ? "null" : typeof v === "object" ? JSON.stringify(v) : String(v));

/** Every path at which `a` and `b` differ (JSON values), at most `limit`. */
export function differences(a, b, path = "$", out = [], limit = 20) {
  if (out.length >= limit) return out;
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
    const keys = Array.isArray(a) ? [...Array(Math.max(a.length, b.length)).keys()]
      : [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) differences(a[k], b[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`, out, limit);
    return out;
  }
  if (a !== b) out.push({ field: path, published: shown(a), computed: shown(b) });
  return out;
}

// A decimal at fewer places, as the page rounds it: checks.js roundDecimal (fmt.py decimal), re-exported.
export { roundDecimal };

function pathOf(attr) {
  return attr.startsWith("[") ? JSON.parse(attr) : attr.split(".");
}

// comparisons.py arm_words and reading: the decision in words, from its arms and the sign of its estimate.
function armWords(arm) {
  arm = String(arm);
  if (arm.startsWith("model:")) return `the model (${arm.split(":")[1]})`;
  const policy = arm.includes(":") ? arm.slice(arm.indexOf(":") + 1) : arm;
  return { "do-nothing": "doing nothing", reference: "the reference policy" }[policy] ?? `the ${policy} policy`;
}

export function direction(d) {
  const arms = d?.arms && typeof d.arms === "object" && !Array.isArray(d.arms) ? d.arms : {};
  const names = Object.keys(arms).sort();
  const plus = names.filter((a) => arms[a] > 0);
  const minus = names.filter((a) => arms[a] < 0);
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?$/.exec(String(d?.estimate?.decimal));
  if (plus.length !== 1 || minus.length !== 1 || !m) return null;
  const zero = !/[1-9]/.test((m[2] || "") + (m[3] || ""));
  const word = zero ? "the same as" : m[1] ? "lower than" : "higher than";
  const text = `${armWords(plus[0])} scored ${word} ${armWords(minus[0])}`;
  return text[0].toUpperCase() + text.slice(1);
}

/** The decision's value at a mark's keys: the recomputed decision where the rules recompute that field,
 * decision.json otherwise; "@direction" is derived from them (comparisons.py reading). */
function valueAt(keys, recomputed, published) {
  const source = recomputed && Object.hasOwn(recomputed, keys[0]) ? recomputed : published;
  if (keys[0] === "@direction") return direction({ ...published, ...(recomputed || {}) });
  return at(source, keys);
}

/** The headline figures a decision page must show. */
const REQUIRED = ["verdict", "confidence", "estimate.decimal", "n", "lower_bound", "upper_bound", "margin"];

function at(value, keys) {
  return keys.reduce((v, k) => (v === null || v === undefined ? undefined : v[k]), value);
}

/** The limits compute_decision (experiments/compare.py) sets, from the same files. */
function limitsOf(deviations, sweep) {
  const out = [];
  const n = Array.isArray(deviations?.deviations) ? deviations.deviations.length : 0;
  if (n) out.push(`${n} deviation(s) from the frozen spec`);
  if (!sweep?.execution?.pyodide_sample?.identical) out.push("no sampled re-execution through the engine bundle");
  return out;
}

/** The journal's chain (experiments/journal.py): each line names the sha256 of the line before. */
async function journalProblems(bytes, sweep, spec, freezeSha, specSha) {
  const problems = [];
  const lines = decoder.decode(bytes).split("\n");
  if (lines.pop() !== "") problems.push({ field: "journal", published: "(an incomplete last line)", computed: "" });
  let prev = "0".repeat(64);
  let served = null;
  let firstRow = null;
  const arms = new Set(Object.keys(spec.arms || {}));
  for (const [i, line] of lines.entries()) {
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      problems.push({ field: `journal line ${i + 1}`, published: "(not JSON)", computed: "" });
      break;
    }
    if (entry.prev !== prev) {
      problems.push({ field: `journal line ${i + 1}.prev`, published: String(entry.prev), computed: prev });
      break;
    }
    prev = await sha256hex(line);
    if (entry.entry === "serve" && entry.spec_sha256 === specSha && served === null) served = { line: i + 1, entry };
    if (entry.entry === "rows" && firstRow === null && (entry.arms || []).some((a) => arms.has(a))) firstRow = i + 1;
  }
  const head = sweep?.journal || {};
  if (!problems.length && (head.head !== prev || head.lines !== lines.length)) {
    problems.push({ field: "sweep.json journal", published: `${head.lines} lines, head ${head.head}`,
      computed: `${lines.length} lines, head ${prev}` });
  }
  if (!served) problems.push({ field: "journal serve", published: "(none)", computed: `spec ${specSha}` });
  else {
    if (served.entry.freeze_sha256 !== freezeSha) {
      problems.push({ field: `journal line ${served.line}.freeze_sha256`, published: served.entry.freeze_sha256, computed: freezeSha });
    }
    if (firstRow !== null && firstRow < served.line) {
      problems.push({ field: "journal order", published: `first row at line ${firstRow}`, computed: `spec served at line ${served.line}` });
    }
  }
  return { problems, served: served?.line, firstRow, lines: lines.length, head: prev };
}

export async function verifyDecision(evidenceUrl, doc, of = null, required = REQUIRED) {
  const base = new URL(evidenceUrl, location.href);
  const evidence = parseJSON(await fetchBytes(base.href, "evidence"), "evidence.json");
  const files = Array.isArray(evidence.files) ? evidence.files : [];
  const blobs = {};
  const hashProblems = [];
  for (const entry of files) {
    const bytes = await fetchBytes(new URL(entry.path, base).href, entry.name);
    const got = await sha256hex(bytes);
    if (got !== entry.sha256) hashProblems.push({ field: entry.name, published: entry.sha256, computed: got });
    blobs[entry.kind] = { bytes, sha: got };
  }
  for (const kind of ["spec", "freeze", "deviations", "rules", "sweep_manifest", "journal", "items", "observations", "decision"]) {
    if (!blobs[kind]) throw new Error(`evidence.json lists no ${kind} file`);
  }
  const spec = parseJSON(blobs.spec.bytes, "spec.json");
  const published = parseJSON(blobs.decision.bytes, "decision.json");
  const sweep = parseJSON(blobs.sweep_manifest.bytes, "sweep.json");
  const deviations = parseJSON(blobs.deviations.bytes, "deviations.json");
  const ruleProblems = blobs.rules.sha === published.rules_sha256 ? []
    : [{ field: "rules_sha256", published: String(published.rules_sha256), computed: blobs.rules.sha }];
  const ids = jsonLines(blobs.items.bytes, "items.jsonl").map((r) => r.item_id);
  const arms = spec.arms || {};
  const rows = jsonLines(blobs.observations.bytes, "observations.jsonl")
    .filter((r) => r.metric === spec.metric && Object.hasOwn(arms, r.arm))
    .map((r) => [r.item_id, r.arm, r.seed, r.value]);
  const payload = JSON.stringify({ spec, item_ids: ids, rows, limits: limitsOf(deviations, sweep) });
  const answer = await call("decide", decoder.decode(blobs.rules.bytes), payload);
  let recomputed = null;
  let recomputeProblems;
  if (!answer.ok) {
    recomputeProblems = [{ field: "rows", published: "(the published decision)", computed: `the rules refuse them: ${answer.error}` }];
  } else {
    recomputed = answer.decision;
    const mine = Object.fromEntries(Object.keys(recomputed).map((k) => [k, published[k]]));
    recomputeProblems = differences(mine, recomputed);
  }
  const order = await journalProblems(blobs.journal.bytes, sweep, spec, blobs.freeze.sha, published.spec_sha256);
  const pageProblems = [];
  let figures = 0;
  if (doc) {
    const nodes = [...doc.querySelectorAll("[data-fb-decision]")].filter((n) => (n.dataset.fbOf || null) === of);
    for (const node of nodes) {
      figures += 1;
      const keys = pathOf(node.dataset.fbDecision);
      const value = valueAt(keys, recomputed, published);
      const text = node.textContent.trim();
      let want = value === null || value === undefined ? null
        : node.dataset.fbFormat === "list" && Array.isArray(value) ? value.map(String).join(", ") : String(value);
      if (want !== null && node.dataset.fbPlaces) {  // shown at fewer decimals: rounded as the page rounds it
        want = roundDecimal(want, Number(node.dataset.fbPlaces), node.dataset.fbRound || "half-even");
      }
      if (want === null ? !text.startsWith("(") : text.toLowerCase() !== want.toLowerCase()) {
        pageProblems.push({ field: keys.join("."), published: text, computed: shown(value) });
      }
    }
    const shownKeys = new Set(nodes.map((n) => pathOf(n.dataset.fbDecision).join(".")));
    const inRegion = new Set(nodes.filter((n) => n.closest("[data-fb-verified]")).map((n) => pathOf(n.dataset.fbDecision).join(".")));
    for (const key of required) {
      if (!shownKeys.has(key)) pageProblems.push({ field: key, published: "(not shown)", computed: shown(valueAt(key.split("."), recomputed, published)) });
      else if (!inRegion.has(key)) pageProblems.push({ field: key, published: "(outside the verifiable regions)", computed: "inside a region" });
    }
    if (of === null) pageProblems.push(...marks.regionProblems(doc, []));  // a page of several: its own verify scans once
  }
  const results = [
    { id: "evidence", label: "Evidence", problems: hashProblems, ok: `all ${files.length} files hash to what evidence.json lists.` },
    { id: "rules", label: "Rules", problems: ruleProblems, ok: `rules.py (sha256 ${blobs.rules.sha.slice(0, 12)}…) is the code the decision names.` },
    { id: "recomputation", label: "Recomputation", problems: recomputeProblems,
      ok: `those rules, run in this browser's Pyodide on the ${rows.length} published rows, give every figure of decision.json (${answer.ms ? Math.round(answer.ms) : 0} ms).` },
    { id: "order", label: "Order", problems: order.problems,
      ok: `the journal's ${order.lines} lines chain to the head the sweep records; it served this spec (line ${order.served}) before the first row of its arms (line ${order.firstRow}).` },
    { id: "page", label: "Page", problems: pageProblems,
      ok: `all ${figures} marked figures equal the recomputed decision, and the outlined regions show no figure outside a mark.` },
  ];
  return { results, match: results.every((r) => !r.problems.length), recomputed, published, evidence, blobs };
}

function problemTable(problems) {
  return h("table", { class: "fb-verify-problems" },
    h("thead", {}, h("tr", {}, h("th", {}, "Field"), h("th", {}, "Published"), h("th", {}, "Computed"))),
    h("tbody", {}, problems.slice(0, 20).map((p) => h("tr", { "data-field": p.field },
      h("td", {}, h("code", {}, p.field)), h("td", {}, h("code", { class: "fb-published" }, p.published)),
      h("td", {}, h("code", { class: "fb-computed" }, p.computed))))));
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
      ok ? r.ok : `${r.problems.length} difference${r.problems.length === 1 ? "" : "s"}`, ok ? null : problemTable(r.problems));
  }));
  return [head, list];
}

const boxes = document.querySelectorAll(".fb-verify-decision");
if (boxes.length) ensureStyles();
for (const box of boxes) {
  const out = h("div", { class: "fb-verify-output", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "md-button fb-verify-button" }, "Verify this decision in your browser");
  button.addEventListener("click", async () => {
    button.disabled = true;
    out.replaceChildren(h("p", {}, "Loading Pyodide and recomputing the decision from its evidence…"));
    try {
      const outcome = await verifyDecision(box.dataset.evidenceUrl, document);
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
    "Fetches every file this decision rests on, checks its sha256, and recomputes the decision with its own published "
    + "rules (rules.py, integers only) in Pyodide in this page; then checks every marked figure of the decision, the rule, "
    + "the full report, the families, the split and the deviations, in the regions outlined after the check (a figure "
    + "there that is not a mark fails it). The notes on what the decision counted and its sensitivity, the other rules' "
    + "rows (each verified on its own page), the chart, the execution path and the feasibility pilot are not checked "
    + "here. Nothing leaves your browser.");
  box.replaceChildren(button, note, out);
}
