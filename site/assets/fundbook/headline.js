// "Check this sentence in your browser" (the home page's headline). The
// sentence's figures are marks (data-fb-path into the `headline` root,
// builders/site/leaderboard.py headline); the check recomputes that root:
//   attempts   each attempt the best model's row counts (leaderboard.json) is a published record
//              (hashing to its content_sha256) of that model on that world, and scores what the row
//              says by the one rule (builders/counting.py): its recorded grade, or for an attempt
//              that ended without one the engine's grade of its accepted batches, computed here;
//   baselines  doing nothing and the reference policy, graded here by the engine on each of those
//              worlds, score what the row's same-world columns say;
//   sentence   the headline's fields, recomputed from the rows as leaderboard.py does (the best
//              row that is not preliminary, means to a tenth rounded half to even);
//   page       every mark of the sentence equals the recomputed field, none is missing, and the
//              sentence shows no figure outside a mark.
// Which attempt counts for a world (the last try) is checked on each attempt's page, not here.
import { call } from "../desk/client.js";
import { contentSha256, figureProblems } from "../desk/checks.js";
import { ensureStyles, h } from "../desk/dom.js";
import * as marks from "../desk/marks.js";
import { modelKey, worldOf } from "../desk/attempt.js";

const SIDE_POLICIES = ["do-nothing", "shortest-cheapest", "reference"];  // leaderboard.py SIDE_POLICIES

async function fetchJSON(url, what) {
  const response = await fetch(url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`${what} ${url}: HTTP ${response.status}`);
  try {
    return JSON.parse(await response.text());
  } catch {
    throw new Error(`${what} ${url}: not valid JSON`);
  }
}

/** sum / n in tenths rounded half to even, as "28.9" (intervals.py _tenths(_round_tenths)). */
export function tenths(sum, n) {
  const num = BigInt(sum) * 10n;
  const den = BigInt(n);
  const neg = num < 0n;
  const a = neg ? -num : num;
  let q = a / den;
  const r2 = (a - q * den) * 2n;
  if (r2 > den || (r2 === den && q % 2n === 1n)) q += 1n;
  const t = neg ? -q : q;
  const abs = t < 0n ? -t : t;
  return `${t < 0n ? "-" : ""}${abs / 10n}.${abs % 10n}`;
}

const cmpMean = (a, b) => {  // a.sum/a.n against b.sum/b.n
  const x = BigInt(a.sum) * BigInt(b.n);
  const y = BigInt(b.sum) * BigInt(a.n);
  return x < y ? -1 : x > y ? 1 : 0;
};

const words = (a, b) => (cmpMean(a, b) < 0 ? "below" : cmpMean(a, b) > 0 ? "above" : "level with");

/** The headline's fields from leaderboard.json's rows (leaderboard.py headline), or {model: null}. */
export function headlineOf(doc) {
  const below = doc.preliminary_below;
  const models = (doc.rows || []).filter((r) => r.group === "Models" && (r.counted || []).length);
  if (!models.length) return { model: null };
  const stats = (r) => ({ sum: r.counted.reduce((s, c) => s + c.score, 0), n: r.counted.length });
  models.sort((a, b) => -cmpMean(stats(a), stats(b)) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const ranked = models.filter((r) => r.worlds >= below);
  const pool = ranked.length ? ranked : models;
  const best = pool[0];
  const s = stats(best);
  const out = { model: best.key, name: best.name, worlds: best.worlds, denominator: 100, mean: tenths(s.sum, s.n),
    qualified: best.counted.filter((c) => c.qualified).length };
  const same = (best.same_worlds || []).filter((r) => SIDE_POLICIES.every((p) => r[p] !== null && r[p] !== undefined));
  if (same.length) {
    const mean = (col) => ({ sum: same.reduce((t, r) => t + r[col], 0), n: same.length });
    const model = mean("model");
    Object.assign(out, { same: same.length, model_same: tenths(model.sum, model.n),
      do_nothing: tenths(mean("do-nothing").sum, same.length), reference: tenths(mean("reference").sum, same.length),
      direction: words(model, mean("do-nothing")), reference_direction: words(model, mean("reference")) });
  }
  if (models.length - pool.length) Object.assign(out, { preliminary_not_ranked: models.length - pool.length, preliminary_below: below });
  return out;
}

/** counting.score of a result: points when SCORED, qualified when also QUALIFIED. */
function scoreOf(result) {
  const scored = result?.status === "SCORED";
  const points = result?.score?.points;
  return { score: scored && Number.isInteger(points) ? points : 0, qualified: scored && result?.verdict === "QUALIFIED" };
}

export async function verifyHeadline(leaderboardUrl, siteRoot, doc) {
  const board = await fetchJSON(leaderboardUrl, "leaderboard.json");
  const computed = headlineOf(board);
  const best = (board.rows || []).find((r) => r.key === computed.model);
  const attempts = [];
  const baselines = [];
  const tasks = new Map();
  for (const c of best?.counted || []) {
    const url = new URL(`runs/attempts/${encodeURIComponent(c.attempt_id)}/record.json`, siteRoot).href;
    let record;
    try {
      record = await fetchJSON(url, "record");
    } catch (error) {
      attempts.push({ field: `attempt ${c.attempt_id}`, published: "(counted)", computed: error.message });
      continue;
    }
    const content = record?.content || {};
    const sha = await contentSha256(content).catch((e) => `(${e.message})`);
    if (sha !== record?.content_sha256) attempts.push({ field: `${c.attempt_id}: content_sha256`, published: String(record?.content_sha256), computed: sha });
    if (modelKey(content) !== best.key || worldOf(content, c.attempt_id) !== c.world) {
      attempts.push({ field: `${c.attempt_id}`, published: `${best.key} on ${c.world}`, computed: `${modelKey(content)} on ${worldOf(content, c.attempt_id)}` });
    }
    tasks.set(c.world, content.task || {});
    let got;
    if (typeof content.result?.status === "string") got = scoreOf(content.result);
    else {  // ended without a result: the engine's grade of the batches the desk accepted from it
      const batches = (content.proposals || []).filter((p) => p?.outcome === "accepted").map((p) => p.batch);
      const answer = await call("grade", JSON.stringify(content.task ?? {}), JSON.stringify(batches), String(c.attempt_id));
      got = answer.ok ? scoreOf(answer.result) : { score: `(the engine refuses: ${answer.error})`, qualified: null };
    }
    if (got.score !== c.score || got.qualified !== c.qualified) {
      attempts.push({ field: `${c.attempt_id}: score`, published: `${c.score}${c.qualified ? ", qualified" : ""}`, computed: `${got.score}${got.qualified ? ", qualified" : ""}` });
    }
  }
  for (const row of best?.same_worlds || []) {
    const counted = (best.counted || []).find((c) => c.world === row.world);
    if (!counted || counted.score !== row.model) baselines.push({ field: `${row.world}: model`, published: String(row.model), computed: String(counted?.score) });
    for (const policy of ["do-nothing", "reference"]) {
      if (row[policy] === null || row[policy] === undefined) continue;
      const answer = await call("policy_points", JSON.stringify(tasks.get(row.world) ?? {}), policy);
      const points = answer.ok ? answer.points : `(the engine refuses: ${answer.error})`;
      if (points !== row[policy]) baselines.push({ field: `${row.world}: ${policy}`, published: String(row[policy]), computed: String(points) });
    }
  }
  const shownSentence = board.headline;
  const figures = marks.figuresIn(doc, (n) => n.closest("[data-fb-headline]"));
  // every field the sentence words (leaderboard.py headline_text: "same" and "model_same" only when the engine could
  // not replay every world)
  const required = Object.keys(computed).filter((k) => k !== "model"
    && !(["same", "model_same"].includes(k) && computed.same === computed.worlds)).map((k) => ["headline", k]);
  const page = figureProblems(figures, { headline: computed }, required).concat(marks.regionProblems(doc, figures, required));
  const sentence = [];
  const text = doc.querySelector("[data-fb-headline] [data-fb-verified]")?.textContent.trim();
  if (text !== shownSentence) sentence.push({ field: "leaderboard.json headline", published: String(shownSentence), computed: String(text) });
  const results = [
    { id: "attempts", label: "Attempts", problems: attempts,
      ok: `the ${best?.counted?.length ?? 0} counted attempts are published records of ${best?.name} and score what the row says.` },
    { id: "baselines", label: "Baselines", problems: baselines,
      ok: `doing nothing and the reference policy, graded here on the ${best?.same_worlds?.length ?? 0} same worlds, score what the row says.` },
    { id: "sentence", label: "Sentence", problems: sentence, ok: "leaderboard.json states the sentence this page shows." },
    { id: "page", label: "Page", problems: page, ok: `all ${figures.length} figures of the sentence equal the ones recomputed from the rows.` },
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
      ok ? null : h("table", { class: "fb-verify-problems" }, h("tbody", {}, r.problems.slice(0, 20).map((p) =>
        h("tr", { "data-field": p.field }, h("td", {}, h("code", {}, p.field)),
          h("td", {}, h("code", { class: "fb-published" }, String(p.published))),
          h("td", {}, h("code", { class: "fb-computed" }, String(p.computed))))))));
  }));
  return [head, list];
}

const boxes = document.querySelectorAll(".fb-verify-headline");
if (boxes.length) ensureStyles();
for (const box of boxes) {
  const out = h("div", { class: "fb-verify-output", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "md-button fb-verify-button" }, "Check this sentence in your browser");
  button.addEventListener("click", async () => {
    button.disabled = true;
    out.replaceChildren(h("p", {}, "Fetching the counted attempts and grading the baselines on their worlds…"));
    try {
      const outcome = await verifyHeadline(new URL(box.dataset.leaderboardUrl, location.href).href,
        new URL(box.dataset.siteRoot || "./", location.href), document);
      out.replaceChildren(...render(outcome));
      marks.outline(document, outcome.match);
    } catch (error) {
      out.replaceChildren(h("p", { class: "fb-verify-result fb-error", "data-result": "error", role: "alert" },
        `Could not verify: ${error.message}`));
    } finally {
      button.disabled = false;
    }
  });
  const note = h("details", { class: "fb-verify-note" }, h("summary", {}, "What this checks"),
    "Fetches the records of the attempts the best model's row counts and checks each scores what the row says (an "
    + "attempt that ended without a result is graded here by the engine bundle, in Pyodide), grades doing nothing and "
    + "the reference policy on the same worlds, recomputes the sentence's figures from the rows and compares every "
    + "figure of the sentence. Which try counts for a world is checked on each attempt's own page. Nothing leaves your browser.");
  box.replaceChildren(button, note, out);
}
