// The checks behind "verify", with no DOM and no engine: canonical JSON and
// sha256, the run index chain, the engine facts of a record, and how a figure
// the page shows must read for a given record value. Plain ES module, so Node
// runs the same code in the tests (tests/site/test_checks.py).
//
// A page marks every figure it shows with data-fb-path (the root -- content,
// record, entry, index, receipts -- then keys and list indexes, "/"-separated
// and percent-encoded) and data-fb-format (absent: "text"); figureText() below
// must give exactly the text builders/site/fmt.py `figure_text` renders for
// the same value and format.

import { gateDetail } from "./readable.js";

// The execution path of every published run record (builders/runs/_records.py PYODIDE_PATH).
export const COMPILED_PATH = "compiled bundle in Pyodide";

const encoder = new TextEncoder();

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** sha256 of bytes (Uint8Array or ArrayBuffer) or of a string's UTF-8, as hex. */
export async function sha256hex(data) {
  if (!globalThis.crypto?.subtle) throw new Error("this page has no Web Crypto SHA-256 (it needs https or localhost)");
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return hex(await crypto.subtle.digest("SHA-256", bytes));
}

function byCodePoint(a, b) {
  // Python's sorted() and sort_keys order (code points): fmt.compact's. Canonical JSON sorts by UTF-16 instead.
  const x = Array.from(a, (c) => c.codePointAt(0));
  const y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** engine._canon.canonical_json as text: sorted keys, compact, integers only. */
export function canonicalJSON(value) {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new Error(`canonical JSON: ${value} is not an integer within +-(2^53-1)`);
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJSON).join(",")}]`;
  if (typeof value === "object") {
    // RFC 8785 orders members by UTF-16 code units (engine/_canon.py utf16_key): JavaScript's default sort
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJSON(value[k])}`).join(",")}}`;
  }
  throw new Error(`canonical JSON: ${typeof value} is not JSON`);
}

export async function contentSha256(value) {
  return sha256hex(canonicalJSON(value));
}

// ---- the run index chain: mirrors builders/runs/_index.py, keep the two in step ----

// fundbook.index/2: the chain starts from a genesis over the index's schema and
// engine block, and an entry's hash covers every field but `hash` itself,
// file_sha256 included (builders/runs/_index.py).
export const UNCHAINED = ["hash"];

export async function genesis(index) {
  return contentSha256({ schema: index?.schema, engine: index?.engine });
}

export async function entryHash(entry) {
  const covered = Object.fromEntries(Object.entries(entry).filter(([k]) => !UNCHAINED.includes(k)));
  return contentSha256(covered);
}

/** {ok, at, detail}: every entry links to the one before, hashes to its `hash`, and the head is the last. */
export async function checkChain(index) {
  const entries = Array.isArray(index?.entries) ? index.entries : null;
  if (!entries) return { ok: false, at: "entries", detail: "the index has no entries list" };
  let prev = await genesis(index);
  for (const [i, entry] of entries.entries()) {
    if (entry.prev_hash !== prev) {
      return { ok: false, at: `entries[${i}].prev_hash`, published: entry.prev_hash, computed: prev,
        detail: `entry ${i} (${entry.run_id}) does not link to the entry before it` };
    }
    const computed = await entryHash(entry);
    if (computed !== entry.hash) {
      return { ok: false, at: `entries[${i}].hash`, published: entry.hash, computed,
        detail: `entry ${i} (${entry.run_id}) does not hash to its hash` };
    }
    prev = entry.hash;
  }
  const head = index.head || {};
  if (head.size !== entries.length) {
    return { ok: false, at: "head.size", published: head.size, computed: entries.length, detail: "the head does not count every entry" };
  }
  if (head.hash !== prev) {
    return { ok: false, at: "head.hash", published: head.hash, computed: prev, detail: "the head is not the last entry's hash" };
  }
  return { ok: true, size: entries.length, head: prev };
}

/** Problems of a run's index entry against its record: [{field, published, computed}]. */
export function entryProblems(entry, record, fileSha, computedContent) {
  if (!entry) return [{ field: "index entry", published: "(absent)", computed: "an entry for this run" }];
  const out = [];
  const want = {
    content_sha256: record.content_sha256,
    file_sha256: fileSha,
    run_id: computedContent.run_id,
    kind: computedContent.kind,
    fixture_sha256: computedContent.fixture_sha256,
    fixture_id: computedContent.instance_id,
  };
  for (const [key, value] of Object.entries(want)) {
    if (key in entry && entry[key] !== value) out.push({ field: `index entry.${key}`, published: entry[key], computed: value });
  }
  for (const key of ["content_sha256", "file_sha256"]) {
    if (!(key in entry)) out.push({ field: `index entry.${key}`, published: "(absent)", computed: want[key] });
  }
  return out;
}

/** Problems of a record's engine facts against the bundle that ran: [{field, published, computed}]. */
export function engineProblems(content, info) {
  const engine = content?.engine || {};
  const want = {
    "content.engine.bundle_sha256": [engine.bundle_sha256, info.bundle_sha256],
    "content.engine.manifest_sha256": [engine.manifest_sha256, info.manifest_sha256],
    "content.engine.engine_version": [engine.engine_version, info.engine_version],
    "content.engine.pyodide_version": [engine.pyodide_version, info.pyodide_version],
    "content.engine.python_version": [engine.python_version, info.python_version],
    "content.execution_path": [content?.execution_path, COMPILED_PATH],
  };
  return Object.entries(want).filter(([, [a, b]]) => a !== b)
    .map(([field, [published, computed]]) => ({ field, published: published ?? "(absent)", computed }));
}

// ---- what a page shows ----

const SHOWN_BY_CODE_POINT = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

/** builders/site/escape.py `visible`: invisible and bidi characters as ⟨U+XXXX⟩. */
export function visible(text) {
  return String(text).replace(SHOWN_BY_CODE_POINT, (c) => (c === "\n" || c === "\t" || c === "\r"
    ? c : `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`));
}

/** builders/site/pages.py `compact`: sorted keys, ", " and ": " separators. */
export function compact(value) {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(compact).join(", ")}]`;
  const keys = Object.keys(value).sort(byCodePoint);
  return `{${keys.map((k) => `${JSON.stringify(k)}: ${compact(value[k])}`).join(", ")}}`;
}

/** Integer cents as "1,234.56" (fmt.money); null as an em dash. */
export function money(cents) {
  if (cents === null || cents === undefined) return "—";
  if (!Number.isSafeInteger(cents)) return text(cents);
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const units = Math.floor(abs / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${sign}${units}.${String(abs % 100).padStart(2, "0")}`;
}

function text(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number") return String(value);
  return compact(value);
}

// Python's truth value and dict test, so both sides read a value alike.
const isDict = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const truthy = (v) => (Array.isArray(v) ? v.length > 0 : isDict(v) ? Object.keys(v).length > 0 : Boolean(v));

function fixtureLabel(f) {
  if (!isDict(f) || !Object.keys(f).length) return "—";
  if ("episode" in f) return [f.episode, f.mutation].filter(truthy).map(text).join(" · ");
  if ("family" in f) {
    const policy = "policy" in f ? text(f.policy) : "";
    return `${text(f.family)} seed ${text(f.seed ?? null)} · ${policy}`.replace(/[ ·]+$/, "");
  }
  return Object.keys(f).filter((k) => k !== "kind").sort(byCodePoint).map((k) => `${k}=${text(f[k])}`).join(", ");
}

/** Python's shlex.quote. */
function shellQuote(s) {
  if (!s) return "''";
  if (!/[^A-Za-z0-9_@%+=:,./-]/.test(s)) return s;
  return `'${s.replace(/'/g, `'"'"'`)}'`;
}

// A receipt's payload in words (fmt.py `_payload`; the key sets are fmt.MONEY_KEYS and MONEY_DAY_KEYS).
const PAYLOAD_MONEY_KEYS = new Set(["all_in_cost", "amount", "capacity", "capacity_before", "cash", "coupon", "funded",
  "funding_cost_to_date", "haircut", "headroom", "interest", "margin_returned", "max_notional", "notional",
  "peak_usage", "principal", "reference_all_in_cost", "remaining", "treasury_charge", "unfunded", "usage", "used"]);
const PAYLOAD_MONEY_DAY_KEYS = new Set(["tail_cent_days", "realized_tail", "unfunded_tail", "reference_realized_tail"]);
const HASH64 = /^[0-9a-f]{64}$/;

function payloadValue(key, v) {
  if (Number.isInteger(v)) {
    if (PAYLOAD_MONEY_KEYS.has(key)) return money(v);
    if (PAYLOAD_MONEY_DAY_KEYS.has(key)) return `${money(v)} money-days`;
    return String(v);
  }
  if (typeof v === "string" && HASH64.test(v)) return `${v.slice(0, 12)}…`;
  return text(v);
}

export function payloadText(value) {
  const leaves = [];
  const stack = [["", "", value, null]];
  while (stack.length) {
    const [parent, name, v, key] = stack.pop();
    const label = parent && name && !name.startsWith("[") ? `${parent}.${name}` : parent + name;
    if (isDict(v) && Object.keys(v).length) {
      for (const k of Object.keys(v).sort(byCodePoint).reverse()) stack.push([label, k, v[k], k]);
    } else if (Array.isArray(v) && v.some((x) => x !== null && typeof x === "object")) {
      for (let i = v.length - 1; i >= 0; i -= 1) stack.push([label, `[${i + 1}]`, v[i], key]);
    } else {
      const shown = (isDict(v) || Array.isArray(v)) && !truthy(v) ? "none"
        : Array.isArray(v) ? v.map((x) => payloadValue(null, x)).join(", ") : payloadValue(key, v);
      leaves.push([parent, name ? `${name} ${shown}` : shown]);
    }
  }
  const parts = [];
  leaves.forEach(([parent, field], i) => {
    if (parent && i && leaves[i - 1][0] === parent) parts[parts.length - 1] += ` · ${field}`;
    else parts.push(parent ? `${parent}: ${field}` : field);
  });
  return parts.length ? parts.join("; ") : "—";
}

const FORMATS = {
  text,
  money,
  money_days: (v) => (Number.isInteger(v) ? `${money(v)} money-days` : text(v)),
  short: (v) => (typeof v === "string" && v ? Array.from(v).slice(0, 12).join("") : "—"),
  score: (v) => (isDict(v) ? `${text(v.points)}/${text(v.denominator)}` : "no score"),
  points: (v) => (isDict(v) ? `${text(v.points)}/${text(v.max)}` : text(v)),
  verdict: (v) => (v === null || v === undefined ? "no verdict" : text(v)),
  passed: (v) => (v === true ? "passed" : "did not pass"),
  json: (v) => (v === undefined ? "null" : compact(v)),
  list: (v) => (Array.isArray(v) && v.length ? v.map(text).join(", ") : "none"),
  report: (d) => `${text(isDict(d) ? d.report_matched : null)}/${text(isDict(d) ? d.report_fields : null)}`,
  decision: (x) => {
    const d = isDict(x) ? x : {};
    return `${text(d.action)} ${text(d.type)} ${text(d.decision)}${truthy(d.reason) ? ` (${text(d.reason)})` : ""}`;
  },
  fixture: fixtureLabel,
  count: (v) => String(Array.isArray(v) ? v.length : 0),
  expectation: (e) => {
    if (!isDict(e) || !Object.keys(e).length) return "—";
    return Object.keys(e).sort(byCodePoint).map((key) => {
      const v = e[key];
      if (key === "refusal" && isDict(v)) return `refuses ${text(v.action)} on day ${text(v.day)} (${text(v.reason)})`;
      if (key === "failed_gates" && Array.isArray(v)) return `fails ${v.map(text).join(", ")}`;
      return `${key} ${text(v)}`;
    }).join("; ");
  },
  command: (c) => {
    const d = isDict(c) ? c : {};
    const env = isDict(d.env) ? d.env : {};
    const parts = Object.keys(env).sort(byCodePoint).map((k) => `${k}=${text(env[k])}`);
    if (Array.isArray(d.argv) && d.argv.length) parts.push(d.argv.map((a) => shellQuote(typeof a === "string" ? a : text(a))).join(" "));
    return parts.join(" ");
  },
  gate_detail: (v) => (typeof v === "string" ? gateDetail(v) : text(v)),
  payload: payloadText,
};

// ---- attempt pages and the pages built over many records (fmt.py, the same names) ----

const whole = (v) => (Number.isInteger(v) ? v : null);
const group = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
const dict = (v) => (isDict(v) ? v : {});

/** fmt.count: an integer with thousands separators. */
export function count(n) {
  return Number.isInteger(n) ? group(n) : n === null || n === undefined ? "—" : text(n);
}

/** fmt.usd: integer micro-USD as dollars, cents always, sub-cent digits when there are any. */
export function usd(amount) {
  if (!Number.isInteger(amount)) return "—";
  const sign = amount < 0 ? "-" : "";
  const abs = BigInt(Math.abs(amount));
  const digits = String(abs % 1000000n).padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${sign}$${group(abs / 1000000n)}.${digits}`;
}

/** fmt.duration: "850 ms", or seconds to a tenth rounded half up in integers. */
export function duration(ms) {
  if (!Number.isInteger(ms)) return "—";
  if (ms < 1000) return `${ms} ms`;
  const tenths = (BigInt(ms) + 50n) / 100n;
  return `${group(tenths / 10n)}.${tenths % 10n} s`;
}

/** fmt.per_call: total / calls rounded half up in integers, or null. */
function perCall(total, calls) {
  if (!Number.isInteger(total) || !Number.isInteger(calls) || calls <= 0 || total < 0) return null;
  return Number((2n * BigInt(total) + BigInt(calls)) / (2n * BigInt(calls)));
}

/** fmt.cost_texts: [the Attempts table's cost, the transcript page's cost line]. */
export function costTexts(content) {
  const model = dict(dict(content).model);
  const cost = dict(dict(content).cost);
  const local = model.provider === "llama-cpp";
  let money = usd(cost.micro_usd) + (local ? " (local)" : "");
  if (whole(cost.unresolved_micro_usd)) money += ` + ${usd(cost.unresolved_micro_usd)} unresolved`;
  const [calls, cpu, tIn, tOut] = [cost.calls, cost.cpu_ms, cost.tokens_in, cost.tokens_out].map(whole);
  const short = [money];
  const detail = [money + (local ? ": a model run on this host, no charge" : "")];
  if (calls !== null) detail.push(`${count(calls)} model call${calls !== 1 ? "s" : ""}`);
  if (cpu !== null) {
    short.push(`CPU ${duration(cpu)}`);
    const per = perCall(cpu, calls);
    detail.push(`CPU ${duration(cpu)} in total` + (per !== null ? `, ${duration(per)} per call` : ""));
  }
  if (tIn !== null && tOut !== null) {
    short.push(`${count(tIn)} / ${count(tOut)} tokens`);
    const perIn = perCall(tIn, calls);
    detail.push(`tokens ${count(tIn)} in and ${count(tOut)} out in total`
      + (perIn !== null ? `, ${count(perIn)} in and ${count(perCall(tOut, calls))} out per call` : ""));
  }
  return [short.join(" · "), detail.join(" · ")];
}

/** fmt.inspect_usage: the tokens an Inspect log reports, summed over its models. */
export function inspectUsage(content) {
  const usage = dict(dict(content).inspect).usage;
  const out = { tokens_in: 0, tokens_out: 0 };
  for (const perModel of isDict(usage) ? Object.values(usage) : []) {
    out.tokens_in += whole(dict(perModel).input_tokens) || 0;
    out.tokens_out += whole(dict(perModel).output_tokens) || 0;
  }
  return out;
}

function inspectCost(content) {
  const u = inspectUsage(content);
  return `not in fundbook's ledger (Inspect made these calls, not fundbook) · Inspect logged ${count(u.tokens_in)} tokens in and ${count(u.tokens_out)} out, copied as provenance`;
}

function inspectEnd(limit) {
  if (isDict(limit) && Object.keys(limit).length) return `Inspect's ${text(limit.type ?? null)} limit: ${text(limit.reason ?? null)}`;
  return "the model stopped; the desk closed the remaining checkpoints";
}

function endReason(term) {
  const t = dict(term);
  return text([t.reason, t.limit].find((v) => truthy(v)) ?? "—");
}

function modelName(m) {
  const d = dict(m);
  return `${"provider" in d ? text(d.provider) : "?"}:${"id" in d ? text(d.id) : "?"}`;
}

/** A decimal string at `places` decimals, exactly as builders/site/fmt.py decimal() writes it: "half-even",
 * "floor" (a lower bound, rounded outwards) or "ceiling" (an upper one); thousands grouped with ",". Anything
 * that is not a decimal string is returned as it is. */
export function roundDecimal(value, places, mode = "half-even") {
  const m = /^(-?)([0-9]{1,30})(?:\.([0-9]{1,30}))?$/.exec(String(value));
  if (!m) return String(value);
  const neg = m[1] === "-";
  const frac = (m[3] || "").padEnd(places + 1, "0");
  let units = BigInt(m[2] + frac.slice(0, places));          // |value| in units of 10^-places, truncated
  const rest = frac.slice(places);                            // the digits dropped
  const dropped = /[1-9]/.test(rest);
  const half = rest[0] > "5" || (rest[0] === "5" && /[1-9]/.test(rest.slice(1)));
  const tie = rest[0] === "5" && !/[1-9]/.test(rest.slice(1));
  let up = false;
  if (mode === "floor") up = neg && dropped;
  else if (mode === "ceiling") up = !neg && dropped;
  else up = half || (tie && units % 2n === 1n);
  if (up) units += 1n;
  const digits = units.toString().padStart(places + 1, "0");
  const whole = digits.slice(0, digits.length - places).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const sign = neg && units !== 0n ? "-" : "";
  return sign + whole + (places ? "." + digits.slice(digits.length - places) : "");
}

Object.assign(FORMATS, {
  decimal2: (v) => (typeof v === "string" ? roundDecimal(v, 2) : text(v)),
  duration,
  usd,
  number: (v) => (Number.isInteger(v) ? count(v) : text(v)),
  points100: (v) => `${text(v)}/100`,
  world: (v) => fixtureLabel(isDict(v) ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== "policy")) : null),
  model: modelName,
  date: (v) => (typeof v === "string" && v ? Array.from(v).slice(0, 10).join("") : "undated"),
  try: (v) => {
    const m = typeof v === "string" ? /\.([2-9][0-9]*)$/.exec(v) : null;
    return `try ${m ? m[1].replace(/^0+/, "") : 1}`;
  },
  hms: (ms) => {
    if (!Number.isInteger(ms)) return text(ms);
    const s = BigInt(ms < 0 ? -ms : ms) / 1000n;
    const two = (n) => String(n).padStart(2, "0");
    return `${ms < 0 ? "-" : ""}${s / 3600n}:${two((s % 3600n) / 60n)}:${two(s % 60n)}`;
  },
  cost: (c) => costTexts(c)[1],
  inspect_cost: inspectCost,
  inspect_end: inspectEnd,
  end_reason: endReason,
});

// ---- verifiable regions (builders/site/marks.py) ----

// Any digit, or a word records use for a status, a verdict, a gate or a decision: inside a verifiable region
// such text must be a mark (marks.py FIGURE_PATTERN is the same pattern).
export const FIGURE_PATTERN = String.raw`\d|(?<![A-Za-z0-9_])(?:NOT_QUALIFIED|QUALIFIED|SCORED|MALFORMED|UNSCORABLE|ACCEPTED|REFUSED|REJECTED|supported|inconclusive|passed|failed|completed|interrupted|recovered)(?![A-Za-z0-9_])`;
const FIGURE = new RegExp(FIGURE_PATTERN.replace("\\d", "\\p{Nd}"), "u");

/** Whether `text` holds a figure (a digit or a status or verdict word). */
export function holdsFigure(value) {
  return FIGURE.test(String(value));
}

/** Problems of the text a page's regions show outside any mark: [{region, text}] -> [{field, published, computed}]. */
export function unmarkedProblems(segments) {
  return segments.filter(({ text: t }) => holdsFigure(t)).map(({ region, text: t }) => ({
    field: `page: region ${region}`, published: String(t).split(/\s+/).join(" ").trim().slice(0, 120),
    computed: "(a figure outside a mark: not in the record)" }));
}

/** The text a figure of this format shows for `value` (fmt.figure_text, after escape.visible). */
export function figureText(value, format) {
  const f = FORMATS[format];
  if (!f) throw new Error(`unknown figure format ${format}`);
  return visible(f(value));
}

/** "content/days/3/cash" -> ["content", "days", "3", "cash"] (figures.py `path_attr`). */
export function parsePath(attr) {
  return String(attr).split("/").map((s) => decodeURIComponent(s));
}

/** The value at a figure path in {content, record, entry, index, receipts}; null where it leaves
 * the record (figures.py `resolve` reads it alike). Digit segments index lists. */
export function resolve(roots, path) {
  let value = roots;
  for (const part of path.map(String)) {
    if (isDict(value) && Object.hasOwn(value, part)) value = value[part];
    else if (Array.isArray(value) && /^\d+$/.test(part) && Number(part) < value.length) value = value[Number(part)];
    else return null;
  }
  return value;
}

export function pathText(path) {
  return path.map(String).map((p, i) => (/^\d+$/.test(p) && i ? `[${p}]` : i ? `.${p}` : p)).join("");
}

const pathKey = (path) => JSON.stringify(path.map(String));

/** The figures a run page must show (so a removed mark cannot hide an edited figure). */
export function requiredPaths(content) {
  const out = [["content", "status"], ["content", "verdict"], ["content", "score"]];
  (content.gates || []).forEach((_, i) => out.push(["content", "gates", i, "gate"], ["content", "gates", i, "passed"]));
  for (const name of Object.keys(content.score?.components || {})) out.push(["content", "score", "components", name]);
  (content.days || []).forEach((d, i) => {
    out.push(["content", "days", i, "cash"]);
    (d.decisions || []).forEach((_, j) => out.push(["content", "days", i, "decisions", j]));
  });
  for (const key of Object.keys(content.economics || {})) out.push(["content", "economics", key]);
  if (content.expected !== null && content.expected !== undefined) out.push(["content", "passed"]);
  return out;
}

/** The figures a register row must show. */
export function requiredRowPaths() {
  return [["content", "status"], ["content", "verdict"], ["content", "score"]];
}

/**
 * Compare figures [{path, format, shown}] with roots; `required` paths must each be
 * among them. Returns [{field, published, computed}] where `published` is what
 * the page shows and `computed` what the verified record gives.
 */
export function figureProblems(figures, roots, required = []) {
  const out = [];
  const seen = new Set();
  for (const { path, format, shown } of figures) {
    seen.add(pathKey(path));
    let want;
    try {
      want = figureText(resolve(roots, path), format);
    } catch (error) {
      want = `(${error.message})`;
    }
    if (shown !== want) out.push({ field: `page: ${pathText(path)}`, published: shown, computed: want });
  }
  for (const path of required) {
    if (!seen.has(pathKey(path))) {
      out.push({ field: `page: ${pathText(path)}`, published: "(not shown)", computed: figureText(resolve(roots, path), "json").slice(0, 300) });
    }
  }
  return out;
}

// ---- the run page charts (builders/site/charts.py builds the same rows) ----

export function cashRows(days) {
  return (days || []).filter((d) => d.cash !== null && d.cash !== undefined).map((d) => ({ day: d.day, cash: d.cash / 100 }));
}

export function fundingRows(days) {
  const rows = [];
  for (const d of days || []) {
    const counts = new Map();
    for (const x of d.decisions || []) {
      const key = JSON.stringify([x.type || "?", x.decision || "?"]);
      counts.set(key, (counts.get(key) || 0) + 1);
    }
    // sorted by (type, decision), as Python sorts the tuples
    const keys = [...counts.keys()].map((k) => JSON.parse(k))
      .sort((a, b) => byCodePoint(a[0], b[0]) || byCodePoint(a[1], b[1]));
    for (const [kind, decision] of keys) {
      rows.push({ day: d.day, action: `${kind} ${String(decision).toLowerCase()}`,
        count: counts.get(JSON.stringify([kind, decision])) });
    }
  }
  if (!rows.length) return (days || []).map((d) => ({ day: d.day, action: "no actions", count: 0 }));
  return rows;
}

/** Problems of a chart's data rows against the rows the verified days give. */
export function chartProblems(id, values, days) {
  const want = id === "cash" ? cashRows(days) : id === "funding" ? fundingRows(days) : null;
  if (!want) return [{ field: `page: chart ${id}`, published: "(unknown chart)", computed: "cash or funding" }];
  const a = compact(values);
  const b = compact(want);
  return a === b ? [] : [{ field: `page: chart ${id} data`, published: a.slice(0, 300), computed: b.slice(0, 300) }];
}
