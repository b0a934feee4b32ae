// "Verify this run in your browser": every run page has
//   <div class="fb-verify" data-run-id="..." data-record-url="..."></div>
// This fills it with a button that re-executes the record's fixture in the
// engine worker (the published bundle, checked against its manifest) and shows
// the computed content_sha256 beside the published one: a match, or the first
// field that differs.
import { call, engineInfo } from "./client.js";
import { ensureStyles } from "./dom.js";

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

function row(list, term, value) {
  list.append(el("dt", {}, term), el("dd", {}, el("code", {}, value)));
}

async function verify(box, button, out) {
  button.disabled = true;
  out.replaceChildren(el("p", {}, "Loading the engine and re-executing the fixture…"));
  try {
    const response = await fetch(box.dataset.recordUrl, { cache: "no-cache" });
    if (!response.ok) throw new Error(`record ${box.dataset.recordUrl}: HTTP ${response.status}`);
    const text = await response.text();
    let record;
    try {
      record = JSON.parse(text);
    } catch {
      throw new Error(`record ${box.dataset.recordUrl}: not valid JSON`);
    }
    const info = await engineInfo();
    const answer = await call("verify", text);
    if (!answer.ok) throw new Error(answer.error);
    const facts = el("dl", { class: "fb-facts" });
    row(facts, "computed content_sha256", answer.computed_content_sha256);
    row(facts, "published content_sha256", String(answer.published_content_sha256));
    row(facts, "engine bundle loaded", info.bundle_sha256);
    const recorded = record?.content?.engine?.bundle_sha256;
    if (recorded) row(facts, "engine bundle in the record", recorded + (recorded === info.bundle_sha256 ? " (same)" : " (different)"));
    row(facts, "re-execution time", `${Math.round(answer.ms)} ms`);
    const verdict = answer.match
      ? el("p", { class: "fb-verify-result fb-match", "data-result": "match" }, "✓ match: the re-executed run hashes to the published content_sha256.")
      : el("p", { class: "fb-verify-result fb-mismatch", "data-result": "mismatch" },
          "✗ mismatch: first differing field ", el("code", { "data-field": answer.first_difference ?? "" }, answer.first_difference ?? "content_sha256"));
    out.replaceChildren(verdict, facts);
  } catch (error) {
    out.replaceChildren(el("p", { class: "fb-verify-result fb-error", "data-result": "error", role: "alert" }, `Could not verify: ${error.message}`));
  } finally {
    button.disabled = false;
  }
}

const boxes = document.querySelectorAll(".fb-verify");
if (boxes.length) ensureStyles();
for (const box of boxes) {
  const out = el("div", { class: "fb-verify-output", "aria-live": "polite" });
  const button = el("button", { type: "button", class: "md-button fb-verify-button" }, "Verify this run in your browser");
  button.addEventListener("click", () => verify(box, button, out));
  const note = el("p", { class: "fb-verify-note" },
    "Runs the published engine bundle in this page (Pyodide in a Web Worker) and recomputes this record's hash. Nothing leaves your browser.");
  box.replaceChildren(button, note, out);
}
