"use strict";
// history.js: a series' heat map from the archive over a range, at the
// resolution the screen shows (the server downsamples to one column per
// CSS pixel of the map, at most 1500). Presets, zoom and pan; dragging
// across the map selects columns and shows the report of exactly that
// window (GET /api/v1/report, as `latscope report`); shift-drag selects a
// rectangle and shows the events and time waited within its rows (the
// histogram route's buckets). With fleet=1 the series are those of the
// fleet store (GET /api/v1/fleet/series: every host that writes to it),
// read back through PromQL by the same routes below /api/v1/fleet.
// Everything is in the URL:
//   /history?[fleet=1&]series=ID&from=...&to=...&scale=log&rows=4&sel=FROM,TO[,LOW,HIGH]
LS.ready(function () {
  var H = LS.heat, q = LS.query();
  var st = {
    id: Number(q.get("series")) || 0, from: q.get("from") || "", to: q.get("to") || "",
    scale: q.get("scale") === "log" ? "log" : "linear", rows: H.rowsParam(q), sel: parseSel(q.get("sel"))
  };
  var series = null, view = null, lastEnd = null, loading = null, reportSeq = 0;
  var fleet = q.get("fleet") === "1", base = fleet ? "/api/v1/fleet/series" : "/api/v1/series", storeURL = "";

  function parseSel(s) {
    if (!s) return null;
    var p = s.split(",");
    if (p.length !== 2 && p.length !== 4) return null;
    var sel = { from: p[0], to: p[1] };
    if (p.length === 4) { sel.low = Number(p[2]); sel.high = p[3] === "" || p[3] === "inf" ? null : Number(p[3]); }
    return isNaN(Date.parse(sel.from)) || isNaN(Date.parse(sel.to)) ? null : sel;
  }
  function selParam(sel) {
    if (!sel) return null;
    var p = [sel.from, sel.to];
    if (sel.low !== undefined) p.push(sel.low, sel.high === null ? "inf" : sel.high);
    return p.join(",");
  }
  function save() {
    LS.setQuery({ fleet: fleet ? "1" : null, series: st.id || null, from: st.from, to: st.to, scale: st.scale === "log" ? "log" : null,
      rows: st.rows > 1 ? st.rows : null, sel: selParam(st.sel) });
  }

  return LS.api(base).then(function (b) {
    var list = (b.series || []).filter(function (s) { return s.kind === "histogram"; });
    series = list.filter(function (s) { return s.id === st.id; })[0] || null;
    storeURL = b.store || "";
    if (fleet) LS.main.appendChild(LS.el("p", { id: "fleet-store", class: "muted" }, b.configured ? "Fleet store " + b.store + " (the last day's series)." :
      "No fleet store is configured: see the fleet: block or --prometheus in docs/fleet.md."));
    LS.main.appendChild(picker(list));
    if (!series) {
      LS.main.appendChild(LS.el("p", { id: "no-series" }, list.length ? "Choose a series." : fleet ? "No latscope series in the fleet store." : "No series in the archive yet."));
      return;
    }
    build();
    return load();
  });

  function picker(list) {
    var sel = LS.el("select", { id: "series", onchange: function () { location.assign("/history?" + (fleet ? "fleet=1&" : "") + "series=" + sel.value); } },
      series ? null : LS.el("option", { value: "" }, "—"),
      list.map(function (s) { return LS.el("option", { value: s.id, selected: series && s.id === series.id }, H.seriesName(s)); }));
    return LS.el("div", { class: "toolbar" }, LS.el("label", { class: "control" }, "Series ", sel));
  }

  var rangeText, reportBox, compareLink, zoomSel;
  function build() {
    var presets = ["15m", "1h", "6h", "24h", "7d"].map(function (p) {
      return LS.el("button", { type: "button", "data-preset": p, onclick: function () { preset(p); } }, p);
    });
    rangeText = LS.el("span", { id: "range", class: "muted" });
    zoomSel = LS.el("button", { id: "zoom-sel", type: "button", disabled: true, onclick: zoomToSelection }, "Zoom to selection");
    compareLink = LS.el("a", { id: "compare-link", href: "#" }, "Compare with the previous period");
    LS.main.appendChild(LS.el("div", { class: "toolbar" }, LS.el("span", { class: "control" }, "Last"), presets,
      LS.el("button", { id: "pan-left", type: "button", "aria-label": "Pan left", onclick: function () { pan(-1); } }, "←"),
      LS.el("button", { id: "zoom-in", type: "button", "aria-label": "Zoom in", onclick: function () { zoom(0.5); } }, "+"),
      LS.el("button", { id: "zoom-out", type: "button", onclick: function () { zoom(2); } }, "Zoom out"),
      LS.el("button", { id: "pan-right", type: "button", "aria-label": "Pan right", onclick: function () { pan(1); } }, "→"),
      zoomSel, rangeText));
    LS.main.appendChild(LS.el("div", { class: "toolbar" },
      H.scaleControl(st.scale, function (s) { st.scale = s; save(); view.setScale(s); }),
      H.rowsControl(st.rows, function (k) { st.rows = k; st.sel = st.sel && { from: st.sel.from, to: st.sel.to }; save(); load(); }),
      compareLink,
      LS.el("span", { class: "muted" }, "Drag across the map to select columns, shift-drag for a rectangle of rows.")));
    view = new H.Map({ label: "Heat map of " + H.seriesName(series), scale: st.scale, select: true, onSelect: selected });
    LS.main.appendChild(view.node);
    reportBox = LS.el("section", { id: "selection", "aria-live": "polite" });
    LS.main.appendChild(reportBox);
    LS.key("+", "zoom in", function () { zoom(0.5); });
    LS.key("-", "zoom out", function () { zoom(2); });
    LS.key("ArrowLeft", "pan left", function () { pan(-1); });
    LS.key("ArrowRight", "pan right", function () { pan(1); });
    LS.key("z", "zoom to the selection", zoomToSelection);
    LS.key("x", "clear the selection", function () { st.sel = null; save(); view.setSelection(null); showReport(); });
  }

  function span() { return Date.parse(st.to) - Date.parse(st.from); }
  function setRange(from, to) {
    st.from = H.iso(from); st.to = H.iso(to);
    save();
    return load();
  }
  function zoom(f) {
    if (!st.from) return;
    var mid = (Date.parse(st.from) + Date.parse(st.to)) / 2, half = Math.max(span() * f / 2, 5000);
    setRange(mid - half, mid + half);
  }
  function pan(dir) { if (st.from) setRange(Date.parse(st.from) + dir * span() / 2, Date.parse(st.to) + dir * span() / 2); }
  function zoomToSelection() {
    if (!st.sel) return;
    var sel = st.sel;
    st.sel = null;
    setRange(Date.parse(sel.from), Date.parse(sel.to));
  }
  // preset: the last p before the series' last window.
  function preset(p) {
    var end = lastEnd ? Promise.resolve(lastEnd) : LS.api(base + "/" + series.id + "/heatmap?columns=1").then(function (m) { return Date.parse(m.window.to); });
    return end.then(function (to) { lastEnd = to; st.sel = null; return setRange(to - H.parseDuration(p), to); });
  }

  // load reads the map for the range: one column per pixel of the map.
  function load() {
    var columns = Math.min(1500, Math.floor(view.mapWidth()));
    var url = base + "/" + series.id + "/heatmap?columns=" + columns + (st.from ? "&from=" + encodeURIComponent(st.from) : "") +
      (st.to ? "&to=" + encodeURIComponent(st.to) : "") + (st.rows > 1 ? "&rows_per_octave=" + st.rows : "");
    var mine = loading = LS.api(url).then(function (resp) {
      if (mine !== loading) return; // a newer range was asked for meanwhile
      if (!st.to) lastEnd = Date.parse(resp.window.to);
      // A relative or missing range becomes the absolute one read, so the
      // URL reopens this view later.
      st.from = H.iso(Date.parse(resp.window.from)); st.to = H.iso(Date.parse(resp.window.to));
      save();
      var m = H.model(resp);
      view.setModel(m);
      rangeText.textContent = H.fmtRange(m.t0, m.t0 + m.n * m.w) + " · " + m.n + " columns of " + H.fmtSpan(m.w) + " · " +
        (m.resolution === "raw" ? "raw windows" : m.resolution + " tier");
      var prevFrom = H.iso(Date.parse(st.from) - span());
      compareLink.hidden = fleet; // compare reads the archive
      compareLink.href = "/compare?series=" + series.id + "&a_from=" + encodeURIComponent(prevFrom) + "&a_to=" + encodeURIComponent(st.from) +
        "&b_from=" + encodeURIComponent(st.from) + "&b_to=" + encodeURIComponent(st.to);
      view.setSelection(selToCells(st.sel));
      return showReport();
    }, LS.fail("heat map"));
    return mine;
  }

  // selToCells places the URL's selection on the map's columns and rows.
  function selToCells(sel) {
    var m = view.model;
    if (!sel || !m) return null;
    var c0 = Math.round((Date.parse(sel.from) - m.t0) / m.w), c1 = Math.round((Date.parse(sel.to) - m.t0) / m.w) - 1;
    if (c1 < 0 || c0 >= m.n) return null; // panned away from it: the report stays, the mark goes
    var cells = { c0: Math.max(0, c0), c1: Math.min(m.n - 1, Math.max(c0, c1)) };
    if (sel.low !== undefined) {
      var r0 = -1, r1 = -1;
      m.rows.forEach(function (r, i) {
        if (r0 < 0 && close(r.low, sel.low)) r0 = i;
        if (sel.high === null ? r.high === null : close(r.high, sel.high)) r1 = i;
      });
      if (r0 >= 0 && r1 >= r0) { cells.r0 = r0; cells.r1 = r1; }
    }
    return cells;
  }
  function close(a, b) { return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)); }

  // selected turns the dragged cells into the URL's selection: the
  // columns' times and, for a rectangle, the rows' latency bounds.
  function selected(cells) {
    var m = view.model;
    st.sel = { from: H.iso(m.t0 + cells.c0 * m.w), to: H.iso(m.t0 + (cells.c1 + 1) * m.w) };
    if (cells.r0 !== undefined) { st.sel.low = m.rows[cells.r0].low; st.sel.high = m.rows[cells.r1].high; }
    save();
    showReport();
  }

  function showReport() {
    var sel = st.sel, seq = ++reportSeq;
    zoomSel.disabled = !sel;
    LS.clear(reportBox);
    reportBox.removeAttribute("data-ready");
    if (!sel) { reportBox.appendChild(LS.el("p", { class: "muted" }, "No selection.")); return Promise.resolve(); }
    var head = LS.el("h2", {}, "Selection: " + H.fmtRange(Date.parse(sel.from), Date.parse(sel.to)));
    reportBox.appendChild(head);
    reportBox.appendChild(LS.el("p", { class: "muted", id: "sel-window", "data-from": sel.from, "data-to": sel.to }, "from " + sel.from + " to " + sel.to));
    var done = sel.low !== undefined ? rectangle(sel) : selectionReport(sel).then(function (e) {
      if (seq !== reportSeq) return;
      reportBox.appendChild(H.reportNode(e, "report"));
      reportBox.appendChild(LS.el("p", { class: "muted" }, "As ", LS.el("code", {}, cliReport(sel)), " answers."));
    });
    return done.then(function () { if (seq === reportSeq) reportBox.setAttribute("data-ready", "1"); }, LS.fail("selection report"));
  }

  // selectionReport is `latscope report`'s entry for the series over the
  // selection: from the archive's report route, or for a fleet series
  // from its histogram route (the same summary, read through PromQL).
  function selectionReport(sel) {
    if (!fleet) return H.report(series, sel.from, sel.to);
    return LS.api(base + "/" + series.id + "/histogram?from=" + encodeURIComponent(sel.from) + "&to=" + encodeURIComponent(sel.to)).then(function (r) {
      return r.histogram || null;
    });
  }
  function cliReport(sel) {
    if (!fleet) return "latscope report DATA --series '" + H.glob(series.source) + "' --event '" + series.event + "' --from " + sel.from + " --to " + sel.to + " --format json";
    return "latscope report 'promql+" + storeURL + "?host=" + series.host + "&job=" + series.job + "' --event '" + series.event +
      "' --from " + sel.from + " --until " + sel.to + " --format json";
  }

  // rectangle sums the window's buckets that lie within the rows: the
  // events and time waited at those latencies.
  function rectangle(sel) {
    return LS.api(base + "/" + series.id + "/histogram?from=" + encodeURIComponent(sel.from) + "&to=" + encodeURIComponent(sel.to)).then(function (r) {
      var h = r.histogram, lowUs = sel.low * 1e6, highUs = sel.high === null ? Infinity : sel.high * 1e6;
      var inside = (h ? h.buckets : []).filter(function (b) {
        var mid = b.lower_us === 0 ? b.upper_us / 2 : (b.lower_us + b.upper_us) / 2;
        return mid >= lowUs && mid < highUs;
      });
      var count = 0, sum = 0;
      inside.forEach(function (b) { count += b.count; sum += b.sum_us; });
      var secs = (Date.parse(sel.to) - Date.parse(sel.from)) / 1000;
      var total = h ? h.count : 0;
      reportBox.appendChild(LS.el("div", { id: "rect", class: "report" },
        LS.el("p", {}, "Latency " + LS.fmtSeconds(sel.low) + " – " + (sel.high === null ? "∞" : LS.fmtSeconds(sel.high)) +
          " (buckets whose middle lies in the selected rows)"),
        LS.el("dl", { class: "figures" },
          LS.el("dt", {}, "events"), LS.el("dd", { "data-k": "count", "data-v": count }, LS.fmtNumber(count, 2)),
          LS.el("dt", {}, "share of the window's events"), LS.el("dd", { "data-k": "share" }, total ? (100 * count / total).toFixed(2) + " %" : "–"),
          LS.el("dt", {}, "events/s"), LS.el("dd", { "data-k": "per_s" }, H.fmtRate(count / secs)),
          LS.el("dt", {}, "time waited"), LS.el("dd", { "data-k": "sum_us", "data-v": sum }, LS.fmtSeconds(sum / 1e6)),
          LS.el("dt", {}, "time waited/s"), LS.el("dd", { "data-k": "waited_per_s" }, LS.fmtSeconds(sum / 1e6 / secs))),
        LS.table("Buckets in the rows", [
          { label: "latency", value: function (b) { return LS.fmtSeconds(b.lower_us / 1e6) + " – " + LS.fmtSeconds(b.upper_us / 1e6); } },
          { label: "events", num: true, value: function (b) { return LS.fmtNumber(b.count, 2); } },
          { label: "time waited", num: true, value: function (b) { return LS.fmtSeconds(b.sum_us / 1e6); } }
        ], inside, { class: "buckets" })));
    });
  }
});
