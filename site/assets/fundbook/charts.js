// Renders every chart on a run page from its inline Vega-Lite spec with the
// vendored vega-embed. `ast: true` uses the expression interpreter instead of
// generated code, so the page's CSP can forbid eval.
(function () {
  "use strict";
  // A title or an axis title longer than the room it has: broken into lines at spaces (Vega draws an array of
  // strings as lines), so a narrow screen shows all of it instead of cutting it at the edge.
  function wrap(text, chars) {
    if (typeof text !== "string" || text.length <= chars) return text;
    var lines = [], line = "";
    text.split(" ").forEach(function (word) {
      if (line && (line + " " + word).length > chars) { lines.push(line); line = word; }
      else line = line ? line + " " + word : word;
    });
    if (line) lines.push(line);
    return lines;
  }

  var LABEL_CHARS = 20;
  // A label as lines of at most LABEL_CHARS, broken after ":", "/", "-" or "." or before a space ("(scripted
  // baseline)" stays whole); a run without a break is cut into pieces, never dropped.
  function breakLabel(label) {
    var parts = label.match(/[^:/\-. ]*[:/\-.]|[^:/\-. ]+| /g) || [label];
    var lines = [], line = "";
    parts.forEach(function (part) {
      if (line && (line + part).trimEnd().length > LABEL_CHARS) { lines.push(line.trim()); line = ""; }
      while (part.length > LABEL_CHARS) { lines.push(part.slice(0, LABEL_CHARS)); part = part.slice(LABEL_CHARS); }
      line += part;
    });
    if (line.trim()) lines.push(line.trim());
    return lines;
  }

  function wrapTitles(spec, width, height) {
    // the title over the whole chart (axes and labels too), from its left edge: centred over a narrow plot it ran
    // past both sides
    if (typeof spec.title === "string") spec.title = { text: spec.title };
    if (spec.title && typeof spec.title.text === "string") {
      spec.title = Object.assign({}, spec.title, { text: wrap(spec.title.text, Math.floor(width / 8)), anchor: "start", frame: "bounds" });
    }
    [spec].concat(spec.layer || []).forEach(function (view) {
      var enc = view.encoding || {};
      if (enc.x && typeof enc.x.title === "string") enc.x.title = wrap(enc.x.title, Math.floor(width / 6.5));
      if (enc.y && typeof enc.y.title === "string" && height) enc.y.title = wrap(enc.y.title, Math.floor(height / 6.5));
    });
  }

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
        // long category labels (an agent's provider, model and kind) are whole, on lines of at most LABEL_CHARS,
        // not cut: each known label maps to its lines (the chart's own rows name them all)
        spec.config.axisY = Object.assign({}, spec.config.axisY, { labelLimit: 0 });
        [spec].concat(spec.layer || []).forEach(function (view) {
          var y = (view.encoding || {}).y;
          var rows = (view.data || spec.data || {}).values || [];
          if (!y || y.type !== "nominal" || !y.field) return;
          var expr = "datum.label", most = 1;
          var labels = rows.map(function (r) { return String(r[y.field]); })
            .filter(function (v, i, a) { return a.indexOf(v) === i; });
          labels.forEach(function (label) {
            var lines = breakLabel(label);
            most = Math.max(most, lines.length);
            expr = "datum.label === " + JSON.stringify(label) + " ? " + JSON.stringify(lines) + " : " + expr;
          });
          y.axis = Object.assign({}, y.axis, { labelExpr: expr });
          // a row as tall as its label's lines, so two agents' names never overlap
          if (typeof spec.height === "number") spec.height = Math.max(spec.height, labels.length * (most * 12 + 10) + 30);
        });
        wrapTitles(spec, width, typeof spec.height === "number" ? spec.height : 0);
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
