// The day's packet as the desk shows it: money as money, every rate in bps,
// sources with their amounts as money, the haircut that actually applies to
// each position (the larger of the quote's and the position's minimum, as the
// engine takes it) and which trades fund each position. Everything here is
// read from the packet alone.
import { authorityAmount } from "./compose.js";
import { bps, h, money, table } from "./dom.js";
import { moneyText, sourceText } from "./readable.js";

const FUNDING = new Set(["live", "scheduled"]); // trades that fund, or will fund, a position

/** The haircut a FUND of `asset` from `quote` is made at (engine _book: max(quote, asset minimum)). */
export function appliedHaircut(quote, asset) {
  return Math.max(quote.haircut_bps, asset.haircut_floor_bps);
}

/** The positions a quote may fund today (eligible kind, not exited), each with its applied haircut. */
export function haircutsFor(quote, assets) {
  return assets.filter((a) => a.status !== "exited" && quote.eligible_kinds.includes(a.kind))
    .map((a) => ({ asset: a.id, bps: appliedHaircut(quote, a), floor: a.haircut_floor_bps > quote.haircut_bps }));
}

/** "FT001 CP1 15,000,000.00 to day 9 (live)" for each live or scheduled trade on the asset; "—" for none. */
export function fundedBy(asset, trades) {
  const mine = trades.filter((t) => t.asset === asset.id && FUNDING.has(t.status));
  if (!mine.length) return asset.status === "exited" ? "—" : "nothing";
  return mine.map((t) => `${t.id} ${t.counterparty} ${money(t.notional)} day ${t.start}→${t.maturity} (${t.status})`).join("; ");
}

function receiptSummary(r) {
  const p = r.payload || {};
  if (r.kind === "ACTION") return `${p.type} ${p.decision}${p.reason ? " " + p.reason : ""}${p.message ? ": " + moneyText(p.message) : ""}`;
  if (r.kind === "CLOSE") return `close (${p.phase}), cash ${money(p.cash)}`;
  if (r.kind === "BATCH") return `batch for day ${p.batch?.day}, ${p.batch?.actions?.length ?? 0} action(s)`;
  return JSON.stringify(p).slice(0, 160);
}

export function receiptsTable(caption, receipts) {
  return table(caption, ["seq", "day", "kind", "what", "hash"],
    receipts.map((r) => [String(r.seq), String(r.day), r.kind, receiptSummary(r), h("code", { title: r.hash }, r.hash.slice(0, 12))]));
}

function dl(pairs) {
  return h("dl", { class: "fb-facts" }, pairs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

/**
 * The packet section. `opts.receipts`: show the earlier receipts (the study
 * mode does not: the model worker's prompt carries their count, not them);
 * `opts.onUse(affordance)`: a source opened ("sources").
 */
export function renderPacket(p, opts = {}) {
  const buffer = p.desk.min_buffer;
  const onUse = opts.onUse || (() => {});
  const sources = p.sources.length ? p.sources.map((s) => {
    const box = h("details", { class: "fb-source" }, h("summary", {}, `${s.id} · day ${s.published_day} · ${s.title}`),
      h("p", {}, sourceText(s.text)));
    box.addEventListener("toggle", () => box.open && onUse("sources"));
    return box;
  }) : h("p", {}, "No source published yet.");
  return h("section", { class: "fb-packet", "aria-labelledby": "fb-day-h", "data-day": p.day },
    h("h2", { id: "fb-day-h", tabindex: "-1" }, `Day ${p.day} of ${p.horizon}`),
    dl([["Cash", money(p.cash)], ["Minimum cash buffer", money(buffer)], ["Cash above the buffer", money(p.cash - buffer)],
      ["Funding cost to date", money(p.funding_cost_to_date)], ["Maximum tenor", `${p.desk.max_tenor} days`],
      ["Treasury rate (unfunded cash)", bps(p.desk.treasury_rate_bps)], ["Carry horizon ends", `day ${p.carry_end}`]]),
    table("Positions", ["id", "name", "kind", "rating", "notional", "coupon", "minimum haircut", "settles", "exits", "title status", "funded by"],
      p.assets.map((a) => [a.id, a.name, a.kind, a.rating, money(a.notional), bps(a.coupon_bps), bps(a.haircut_floor_bps),
        `day ${a.settle_day}`, `day ${a.exit_day}`, a.status, h("span", { class: "fb-funded-by" }, fundedBy(a, p.trades))]),
      { class: "fb-positions" }),
    table("Funding trades", ["id", "asset", "counterparty", "quote", "notional", "principal", "rate", "haircut", "start", "maturity", "status"],
      p.trades.map((t) => [t.id, t.asset, t.counterparty, t.quote, money(t.notional), money(t.principal), bps(t.rate_bps), bps(t.haircut_bps), `day ${t.start}`, `day ${t.maturity}`, t.status])),
    table("Today's quotes", ["id", "counterparty", "rate", "quoted haircut", "haircut that applies", "start", "tenor", "valid through", "max notional", "used", "eligible"],
      p.quotes.map((q) => [q.id, q.counterparty, bps(q.rate_bps), bps(q.haircut_bps),
        h("span", { class: "fb-applied" }, haircutsFor(q, p.assets).map((x) => `${x.asset} ${bps(x.bps)}${x.floor ? " (its minimum)" : ""}`).join("; ") || "—"),
        `day ${q.start_day}`, `${q.tenor} days`, `day ${q.valid_through}`, money(q.max_notional), money(q.used), q.eligible_kinds.join(", ")]),
      { class: "fb-quotes" }),
    h("p", { class: "fb-hint" }, "A FUND is made at the larger of the quote's haircut and the position's minimum haircut: " +
      "the start brings in the notional less that haircut. Rates and haircuts are in basis points a year (100 bps = 1 %)."),
    table("Limits and usage", ["counterparty", "name", "capacity", "usage", "headroom", "eligible"],
      p.counterparties.map((c) => [c.id, c.name, money(c.capacity), money(c.usage), money(c.headroom), c.eligible_kinds.join(", ")])),
    table("Approvals", ["id", "kind", "amount", "counterparty", "requested", "status", "resolved", "expires"],
      p.approvals.map((a) => [a.id, a.kind, authorityAmount(a.kind, a.amount), a.counterparty ?? "", `day ${a.requested_day}`, a.status, a.resolved_day ? `day ${a.resolved_day}` : "", a.expires ? `day ${a.expires}` : ""])),
    table("Breaches", ["day", "code"], p.breaches.map((b) => [String(b.day), b.code])),
    h("h3", {}, `Sources (${p.sources.length})`), sources,
    opts.receipts === false
      ? h("p", { class: "fb-hint" }, `Receipts so far: ${p.receipts.length} (their count, as the model worker gets it).`)
      : h("details", { class: "fb-receipts" }, h("summary", {}, `Earlier receipts (${p.receipts.length})`),
        receiptsTable("Receipts of earlier days", p.receipts)));
}
