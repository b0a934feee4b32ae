// Small DOM and formatting helpers shared by the desk modules.

/** h("tag", {attr: value, onclick: fn}, ...children): build an element. */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "value") node.value = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

let uid = 0;
/** A unique id for label/for pairs. */
export function nextId(prefix) {
  uid += 1;
  return `${prefix}-${uid}`;
}

/** A labelled control: returns [label, control] with for/id wired. */
export function field(labelText, control, hint) {
  if (!control.id) control.id = nextId("fb");
  const label = h("label", { for: control.id }, labelText);
  const wrap = h("div", { class: "fb-field" }, label, control);
  if (hint) {
    const hintNode = h("span", { class: "fb-hint", id: control.id + "-hint" }, hint);
    control.setAttribute("aria-describedby", hintNode.id);
    wrap.append(hintNode);
  }
  return wrap;
}

/** Integer cents as currency text: 123456 -> "1,234.56" (integer arithmetic, no floats). */
export function money(cents) {
  if (typeof cents !== "number" || !Number.isSafeInteger(cents)) return String(cents);
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const units = Math.floor(abs / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${sign}${units}.${String(abs % 100).padStart(2, "0")}`;
}

/** Basis points as a percentage string without floats: 450 -> "4.50%". */
export function bps(value) {
  if (!Number.isSafeInteger(value)) return String(value);
  const sign = value < 0 ? "-" : "";
  const abs = Math.abs(value);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}%`;
}

/** Parse a whole number typed by a person ("1,400,000" or "-5"); throws with the field's name. */
export function parseInteger(text, name) {
  const clean = String(text).trim().replace(/[,_\s]/g, "");
  if (!/^-?\d+$/.test(clean)) throw new Error(`${name}: expected a whole number, got "${text}"`);
  const value = Number(clean);
  if (!Number.isSafeInteger(value)) throw new Error(`${name}: ${text} is too large`);
  return value;
}

/** JSON with sorted keys (stable files for export and the JSON view). */
export function stableJson(value, indent = 2) {
  const sort = (v) => Array.isArray(v) ? v.map(sort)
    : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v;
  return JSON.stringify(sort(value), null, indent);
}

/** A table with a caption, header row and body rows (cells are nodes or text). */
export function table(caption, headers, rows, attrs = {}) {
  return h("div", { class: "fb-table-wrap" }, h("table", attrs,
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, rows.length ? rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))
      : h("tr", {}, h("td", { colspan: headers.length }, "none")))));
}

/** Add desk.css once, from beside these modules, unless the page already links it. */
export function ensureStyles() {
  const href = new URL("./desk.css", import.meta.url).href;
  if ([...document.querySelectorAll("link[rel=stylesheet]")].some((l) => l.href === href)) return;
  document.head.append(h("link", { rel: "stylesheet", href }));
}
