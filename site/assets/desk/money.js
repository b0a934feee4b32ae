// Money as a person reads and types it; integer cents as the engine keeps it.
// Every conversion is string and integer arithmetic: no float ever holds an
// amount. Plain module (no DOM) so Node can test it too.

/** Integer cents as grouped money: 123456 -> "1,234.56", -5 -> "-0.05". */
export function money(cents) {
  if (typeof cents !== "number" || !Number.isSafeInteger(cents)) return String(cents);
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const units = Math.floor(abs / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${sign}${units}.${String(abs % 100).padStart(2, "0")}`;
}

/** A tail in cent-days as money-days (amount x days): 56600000000 -> "566,000,000.00". */
export const moneyDays = money;

/** A rate as the desk shows every rate (coupons, funding rates, haircuts, the
 * engine's messages and the sources all speak basis points): 450 -> "450 bps",
 * 1200 -> "1,200 bps". 100 bps is 1 %. */
export function bps(value) {
  if (!Number.isSafeInteger(value)) return String(value);
  return `${String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",")} bps`;
}

const AMOUNT = /^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d*))?$/;

/**
 * Money typed by a person -> integer cents, exactly: "8,000,000.00", "8000000"
 * and "8,000,000.5" are 800000000, 800000000 and 800000050. Commas group
 * thousands (in threes) or are left out; at most two decimals.
 * `sign`: "positive" (more than zero; the default, for amounts a desk asks
 * for), "nonnegative" (zero allowed) or "any" (a reported cash balance).
 * Throws an Error naming `label` and what was expected.
 */
export function parseMoney(text, label, sign = "positive") {
  const raw = String(text ?? "").trim();
  if (!raw) throw new Error(`${label}: required (an amount such as 1,250,000.00)`);
  const negative = raw.startsWith("-");
  const body = raw.replace(/^[-+]/, "");
  const m = AMOUNT.exec(body);
  if (!m) {
    throw new Error(`${label}: "${raw}" is not an amount (digits, commas between thousands, at most two decimals: 1,250,000.00)`);
  }
  const frac = m[2] ?? "";
  if (frac.length > 2) throw new Error(`${label}: "${raw}" has ${frac.length} decimals; amounts are in cents (two decimals at most)`);
  const digits = (m[1].replaceAll(",", "") + frac.padEnd(2, "0")).replace(/^0+(?=\d)/, "");
  if (BigInt(digits) > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${label}: ${raw} is too large`);
  const cents = Number(digits) * (negative ? -1 : 1) || 0; // a safe integer: exact; "-0" reads as 0
  if (sign !== "any" && cents < 0) throw new Error(`${label}: ${raw} is negative; an amount must be ${sign === "positive" ? "more than zero" : "zero or more"}`);
  if (sign === "positive" && cents === 0) throw new Error(`${label}: must be more than zero (an action on a zero amount does nothing)`);
  return cents;
}

/** Whole days or another count typed by a person; "positive" or "nonnegative". */
export function parseCount(text, label, sign = "nonnegative") {
  const raw = String(text ?? "").trim();
  const clean = raw.replace(/[,_\s]/g, "");
  if (!/^-?\d+$/.test(clean)) throw new Error(`${label}: expected a whole number, got "${raw}"`);
  const value = Number(clean);
  if (!Number.isSafeInteger(value)) throw new Error(`${label}: ${raw} is too large`);
  if (value < 0) throw new Error(`${label}: ${raw} is negative; expected ${sign === "positive" ? "more than zero" : "zero or more"}`);
  if (sign === "positive" && value === 0) throw new Error(`${label}: must be more than zero`);
  return value;
}
