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
      var width = el.getBoundingClientRect().width;
      if (width && width < 600) {
        // A narrow column (a phone): the legend goes under the plot and long axis labels are cut, so the
        // plot keeps most of the width (beside them it was 47 px wide at 390 px).
        spec.config = spec.config || {};
        spec.config.legend = Object.assign({}, spec.config.legend, { orient: "bottom", direction: "vertical" });
        spec.config.axisY = Object.assign({}, spec.config.axisY, { labelLimit: Math.max(80, Math.round(width * 0.32)) });
      }
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
