(function () {
  "use strict";

  function each(list, fn) { Array.prototype.forEach.call(list, fn); }

  function cellKey(row, col) {
    var cell = row.cells[col];
    return cell.hasAttribute("data-key") ? cell.getAttribute("data-key") : cell.textContent.trim();
  }

  function sortBy(table, col, th) {
    var numeric = th.getAttribute("data-sort") === "number";
    var dir = th.getAttribute("aria-sort") === "descending" ? 1 : -1;
    if (!numeric) { dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1; }
    each(table.tHead.rows[0].cells, function (other) { other.removeAttribute("aria-sort"); });
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellKey(a, col), y = cellKey(b, col), order;
      order = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
      return dir * order || (Number(a.getAttribute("data-order")) - Number(b.getAttribute("data-order")));
    });
    rows.forEach(function (row) { body.appendChild(row); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
  }

  each(document.querySelectorAll("table.sortable"), function (table) {
    each(table.tBodies[0].rows, function (row, i) {
      if (!row.hasAttribute("data-order")) { row.setAttribute("data-order", String(i)); }
    });
    each(table.tHead.rows[0].cells, function (th, col) {
      if (!th.hasAttribute("data-sort")) { return; }
      th.tabIndex = 0;
      th.title = "sort";
      th.addEventListener("click", function () { sortBy(table, col, th); });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(table, col, th); }
      });
    });
  });

  var findings = document.getElementById("findings");
  var form = document.getElementById("filters");
  if (!findings || !form) { return; }
  var text = document.getElementById("filter-text");
  var severity = document.getElementById("filter-severity");
  var category = document.getElementById("filter-category");
  var guarded = document.getElementById("filter-guarded");
  var shown = document.getElementById("shown-count");

  function apply() {
    var query = text.value.trim().toLowerCase();
    var minimum = Number(severity.value);
    var wanted = category.value;
    var withGuarded = guarded.checked;
    var count = 0;
    each(findings.tBodies[0].rows, function (row) {
      var visible = Number(row.getAttribute("data-rank")) >= minimum &&
        (!wanted || row.getAttribute("data-category") === wanted) &&
        (withGuarded || row.getAttribute("data-guarded") !== "true") &&
        (!query || row.getAttribute("data-search").indexOf(query) !== -1);
      row.hidden = !visible;
      if (visible) { count += 1; }
    });
    shown.textContent = String(count);
  }

  form.addEventListener("submit", function (event) { event.preventDefault(); });
  text.addEventListener("input", apply);
  severity.addEventListener("change", apply);
  category.addEventListener("change", apply);
  guarded.addEventListener("change", apply);
  apply();
})();
