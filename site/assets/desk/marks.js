// The page side of verifiable regions (builders/site/marks.py). A verifiable
// page wraps what its verify checks in <div data-fb-verified="NAME">; inside a
// region every figure is a mark (data-fb-path, or data-fb-decision on a
// decision page), compared with the value verify re-derives. Every verify
// (verify.js, attempt.js, practitioner.js, decisions.js) reads the page
// through here:
//   figuresIn    every mark on the page, wherever it is, with its node;
//   regionProblems  a digit or a status or verdict word a region shows outside a
//                marks (in its text, or a title, aria-label or alt): the build
//                refuses such a page, so on a published page it is an edit; a
//                figure the record requires that is not inside a region; a page
//                without a region at all.
import * as checks from "./checks.js";

export const MARK = "[data-fb-path], [data-fb-decision]";
const REGION = "[data-fb-verified]";
const SEEN_ATTRS = ["title", "aria-label", "alt"];
const RAW = new Set(["SCRIPT", "STYLE", "TEMPLATE"]);

/** The data-fb-path marks under `root` that `keep(node)` accepts: [{path, format, shown, node}]. */
export function figuresIn(root, keep = () => true) {
  return [...root.querySelectorAll("[data-fb-path]")].filter(keep).map((node) => ({
    path: checks.parsePath(node.dataset.fbPath), format: node.dataset.fbFormat || "text",
    shown: node.textContent, node }));
}

/** [{region, text}]: each text node and seen attribute inside a region and outside every mark. */
export function regionSegments(doc) {
  const out = [];
  const outer = [...doc.querySelectorAll(REGION)].filter((r) => !r.parentElement?.closest(REGION));
  for (const region of outer) {
    const walk = (node) => {
      if (node.nodeType === 3) {
        out.push({ region: node.parentElement.closest(REGION).dataset.fbVerified || "(unnamed)", text: node.data });
        return;
      }
      if (node.nodeType !== 1 || RAW.has(node.tagName) || node.matches(MARK)) return;
      for (const name of SEEN_ATTRS) {
        // regions.js names a block that scrolls sideways (role=region) after the heading above it: not a figure
        if (name === "aria-label" && node.getAttribute("role") === "region") continue;
        const value = node.getAttribute(name);
        if (value) out.push({ region: node.closest(REGION).dataset.fbVerified || "(unnamed)", text: `${name}="${value}"` });
      }
      for (const child of node.childNodes) walk(child);
    };
    walk(region);
  }
  return out;
}

const key = (path) => JSON.stringify(path.map(String));

/** Problems of the page's regions: figures outside a mark, required figures outside every region, no region. */
export function regionProblems(doc, figures, required = []) {
  if (!doc.querySelector(REGION)) {
    return [{ field: "page: verifiable regions", published: "(none)", computed: "the regions this kind of page has" }];
  }
  const out = checks.unmarkedProblems(regionSegments(doc));
  const inside = new Set(figures.filter((f) => f.node.closest(REGION)).map((f) => key(f.path)));
  const shown = new Set(figures.map((f) => key(f.path)));
  for (const path of required) {
    if (shown.has(key(path)) && !inside.has(key(path))) {
      out.push({ field: `page: ${checks.pathText(path)}`, published: "(outside the verifiable regions)", computed: "inside a region" });
    }
  }
  return out;
}

/** After a verify, outline what it checked (the regions), so a reader sees what "match" covers. */
export function outline(doc, ok) {
  for (const region of doc.querySelectorAll(REGION)) {
    region.classList.add("fb-region-checked");
    region.classList.toggle("fb-region-mismatch", !ok);
  }
}
