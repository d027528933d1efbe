"use strict";
// compare.js: two ranges (of one series, or of two) side by side on the
// same latency rows and the same colour scale, their reports side by
// side, and a difference view: per latency row the events/s of A and of
// B with the difference, and the shifts of p50, p90 and p99.
//   /compare?series=ID&a_from=...&a_to=...&b_from=...&b_to=...[&series_b=ID2][&scale=log]
LS.ready(function () {
  var H = LS.heat, q = LS.query();
  var idA = Number(q.get("series")) || 0, idB = Number(q.get("series_b")) || idA;
  var scale = q.get("scale") === "log" ? "log" : "linear";
  var sides = [
    { name: "A", id: idA, from: q.get("a_from") || "", to: q.get("a_to") || "" },
    { name: "B", id: idB, from: q.get("b_from") || "", to: q.get("b_to") || "" }
  ];

  return LS.api("/api/v1/series").then(function (b) {
    var list = (b.series || []).filter(function (s) { return s.kind === "histogram"; });
    var byID = {};
    list.forEach(function (s) { byID[s.id] = s; });
    LS.main.appendChild(form(list));
    sides.forEach(function (sd) { sd.s = byID[sd.id]; });
    if (!sides[0].s || !sides[1].s || sides.some(function (sd) { return !sd.from || !sd.to; })) {
      LS.main.appendChild(LS.el("p", { id: "no-series" }, "Choose a series and two ranges (or open this page from a history view's " +
        "\"Compare with the previous period\")."));
      return;
    }
    return draw();
  });

  // form edits the comparison; submitting reloads the page with its URL.
  function form(list) {
    var opts = function (id) {
      return list.map(function (s) { return LS.el("option", { value: s.id, selected: s.id === id }, H.seriesName(s)); });
    };
    var input = function (name, value) { return LS.el("input", { id: name, name: name, value: value, size: 26 }); };
    return LS.el("form", { class: "form", method: "get", action: "/compare" },
      LS.el("label", { for: "series" }, "Series A"), LS.el("select", { id: "series", name: "series" }, opts(idA)),
      LS.el("label", { for: "a_from" }, "A from"), input("a_from", sides[0].from),
      LS.el("label", { for: "a_to" }, "A to"), input("a_to", sides[0].to),
      LS.el("label", { for: "series_b" }, "Series B"), LS.el("select", { id: "series_b", name: "series_b" }, opts(idB)),
      LS.el("label", { for: "b_from" }, "B from"), input("b_from", sides[1].from),
      LS.el("label", { for: "b_to" }, "B to"), input("b_to", sides[1].to),
      LS.el("div", { class: "hint" }, "Times as the API takes them: 2026-11-26T03:10:00Z, 2026-11-26 03:10, -1h, now."),
      LS.el("div", { class: "actions" }, LS.el("button", { class: "primary", type: "submit" }, "Compare")));
  }

  function draw() {
    var toolbar = LS.el("div", { class: "toolbar" }, H.scaleControl(scale, function (s) {
      scale = s;
      LS.setQuery({ scale: s === "log" ? "log" : null });
      sides.forEach(function (sd) { sd.view.setScale(s); });
    }));
    var maps = LS.el("div", { class: "compare-maps" });
    LS.main.appendChild(toolbar);
    LS.main.appendChild(maps);
    sides.forEach(function (sd) {
      sd.view = new H.Map({ label: "Range " + sd.name + ": heat map of " + H.seriesName(sd.s), scale: scale });
      sd.box = LS.el("section", { class: "compare-side", id: "side-" + sd.name.toLowerCase() },
        LS.el("h2", {}, sd.name + ": ", LS.el("a", { href: "/history?series=" + sd.s.id + "&from=" + encodeURIComponent(sd.from) + "&to=" + encodeURIComponent(sd.to) }, H.seriesName(sd.s))),
        sd.view.node);
      maps.appendChild(sd.box);
    });
    return Promise.all(sides.map(function (sd) {
      var columns = Math.min(1500, Math.floor(sd.view.mapWidth()));
      return Promise.all([
        LS.api("/api/v1/series/" + sd.s.id + "/heatmap?columns=" + columns + "&from=" + encodeURIComponent(sd.from) + "&to=" + encodeURIComponent(sd.to)),
        H.report(sd.s, sd.from, sd.to)
      ]).then(function (r) { sd.model = H.model(r[0]); sd.report = r[1]; });
    })).then(function () {
      // One latency axis and one colour scale for both maps.
      H.unifyRows(sides.map(function (sd) { return sd.model; }));
      var ext = H.extent(sides.map(function (sd) { return sd.model; }));
      sides.forEach(function (sd) {
        sd.view.opts.extent = ext;
        sd.view.setModel(sd.model);
        sd.box.appendChild(LS.el("h3", {}, "Report " + sd.name + ": " + H.fmtRange(sd.model.t0, sd.model.t0 + sd.model.n * sd.model.w)));
        sd.box.appendChild(H.reportNode(sd.report, "report-" + sd.name.toLowerCase()));
      });
      LS.main.appendChild(difference());
    }, LS.fail("compare"));
  }

  // rowRates are a model's events/s per row while observed: Σ f·observed / Σ observed.
  function rowRates(m) {
    var out = m.rows.map(function () { return 0; }), seconds = 0;
    for (var c = 0; c < m.n; c++) {
      var col = m.freq[c], obs = m.observed[c] || 0;
      if (!col || !obs) continue;
      seconds += obs;
      for (var r = 0; r < col.length; r++) out[r] += col[r] * obs;
    }
    return out.map(function (v) { return seconds ? v / seconds : 0; });
  }

  function difference() {
    var a = sides[0], b = sides[1], ra = rowRates(a.model), rb = rowRates(b.model);
    var max = Math.max.apply(null, ra.concat(rb).concat([1e-12]));
    var rows = a.model.rows.map(function (row, i) { return { row: row, a: ra[i], b: rb[i] }; }).reverse(); // slowest first, as the map
    var bar = function (v, cls) {
      var s = LS.el("span", { class: cls });
      s.style.width = Math.max(v > 0 ? 1 : 0, Math.round(160 * v / max)) + "px";
      return s;
    };
    var diffCell = function (d) { return LS.el("span", { class: d > 0 ? "up" : d < 0 ? "down" : null }, (d > 0 ? "+" : "") + H.fmtRate(d)); };
    var table = LS.table("Events/s per latency row (while observed)", [
      { label: "latency", value: function (r) { return r.row.label; } },
      { label: "A", num: true, value: function (r) { return [H.fmtRate(r.a) + " ", bar(r.a, "bar-a")]; } },
      { label: "B", num: true, value: function (r) { return [H.fmtRate(r.b) + " ", bar(r.b, "bar-b")]; } },
      { label: "B − A", num: true, value: function (r) { return diffCell(r.b - r.a); } },
      { label: "B / A", num: true, value: function (r) { return r.a > 0 ? (r.b / r.a).toFixed(2) + "×" : r.b > 0 ? "new" : "–"; } }
    ], rows, { id: "diff-rows" });
    var shift = function (key, label) {
      var va = a.report ? a.report[key] : null, vb = b.report ? b.report[key] : null;
      return { label: label, a: va, b: vb };
    };
    var shifts = LS.table("Percentile shifts", [
      { label: "", value: function (r) { return r.label; } },
      { label: "A", num: true, value: function (r) { return LS.fmtSeconds(r.a === null ? null : r.a / 1e6); } },
      { label: "B", num: true, value: function (r) { return LS.fmtSeconds(r.b === null ? null : r.b / 1e6); } },
      { label: "B − A", num: true, value: function (r) {
        if (r.a === null || r.b === null) return "–";
        var d = (r.b - r.a) / 1e6;
        return LS.el("span", { class: d > 0 ? "up" : d < 0 ? "down" : null, "data-v": d }, (d > 0 ? "+" : "") + LS.fmtSeconds(d));
      } },
      { label: "B / A", num: true, value: function (r) { return r.a > 0 && r.b !== null ? (r.b / r.a).toFixed(2) + "×" : "–"; } }
    ], [shift("mean_us", "mean"), shift("p50_us", "p50"), shift("p90_us", "p90"), shift("p99_us", "p99")], { id: "diff-shifts" });
    return LS.el("section", { id: "difference", "aria-labelledby": "diff-h" }, LS.el("h2", { id: "diff-h" }, "Difference (B against A)"),
      LS.el("p", {}, LS.el("span", { class: "sw bar-a" }), " A  ", LS.el("span", { class: "sw bar-b" }), " B; in the differences, red: B higher, green: B lower."),
      LS.el("div", { class: "report-grid" }, shifts, table));
  }
});
