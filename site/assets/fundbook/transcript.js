// A transcript page's "errors only" filter and "open every checkpoint"
// button. The filter hides every step (and every checkpoint) without an
// error or refusal mark and opens the rest; it is kept in the query string
// (?errors=1), so a link can point at the problems. Without JavaScript the
// page shows every checkpoint, folded, with its marks.
(function () {
  "use strict";
  function init() {
    var controls = document.querySelector(".fb-transcript-controls");
    if (!controls) return;
    var box = controls.querySelector("[data-fb-errors-only]");
    var out = controls.querySelector("[data-fb-errors-count]");
    var openAll = controls.querySelector("[data-fb-open-all]");
    var days = Array.prototype.slice.call(document.querySelectorAll("details[data-fb-day]"));
    controls.hidden = false;

    function title(day) { return document.getElementById(day.getAttribute("data-fb-day")); }

    function apply(fromUser) {
      var only = box.checked;
      var steps = 0;
      days.forEach(function (day) {
        var marked = day.getAttribute("data-fb-marked") === "yes";
        var hide = only && !marked;
        day.hidden = hide;
        var h = title(day);
        if (h) h.hidden = hide;
        Array.prototype.forEach.call(day.querySelectorAll("section.fb-step"), function (step) {
          var show = !only || step.getAttribute("data-fb-marked") === "yes";
          step.hidden = !show;
          if (only && show) steps += 1;
        });
        if (only && marked) day.open = true;
      });
      out.textContent = only ? steps + " marked step" + (steps === 1 ? "" : "s") + " shown" : "";
      if (fromUser) {
        var params = new URLSearchParams(location.search);
        if (only) params.set("errors", "1"); else params.delete("errors");
        var query = params.toString();
        history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
      }
    }

    // A link to a step or a checkpoint opens the checkpoint that holds it.
    function reveal() {
      if (!location.hash) return;
      var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
      var day = target && (target.closest("details[data-fb-day]") ||
        (target.nextElementSibling && target.nextElementSibling.matches("details[data-fb-day]") ? target.nextElementSibling : null));
      if (day) day.open = true;
    }

    box.checked = new URLSearchParams(location.search).get("errors") === "1";
    box.addEventListener("change", function () { apply(true); });
    openAll.addEventListener("click", function () {
      var open = days.some(function (d) { return !d.open && !d.hidden; });
      days.forEach(function (d) { if (!d.hidden) d.open = open; });
      openAll.textContent = open ? "Fold every checkpoint" : "Open every checkpoint";
    });
    window.addEventListener("hashchange", reveal);
    apply(false);
    reveal();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
