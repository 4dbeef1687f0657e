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
  var dataNode = document.getElementById("report-data");
  if (!findings || !form || !dataNode) { return; }
  var data = JSON.parse(dataNode.textContent);
  var PAGE = 50, SITES_SHOWN = 20;
  var SEVERITIES = ["info", "low", "medium", "high", "critical"];
  var body = findings.tBodies[0];
  var control = function (id) { return document.getElementById(id); };
  var text = control("filter-text"), severity = control("filter-severity"), category = control("filter-category");
  var component = control("filter-component"), disposition = control("filter-disposition");
  var peripheral = control("filter-peripheral");
  var pager = control("pager"), pageInfo = control("page-info");
  var shown = [], page = 0;
  var weighedOnly = false;   // a component's link: the findings its verdict weighed, as its row counts them

  data.groups.forEach(function (g) {
    var rule = data.rules[g.rule] || [g.rule, "", ""];
    g.search = [g.rule, rule[0], rule[2], g.cat, g.disp, g.key].concat(g.sites.map(function (s) { return s[0]; }))
      .join(" ").toLowerCase();
  });

  function el(tag, cls, content) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (content !== undefined && content !== null) { node.textContent = String(content); }
    return node;
  }

  function round(x) { return String(Math.round(x * 10) / 10); }

  function hours(h) {   // engineer-hours, in days once a group costs a day or more
    if (!h[1]) { return ""; }
    var day = data.dayHours;
    return h[1] >= day ? round(h[0] / day) + "–" + round(h[1] / day) + " d" : h[0] + "–" + h[1] + " h";
  }

  function siteBlock(site) {
    var block = el("div", "site");
    var head = el("div", "site-where", site[1] ? site[0] + ":" + site[1] : site[0]);
    if (site[4]) { head.appendChild(document.createTextNode(" ")); head.appendChild(el("span", "tag tag-new", "new")); }
    block.appendChild(head);
    if (site[3] !== null && site[3] !== undefined && data.code[site[3]]) {
      var code = el("div", "code");
      code.innerHTML = data.code[site[3]];   // pygments output, escaped when the page was made
      block.appendChild(code);
    } else if (site[2]) {
      block.appendChild(el("pre", "snippet", site[2]));
    }
    return block;
  }

  function sitesRow(g) {
    var row = el("tr", "sites");
    var cell = el("td");
    cell.colSpan = 3;
    var rule = data.rules[g.rule] || [g.rule, ""];
    if (g.detail) { cell.appendChild(el("p", "group-msg", g.detail)); }
    var list = el("div", "site-list");
    function fill(limit) {
      list.textContent = "";
      g.sites.slice(0, limit).forEach(function (site) { list.appendChild(siteBlock(site)); });
      if (g.sites.length > limit) {
        var more = el("button", "more-sites", "show all " + g.sites.length + " sites");
        more.type = "button";
        more.addEventListener("click", function () { fill(g.sites.length); });
        list.appendChild(more);
      } else if (g.n > g.sites.length) {
        list.appendChild(el("p", "legend", (g.n - g.sites.length) + " more sites are listed in the JSON report."));
      }
    }
    fill(SITES_SHOWN);
    cell.appendChild(list);
    var why = el("p", "docs");
    var link = el("a", null, "Why, and how to fix it: " + g.rule + " " + rule[0]);
    link.href = "#rule-" + g.rule;
    why.appendChild(link);
    cell.appendChild(why);
    row.appendChild(cell);
    return row;
  }

  function ruleRow(g, total) {
    var row = el("tr", "rule-head");
    row.setAttribute("data-rule", g.rule);
    var cell = el("td");
    cell.colSpan = 3;
    var rule = data.rules[g.rule] || [g.rule, ""];
    var head = el("div", "rule-line");
    head.appendChild(el("span", "sev sev-" + SEVERITIES[g.ruleSev], SEVERITIES[g.ruleSev]));
    var id = el("a", "rule", g.rule + " " + rule[0]);
    id.href = "#rule-" + g.rule;
    head.appendChild(id);
    head.appendChild(el("span", "category", g.cat));
    head.appendChild(el("span", "rule-total", total));
    cell.appendChild(head);
    cell.appendChild(el("div", "group-line", rule[2]));
    if (rule[1]) {
      var alt = el("div", "group-alt");
      alt.appendChild(el("span", "label", "ROCm alternative"));
      alt.appendChild(document.createTextNode(" " + rule[1]));
      cell.appendChild(alt);
    }
    row.appendChild(cell);
    return row;
  }

  function groupRow(g) {
    var row = el("tr", "group");
    row.setAttribute("data-rule", g.rule);
    var what = el("td", "what");
    var button = el("button", "expand");
    button.type = "button";
    button.setAttribute("aria-expanded", "false");
    var first = g.sites[0] || ["", 0];
    var where = g.across ? g.key + " — in " + g.files + " files" : (g.n === 1 && first[1] ? first[0] + ":" + first[1] : g.key);
    button.appendChild(el("span", "path", where));
    what.appendChild(button);
    if (g.disp !== "live") { what.appendChild(el("span", "tag disp", g.disp.replace(/-/g, " "))); }
    if (g.sev !== g.ruleSev) { what.appendChild(el("span", "sev sev-" + SEVERITIES[g.sev], SEVERITIES[g.sev])); }
    if (g.new) { what.appendChild(el("span", "tag tag-new", g.new + " new")); }
    row.appendChild(what);
    row.appendChild(el("td", "num", g.n));
    row.appendChild(el("td", "num", hours(g.hours)));
    button.addEventListener("click", function () {
      var open = button.getAttribute("aria-expanded") === "true";
      if (open) {
        if (row.nextSibling && row.nextSibling.className === "sites") { body.removeChild(row.nextSibling); }
      } else {
        body.insertBefore(sitesRow(g), row.nextSibling);
      }
      button.setAttribute("aria-expanded", open ? "false" : "true");
    });
    return row;
  }

  function render() {
    body.textContent = "";
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    var totals = {};
    shown.forEach(function (g) {
      var t = totals[g.rule] || (totals[g.rule] = {n: 0, groups: 0});
      t.n += g.n; t.groups += 1;
    });
    var previous = null;
    shown.slice(page * PAGE, page * PAGE + PAGE).forEach(function (g) {
      if (g.rule !== previous) {
        var t = totals[g.rule];
        body.appendChild(ruleRow(g, t.n.toLocaleString("en-US") + (t.n === 1 ? " site" : " sites") +
          (t.groups > 1 ? " in " + t.groups + " groups" : "")));
        previous = g.rule;
      }
      body.appendChild(groupRow(g));
    });
    pager.hidden = pages <= 1;
    pageInfo.textContent = "page " + (page + 1) + " of " + pages + " (" + shown.length + " groups)";
    control("page-prev").disabled = page === 0;
    control("page-next").disabled = page >= pages - 1;
    if (data.omitted.groups) {
      control("omitted").textContent = data.omitted.groups.toLocaleString("en-US") + " more groups (" +
        data.omitted.findings.toLocaleString("en-US") + " findings) are too many for this page: the JSON report lists them.";
    }
  }

  function apply() {
    var query = text.value.trim().toLowerCase();
    var minimum = Number(severity.value);
    var wantedCategory = category.value;
    var wantedComponent = component ? component.value : "";
    var wantedDisposition = disposition.value;
    var hidePeripheral = peripheral.checked;
    var count = 0;
    shown = data.groups.filter(function (g) {
      if (weighedOnly) {
        var mine = g.wn > 0 && (wantedComponent === "" || String(g.comp) === wantedComponent);
        if (mine) { count += g.wn; }
        return mine;
      }
      var keep = g.sev >= minimum && (!wantedCategory || g.cat === wantedCategory) &&
        (wantedComponent === "" || String(g.comp) === wantedComponent) &&
        (wantedDisposition === "*" ||
         (wantedDisposition === "" ? data.hiddenByDefault.indexOf(g.disp) === -1 : g.disp === wantedDisposition)) &&
        (!hidePeripheral || !g.peri) && (!query || g.search.indexOf(query) !== -1);
      if (keep) { count += g.n; }
      return keep;
    });
    control("shown-count").textContent = count.toLocaleString("en-US");
    control("shown-groups").textContent = shown.length.toLocaleString("en-US");
    page = 0;
    render();
  }

  form.addEventListener("submit", function (event) { event.preventDefault(); });
  function chosen() { weighedOnly = false; apply(); }
  text.addEventListener("input", chosen);
  [severity, category, component, disposition, peripheral].forEach(function (input) {
    if (input) { input.addEventListener("change", chosen); }
  });
  control("page-prev").addEventListener("click", function () { page -= 1; render(); });
  control("page-next").addEventListener("click", function () { page += 1; render(); });
  each(document.querySelectorAll("a.show-rule"), function (link) {
    link.addEventListener("click", function () { text.value = link.getAttribute("data-rule").toLowerCase(); chosen(); });
  });
  each(document.querySelectorAll("a.show-component"), function (link) {
    link.addEventListener("click", function () {
      if (component) { component.value = link.getAttribute("data-component"); }
      weighedOnly = true;   // what the row's verdict weighed, tests and optional code of its own included
      apply();
    });
  });
  apply();
})();
