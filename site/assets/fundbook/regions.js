// Wide content scrolls inside its own region, and the keyboard can reach it:
// every block of the article that scrolls sideways at the current width (a
// table, a <pre> that scrolls itself; the theme already makes a <pre>'s <code>
// focusable) gets
// tabindex=0, role=region and a name (its table's caption, or the heading
// above it); one that no longer scrolls gives them back. Without JavaScript
// the tables still scroll, with a pointer or a touch.
(function () {
  "use strict";
  var SCROLLERS = ".md-typeset__scrollwrap, .fb-register, .fb-days, .fb-receipts, .fb-hashes, .fb-attempts, " +
    ".fb-scroll, .md-typeset table.fb-components, .md-typeset table.fb-gates, .md-typeset pre";

  function heading(el) {
    for (var node = el; node && node.tagName !== "ARTICLE"; node = node.parentElement) {
      for (var prev = node.previousElementSibling; prev; prev = prev.previousElementSibling) {
        if (/^H[1-6]$/.test(prev.tagName)) return prev.textContent.replace(/[¶#]\s*$/, "").trim();
      }
    }
    return "";
  }

  function name(el) {
    var caption = el.querySelector("caption");
    var text = caption ? caption.textContent.trim() : heading(el);
    return (text || "Wide content") + " (scrolls sideways)";
  }

  function mark() {
    var article = document.querySelector("article");
    if (!article) return;
    // innermost first: a wrapper around a region that scrolls is not a second region
    Array.prototype.slice.call(article.querySelectorAll(SCROLLERS)).reverse().forEach(function (el) {
      var scrolls = el.scrollWidth > el.clientWidth + 1 && !el.querySelector("[data-fb-region]");
      var ours = el.hasAttribute("data-fb-region");
      if (scrolls && !ours && !el.hasAttribute("tabindex")) {
        el.setAttribute("data-fb-region", "");
        el.setAttribute("tabindex", "0");
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", name(el));
      } else if (!scrolls && ours) {
        ["data-fb-region", "tabindex", "role", "aria-label"].forEach(function (a) { el.removeAttribute(a); });
      }
    });
    document.documentElement.setAttribute("data-fb-regions", "ready");
  }

  var pending = null;
  function later() {
    if (pending) cancelAnimationFrame(pending);
    pending = requestAnimationFrame(function () { pending = null; mark(); });
  }
  function init() {
    mark();
    var article = document.querySelector("article");
    if (article && typeof ResizeObserver === "function") new ResizeObserver(later).observe(article);
    window.addEventListener("resize", later);
  }
  // After the theme's own script has wrapped the tables (it runs at the end of the body).
  if (document.readyState === "complete") init();
  else window.addEventListener("load", init);
})();
