// Small DOM and formatting helpers shared by the desk modules.
export { bps, money } from "./money.js";

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

/** JSON with sorted keys (stable files for export and the JSON view). */
export function stableJson(value, indent = 2) {
  const sort = (v) => Array.isArray(v) ? v.map(sort)
    : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v;
  return JSON.stringify(sort(value), null, indent);
}

/** A table with a caption, header row and body rows (cells are nodes or text), in a
 * region that scrolls on its own and can be reached from the keyboard; on a phone
 * each row is a card, every cell headed by its column (desk.css .fb-cards). */
export function table(caption, headers, rows, attrs = {}) {
  return h("div", { class: "fb-table-wrap fb-cards", role: "region", tabindex: "0", "aria-label": caption },
    h("table", { ...attrs, class: ["fb-table", attrs.class].filter(Boolean).join(" ") },
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.length ? rows.map((r) => h("tr", {}, r.map((c, i) => h("td", { "data-label": headers[i] }, c))))
        : h("tr", {}, h("td", { colspan: headers.length }, "none")))));
}

/** Add desk.css once, from beside these modules, unless the page already links it. */
export function ensureStyles() {
  const href = new URL("./desk.css", import.meta.url).href;
  if ([...document.querySelectorAll("link[rel=stylesheet]")].some((l) => l.href === href)) return;
  document.head.append(h("link", { rel: "stylesheet", href }));
}

/**
 * A button that acts at once, or, when `confirmLabel` is given (there is
 * something to lose), asks first: the first press turns it into the
 * confirmation (`confirmLabel`, and `warning` said aloud), the second acts.
 */
export function confirmButton(label, confirmLabel, action, { disabled = false, say = () => {}, warning = "" } = {}) {
  const button = h("button", { type: "button", disabled }, label);
  button.addEventListener("click", () => {
    if (confirmLabel && button.dataset.confirm !== "yes") {
      button.dataset.confirm = "yes";
      button.classList.add("fb-confirm");
      button.textContent = confirmLabel;
      if (warning) say(warning);
      return;
    }
    action();
  });
  return button;
}
