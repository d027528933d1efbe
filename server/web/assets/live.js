"use strict";
// live.js: live heat maps of one or more series. Each map starts from the
// archive (the heat-map route over the last `window`, one column per job
// interval), then follows GET /api/v1/live: an interval that arrives marks
// the columns it covers, which are read again from the heat-map route and
// drawn in the next animation frame; the window shifts left as time goes
// on. Reads are coalesced per series (one in flight, the rest merged), so
// 20 series at 1 s keep up.
//   /live?series=ID[,ID...]&window=15m&scale=linear|log&rows=1|2|4|8
LS.ready(function () {
  var H = LS.heat, q = LS.query();
  var ids = (q.get("series") || "").split(",").map(function (s) { return Number(s.trim()); }).filter(function (n) { return n > 0; });
  var windowMs = H.parseDuration(q.get("window") || "15m");
  if (!(windowMs >= 10000)) windowMs = 15 * 60000;
  var scale = q.get("scale") === "log" ? "log" : "linear";
  var rows = H.rowsParam(q);
  var MAX_COLUMNS = 1500;

  var conn = LS.el("span", { id: "conn", class: "conn conn-connecting", role: "status", "aria-live": "polite" }, "connecting");
  var toolbar = LS.el("div", { class: "toolbar" },
    LS.el("label", { class: "control" }, "Window ", LS.el("select", { id: "window", onchange: function (e) { reload({ window: e.target.value }); } },
      ["5m", "15m", "30m", "1h"].map(function (w) { return LS.el("option", { value: w, selected: H.parseDuration(w) === windowMs }, w); }))),
    H.scaleControl(scale, function (s) {
      scale = s;
      LS.setQuery({ scale: s === "log" ? "log" : null });
      maps.forEach(function (lm) { lm.view.setScale(s); });
    }),
    H.rowsControl(rows, function (k) { reload({ rows: k === 1 ? null : k }); }),
    LS.el("span", {}, "Stream: ", conn));
  LS.main.appendChild(toolbar);
  var grid = LS.el("div", { id: "live-maps", class: "live-grid" + (ids.length > 2 ? " many" : "") });
  LS.main.appendChild(grid);
  function reload(change) { LS.setQuery(change); location.reload(); }

  var maps = [];
  if (!ids.length) {
    LS.main.appendChild(LS.el("p", { id: "no-series" }, "No series chosen: open a series' live view from the ",
      LS.el("a", { href: "/" }, "dashboard"), ", or give ?series=ID[,ID...]."));
    return Promise.resolve();
  }

  return Promise.all([LS.api("/api/v1/series"), LS.api("/api/v1/jobs")]).then(function (r) {
    var byID = {}, intervals = {};
    (r[0].series || []).forEach(function (s) { byID[s.id] = s; });
    (r[1].jobs || []).forEach(function (j) { intervals[j.name] = H.parseDuration(j.interval); });
    ids.forEach(function (id) {
      var s = byID[id];
      if (!s) { LS.banner("series " + id + ": not found"); return; }
      maps.push(liveMap(s, intervals[s.source] || 1000));
    });
    follow();
    return Promise.all(maps.map(function (lm) { return lm.load(); }));
  });

  // liveMap is one series' map: its grid (columns of w ms aligned to the
  // epoch), the model, and the columns waiting to be read again.
  function liveMap(s, interval) {
    var w = Math.max(interval, Math.ceil(windowMs / MAX_COLUMNS / 1000) * 1000);
    var n = Math.max(2, Math.round(windowMs / w));
    var view = new H.Map({ label: "Live heat map of " + H.seriesName(s), scale: scale });
    var head = LS.el("h2", {}, LS.el("a", { href: "/history?series=" + s.id }, H.seriesName(s)), " ",
      LS.el("span", { class: "muted" }, "(" + H.fmtSpan(w) + " columns, " + H.fmtSpan(n * w) + ")"));
    var box = LS.el("section", { class: "live-map", "data-series": s.id }, head, view.node);
    grid.appendChild(box);
    var lm = { s: s, w: w, n: n, view: view, model: null, dirty: null, busy: false, full: false, early: [] };

    function url(from, to, columns) {
      return "/api/v1/series/" + s.id + "/heatmap?from=" + encodeURIComponent(H.iso(from)) + "&to=" + encodeURIComponent(H.iso(to)) +
        "&columns=" + columns + (rows > 1 ? "&rows_per_octave=" + rows : "");
    }
    // load reads the whole window: it ends at the series' last window (the
    // route's default end), rounded up to the grid.
    lm.load = function () {
      var end = lm.model ? lm.model.t0 + n * w : null;
      var first = end ? Promise.resolve(end) : LS.api("/api/v1/series/" + s.id + "/heatmap?columns=1").then(function (m) {
        return Math.ceil(Date.parse(m.window.to) / w) * w;
      });
      return first.then(function (to) {
        return LS.api(url(to - n * w, to, n));
      }).then(function (resp) {
        lm.model = H.model(resp);
        view.setModel(lm.model);
        // Intervals that arrived while the window was read.
        lm.early.splice(0).forEach(function (iv) { lm.mark(iv[0], iv[1]); });
      }, LS.fail("live map of series " + s.id));
    };
    // mark records that an interval [a, b) arrived: its columns are read
    // again; past the window's end the window shifts first.
    lm.mark = function (a, b) {
      if (!lm.model) { lm.early.push([a, b]); return; }
      var m = lm.model, end = m.t0 + n * w;
      if (b > end) {
        var k = Math.ceil((b - end) / w);
        H.shift(m, k);
        if (lm.dirty) { lm.dirty.c0 -= k; lm.dirty.c1 -= k; }
        view.invalidate();
      }
      var c0 = Math.max(0, Math.floor((a - m.t0) / w)), c1 = Math.min(n - 1, Math.ceil((b - m.t0) / w) - 1);
      if (c1 < c0) return;
      lm.dirty = lm.dirty ? { c0: Math.max(0, Math.min(lm.dirty.c0, c0)), c1: Math.max(lm.dirty.c1, c1) } : { c0: c0, c1: c1 };
      lm.pump();
    };
    lm.pump = function () {
      if (lm.busy || (!lm.dirty && !lm.full)) return;
      lm.busy = true;
      var job;
      if (lm.full) { lm.full = false; lm.dirty = null; job = lm.load(); }
      else {
        var d = lm.dirty, m = lm.model, t0 = m.t0;
        lm.dirty = null;
        job = LS.api(url(t0 + d.c0 * w, t0 + (d.c1 + 1) * w, d.c1 - d.c0 + 1)).then(function (resp) {
          // The window may have shifted while the read was in flight.
          var at = d.c0 + Math.round((t0 - lm.model.t0) / w);
          if (!H.splice(lm.model, resp, at)) lm.full = true; // new rows: read the window again
          view.invalidate();
        }, LS.fail("live map of series " + s.id));
      }
      job.then(function () { lm.busy = false; lm.pump(); });
    };
    return lm;
  }

  // follow opens the live stream of every shown series; EventSource
  // reconnects by itself with Last-Event-ID.
  function follow() {
    var byID = {};
    maps.forEach(function (lm) { byID[lm.s.id] = lm; });
    var es = new EventSource("/api/v1/live?id=" + maps.map(function (lm) { return lm.s.id; }).join(","));
    function state(name, text) { conn.className = "conn conn-" + name; conn.textContent = text; conn.setAttribute("data-state", name); }
    es.onopen = function () { state("live", "live"); };
    es.onerror = function () {
      if (es.readyState === EventSource.CLOSED) state("ended", "stream ended");
      else state("reconnecting", "reconnecting");
    };
    es.addEventListener("interval", function (ev) {
      var iv = JSON.parse(ev.data), lm = byID[iv.series];
      if (!lm || !iv.start) return;
      var a = Date.parse(iv.start);
      lm.mark(a, a + iv.seconds * 1000);
    });
    es.addEventListener("lost", function () { maps.forEach(function (lm) { lm.full = true; lm.pump(); }); });
    ["unauthorized", "shutdown", "dropped"].forEach(function (name) {
      es.addEventListener(name, function (ev) {
        var why = "";
        try { why = JSON.parse(ev.data).reason || ""; } catch (e) { why = ""; }
        // dropped and shutdown: the stream resumes by itself (replaying
        // from Last-Event-ID); unauthorized: it is over.
        if (name === "unauthorized") { es.close(); state("ended", "stream ended: " + why); }
        else state("reconnecting", "reconnecting (" + name + (why ? ": " + why : "") + ")");
      });
    });
    window.addEventListener("pagehide", function () { es.close(); });
  }
});
