// builders/site/intervals.py in the reader's browser: the leaderboard's Wilson interval for the qualified rate and
// Student-t interval for the mean score, in exact rational arithmetic (BigInt), so the same digits come out as the
// build's (tests/site/test_board_js.py holds the two equal on many inputs).

const T_975 = { 1: "12.707", 2: "4.303", 3: "3.183", 4: "2.777", 5: "2.571", 6: "2.447", 7: "2.365", 8: "2.307",
  9: "2.263", 10: "2.229", 11: "2.201", 12: "2.179", 13: "2.161", 14: "2.145", 15: "2.132", 16: "2.120",
  17: "2.110", 18: "2.101", 19: "2.094", 20: "2.086", 21: "2.080", 22: "2.074", 23: "2.069", 24: "2.064",
  25: "2.060", 26: "2.056", 27: "2.052", 28: "2.049", 29: "2.046", 30: "2.043", 40: "2.022", 50: "2.009",
  60: "2.001", 80: "1.991", 100: "1.984", 120: "1.980", 200: "1.972", 500: "1.965", 1000: "1.963" };

// a rational is [numerator, denominator], denominator > 0
const q = (n, d = 1n) => (d < 0n ? [-BigInt(n), -BigInt(d)] : [BigInt(n), BigInt(d)]);
const add = (a, b) => q(a[0] * b[1] + b[0] * a[1], a[1] * b[1]);
const sub = (a, b) => q(a[0] * b[1] - b[0] * a[1], a[1] * b[1]);
const mul = (a, b) => q(a[0] * b[0], a[1] * b[1]);
const div = (a, b) => q(a[0] * b[1], a[1] * b[0]);
const cmp = (a, b) => { const x = a[0] * b[1], y = b[0] * a[1]; return x < y ? -1 : x > y ? 1 : 0; };
const floorDiv = (n, d) => { const r = n / d; return (n % d !== 0n && (n < 0n) !== (d < 0n)) ? r - 1n : r; };

function isqrt(n) {
  if (n < 0n) throw new Error("isqrt of a negative number");
  if (n < 2n) return n;
  const approx = Math.sqrt(Number(n));
  let x = Number.isFinite(approx) ? BigInt(Math.floor(approx)) + 1n : 1n << BigInt(n.toString(2).length);
  for (;;) {
    const y = (x + n / x) / 2n;
    if (y >= x) break;
    x = y;
  }
  while (x * x > n) x -= 1n;
  while ((x + 1n) * (x + 1n) <= n) x += 1n;
  return x;
}

function decimal(text) {
  const [whole, frac = ""] = text.split(".");
  return q(BigInt(whole + frac), 10n ** BigInt(frac.length));
}

function t975(df) {
  const key = Math.max(...Object.keys(T_975).map(Number).filter((k) => k <= df));
  return decimal(T_975[key]);
}

/** floor(a - sqrt(b2)) exactly, for b2 >= 0 (intervals.py _floor_minus_sqrt). */
function floorMinusSqrt(a, b2) {
  let m = floorDiv(a[0], a[1]) - isqrt(floorDiv(b2[0], b2[1])) - 2n;
  for (;;) {
    const d = sub(a, q(m + 1n));
    if (cmp(d, q(0n)) >= 0 && cmp(mul(d, d), b2) >= 0) m += 1n;
    else return m;
  }
}

/** ceil(a + sqrt(b2)) exactly, for b2 >= 0 (intervals.py _ceil_plus_sqrt). */
function ceilPlusSqrt(a, b2) {
  let m = -floorDiv(-a[0], a[1]) + isqrt(floorDiv(b2[0], b2[1])) + 2n;
  for (;;) {
    const d = sub(q(m - 1n), a);
    if (cmp(d, q(0n)) >= 0 && cmp(mul(d, d), b2) >= 0) m -= 1n;
    else return m;
  }
}

/** Tenths as a decimal: 757 -> "75.7". */
export function tenthsText(n) {
  const abs = n < 0n ? -n : n;
  return `${n < 0n ? "-" : ""}${abs / 10n}.${abs % 10n}`;
}

/** round(x) half to even, x rational (Python's round of a Fraction). */
function roundHalfEven(x) {
  const f = floorDiv(x[0], x[1]);
  const twice = 2n * (x[0] - f * x[1]);
  if (twice > x[1] || (twice === x[1] && f % 2n !== 0n)) return f + 1n;
  return f;
}

const max = (a, b) => (a > b ? a : b);
const min = (a, b) => (a < b ? a : b);

/** intervals.wilson: the qualified rate k/n in percent with its Wilson interval, or null when n is 0. */
export function wilson(k, n) {
  if (n <= 0) return null;
  const [K, N] = [BigInt(k), BigInt(n)];
  const z = q(196n, 100n);
  const z2 = mul(z, z);
  const denom = add(q(N), z2);
  const centre = div(mul(q(1000n), add(q(K), div(z2, q(2n)))), denom);
  const scale = div(mul(q(1000n), z), denom);
  const half2 = mul(mul(scale, scale), add(q(K * (N - K), N), div(z2, q(4n))));
  const lo = max(0n, floorMinusSqrt(centre, half2));
  const hi = min(1000n, ceilPlusSqrt(centre, half2));
  return { value: tenthsText(roundHalfEven(mul(q(100n * K, N), q(10n)))), lower: tenthsText(lo), upper: tenthsText(hi), k, n };
}

/** intervals.t_mean: the mean of integer `values` with its Student-t interval cut to [0, 100]. */
export function tMean(values) {
  const n = values.length;
  if (!n) return null;
  const N = BigInt(n);
  const sum = values.reduce((s, v) => s + BigInt(v), 0n);
  const mean = q(sum, N);
  const out = { value: tenthsText(roundHalfEven(mul(mean, q(10n)))), lower: null, upper: null, n };
  if (n === 1) return out;
  const squares = values.reduce((s, v) => s + BigInt(v) * BigInt(v), 0n);
  const variance = q(N * squares - sum * sum, N * (N - 1n));
  const t = t975(n - 1);
  const half2 = div(mul(mul(q(100n), mul(t, t)), variance), q(N));
  const centre = mul(q(10n), mean);
  out.lower = tenthsText(max(0n, floorMinusSqrt(centre, half2)));
  out.upper = tenthsText(min(1000n, ceilPlusSqrt(centre, half2)));
  return out;
}
