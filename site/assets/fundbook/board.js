// "Verify this board in your browser" (the home page's leaderboard). leaderboard.json is the claim; the check
// recomputes it from the published records and compares, each mismatch naming the field with the published value
// beside the computed one:
//   records    each attempt a model row lists (attempt_ids) is a published record hashing to its content_sha256,
//              of the row's agent; the one rule (builders/counting.py: the last try of each world) picks the row's
//              counted attempts; each baseline run and practitioner session a row counts is its published record;
//   rows       each row's figures -- its counted attempts and their scores (the recorded grade, or for an attempt
//              that ended without one the engine's grade of its accepted batches, computed here), worlds, the
//              qualified rate and the mean with their intervals (intervals.js, intervals.py's arithmetic) --
//              follow from those records;
//   baselines  the scripted baselines, graded here by the engine on each model row's worlds, score what the
//              row's same-world columns say, and their means are the row's;
//   weights    each model row's weights follow from its records (weights.py: the sha256 its sampler recorded, or
//              the packaged file a local server served by name), and the headings group the rows by weights;
//   ranking    the published bands.py and rules.py (sha256 as leaderboard.json pins them), run in the engine
//              worker's Pyodide on the recomputed scores, give the board's order, every rank, band and rank band;
//   erratum    each row's grammar-1 note follows from runs/errata/grammar-1.json;
//   page       every mark of the board (data-fb-path into the `board` root) equals the recomputed figure, none the
//              board must show is missing or outside its verifiable regions, no region shows a figure outside a
//              mark, and the chart draws the recomputed rows.
// Not checked here: that no published attempt is left out of a row (the build lists every attempt), the cost and
// date columns (each attempt's page verifies its own), and the status line.
import { call } from "../desk/client.js";
import { contentSha256, figureProblems, sha256hex } from "../desk/checks.js";
import { ensureStyles, h } from "../desk/dom.js";
import * as marks from "../desk/marks.js";
import { modelKey, startedOf, tryNumber, worldOf } from "../desk/attempt.js";
import { differences } from "../desk/practitioner.js";
import { tMean, wilson } from "./intervals.js";

const SIDE_POLICIES = ["do-nothing", "shortest-cheapest", "reference"];  // leaderboard.py SIDE_POLICIES
const HEX64 = /^[0-9a-f]{64}$/;
const LOOPBACK = /^https?:\/\/(127\.[0-9.]+|localhost|\[::1\])(:[0-9]+)?(\/|$)/;
const dict = (v) => (v && typeof v === "object" && !Array.isArray(v) ? v : {});
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

async function fetchBytes(url, what) {
  const response = await fetch(url, { cache: "no-cache" });
  if (!response.ok) throw new Error(`${what} ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

function parse(bytes, what) {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new Error(`${what}: not valid JSON`);
  }
}

/** counting.score of a result: points only when SCORED, qualified when also QUALIFIED. */
function scoreOf(result) {
  const scored = result?.status === "SCORED";
  const points = result?.score?.points;
  return { score: scored && Number.isInteger(points) && typeof points === "number" ? points : 0,
    qualified: scored && result?.verdict === "QUALIFIED" };
}

const ISO_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$/;

/** leaderboard.py order_start: a recorded ISO time, or null for anything else. */
const orderStart = (value) => (typeof value === "string" && ISO_TIME.test(value) ? value : null);

/** leaderboard.py _outcome: a run's or a session's points as recorded, qualified when SCORED and QUALIFIED. */
function outcomeOf(result) {
  const points = result?.score?.points;
  return { score: Number.isInteger(points) && typeof points === "number" ? points : 0,
    qualified: result?.status === "SCORED" && result?.verdict === "QUALIFIED", ended: typeof result?.status === "string" };
}

/** weights.py identity: {weights, basis} of an attempt's content, with leaderboard.json's packaged table. */
export function weightsOf(content, packaged) {
  const sha = dict(content?.sampling).model_sha256;
  if (typeof sha === "string" && HEX64.test(sha)) return { weights: sha, basis: "sha256" };
  const model = dict(content?.model);
  let served = null;
  if (content?.harness === "inspect") {
    if (LOOPBACK.test(String(dict(content.inspect).model_base_url || ""))) {
      served = model.answered_as || String(model.id ?? "").split("/").pop();
    }
  } else if (model.provider === "openai-compatible" && dict(content?.sampling).local_server) {
    const reported = dict(content.service).model_reported;
    served = Array.isArray(reported) && reported.length ? reported[0] : model.id;
  }
  if (typeof served === "string" && served) {
    const hit = Object.entries(packaged || {}).find(([, e]) => {
      const stem = e.file.toLowerCase().endsWith(".gguf") ? e.file.slice(0, -5) : e.file;
      return served === e.file || served === stem;
    });
    return { weights: hit ? hit[0] : `local:${served}`, basis: "served name" };
  }
  return { weights: `${model.provider ?? "?"}:${model.id ?? "?"}`, basis: "provider model id" };
}

/** weights.py slug: a card's folder for weights no package names. */
async function slugOf(w) {
  return HEX64.test(w) ? w.slice(0, 12) : (await sha256hex(String(w))).slice(0, 12);
}

/** ranking.headings: one heading per set of weights, in board order. */
async function headingsOf(rows, packaged) {
  const out = new Map();
  for (const r of rows) {
    if (out.has(r.weights)) {
      out.get(r.weights).rows.push(r.key);
      continue;
    }
    const entry = packaged?.[r.weights];
    const names = [...new Set(rows.filter((x) => x.weights === r.weights).map((x) => x.model_id))].sort(cmp);
    const tuning = entry ? entry.tuning : null;
    out.set(r.weights, { weights: r.weights, name: entry ? entry.title : names[0] ?? r.weights, tuning,
      base: Boolean(tuning && tuning.startsWith("base")), card: `models/${entry ? entry.name : await slugOf(r.weights)}/`,
      rows: [r.key] });
  }
  return [...out.values()];
}

/** leaderboard.py chart_rows from a document. */
export function chartRows(doc) {
  const out = [];
  for (const r of doc.rows || []) {
    if (r.kind !== "model" || !r.rank) continue;
    const label = `${r.model} · ${r.provider} (${r.harness})${r.base ? " · base model" : ""}`;
    out.push({ row: label, series: "this row", mean: Number(r.mean.value), lower: Number(r.band.lower), upper: Number(r.band.upper) });
    for (const policy of SIDE_POLICIES) {
      const m = dict(r.same_worlds_means)[policy];
      if (m) out.push({ row: label, series: policy, mean: Number(m.value), lower: Number(m.value), upper: Number(m.value) });
    }
  }
  return out;
}

/** leaderboard.py figure_root: the marks' `board` root. */
export function figureRoot(doc) {
  return { board: { rows: Object.fromEntries((doc.rows || []).map((r) => [r.key, r])),
    models: Object.fromEntries((doc.models || []).map((m) => [m.weights, m])),
    preliminary_below: doc.preliminary_below, simultaneous: doc.simultaneous } };
}

/** What the board must show of each row (a removed mark cannot hide an edited figure). */
function requiredPaths(doc) {
  const out = [];
  for (const r of doc.rows || []) {
    if (r.group === "Machinery tests") continue;
    const at = (...p) => out.push(["board", "rows", r.key, ...p]);
    at("worlds");
    if (r.mean) at("mean", "value");
    if (r.qualified) at("qualified", "value");
    if (r.kind === "model" && r.rank) at("rank"), at("rank_band", "lower"), at("rank_band", "upper"), at("band", "lower"), at("band", "upper");
    if (r.erratum) at("erratum", "withheld_at_most");
  }
  for (const m of doc.models || []) out.push(["board", "models", m.weights, "name"], ["board", "models", m.weights, "weights"]);
  return out;
}

class Recompute {
  constructor(siteRoot, board) {
    this.root = siteRoot;
    this.board = board;
    this.problems = { records: [], rows: [], baselines: [], weights: [], ranking: [], erratum: [], page: [] };
    this.records = new Map();
    this.points = new Map();
    this.fetched = 0;
  }

  problem(check, field, published, computed) {
    this.problems[check].push({ field, published: String(published), computed: String(computed) });
  }

  async record(url, what) {
    if (!this.records.has(url)) {
      this.records.set(url, (async () => {
        const record = parse(await fetchBytes(url, what), what);
        this.fetched += 1;
        const sha = await contentSha256(record?.content ?? null).catch((e) => `(${e.message})`);
        if (sha !== record?.content_sha256) this.problem("records", `${what}: content_sha256`, record?.content_sha256, sha);
        return record;
      })().catch((error) => ({ error: error.message })));
    }
    return this.records.get(url);
  }

  async policyPoints(task, policy) {
    const key = JSON.stringify([task, policy]);
    if (!this.points.has(key)) {
      this.points.set(key, call("policy_points", JSON.stringify(task ?? {}), policy)
        .then((a) => (a.ok ? a.points : `(the engine refuses: ${a.error})`)));
    }
    return this.points.get(key);
  }

  /** A model (or machinery) row: its attempts' records, the one rule, the scores. */
  async attemptsRow(row) {
    const ids = Array.isArray(row.attempt_ids) ? row.attempt_ids : (row.counted || []).map((c) => c.attempt_id);
    const tries = new Map();
    const out = { key: row.key, weights: null, tasks: new Map(), ids };
    const idsOf = new Set();
    for (const id of ids) {
      const record = await this.record(new URL(`runs/attempts/${encodeURIComponent(id)}/record.json`, this.root).href, `attempt ${id}`);
      if (record.error) {
        this.problem("records", `attempt ${id}`, "(listed)", record.error);
        continue;
      }
      const content = record.content || {};
      if (modelKey(content) !== row.key) this.problem("records", `attempt ${id}: agent`, row.key, modelKey(content));
      const world = worldOf(content, id);
      if (!tries.has(world)) tries.set(world, []);
      tries.get(world).push({ id, started: startedOf(record), record });  // the rule's try order: as recorded
      idsOf.add(id);
    }
    const counted = [];
    const weights = new Set();
    for (const [world, list] of tries) {
      list.sort((a, b) => (tryNumber(a.id) - tryNumber(b.id)) || cmp(a.started ?? "", b.started ?? "") || cmp(a.id, b.id));
      const last = list[list.length - 1];
      const content = last.record.content || {};
      let got;
      let source = "record";
      if (typeof content.result?.status === "string") got = scoreOf(content.result);
      else {
        source = "engine";
        const batches = (content.proposals || []).filter((p) => p?.outcome === "accepted").map((p) => p.batch);
        const answer = await call("grade", JSON.stringify(content.task ?? {}), JSON.stringify(batches), String(last.id));
        got = answer.ok ? scoreOf(answer.result) : { score: `(the engine refuses: ${answer.error})`, qualified: false };
      }
      out.tasks.set(world, content.task ?? {});
      const entry = { world, attempt_id: last.id, score: got.score, qualified: got.qualified, graded_by: source, started: orderStart(last.started) };
      counted.push(entry);
      if (row.kind === "model") {
        const w = weightsOf(content, this.board.packaged);
        weights.add(JSON.stringify(w));
        out.model_id = String(dict(content.model).id ?? "?");
      }
    }
    counted.sort((a, b) => cmp(a.started ?? "", b.started ?? "") || cmp(a.world, b.world));
    if (weights.size > 1) this.problem("weights", `${row.key}: weights`, "one set", [...weights].join(" and "));
    if (weights.size) Object.assign(out, JSON.parse([...weights][0]));
    out.counted = counted;
    out.attempts = ids.length;
    out.ended_without_result = counted.filter((c) => c.graded_by === "engine").length;
    return out;
  }

  /** A scripted baseline row: its runs' records. */
  async baselineRow(row) {
    const counted = [];
    let ended = 0;
    for (const c of row.counted || []) {
      const record = await this.record(new URL(`runs/${encodeURIComponent(c.attempt_id)}.json`, this.root).href, `run ${c.attempt_id}`);
      if (record.error) {
        this.problem("records", `run ${c.attempt_id}`, "(counted)", record.error);
        continue;
      }
      const content = record.content || {};
      const policy = String(dict(content.fixture).policy || "unnamed");
      if (content.kind !== "baseline" || `baseline:${policy}` !== row.key) this.problem("records", `run ${c.attempt_id}: agent`, row.key, `${content.kind}:${policy}`);
      const got = outcomeOf({ status: content.status, verdict: content.verdict, score: content.score });
      if (got.ended) ended += 1;
      counted.push({ world: String(content.instance_id || content.fixture_sha256), attempt_id: c.attempt_id, score: got.score,
        qualified: got.qualified, graded_by: "record" });
    }
    return { key: row.key, counted, attempts: counted.length, ended_without_result: counted.length - ended };
  }

  /** A practitioner cohort: its sessions' records. */
  async cohortRow(row) {
    const counted = [];
    let ended = 0;
    for (const c of row.counted || []) {
      const record = await this.record(new URL(`runs/practitioners/${encodeURIComponent(c.attempt_id)}/record.json`, this.root).href, `session ${c.attempt_id}`);
      if (record.error) {
        this.problem("records", `session ${c.attempt_id}`, "(counted)", record.error);
        continue;
      }
      const content = record.content || {};
      if (`practitioners:${content.cohort || "unnamed"}` !== row.key) this.problem("records", `session ${c.attempt_id}: cohort`, row.key, content.cohort);
      const task = dict(content.task);
      const got = outcomeOf(content.result);
      if (got.ended) ended += 1;
      counted.push({ world: String(task.instance_id || task.fixture_sha256 || c.attempt_id), attempt_id: c.attempt_id,
        score: got.score, qualified: got.qualified, graded_by: "record" });
    }
    return { key: row.key, counted, attempts: counted.length, ended_without_result: counted.length - ended };
  }

  async sameWorlds(row, got) {
    const out = [];
    for (const c of [...got.counted].sort((a, b) => cmp(a.world, b.world))) {
      const r = { world: c.world, attempt_id: c.attempt_id, model: c.score };
      for (const policy of SIDE_POLICIES) r[policy] = await this.policyPoints(got.tasks.get(c.world), policy);
      out.push(r);
    }
    const full = out.filter((r) => SIDE_POLICIES.every((p) => Number.isInteger(r[p])));
    const means = {};
    if (full.length) {
      means[row.name] = tMean(full.map((r) => r.model));
      for (const p of SIDE_POLICIES) means[p] = tMean(full.map((r) => r[p]));
    }
    return { same_worlds: out, same_worlds_means: means };
  }

  async errata() {
    const response = await fetch(new URL("runs/errata/grammar-1.json", this.root).href, { cache: "no-cache" });
    if (response.status === 404) return {};
    if (!response.ok) throw new Error(`runs/errata/grammar-1.json: HTTP ${response.status}`);
    return parse(new Uint8Array(await response.arrayBuffer()), "runs/errata/grammar-1.json");
  }

  async ranking(models) {
    const code = dict(this.board.simultaneous?.code);
    const sources = {};
    for (const name of ["rules", "bands"]) {
      const entry = dict(code[name]);
      const bytes = await fetchBytes(new URL(String(entry.path), this.root).href, `${name}.py`);
      const sha = await sha256hex(bytes);
      if (sha !== entry.sha256) this.problem("ranking", `simultaneous.code.${name}.sha256`, entry.sha256, sha);
      sources[name] = new TextDecoder().decode(bytes);
    }
    const payload = { alpha: this.board.simultaneous?.alpha, preliminary_below: this.board.preliminary_below,
      rows: models.map((r) => ({ key: r.key, scores: r.counted.map((c) => c.score) })) };
    const answer = await call("bands", sources.rules, sources.bands, JSON.stringify(payload));
    if (!answer.ok) throw new Error(`bands.py refuses the recomputed rows: ${answer.error}`);
    return answer.ranking;
  }
}

/** leaderboard.json recomputed from the published records: {doc, problems, fetched}. */
export async function recomputeBoard(board, siteRoot) {
  const re = new Recompute(siteRoot, board);
  const errata = await re.errata();
  const named = new Map((errata.attempts || []).filter((e) => e?.inexpressible_days?.length).map((e) => [e.attempt_id, e]));
  const rows = [];
  for (const row of board.rows || []) {
    const got = row.kind === "baseline" ? await re.baselineRow(row) : row.kind === "practitioners" ? await re.cohortRow(row)
      : await re.attemptsRow(row);
    const scores = got.counted.map((c) => c.score);
    const out = { ...row, counted: got.counted, worlds: new Set(got.counted.map((c) => c.world)).size,
      attempts: got.attempts, ended_without_result: got.ended_without_result,
      qualified: wilson(got.counted.filter((c) => c.qualified).length, scores.length), mean: tMean(scores) };
    if (row.kind === "model") {
      Object.assign(out, await re.sameWorlds(row, got), { weights: got.weights ?? null, weights_basis: got.basis ?? null,
        model_id: got.model_id ?? null });
      const hit = got.counted.map((c) => named.get(c.attempt_id)).filter(Boolean);
      out.erratum = hit.length ? { grammar: String(errata.grammar), attempts: hit.length,
        withheld_at_most: hit.reduce((s, e) => s + (Number.isInteger(e?.bound?.withheld_at_most) ? e.bound.withheld_at_most : 0), 0) } : null;
    }
    rows.push(out);
  }
  const models = rows.filter((r) => r.kind === "model");
  const ranking = await re.ranking(models);
  const byKey = new Map(models.map((r) => [r.key, r]));
  const ordered = ranking.order.map((k) => byKey.get(k));
  const heads = await headingsOf(ordered, board.packaged);
  for (const head of heads) {
    for (const key of head.rows) {
      Object.assign(byKey.get(key), ranking.rows[key], { model: head.name, tuning: head.tuning, base: head.base, card: head.card });
    }
  }
  const others = rows.filter((r) => r.kind !== "model");
  const doc = { ...board, rows: [...ordered, ...others.filter((r) => r.group !== "Machinery tests"),
    ...others.filter((r) => r.group === "Machinery tests")], models: heads,
  simultaneous: { ...board.simultaneous, ranked: ranking.ranked, per_end_alpha: ranking.per_end_alpha, method: ranking.method } };
  return { doc, problems: re.problems, fetched: re.fetched };
}

const ROW_CHECKS = {
  rows: ["counted", "worlds", "attempts", "qualified", "mean", "ended_without_result"],
  baselines: ["same_worlds", "same_worlds_means"],
  weights: ["weights", "weights_basis", "model_id", "model", "tuning", "base", "card"],
  ranking: ["preliminary", "rank", "band", "rank_band"],
  erratum: ["erratum"],
};

function compare(published, computed, problems) {
  const mine = new Map(computed.rows.map((r) => [r.key, r]));
  const order = (d) => d.rows.filter((r) => r.kind === "model").map((r) => r.key);
  problems.ranking.push(...differences(order(published), order(computed), "model rows (order)"));
  for (const row of published.rows || []) {
    const got = mine.get(row.key);
    for (const [check, keys] of Object.entries(ROW_CHECKS)) {
      if (row.kind !== "model" && check !== "rows") continue;
      const pick = (r) => Object.fromEntries(keys.filter((k) => k in r || row.kind === "model").map((k) => [k, r[k] ?? null]));
      problems[check].push(...differences(pick(row), pick(got), `rows[${row.key}]`));
    }
  }
  problems.weights.push(...differences(published.models, computed.models, "models"));
  const sim = (d) => ({ ranked: d.simultaneous?.ranked, per_end_alpha: d.simultaneous?.per_end_alpha });
  problems.ranking.push(...differences(sim(published), sim(computed), "simultaneous"));
}

function chartProblems(doc, computed) {
  const island = doc.getElementById("spec-leaderboard");
  const want = chartRows(computed);
  let shown = [];
  if (island) {
    try {
      shown = JSON.parse(island.textContent)?.data?.values || [];
    } catch {
      return [{ field: "page: chart data", published: "(not valid JSON)", computed: `${want.length} rows` }];
    }
  }
  const norm = (rows) => JSON.stringify(rows.map((r) => [r.row, r.series, Number(r.mean), Number(r.lower), Number(r.upper)]));
  return norm(shown) === norm(want) ? [] : [{ field: "page: chart data", published: norm(shown).slice(0, 300), computed: norm(want).slice(0, 300) }];
}

export async function verifyBoard(leaderboardUrl, siteRoot, doc) {
  const board = parse(await fetchBytes(leaderboardUrl, "leaderboard.json"), "leaderboard.json");
  const { doc: computed, problems, fetched } = await recomputeBoard(board, siteRoot);
  compare(board, computed, problems);
  const figures = marks.figuresIn(doc, (n) => n.closest("[data-fb-board]"));
  const required = requiredPaths(computed);
  problems.page.push(...figureProblems(figures, figureRoot(computed), required), ...marks.regionProblems(doc, figures, required),
    ...chartProblems(doc, computed));
  const models = computed.rows.filter((r) => r.kind === "model");
  const results = [
    { id: "records", label: "Records", problems: problems.records,
      ok: `the ${fetched} records the rows count are published, hash to their content_sha256 and are the rows' own; the last try of each world counts.` },
    { id: "rows", label: "Rows", problems: problems.rows,
      ok: `every row's scores, worlds, qualified rate and mean with its interval follow from those records.` },
    { id: "baselines", label: "Baselines", problems: problems.baselines,
      ok: `the scripted baselines, graded here on the worlds of the ${models.length} model row${models.length === 1 ? "" : "s"}, score what the rows say.` },
    { id: "weights", label: "Weights", problems: problems.weights,
      ok: `each model row's weights follow from its records; ${computed.models.length} model heading${computed.models.length === 1 ? "" : "s"}, one per set of weights.` },
    { id: "ranking", label: "Ranking", problems: problems.ranking,
      ok: `bands.py and rules.py, run in this browser's Pyodide, give the order, the ${computed.simultaneous.ranked} ranked row${computed.simultaneous.ranked === 1 ? "'s" : "s'"} bands and rank bands.` },
    { id: "erratum", label: "Erratum", problems: problems.erratum, ok: "each row's grammar-1 note follows from runs/errata/grammar-1.json." },
    { id: "page", label: "Page", problems: problems.page,
      ok: `all ${figures.length} marked figures of the board equal the recomputed ones, and the chart draws the recomputed rows.` },
  ];
  return { results, match: results.every((r) => !r.problems.length), computed };
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

const boxes = document.querySelectorAll(".fb-verify-board");
if (boxes.length) ensureStyles();
for (const box of boxes) {
  const out = h("div", { class: "fb-verify-output", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "md-button fb-verify-button" }, "Verify this board in your browser");
  button.addEventListener("click", async () => {
    button.disabled = true;
    out.replaceChildren(h("p", {}, "Fetching every record the board counts, grading the baselines on the models' worlds and recomputing the ranking…"));
    try {
      const outcome = await verifyBoard(new URL(box.dataset.leaderboardUrl, location.href).href,
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
    "Recomputes leaderboard.json from the published records in this browser: fetches and hashes every attempt, run and "
    + "session the rows count and applies the one rule (the last try of a world counts; an attempt that ended without a "
    + "result is graded here by the engine bundle, in Pyodide); recomputes each row's figures and intervals, grades the "
    + "scripted baselines on each model row's worlds, reads each row's weights from its records, reruns the published "
    + "bands.py and rules.py to rank the rows with their simultaneous bands, derives the grammar-1 notes from the "
    + "erratum file, and compares every marked figure of the board (outlined after the check) and the chart. Not "
    + "checked here: that no published attempt is left out of a row, the cost and date columns (each attempt's page "
    + "verifies its own) and the status line. Nothing leaves your browser.");
  box.replaceChildren(button, note, out);
}
