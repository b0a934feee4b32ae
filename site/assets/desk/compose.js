// Today's batch: forms for each action type (only the quotes, assets, trades
// and approvals the packet shows are offered), the report, and a JSON view of
// the same batch. The engine validates everything again on submit; the form
// only keeps people from typing ids by hand.
import { bps, field, h, money } from "./dom.js";
import { parseCount, parseMoney } from "./money.js";

const ACTION_TYPES = ["FUND", "ROLL", "REPAY", "ESCALATE", "EXECUTE"];
const AUTHORITY_KINDS = ["capacity", "tenor", "buffer"];
// The report's per-asset fields: key, label, how it is typed (money-days are
// typed like money: two decimals, so cent-days come out exact).
const REPORT_FIELDS = [["funded", "funded", "money"], ["unfunded", "unfunded", "money"],
  ["maturity_gap_days", "maturity gap (days)", "count"], ["tail_cent_days", "tail (money-days)", "money"]];

function select(name, options, attrs = {}) {
  return h("select", { name, ...attrs }, options.map(([value, text]) => h("option", { value }, text)));
}

// An amount typed as money ("1,250,000.00"); the hint shows what the engine
// will get (integer cents) or why the entry is refused, as it is typed.
export function moneyField(label, name, sign = "positive", what = "an amount such as 1,250,000.00") {
  const input = h("input", { type: "text", inputmode: "decimal", name, autocomplete: "off", "data-money": sign });
  const wrap = field(label, input, what);
  const hint = wrap.querySelector(".fb-hint");
  input.addEventListener("input", () => {
    if (!input.value.trim()) {
      hint.textContent = what;
      input.removeAttribute("aria-invalid");
      return;
    }
    try {
      const cents = parseMoney(input.value, label, sign);
      hint.textContent = `${money(cents)} (${cents} cents)`;
      input.removeAttribute("aria-invalid");
    } catch (e) {
      hint.textContent = e.message;
      input.setAttribute("aria-invalid", "true");
    }
  });
  return wrap;
}

/** An approval's amount as a person reads it: days for tenor authority, money otherwise. */
export function authorityAmount(kind, amount) {
  return kind === "tenor" ? `${amount} days` : money(amount);
}

function describe(action) {
  const inner = (a) => a.type === "FUND" ? `FUND ${a.asset} from ${a.quote}, ${money(a.notional)}`
    : a.type === "ROLL" ? `ROLL ${a.trade} into ${a.quote}` : a.type;
  if (action.type === "FUND" || action.type === "ROLL") return inner(action);
  if (action.type === "REPAY") return `REPAY ${action.trade}`;
  if (action.type === "ESCALATE") {
    return `ESCALATE ${action.kind} ${authorityAmount(action.kind, action.amount)}${action.counterparty ? " with " + action.counterparty : ""}`;
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
    return this.packet.quotes.map((q) => [q.id, `${q.id} ${q.counterparty} ${bps(q.rate_bps)}, ${q.tenor} d, haircut ${bps(q.haircut_bps)}`]);
  }
  tradeOptions() {
    return this.packet.trades.map((t) => [t.id, `${t.id} ${t.asset} ${t.counterparty} to day ${t.maturity} (${t.status})`]);
  }
  approvalOptions() {
    return this.packet.approvals.map((a) => [a.id, `${a.id} ${a.kind} ${authorityAmount(a.kind, a.amount)} (${a.status})`]);
  }

  // -- the action form ---------------------------------------------------------
  fieldsFor(type, prefix = "") {
    const n = (name) => prefix + name;
    if (type === "FUND") {
      const asset = select(n("asset"), this.assetOptions());
      const quote = select(n("quote"), this.quoteOptions());
      const applies = h("p", { class: "fb-hint fb-applies", "aria-live": "polite" });
      const show = () => {
        const a = this.packet.assets.find((x) => x.id === asset.value);
        const q = this.packet.quotes.find((x) => x.id === quote.value);
        applies.textContent = a && q ? `Haircut that applies: ${bps(Math.max(q.haircut_bps, a.haircut_floor_bps))} ` +
          `(the larger of ${q.id}'s ${bps(q.haircut_bps)} and ${a.id}'s minimum ${bps(a.haircut_floor_bps)}).` : "";
      };
      asset.addEventListener("change", show);
      quote.addEventListener("change", show);
      show();
      return [field("Asset", asset), field("Quote", quote), moneyField("Notional", n("notional")), applies];
    }
    if (type === "ROLL") {
      return [field("Funding trade", select(n("trade"), this.tradeOptions())),
        field("New quote", select(n("quote"), this.quoteOptions()))];
    }
    if (type === "REPAY") return [field("Funding trade", select(n("trade"), this.tradeOptions()))];
    if (type === "ESCALATE") {
      // tenor authority is asked in days, capacity and buffer authority in money
      const kind = select(n("kind"), AUTHORITY_KINDS.map((k) => [k, k]));
      const amount = h("div", { class: "fb-inline" });
      const redrawAmount = () => amount.replaceChildren(kind.value === "tenor"
        ? field("Amount (days)", h("input", { type: "text", inputmode: "numeric", name: n("amount"), autocomplete: "off" }), "days beyond the desk's maximum tenor")
        : moneyField("Amount", n("amount")));
      kind.addEventListener("change", redrawAmount);
      redrawAmount();
      return [field("Authority kind", kind), amount,
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
      ? { type: "FUND", asset: need(p + "asset", "Asset"), quote: need(p + "quote", "Quote"), notional: parseMoney(get(p + "notional"), "Notional") }
      : { type: "ROLL", trade: need(p + "trade", "Funding trade"), quote: need(p + "quote", "New quote") };
    if (type === "FUND" || type === "ROLL") return { id, ...readInner(type, "") };
    if (type === "REPAY") return { id, type, trade: need("trade", "Funding trade") };
    if (type === "ESCALATE") {
      const kind = get("kind");
      const amount = kind === "tenor" ? parseCount(get("amount"), "Amount (days)", "positive") : parseMoney(get("amount"), "Amount");
      const action = { id, type, kind, amount };
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
    // The report covers the assets still on the book once the day has settled:
    // one leaving today is unticked by default (a delayed exit says otherwise).
    // On a narrow screen the per-asset table reflows to one card per asset.
    const rows = this.reportable().map((a) => h("tr", {}, h("th", { scope: "row" }, a.id),
      h("td", { "data-label": "in the report" }, h("input", { type: "checkbox", name: `include.${a.id}`, checked: a.exit_day > this.packet.day,
        "aria-label": `Report ${a.id}` })),
      ...REPORT_FIELDS.map(([k, label, kind]) => h("td", { "data-label": label },
        h("input", { type: "text", inputmode: kind === "count" ? "numeric" : "decimal", name: `asset.${a.id}.${k}`, autocomplete: "off",
          "aria-label": `${a.id} ${label}` })))));
    return h("form", { class: "fb-report-form", "aria-label": "Report to the parent", onsubmit: (e) => e.preventDefault() },
      h("fieldset", {}, h("legend", {}, `Report for day ${this.packet.day} (the book once the day has settled)`),
        moneyField("Cash", "cash", "any", "money; negative if the desk is overdrawn"),
        moneyField("Funding cost to date", "funding_cost_to_date", "nonnegative", "money"),
        h("div", { class: "fb-table-wrap fb-cards", role: "region", tabindex: "0", "aria-label": "Per asset report" },
          h("table", { class: "fb-table fb-report-assets" }, h("caption", {}, "Per asset"),
            h("thead", {}, h("tr", {}, ["asset", "in the report", ...REPORT_FIELDS.map(([, label]) => label)].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", {}, rows))),
        h("p", { class: "fb-hint fb-explain" }, "Funded and unfunded are money. The maturity gap is the days from the funding's " +
          "maturity to the asset's exit. The tail is that gap weighed by the amount exposed, in money-days: 1,000,000.00 " +
          "unfunded for 3 days is a tail of 3,000,000.00 money-days (records keep it in cent-days, 100 times that number)."),
        field("Breaches", h("input", { type: "text", name: "breaches", autocomplete: "off" }), "day:CODE, comma-separated (e.g. 4:SETTLEMENT_FAIL); empty for none"),
        field("Open approvals", h("input", { type: "text", name: "open_approvals", autocomplete: "off" }), "approval ids, comma-separated; empty for none")));
  }

  /** The report, or an Error whose `problems` list every field at fault ({input, message}); each is marked. */
  readReport() {
    const f = this.reportForm.elements;
    const problems = [];
    const read = (input, parse) => {
      try {
        const value = parse(input.value);
        input.removeAttribute("aria-invalid");
        return value;
      } catch (e) {
        input.setAttribute("aria-invalid", "true");
        problems.push({ input, message: e.message });
        return undefined;
      }
    };
    // in the form's order, so the list next to Submit reads top to bottom and the first one gets the focus
    const cash = read(f.cash, (text) => parseMoney(text, "Report cash", "any"));
    const cost = read(f.funding_cost_to_date, (text) => parseMoney(text, "Report funding cost to date", "nonnegative"));
    const assets = {};
    for (const a of this.reportable()) {
      const include = f[`include.${a.id}`].checked;
      for (const [k, label, kind] of REPORT_FIELDS) {
        const input = f[`asset.${a.id}.${k}`];
        if (!include) {
          input.removeAttribute("aria-invalid");
          continue;
        }
        assets[a.id] ??= {};
        assets[a.id][k] = read(input, (text) => kind === "count" ? parseCount(text, `Report ${a.id} ${label}`)
          : parseMoney(text, `Report ${a.id} ${label}`, "nonnegative"));
      }
    }
    const list = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);
    const report = {
      cash,
      funding_cost_to_date: cost,
      assets,
      breaches: read(f.breaches, (text) => list(text).map((item) => {
        const m = /^(\d+)\s*:\s*([A-Z_]+)$/.exec(item);
        if (!m) throw new Error(`Report breaches: expected day:CODE, got "${item}"`);
        return { day: Number(m[1]), code: m[2] };
      })),
      open_approvals: read(f.open_approvals, list),
    };
    if (problems.length) {
      const error = new Error(problems.map((p) => p.message).join("; "));
      error.problems = problems;
      throw error;
    }
    return report;
  }

  fillReport(report) {
    const f = this.reportForm.elements;
    const show = (input, value) => {
      input.value = Number.isSafeInteger(value) && input.dataset.money ? money(value) : String(value ?? "");
      input.dispatchEvent(new Event("input", { bubbles: true }));
    };
    show(f.cash, report.cash);
    show(f.funding_cost_to_date, report.funding_cost_to_date);
    for (const a of this.reportable()) f[`include.${a.id}`].checked = Boolean(report.assets && a.id in report.assets);
    for (const [id, entry] of Object.entries(report.assets || {})) {
      for (const [k, v] of Object.entries(entry)) {
        const input = f[`asset.${id}.${k}`];
        const kind = REPORT_FIELDS.find(([key]) => key === k)?.[2];
        if (input) {
          input.value = kind === "money" && Number.isSafeInteger(v) ? money(v) : String(v);
          input.removeAttribute("aria-invalid");
        }
      }
    }
    f.breaches.value = (report.breaches || []).map((b) => `${b.day}:${b.code}`).join(", ");
    f.open_approvals.value = (report.open_approvals || []).join(", ");
    f.breaches.removeAttribute("aria-invalid");
    f.open_approvals.removeAttribute("aria-invalid");
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
      h("h3", {}, "Actions in this batch"), this.list, this.listNote,
      this.reportForm);
    this.renderList();
    return root;
  }
}

