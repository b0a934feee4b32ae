// The run register's views, filters, search and sort, all kept in the query
// string (?view=grader&status=MALFORMED&q=W3&sort=score&dir=desc), so a link
// opens the register as it was seen. Without JavaScript the register is its
// plain tables, both views one after the other.
(function () {
  "use strict";
  var PARAMS = ["view", "q", "sort", "dir"];

  function init() {
    var root = document.querySelector("[data-fb-views]");
    if (!root) return;
    var controls = root.querySelector(".fb-controls");
    var search = controls.querySelector("[data-fb-search]");
    var sortSelect = controls.querySelector("[data-fb-sort-select]");
    var count = controls.querySelector("[data-fb-count]");
    var sections = Array.prototype.slice.call(root.querySelectorAll("[data-fb-view-section]"));
    var links = Array.prototype.slice.call(root.querySelectorAll("[data-fb-view-link]"));
    var views = sections.map(function (s) { return s.getAttribute("data-fb-view-section"); });
    var state = { view: views[0], q: "", sort: "", dir: "asc", filters: {} };
    controls.hidden = false;

    function section() { return sections[views.indexOf(state.view)]; }
    function table() { return section().querySelector("table[data-fb-register]"); }
    function filterSelects() {
      return Array.prototype.filter.call(controls.querySelectorAll("[data-fb-filter]"), function (sel) {
        return sel.getAttribute("data-fb-view") === state.view;
      });
    }
    function headers(t) { return t ? Array.prototype.slice.call(t.tHead.rows[0].cells) : []; }

    // Each table keeps its rows in index order, to come back to.
    var original = new Map();
    sections.forEach(function (s) {
      var t = s.querySelector("table[data-fb-register]");
      if (t) original.set(t, Array.prototype.slice.call(t.tBodies[0].rows));
    });

    function readURL() {
      var params = new URLSearchParams(location.search);
      state.view = views.indexOf(params.get("view")) >= 0 ? params.get("view") : views[0];
      state.q = params.get("q") || "";
      state.sort = params.get("sort") || "";
      state.dir = params.get("dir") === "desc" ? "desc" : "asc";
      state.filters = {};
      params.forEach(function (value, key) { if (PARAMS.indexOf(key) < 0) state.filters[key] = value; });
    }

    function writeURL() {
      var params = new URLSearchParams();
      if (state.view !== views[0]) params.set("view", state.view);
      filterSelects().forEach(function (sel) {
        if (sel.value) params.set(sel.getAttribute("data-fb-filter"), sel.value);
      });
      if (state.q) params.set("q", state.q);
      if (state.sort) { params.set("sort", state.sort); params.set("dir", state.dir); }
      var query = params.toString();
      history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
    }

    // A numeric cell with an empty data-sort has no value (an unscored run, an attempt that does not count): null.
    function cellKey(row, index, numeric) {
      var cell = row.cells[index];
      var value = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
      if (numeric && value === "") return null;
      return numeric ? Number(value) : value;
    }

    function sortRows() {
      var t = table();
      if (!t) return;
      var ths = headers(t);
      var index = -1;
      ths.forEach(function (th, i) {
        var on = th.getAttribute("data-fb-key") === state.sort && th.hasAttribute("data-fb-sort");
        if (th.hasAttribute("aria-sort")) th.setAttribute("aria-sort", on ? (state.dir === "asc" ? "ascending" : "descending") : "none");
        if (on) index = i;
      });
      var rows = original.get(t).slice();
      if (index >= 0) {
        var numeric = ths[index].getAttribute("data-fb-sort") === "number";
        rows.sort(function (a, b) {
          var x = cellKey(a, index, numeric), y = cellKey(b, index, numeric);
          var tie = a.getAttribute("data-run-id") < b.getAttribute("data-run-id") ? -1 : 1;
          // rows without a value go last whichever way the column is sorted
          if (x === null || y === null) return x === y ? tie : x === null ? 1 : -1;
          var order = x < y ? -1 : x > y ? 1 : 0;
          if (order === 0) order = tie;
          return state.dir === "asc" ? order : -order;
        });
      }
      rows.forEach(function (row) { t.tBodies[0].appendChild(row); });
    }

    function filterRows() {
      var t = table();
      var needle = state.q.trim().toLowerCase();
      var rows = t ? original.get(t) : [];
      var shown = 0;
      var selects = filterSelects();
      rows.forEach(function (row) {
        var ok = selects.every(function (sel) {
          return !sel.value || row.getAttribute("data-" + sel.getAttribute("data-fb-filter")) === sel.value;
        });
        if (ok && needle) {
          var hay = (row.getAttribute("data-run-id") + " " + row.textContent + " " + Array.prototype.map.call(row.cells, function (c) {
            return c.getAttribute("data-sort") || "";
          }).join(" ")).toLowerCase();
          ok = hay.indexOf(needle) !== -1;
        }
        row.hidden = !ok;
        if (ok) shown += 1;
      });
      count.textContent = shown + " of " + rows.length + " " + section().getAttribute("data-fb-noun");
    }

    function sortOptions() {
      while (sortSelect.options.length > 1) sortSelect.remove(1);
      headers(table()).forEach(function (th) {
        if (!th.hasAttribute("data-fb-sort")) return;
        var key = th.getAttribute("data-fb-key"), name = th.getAttribute("data-fb-name");
        ["asc", "desc"].forEach(function (dir) {
          var opt = document.createElement("option");
          opt.value = key + " " + dir;
          opt.textContent = name + (dir === "asc" ? " ↑" : " ↓");
          sortSelect.appendChild(opt);
        });
      });
      sortSelect.value = state.sort ? state.sort + " " + state.dir : "";
      if (sortSelect.selectedIndex < 0) sortSelect.value = "";
    }

    function render() {
      sections.forEach(function (s) { s.hidden = s !== section(); });
      links.forEach(function (a) {
        if (a.getAttribute("data-fb-view-link") === state.view) a.setAttribute("aria-current", "true");
        else a.removeAttribute("aria-current");
      });
      Array.prototype.forEach.call(controls.querySelectorAll("[data-fb-for-view]"), function (label) {
        label.hidden = label.getAttribute("data-fb-for-view") !== state.view;
      });
      filterSelects().forEach(function (sel) {
        var want = state.filters[sel.getAttribute("data-fb-filter")] || "";
        sel.value = want;
        if (sel.value !== want) sel.value = "";  // a value the view does not have
      });
      search.value = state.q;
      sortOptions();
      sortRows();
      filterRows();
    }

    function update() {
      state.filters = {};
      filterSelects().forEach(function (sel) { if (sel.value) state.filters[sel.getAttribute("data-fb-filter")] = sel.value; });
      state.q = search.value;
      sortRows();
      filterRows();
      writeURL();
    }

    // Header buttons sort too (the phone's cards have the Sort menu instead).
    sections.forEach(function (s) {
      var t = s.querySelector("table[data-fb-register]");
      headers(t).forEach(function (th) {
        var kind = th.getAttribute("data-fb-sort");
        th.setAttribute("data-fb-name", th.textContent.trim());
        if (!kind) return;
        var button = document.createElement("button");
        button.type = "button";
        button.className = "fb-sort";
        button.textContent = th.textContent;
        th.textContent = "";
        th.appendChild(button);
        th.setAttribute("aria-sort", "none");
        button.addEventListener("click", function () {
          var key = th.getAttribute("data-fb-key");
          state.dir = state.sort === key && state.dir === "asc" ? "desc" : "asc";
          state.sort = key;
          sortSelect.value = key + " " + state.dir;
          update();
        });
      });
    });
    links.forEach(function (a) {
      a.addEventListener("click", function (event) {
        event.preventDefault();
        state.view = a.getAttribute("data-fb-view-link");
        state.sort = "";
        state.filters = {};
        render();
        writeURL();
      });
    });
    sortSelect.addEventListener("change", function () {
      var parts = sortSelect.value.split(" ");
      state.sort = parts[0] || "";
      state.dir = parts[1] === "desc" ? "desc" : "asc";
      update();
    });
    search.addEventListener("input", update);
    Array.prototype.forEach.call(controls.querySelectorAll("[data-fb-filter]"), function (sel) {
      sel.addEventListener("change", update);
    });
    window.addEventListener("popstate", function () { readURL(); render(); });
    readURL();
    render();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
