// How the engine's answers read to a person: money formatted, tails in
// money-days, rates as percentages, and the amounts inside refusal messages
// formatted by the phrase around them. Records and the JSON views keep the
// engine's integers. Plain module (no DOM) so Node can test it too.
import { bps, money, moneyDays } from "./money.js";

// The amounts inside the engine's refusal messages, by the phrase around
// them: everything else in a message (days, tenors, ids) is left as it is.
// A message no phrase matches is shown unchanged.
const MONEY_PHRASES = [
  /(?<=: )(-?\d+)(?= already pledged\b)/g,
  /(?<=, )(\d+)(?= more exceeds the notional )/g,
  /(?<=exceeds the notional )(\d+)\b/g,
  /(?<=\bhas )(-?\d+)(?= left, )/g,
  /(?<= left, )(\d+)(?= asked\b)/g,
  /(?<=\bpeak usage )(\d+)(?= over days )/g,
  /(?<= \+ )(\d+)(?= exceeds capacity )/g,
  /(?<=exceeds capacity )(\d+)\b/g,
  /(?<=capacity authority of )(\d+)(?= is too small for )/g,
  /(?<= is too small for )(\d+)(?= over capacity\b)/g,
  /(?<=\bwould be )(-?\d+)(?=, under the )/g,
  /(?<=, under the buffer )(\d+)\b/g,
];

/** An engine message with its money amounts formatted ("has 12345 left" -> "has 123.45 left"). */
export function moneyText(message) {
  if (typeof message !== "string") return message ?? "";
  return MONEY_PHRASES.reduce((text, re) => text.replace(re, (n) => money(Number(n))), message);
}

// The sources state amounts in integer cents ("notional 800000000 cents");
// shown as every other amount on the desk. Rates stay in bps, as everywhere.
const SOURCE_CENTS = /\b(\d{1,15}) cents\b/g;

/** A source's text as the desk shows it: amounts in cents as money. */
export function sourceText(text) {
  return typeof text === "string" ? text.replace(SOURCE_CENTS, (_, n) => money(Number(n))) : text;
}

// A gate's detail names the report figures it faults in the engine's integers;
// these two phrases read as money and money-days (fmt._gate_detail is the same
// rewrite, for the published pages: ASCII, at most 15 digits, exact here too).
const DETAIL_MONEY = /\b(cash|assets\.[A-Za-z0-9_]+\.(?:funded|unfunded)) (-?[0-9]{1,15}) vs (-?[0-9]{1,15}) \(/g;
const DETAIL_TAIL = /\btail_cent_days (-?[0-9]{1,15}) < ([0-9]{1,15}) cent-days\b/g;

/** A gate's detail as a person reads it ("day 1 cash 740000000 vs ..." -> "day 1 cash 7,400,000.00 vs ..."). */
export function gateDetail(detail) {
  return detail
    .replace(DETAIL_MONEY, (_, field, got, want) => `${field} ${money(Number(got))} vs ${money(Number(want))} (`)
    .replace(DETAIL_TAIL, (_, got, want) => `tail ${moneyDays(Number(got))} < ${moneyDays(Number(want))} money-days`);
}

// Keys whose integer values are money, money-days (cent-days) or rates, in
// tool outputs and score bases.
const MONEY_KEYS = new Set(["all_in_cost", "interest", "reference_all_in_cost", "treasury_charge", "cash", "notional",
  "principal", "haircut", "capacity", "peak_usage", "usage", "headroom", "max_notional", "remaining", "used", "funded",
  "unfunded", "funding_cost_to_date"]);
const MONEY_DAY_KEYS = new Set(["tail_cent_days", "realized_tail", "unfunded_tail", "reference_realized_tail"]);

/** How a person reads the value of `key`: money, money-days, a rate or as it is. */
export function readable(key, value) {
  if (!Number.isSafeInteger(value)) return value === null || value === undefined ? "none" : String(value);
  if (MONEY_KEYS.has(key)) return money(value);
  if (MONEY_DAY_KEYS.has(key)) return `${moneyDays(value)} money-days`;
  if (key.endsWith("_bps")) return bps(value);
  return String(value);
}

/** A key as words: "tail_cent_days" -> "tail", "maturity_gap_days" -> "maturity gap (days)". */
export function label(key) {
  if (MONEY_DAY_KEYS.has(key)) return key.replace(/_cent_days$/, "").replaceAll("_", " ");
  if (key.endsWith("_days") && key !== "calendar_days") return `${key.slice(0, -5).replaceAll("_", " ")} (days)`;
  if (key.endsWith("_bps")) return key.slice(0, -4).replaceAll("_", " ");
  return key.replaceAll("_", " ");
}

// A score component's basis as a person reads it: "all in cost 64,088.06; ...".
export function basis(component) {
  return Object.keys(component).filter((k) => k !== "points" && k !== "max").sort()
    .map((k) => `${label(k)} ${readable(k, component[k])}`).join("; ");
}

// What a dry run expects of today's actions, each with its reason and message.
// When the engine would reject the whole batch (an id the desk has not been
// shown, a bad shape), the projection says so with the engine's own message.
export function expected(decisions, rejected) {
  if (rejected) return `The desk would reject this whole batch (nothing in it would count): ${moneyText(rejected)}.`;
  const notAccepted = decisions.filter((d) => d.decision !== "ACCEPTED");
  if (!notAccepted.length) return decisions.length ? "Every action would be accepted." : "No actions: the report is the book as it stands.";
  return "It expects " + notAccepted.map((d) => [d.action ?? "(an action without an id)", d.decision, d.reason]
    .filter(Boolean).join(" ") + (d.message ? ` (${moneyText(d.message)})` : "")).join("; ") + ".";
}
