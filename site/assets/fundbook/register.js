// Sorting, filtering and search for the run register. Without JavaScript the
// register stays a plain, complete table; this only adds the controls.
(function () {
  "use strict";
  function init() {
    var table = document.querySelector("table[data-fb-register]");
    if (!table) return;
    var controls = document.querySelector(".fb-controls");
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows);
    var search = controls.querySelector("[data-fb-search]");
    var selects = controls.querySelectorAll("[data-fb-filter]");
    var count = controls.querySelector("[data-fb-count]");
    controls.hidden = false;

    function cellKey(row, index, numeric) {
      var cell = row.cells[index];
      var value = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
      return numeric ? Number(value) : value;
    }

    function apply() {
      var needle = search.value.trim().toLowerCase();
      var shown = 0;
      rows.forEach(function (row) {
        var ok = true;
        selects.forEach(function (sel) {
          if (sel.value && row.getAttribute("data-" + sel.getAttribute("data-fb-filter")) !== sel.value) ok = false;
        });
        if (ok && needle) {
          var hay = (row.textContent + " " + Array.prototype.map.call(row.cells, function (c) {
            return c.getAttribute("data-sort") || "";
          }).join(" ")).toLowerCase();
          ok = hay.indexOf(needle) !== -1;
        }
        row.hidden = !ok;
        if (ok) shown += 1;
      });
      count.textContent = shown + " of " + rows.length + " runs";
    }

    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var kind = th.getAttribute("data-fb-sort");
      if (!kind) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "fb-sort";
      button.textContent = th.textContent;
      th.textContent = "";
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (other) {
          if (other.hasAttribute("aria-sort")) other.setAttribute("aria-sort", "none");
        });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var numeric = kind === "number";
        rows.sort(function (a, b) {
          var x = cellKey(a, index, numeric), y = cellKey(b, index, numeric);
          var order = x < y ? -1 : x > y ? 1 : 0;
          if (order === 0) order = cellKey(a, 0, false) < cellKey(b, 0, false) ? -1 : 1;
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { tbody.appendChild(row); });
      });
    });
    search.addEventListener("input", apply);
    selects.forEach(function (sel) { sel.addEventListener("change", apply); });
    apply();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
