"use strict";
// dashboard.js: the jobs and their series at a glance: each job's state
// and last interval, each series' p50/p99 over the last hour as a
// sparkline (gaps shown), with links to its live and historical maps.
LS.ready(function () {
  var main = LS.main;
  var jobsBox = LS.el("section", { "aria-labelledby": "jobs-h" }, LS.el("h2", { id: "jobs-h" }, "Jobs"));
  var seriesBox = LS.el("section", { "aria-labelledby": "series-h" }, LS.el("h2", { id: "series-h" }, "Series"),
    LS.el("p", { class: "muted" }, "Sparklines: the last hour, ", LS.el("span", { class: "legend-p50" }, "p50"), " and ",
      LS.el("span", { class: "legend-p99" }, "p99"), " per minute on a log scale; grey bands are windows nobody observed."));
  main.appendChild(jobsBox);
  main.appendChild(seriesBox);

  var jobsTable = null;
  function stateCell(j) {
    var s = LS.el("span", { class: "state-" + j.state }, j.state);
    if (j.last_error) return [s, LS.el("div", { class: "muted" }, j.last_error)];
    return s;
  }
  function drawJobs(list) {
    var t = LS.table(null, [
      { label: "Job", value: function (j) { return j.name; } },
      { label: "Source", value: function (j) { return j.source; } },
      { label: "State", value: stateCell },
      { label: "Interval", value: function (j) { return j.schedule ? j.interval + ", " + j.schedule : j.interval; } },
      { label: "Last interval", value: function (j) { return j.last_interval ? LS.el("time", { datetime: j.last_interval, title: LS.fmtTime(j.last_interval) }, LS.fmtAgo(j.last_interval)) : "never"; } },
      { label: "Intervals", num: true, value: function (j) { return LS.fmtNumber(j.intervals, 0); } },
      { label: "Restarts", num: true, value: function (j) { return LS.fmtNumber(j.restarts, 0); } }
    ], list, { id: "jobs" });
    if (jobsTable) jobsBox.replaceChild(t, jobsTable); else jobsBox.appendChild(t);
    jobsTable = t;
  }
  function loadJobs() { return LS.api("/api/v1/jobs").then(function (b) { drawJobs(b.jobs || []); }, LS.fail("jobs")); }

  function drawSeries(list) {
    if (!list.length) {
      seriesBox.appendChild(LS.el("p", { id: "no-series" }, "No series yet: the jobs have not written an interval."));
      return;
    }
    var rows = list.map(function (s) { return { s: s, spark: LS.el("span", { class: "spark-box" }, "…") }; });
    seriesBox.appendChild(LS.table(null, [
      { label: "Source (job)", value: function (r) { return r.s.source; } },
      { label: "Event", value: function (r) { return r.s.event + (r.s.instance ? " [" + r.s.instance + "]" : "") + (r.s.key_source ? " (" + r.s.key_source + ")" : ""); } },
      { label: "Kind", value: function (r) { return r.s.kind; } },
      { label: "Last hour", value: function (r) { return r.spark; } },
      { label: "Views", value: function (r) {
        return [LS.el("a", { href: "/live?series=" + r.s.id }, "live"), " · ", LS.el("a", { href: "/history?series=" + r.s.id }, "history")];
      } }
    ], rows, { id: "series" }));
    return Promise.all(rows.map(function (r) {
      if (r.s.kind === "histogram") return sparkline(r);
      LS.clear(r.spark).appendChild(document.createTextNode("mean series"));
    }));
  }

  // sparkline draws p50 and p99 of the last hour from the heat-map route
  // (60 columns), on a log latency axis, gaps as grey bands.
  function sparkline(r) {
    return LS.api("/api/v1/series/" + r.s.id + "/heatmap?from=-1h&to=now&columns=60").then(function (m) {
      LS.clear(r.spark).appendChild(sparkSVG(m));
    }, function (e) { LS.clear(r.spark).appendChild(document.createTextNode("–")); LS.fail("sparkline")(e); });
  }
  function sparkSVG(m) {
    var w = 180, h = 34, n = m.columns || (m.p50 || []).length;
    var vals = [];
    (m.p50 || []).concat(m.p99 || []).forEach(function (v) { if (v > 0) vals.push(Math.log(v)); });
    var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
    if (!vals.length) { lo = 0; hi = 1; }
    if (hi - lo < 1e-9) { lo -= 0.5; hi += 0.5; }
    var svg = LS.el("svg:svg", { class: "spark", width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img",
      "aria-label": "p50 " + LS.fmtSeconds(m.totals && m.totals.p50) + ", p99 " + LS.fmtSeconds(m.totals && m.totals.p99) + " over the last hour" });
    var cw = w / Math.max(n, 1);
    (m.frequency || []).forEach(function (col, i) {
      if (col === null) svg.appendChild(LS.el("svg:rect", { class: "gap", x: (i * cw).toFixed(1), y: 0, width: cw.toFixed(1), height: h }));
    });
    ["p50", "p99"].forEach(function (name) {
      var d = "", pen = false;
      (m[name] || []).forEach(function (v, i) {
        if (!(v > 0)) { pen = false; return; }
        // A step per column: the value holds for the column's span, so a
        // lone column shows as well as a run of them.
        var y = (h - 2 - (Math.log(v) - lo) / (hi - lo) * (h - 4)).toFixed(1);
        d += (pen ? "L" : "M") + (i * cw).toFixed(1) + " " + y + "L" + ((i + 1) * cw).toFixed(1) + " " + y;
        pen = true;
      });
      if (d) svg.appendChild(LS.el("svg:path", { class: name, d: d }));
    });
    return svg;
  }

  // The fleet: the series of the fleet store, when one is configured,
  // each opening the history page on the store's data; a filter narrows
  // a long list (thousands of hosts) by host, job or event.
  function drawFleet(b) {
    if (!b.configured) return;
    var box = LS.el("section", { id: "fleet" }, LS.el("h2", {}, "Fleet"),
      LS.el("p", { class: "muted" }, "Series in the fleet store " + b.store + " over the last day: " + b.series.length + "."));
    LS.main.appendChild(box);
    var filter = LS.el("input", { id: "fleet-filter", type: "search", placeholder: "host, job or event", "aria-label": "Filter the fleet's series" });
    var shown = 200, holder = LS.el("div", {});
    box.appendChild(LS.el("label", { class: "control" }, "Filter ", filter));
    box.appendChild(holder);
    function draw() {
      var text = filter.value.toLowerCase();
      var rows = b.series.filter(function (s) { return !text || (s.host + " " + s.job + " " + s.event + " " + s.instance).toLowerCase().indexOf(text) >= 0; });
      LS.clear(holder);
      holder.appendChild(LS.table(null, [
        { label: "Host", value: function (s) { return s.host; } },
        { label: "Job", value: function (s) { return s.job + (s.source_kind ? " (" + s.source_kind + ")" : ""); } },
        { label: "Event", value: function (s) { return s.event + (s.instance ? " [" + s.instance + "]" : ""); } },
        { label: "View", value: function (s) { return LS.el("a", { href: "/history?fleet=1&series=" + s.id }, "history"); } }
      ], rows.slice(0, shown), { id: "fleet-series" }));
      if (rows.length > shown) holder.appendChild(LS.el("p", { class: "muted" }, rows.length - shown + " more: narrow the filter."));
    }
    filter.addEventListener("input", draw);
    draw();
  }

  var first = Promise.all([loadJobs(), LS.api("/api/v1/series").then(function (b) { return drawSeries(b.series || []); }, LS.fail("series")),
    LS.api("/api/v1/fleet/series").then(drawFleet, LS.fail("fleet"))]);
  // Job states change while the page is open.
  setInterval(function () { if (!document.hidden) loadJobs(); }, 5000);
  LS.key("R", "reload the jobs", loadJobs);
  return first;
});
