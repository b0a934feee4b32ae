// The calculation tools a model worker gets, on demand: interest, a dry-run
// projection of today's batch, exposure of an asset funded from a quote, and
// capacity headroom. They read only the packet.
import { moneyField } from "./compose.js";
import { field, h, stableJson } from "./dom.js";
import { parseCount, parseMoney } from "./money.js";
import { label, moneyText, readable } from "./readable.js";

// JSON that scrolls sideways on its own: a region the keyboard can reach (it is drawn after the theme made the
// page's code blocks focusable, so it says so itself).
const JSON_OUT = { class: "fb-json-out", tabindex: "0", role: "region" };

const TOOLS = {
  interest: "Interest: ACT/360 on a principal between two calendar indexes",
  project: "Project: dry-run today's batch (decisions, closing cash, the exact report)",
  exposure: "Exposure: maturity gap and tail of an asset, now and funded from a quote",
  headroom: "Headroom: counterparty capacity and what is left on each quote",
};

function argsFor(name, packet) {
  const num = (n, label, value = "") => field(label, h("input", { type: "text", inputmode: "numeric", name: n, value, autocomplete: "off" }));
  const pick = (n, label, options) => field(label, h("select", { name: n }, options.map((o) => h("option", { value: o }, o))));
  if (name === "interest") {
    return [moneyField("Principal", "principal"), num("rate_bps", "Rate (bps a year)"),
      num("start_day", "Start day", String(packet.day)), num("end_day", "End day", String(Math.min(packet.day + 1, packet.calendar.length - 1)))];
  }
  if (name === "exposure") {
    return [pick("asset", "Asset", packet.assets.map((a) => a.id)), pick("quote", "Quote", packet.quotes.map((q) => q.id)),
      moneyField("Notional (empty for the whole asset)", "notional", "positive", "money; empty for the whole asset")];
  }
  if (name === "project") return [h("p", { class: "fb-hint" }, "Uses the actions in today's batch above.")];
  return [];
}

function readArgs(name, form, actions) {
  const v = (n) => form.elements[n].value;
  if (name === "interest") {
    return { principal: parseMoney(v("principal"), "Principal"), rate_bps: parseCount(v("rate_bps"), "Rate"),
      start_day: parseCount(v("start_day"), "Start day"), end_day: parseCount(v("end_day"), "End day") };
  }
  if (name === "exposure") {
    const args = { asset: v("asset"), quote: v("quote") };
    if (v("notional").trim()) args.notional = parseMoney(v("notional"), "Notional");
    return args;
  }
  if (name === "project") return { actions: actions() };
  return {};
}

// A tool's answer as a person reads it: money formatted, tails in money-days,
// rates as percentages, refusal messages with their amounts formatted; the
// exact JSON the engine returned is one click away.
function readableOutput(value, key = "") {
  if (Array.isArray(value)) {
    if (!value.length) return h("span", {}, "none");
    return h("ol", {}, value.map((v) => h("li", {}, readableOutput(v, key))));
  }
  if (value && typeof value === "object") {
    return h("dl", { class: "fb-facts" }, Object.keys(value).sort().map((k) => [h("dt", {}, label(k)),
      h("dd", {}, readableOutput(value[k], k))]));
  }
  if (key === "message") return h("span", {}, moneyText(value));
  return h("span", {}, readable(key, value));
}

/** Python's json.dumps(value, sort_keys=True): ", " and ": ", keys by code point, non-ASCII as \\uXXXX. */
export function pythonJson(value) {
  const ascii = (text) => text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  const walk = (v) => {
    if (v === null || typeof v !== "object") return ascii(JSON.stringify(v));
    if (Array.isArray(v)) return `[${v.map(walk).join(", ")}]`;
    const points = (k) => Array.from(k, (c) => c.codePointAt(0));
    const byPoint = (a, b) => {
      const [x, y] = [points(a), points(b)];
      for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i] - y[i];
      return x.length - y.length;
    };
    const keys = Object.keys(v).sort(byPoint);
    return `{${keys.map((k) => `${ascii(JSON.stringify(k))}: ${walk(v[k])}`).join(", ")}}`;
  };
  return walk(value);
}

/** A tool's result as the model worker reads it: its JSON text, cut at `limit` characters with the cut marked
 * (launchers/worker/protocol.py tool_result_text); null when it is not cut. */
export function modelCut(output, limit) {
  const text = pythonJson(output);
  return text.length <= limit ? null : `${text.slice(0, limit)}...[output truncated: ${limit} of ${text.length} characters]...`;
}

/**
 * The tools panel; `run(name, args)` calls the engine, `actions()` gives today's draft actions.
 * `opts.cut` (the study mode): a result longer than the model worker reads is shown as the worker
 * reads it, cut at that many characters.
 */
export function renderTools(packet, run, actions, opts = {}) {
  const choice = h("select", { name: "tool" }, Object.entries(TOOLS).map(([k, label]) => h("option", { value: k }, label)));
  const slot = h("div", { class: "fb-tool-args" });
  const output = h("div", { class: "fb-tool-output", "aria-live": "polite", role: "region", tabindex: "0", "aria-label": "Tool output" });
  const redraw = () => slot.replaceChildren(...argsFor(choice.value, packet));
  choice.addEventListener("change", redraw);
  redraw();
  const form = h("form", { "aria-label": "Calculation tools" },
    h("fieldset", {}, h("legend", {}, "Run a tool on today's packet"), field("Tool", choice), slot, h("button", { type: "submit" }, "Run tool")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const answer = await run(choice.value, readArgs(choice.value, form, actions));
      const cut = answer.ok && opts.cut ? modelCut(answer.output, opts.cut) : null;
      output.replaceChildren(...(!answer.ok ? [h("p", { class: "fb-error" }, `error: ${moneyText(answer.error)}`)]
        : cut ? [h("p", { class: "fb-hint" }, "Longer than the model worker reads: shown as it reads it."), h("pre", { ...JSON_OUT, "aria-label": "Tool output as the model reads it" }, cut)]
          : [readableOutput(answer.output), h("details", {}, h("summary", {}, "As JSON (integer cents and cent-days, as the engine returns it)"),
            h("pre", { ...JSON_OUT, "aria-label": "Tool output as JSON" }, stableJson(answer.output)))]));
    } catch (e) {
      output.replaceChildren(h("p", { class: "fb-error" }, `error: ${e.message}`));
    }
  });
  return h("section", { class: "fb-tools", "aria-labelledby": "fb-tools-h" },
    h("h2", { id: "fb-tools-h" }, "Calculation tools"), form, output);
}
