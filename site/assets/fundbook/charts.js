// Renders every chart on a run page from its inline Vega-Lite spec with the
// vendored vega-embed. `ast: true` uses the expression interpreter instead of
// generated code, so the page's CSP can forbid eval.
(function () {
  "use strict";
  function render() {
    document.querySelectorAll(".fb-chart[data-spec-id]").forEach(function (el) {
      var island = document.getElementById(el.getAttribute("data-spec-id"));
      if (!island || typeof vegaEmbed !== "function") return;
      var spec = JSON.parse(island.textContent);
      vegaEmbed(el, spec, { actions: false, ast: true, renderer: "svg" })
        .then(function () { el.setAttribute("data-rendered", "true"); })
        .catch(function (err) {
          el.setAttribute("data-rendered", "error");
          el.textContent = "Chart could not be drawn: " + err.message + " (the table above has the same numbers).";
        });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", render);
  else render();
})();
