// The calculation tools a model worker gets, on demand: interest, a dry-run
// projection of today's batch, exposure of an asset funded from a quote, and
// capacity headroom. They read only the packet.
import { field, h, parseInteger, stableJson } from "./dom.js";

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
    return [num("principal", "Principal (cents)"), num("rate_bps", "Rate (bps a year)"),
      num("start_day", "Start day", String(packet.day)), num("end_day", "End day", String(Math.min(packet.day + 1, packet.calendar.length - 1)))];
  }
  if (name === "exposure") {
    return [pick("asset", "Asset", packet.assets.map((a) => a.id)), pick("quote", "Quote", packet.quotes.map((q) => q.id)),
      field("Notional (cents, empty for the whole asset)", h("input", { type: "text", inputmode: "numeric", name: "notional", autocomplete: "off" }))];
  }
  if (name === "project") return [h("p", { class: "fb-hint" }, "Uses the actions in today's batch above.")];
  return [];
}

function readArgs(name, form, actions) {
  const v = (n) => form.elements[n].value;
  if (name === "interest") {
    return { principal: parseInteger(v("principal"), "Principal"), rate_bps: parseInteger(v("rate_bps"), "Rate"),
      start_day: parseInteger(v("start_day"), "Start day"), end_day: parseInteger(v("end_day"), "End day") };
  }
  if (name === "exposure") {
    const args = { asset: v("asset"), quote: v("quote") };
    if (v("notional").trim()) args.notional = parseInteger(v("notional"), "Notional");
    return args;
  }
  if (name === "project") return { actions: actions() };
  return {};
}

/** The tools panel; `run(name, args)` calls the engine, `actions()` gives today's draft actions. */
export function renderTools(packet, run, actions) {
  const choice = h("select", { name: "tool" }, Object.entries(TOOLS).map(([k, label]) => h("option", { value: k }, label)));
  const slot = h("div", { class: "fb-tool-args" });
  const output = h("pre", { class: "fb-tool-output", "aria-live": "polite", tabindex: "0", "aria-label": "Tool output" });
  const redraw = () => slot.replaceChildren(...argsFor(choice.value, packet));
  choice.addEventListener("change", redraw);
  redraw();
  const form = h("form", { "aria-label": "Calculation tools" },
    h("fieldset", {}, h("legend", {}, "Run a tool on today's packet"), field("Tool", choice), slot, h("button", { type: "submit" }, "Run tool")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const answer = await run(choice.value, readArgs(choice.value, form, actions));
      output.textContent = answer.ok ? stableJson(answer.output) : `error: ${answer.error}`;
    } catch (e) {
      output.textContent = `error: ${e.message}`;
    }
  });
  return h("section", { class: "fb-tools", "aria-labelledby": "fb-tools-h" },
    h("h2", { id: "fb-tools-h" }, "Calculation tools"), form, output);
}
