// Today's batch: forms for each action type (only the quotes, assets, trades
// and approvals the packet shows are offered), the report, and a JSON view of
// the same batch. The engine validates everything again on submit; the form
// only keeps people from typing ids by hand.
import { field, h, money, parseInteger } from "./dom.js";

const ACTION_TYPES = ["FUND", "ROLL", "REPAY", "ESCALATE", "EXECUTE"];
const AUTHORITY_KINDS = ["capacity", "tenor", "buffer"];

function select(name, options, attrs = {}) {
  return h("select", { name, ...attrs }, options.map(([value, text]) => h("option", { value }, text)));
}

// A cents input whose hint shows the amount as money while it is typed.
function centsField(label, name) {
  const input = h("input", { type: "text", inputmode: "numeric", name, autocomplete: "off" });
  const wrap = field(label, input, "whole cents");
  const hint = wrap.querySelector(".fb-hint");
  input.addEventListener("input", () => {
    try {
      hint.textContent = `whole cents: ${money(parseInteger(input.value, label))}`;
    } catch {
      hint.textContent = "whole cents";
    }
  });
  return wrap;
}

function describe(action) {
  const inner = (a) => a.type === "FUND" ? `FUND ${a.asset} from ${a.quote}, ${money(a.notional)}`
    : a.type === "ROLL" ? `ROLL ${a.trade} into ${a.quote}` : a.type;
  if (action.type === "FUND" || action.type === "ROLL") return inner(action);
  if (action.type === "REPAY") return `REPAY ${action.trade}`;
  if (action.type === "ESCALATE") {
    return `ESCALATE ${action.kind} ${money(action.amount)}${action.counterparty ? " with " + action.counterparty : ""}`;
  }
  return `EXECUTE under ${action.approval}: ${inner(action.action)}`;
}

export class Composer {
  constructor(packet, { onChange } = {}) {
    this.packet = packet;
    this.actions = [];
    this.onChange = onChange || (() => {});
    this.root = this.render();
  }

  // -- choices from the packet -------------------------------------------------
  assetOptions() {
    return this.packet.assets.map((a) => [a.id, `${a.id} ${a.name} (${a.kind}, ${money(a.notional)})`]);
  }
  quoteOptions() {
    return this.packet.quotes.map((q) => [q.id, `${q.id} ${q.counterparty} ${q.rate_bps} bps, ${q.tenor} d, haircut ${q.haircut_bps} bps`]);
  }
  tradeOptions() {
    return this.packet.trades.map((t) => [t.id, `${t.id} ${t.asset} ${t.counterparty} to day ${t.maturity} (${t.status})`]);
  }
  approvalOptions() {
    return this.packet.approvals.map((a) => [a.id, `${a.id} ${a.kind} ${money(a.amount)} (${a.status})`]);
  }

  // -- the action form ---------------------------------------------------------
  fieldsFor(type, prefix = "") {
    const n = (name) => prefix + name;
    const money_ = (name, label) => centsField(label, n(name));
    if (type === "FUND") {
      return [field("Asset", select(n("asset"), this.assetOptions())),
        field("Quote", select(n("quote"), this.quoteOptions())),
        money_("notional", "Notional (cents)")];
    }
    if (type === "ROLL") {
      return [field("Funding trade", select(n("trade"), this.tradeOptions())),
        field("New quote", select(n("quote"), this.quoteOptions()))];
    }
    if (type === "REPAY") return [field("Funding trade", select(n("trade"), this.tradeOptions()))];
    if (type === "ESCALATE") {
      return [field("Authority kind", select(n("kind"), AUTHORITY_KINDS.map((k) => [k, k]))),
        money_("amount", "Amount (cents)"),
        field("Counterparty", select(n("counterparty"), [["", "(none)"], ...this.packet.counterparties.map((c) => [c.id, `${c.id} ${c.name}`])]), "required for a capacity request"),
        field("Note", h("input", { type: "text", name: n("note"), autocomplete: "off" }))];
    }
    const inner = h("div", { class: "fb-nested" });
    const innerType = select("inner_type", [["FUND", "FUND"], ["ROLL", "ROLL"]]);
    const redraw = () => inner.replaceChildren(...this.fieldsFor(innerType.value, "inner_"));
    innerType.addEventListener("change", redraw);
    redraw();
    return [field("Approval", select(n("approval"), this.approvalOptions())),
      field("Action under the approval", innerType), inner];
  }

  readAction(form) {
    const get = (name) => form.elements[name]?.value ?? "";
    const need = (name, label) => {
      const v = get(name);
      if (!v) throw new Error(`${label}: choose one (none is available today)`);
      return v;
    };
    const type = get("type");
    const id = get("id").trim();
    if (!id) throw new Error("Action id: required");
    if (this.actions.some((a) => a.id === id)) throw new Error(`Action id: ${id} is already in this batch`);
    const readInner = (t, p) => t === "FUND"
      ? { type: "FUND", asset: need(p + "asset", "Asset"), quote: need(p + "quote", "Quote"), notional: parseInteger(get(p + "notional"), "Notional") }
      : { type: "ROLL", trade: need(p + "trade", "Funding trade"), quote: need(p + "quote", "New quote") };
    if (type === "FUND" || type === "ROLL") return { id, ...readInner(type, "") };
    if (type === "REPAY") return { id, type, trade: need("trade", "Funding trade") };
    if (type === "ESCALATE") {
      const action = { id, type, kind: get("kind"), amount: parseInteger(get("amount"), "Amount") };
      if (get("counterparty")) action.counterparty = get("counterparty");
      if (get("note").trim()) action.note = get("note").trim();
      return action;
    }
    return { id, type, approval: need("approval", "Approval"), action: readInner(get("inner_type"), "inner_") };
  }

  nextActionId() {
    const day = String(this.packet.day).padStart(2, "0");
    let k = this.actions.length + 1;
    while (this.actions.some((a) => a.id === `d${day}-a${k}`)) k += 1;
    return `d${day}-a${k}`;
  }

  renderActionForm() {
    const typeSelect = select("type", ACTION_TYPES.map((t) => [t, t]));
    const slot = h("div", { class: "fb-action-fields" });
    const idInput = h("input", { type: "text", name: "id", value: this.nextActionId(), autocomplete: "off" });
    const redraw = () => slot.replaceChildren(...this.fieldsFor(typeSelect.value));
    typeSelect.addEventListener("change", redraw);
    redraw();
    const error = h("p", { class: "fb-error", role: "alert" });
    const form = h("form", { class: "fb-action-form", "aria-label": "Add an action" },
      h("fieldset", {}, h("legend", {}, "Add an action"),
        field("Action type", typeSelect), field("Action id", idInput), slot,
        h("button", { type: "submit" }, "Add action"), error));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      try {
        this.actions.push(this.readAction(form));
        error.textContent = "";
        idInput.value = this.nextActionId();
        this.renderList();
      } catch (e) {
        error.textContent = e.message;
      }
    });
    return form;
  }

  renderList() {
    this.list.replaceChildren(...this.actions.map((action, i) => h("li", {},
      h("span", {}, `${action.id}: ${describe(action)} `),
      h("button", { type: "button", "aria-label": `Remove action ${action.id}`, onclick: () => {
        this.actions.splice(i, 1);
        this.renderList();
      } }, "Remove"))));
    this.listNote.textContent = this.actions.length ? "" : "No actions yet: a batch may have none.";
    this.onChange();
  }

  // -- the report --------------------------------------------------------------
  reportable() {
    return this.packet.assets.filter((a) => a.status !== "exited");
  }

  renderReport() {
    const num = (name, label) => field(label, h("input", { type: "text", inputmode: "numeric", name, autocomplete: "off" }));
    // The report covers the assets still on the book once the day has settled:
    // one leaving today is unticked by default (a delayed exit says otherwise).
    const rows = this.reportable().map((a) => h("tr", {}, h("th", { scope: "row" }, a.id),
      h("td", {}, h("input", { type: "checkbox", name: `include.${a.id}`, checked: a.exit_day > this.packet.day,
        "aria-label": `Report ${a.id}` })),
      ...["funded", "unfunded", "maturity_gap_days", "tail_cent_days"].map((k) => h("td", {},
        h("input", { type: "text", inputmode: "numeric", name: `asset.${a.id}.${k}`, autocomplete: "off",
          "aria-label": `${a.id} ${k.replaceAll("_", " ")}` })))));
    return h("form", { class: "fb-report-form", "aria-label": "Report to the parent", onsubmit: (e) => e.preventDefault() },
      h("fieldset", {}, h("legend", {}, `Report for day ${this.packet.day} (the book once the day has settled)`),
        num("cash", "Cash (cents)"), num("funding_cost_to_date", "Funding cost to date (cents)"),
        h("div", { class: "fb-table-wrap" }, h("table", {}, h("caption", {}, "Per asset"),
          h("thead", {}, h("tr", {}, ["asset", "in the report", "funded (cents)", "unfunded (cents)", "maturity gap (days)", "tail (cent-days)"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, rows))),
        field("Breaches", h("input", { type: "text", name: "breaches", autocomplete: "off" }), "day:CODE, comma-separated (e.g. 4:SETTLEMENT_FAIL); empty for none"),
        field("Open approvals", h("input", { type: "text", name: "open_approvals", autocomplete: "off" }), "approval ids, comma-separated; empty for none")));
  }

  readReport() {
    const f = this.reportForm.elements;
    const assets = {};
    for (const a of this.reportable()) {
      if (!f[`include.${a.id}`].checked) continue;
      assets[a.id] = {};
      for (const k of ["funded", "unfunded", "maturity_gap_days", "tail_cent_days"]) {
        assets[a.id][k] = parseInteger(f[`asset.${a.id}.${k}`].value, `Report ${a.id} ${k}`);
      }
    }
    const list = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);
    const breaches = list(f.breaches.value).map((item) => {
      const m = /^(\d+)\s*:\s*([A-Z_]+)$/.exec(item);
      if (!m) throw new Error(`Report breaches: expected day:CODE, got "${item}"`);
      return { day: Number(m[1]), code: m[2] };
    });
    return { cash: parseInteger(f.cash.value, "Report cash"), funding_cost_to_date: parseInteger(f.funding_cost_to_date.value, "Report funding cost to date"),
      assets, breaches, open_approvals: list(f.open_approvals.value) };
  }

  fillReport(report) {
    const f = this.reportForm.elements;
    f.cash.value = report.cash;
    f.funding_cost_to_date.value = report.funding_cost_to_date;
    for (const a of this.reportable()) f[`include.${a.id}`].checked = Boolean(report.assets && a.id in report.assets);
    for (const [id, entry] of Object.entries(report.assets || {})) {
      for (const [k, v] of Object.entries(entry)) if (f[`asset.${id}.${k}`]) f[`asset.${id}.${k}`].value = v;
    }
    f.breaches.value = (report.breaches || []).map((b) => `${b.day}:${b.code}`).join(", ");
    f.open_approvals.value = (report.open_approvals || []).join(", ");
  }

  // -- whole batch -------------------------------------------------------------
  batch() {
    const batch = { day: this.packet.day, report: this.readReport(), actions: this.actions.map((a) => structuredClone(a)) };
    if (this.note !== undefined) batch.note = this.note;
    return batch;
  }

  /** Put a batch (from the JSON view or an import) into the forms as it is. */
  load(batch) {
    if (!batch || typeof batch !== "object" || Array.isArray(batch)) throw new Error("batch: expected a JSON object with day, report and actions");
    if (batch.day !== this.packet.day) throw new Error(`batch.day: expected the open day ${this.packet.day}, got ${JSON.stringify(batch.day)}`);
    if (!Array.isArray(batch.actions)) throw new Error("batch.actions: expected a list");
    if (!batch.report || typeof batch.report !== "object") throw new Error("batch.report: expected an object");
    const rows = new Set(this.reportable().map((a) => a.id));
    const unknown = Object.keys(batch.report.assets || {}).find((id) => !rows.has(id));
    if (unknown) throw new Error(`batch.report.assets.${unknown}: not an asset on the book today (submit the JSON as it is to let the desk judge it)`);
    this.actions = batch.actions.map((a) => structuredClone(a));
    this.note = typeof batch.note === "string" ? batch.note : undefined;
    this.reportForm.reset();
    this.fillReport(batch.report);
    this.renderList();
  }

  render() {
    this.list = h("ol", { class: "fb-actions", "aria-label": "Actions in today's batch" });
    this.listNote = h("p", { class: "fb-hint" });
    this.reportForm = this.renderReport();
    const root = h("div", { class: "fb-composer" },
      this.renderActionForm(),
      h("h4", {}, "Actions in this batch"), this.list, this.listNote,
      this.reportForm);
    this.renderList();
    return root;
  }
}

