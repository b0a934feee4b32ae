// What the desk says after a day and at the end: the day's decisions, how
// many report fields matched, the checkpoints so far, the graded result and
// the published runs of the same world. Practice shows all of it; the study
// mode shows only what the model worker is told (decisions with their reason
// codes, the last five checkpoints' outcomes), see `opts` below.
import { canonicalJSON } from "./checks.js";
import { h, money, table } from "./dom.js";
import { basis, gateDetail, moneyText } from "./readable.js";
import { receiptsTable } from "./packet.js";

const REPORT_SCALARS = ["cash", "funding_cost_to_date", "breaches", "open_approvals"];
const PER_ASSET = ["funded", "unfunded", "maturity_gap_days", "tail_cent_days"];
const same = (a, b) => {
  try {
    return canonicalJSON(a) === canonicalJSON(b); // lists of objects compare whatever their key order
  } catch {
    return false; // a missing figure
  }
};

// A field's error is measured against its base (engine _report.field_base):
// cash against the true cash but never less than the minimum buffer, funded
// and unfunded against the asset's notional, anything else against its true
// value; a field within 1 bp of its base earns full credit, so it matched.
function base(name, truth, scale) {
  if (name === "cash") return Math.max(Math.abs(truth), scale.min_buffer, 1);
  const [root, id, figure] = name.split(".");
  if (root === "assets" && (figure === "funded" || figure === "unfunded")) return Math.max(scale.notionals[id] ?? 0, Math.abs(truth), 1);
  return Math.max(Math.abs(truth), 1);
}

function matches(name, truth, got, scale) {
  if (same(truth, got)) return true;
  if (!Number.isSafeInteger(truth) || !Number.isSafeInteger(got)) return false; // lists are right or wrong
  return BigInt(Math.abs(got - truth)) * 10000n <= BigInt(base(name, truth, scale)); // exact: integers only
}

/**
 * {matched, fields, wrong: [names]}: the submitted report against the exact
 * report the projection tool gave for the same actions on the same packet,
 * field by field as the grade counts them (engine _report.assess_report: four
 * scalars, four figures for every asset the true report holds; a field within
 * 1 bp of its base counts as matched). `scale`: {min_buffer, notionals} from the packet.
 */
export function fieldsMatched(exact, submitted, scale) {
  const names = [...REPORT_SCALARS.map((k) => [k, exact[k], submitted?.[k]])];
  for (const id of Object.keys(exact.assets || {}).sort()) {
    for (const k of PER_ASSET) names.push([`assets.${id}.${k}`, exact.assets[id][k], submitted?.assets?.[id]?.[k]]);
  }
  const wrong = names.filter(([name, want, got]) => !matches(name, want, got, scale)).map(([name]) => name);
  return { matched: names.length - wrong.length, fields: names.length, wrong };
}

/** The scale report errors are measured against, from a packet. */
export function reportScale(packet) {
  return { min_buffer: packet.desk.min_buffer, notionals: Object.fromEntries(packet.assets.map((a) => [a.id, a.notional])) };
}

/**
 * The day's decisions. `opts.messages` (practice): the engine's messages
 * too; the study mode shows action, type, decision and reason code, as the
 * worker's history carries them. `opts.matched`: fieldsMatched() of the day.
 */
export function renderLast(last, opts = {}) {
  if (!last) return null;
  const headers = ["action", "type", "decision", "reason", ...(opts.messages ? ["message"] : [])];
  const rows = last.decisions.map((d) => [d.action, d.type,
    h("span", { class: d.decision === "ACCEPTED" ? "fb-ok" : "fb-bad", "data-decision": d.decision }, d.decision), d.reason ?? "",
    ...(opts.messages ? [moneyText(d.message ?? "")] : [])]);
  const m = opts.matched;
  return h("section", { class: "fb-last", "aria-labelledby": "fb-last-h" },
    h("h2", { id: "fb-last-h" }, `Day ${last.day}: what the desk decided`),
    m ? h("p", { class: "fb-matched", "data-matched": `${m.matched}/${m.fields}` },
      `Report: ${m.matched} of ${m.fields} fields matched the exact report (within 1 bp, as the grade counts them)`,
      m.wrong.length ? ` (not: ${m.wrong.map((w) => w.replace(/^assets\./, "").replaceAll("_", " ")).join(", ")}).` : ".",
      h("span", { class: "fb-hint" }, " The exact report is the projection tool's for the actions you sent, the one the grade " +
        "compares with; the study mode does not show this, since the model worker is not told it.")) : null,
    table("Decisions", headers, rows, { class: "fb-decisions" }),
    opts.receipts === false ? null
      : h("details", {}, h("summary", {}, `New receipts (${last.receipts.length})`), receiptsTable("Receipts written", last.receipts)));
}

/** Checkpoints so far; `opts.last` keeps only the last N (the study mode: the model worker's five). */
export function renderDays(days, opts = {}) {
  const shown = opts.last ? days.slice(-opts.last) : days;
  const refusals = (d) => d.decisions.filter((x) => x.decision !== "ACCEPTED").map((x) => `${x.action}: ${x.reason}`).join(", ");
  const body = opts.last
    ? table(`Your last ${opts.last} checkpoints`, ["day", "batch", "accepted", "refused"],
      shown.map((d) => [String(d.day), d.batch, String(d.accepted), refusals(d)]))
    : table("Settled checkpoints", ["day", "batch", "accepted", "refused", "refusals", "cash", "breaches"],
      shown.map((d) => [String(d.day), d.batch, String(d.accepted), String(d.refused), refusals(d), money(d.cash), d.breaches.join(", ")]));
  if (!opts.last) {
    return h("section", { class: "fb-days", "aria-labelledby": "fb-days-h" }, h("h2", { id: "fb-days-h" }, "Checkpoints so far"), body);
  }
  const box = h("details", { class: "fb-days" }, h("summary", {}, `Your last outcomes (${shown.length} of ${days.length} checkpoints)`), body);
  box.addEventListener("toggle", () => box.open && opts.onUse?.("last-outcomes"));
  return box;
}

// ---- the same world's published runs -------------------------------------------

const indexes = new Map();
/** Published runs whose fixture is this world: [{run_id, kind, href}] from the site's run index. */
export function publishedRuns(fixtureSha256, siteRoot) {
  const url = new URL("runs/index.json", siteRoot).href;
  if (!indexes.has(url)) {
    indexes.set(url, fetch(url).then((r) => (r.ok ? r.json() : { entries: [] })).catch(() => ({ entries: [] })));
  }
  return indexes.get(url).then((index) => (Array.isArray(index.entries) ? index.entries : [])
    .filter((e) => e.fixture_sha256 === fixtureSha256)
    .map((e) => ({ run_id: e.run_id, kind: e.kind, href: new URL(`runs/${encodeURIComponent(e.run_id)}/`, siteRoot).href })));
}

function sameWorld(fixture, siteRoot) {
  const list = h("ul", { class: "fb-same-world" }, h("li", {}, "Looking for published runs of this world…"));
  const box = h("div", { class: "fb-same-world-box" }, h("h3", {}, "The same world on the register"), list);
  publishedRuns(fixture, siteRoot).then((runs) => {
    const label = { reference: "the reference plan (gold)", baseline: "a scripted baseline", adversarial: "a grader test (mutation)" };
    list.replaceChildren(...(runs.length ? runs.map((r) => h("li", { "data-run": r.run_id },
      h("a", { href: r.href }, r.run_id), ` — ${label[r.kind] || r.kind}`))
      : [h("li", {}, "No published run of this world: the register holds baselines of FUND_01..FUND_04 seeds 1 to 3 and the "
        + "reference episodes W1 to W5. ", h("a", { href: new URL("runs/", siteRoot).href }, "The register"), " has the scale.")]));
    box.dataset.loaded = String(runs.length);
  });
  return box;
}

/** The graded result: status, then verdict with gates, then score, then the same world's published runs. */
export function renderResult(r, { fixture, siteRoot } = {}) {
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
    h("dl", { class: "fb-facts" }, h("dt", {}, "Receipts head"), h("dd", {}, `${r.receipts_head.size}:${r.receipts_head.hash}`)),
    fixture && siteRoot ? sameWorld(fixture, siteRoot) : null);
}
