"use strict";
// heatmap.js: the canvas heat map the live, history and compare pages
// share. It draws one series' matrix from GET /api/v1/series/{id}/heatmap
// in OraLatencyMap's layout: the frequency map (events/s) above the
// intensity map (time waited/s), latency rows bottom-up with octave labels,
// p50 and p99 over both, the mean series under them on the same UTC time
// axis. Colours are latscope's 6-level palettes (view/heatmap), on a
// linear or log scale. Cells go into an ImageData in one pass, so 1500
// columns × 40 rows draw in a few milliseconds; overlays (selection,
// cursor) are drawn over a cached copy.
(function () {
  var H = {};
  LS.heat = H;
  LS.heatmaps = []; // every map of the page, for tests and screenshots

  // The palettes of view/heatmap (xterm 15, 51..21 and 15, 226..196):
  // index 0 is an observed cell without events, 1..6 the levels.
  var PALETTES = {
    frequency: ["#ffffff", "#00ffff", "#00d7ff", "#00afff", "#0087ff", "#005fff", "#0000ff"],
    intensity: ["#ffffff", "#ffff00", "#ffd700", "#ffaf00", "#ff8700", "#ff5f00", "#ff0000"]
  };
  var LEVELS = 6;
  var GAP = "#dde1e6"; // no source observed the column: blank
  var DOT = "#6b7480"; // the '.' of an observed column without events
  var P50 = "#000000", P99 = "#c000c0";
  var MEAN_COLOURS = ["#1b1f24", "#0b7a75", "#7a4d00", "#5b2a86", "#a40e26"];
  H.palettes = PALETTES;

  // ---- the model: a matrix on columns of equal width ----------------------
  // H.model(resp) keeps a heat-map response as the pages change it: t0
  // and w in ms, rows bottom-up, per column the cells (null: a gap).
  H.model = function (resp) {
    var m = {
      series: resp.series, t0: Date.parse(resp.window.from), w: resp.column_seconds * 1000, n: resp.columns,
      resolution: resp.window.resolution, rows: resp.rows || [], rowsPerOctave: resp.rows_per_octave || 1, rowsNote: resp.rows_note || "",
      freq: resp.frequency || nulls(resp.columns), inten: resp.intensity || nulls(resp.columns),
      events: resp.events || zeros(resp.columns), observed: resp.observed || zeros(resp.columns),
      p50: resp.p50 || nulls(resp.columns), p99: resp.p99 || nulls(resp.columns), mean: resp.mean || nulls(resp.columns),
      means: (resp.means || []).map(function (s) { return { series_id: s.series_id, event: s.event, unit: s.unit, values: s.values }; }),
      totals: resp.totals || null, version: 0
    };
    markSubRows(m);
    return m;
  };
  function nulls(n) { var a = new Array(n); for (var i = 0; i < n; i++) a[i] = null; return a; }
  function zeros(n) { var a = new Array(n); for (var i = 0; i < n; i++) a[i] = 0; return a; }
  function rowKey(r) { return r.low + "/" + r.high; }

  // Rows inside an octave (rows_per_octave > 1) are ticked, not labelled:
  // an octave starts on a power of two of the series' unit.
  function markSubRows(m) {
    m.rows.forEach(function (r) {
      r.sub = false;
      if (m.rowsPerOctave <= 1 || r.low <= 0 || r.high === null || /^[<>]/.test(r.label)) return;
      r.sub = ![1e-9, 1e-6, 1e-3, 1].some(function (u) {
        var l = Math.log2(r.low / u);
        return Math.abs(l - Math.round(l)) < 1e-6;
      });
    });
  }

  // H.splice puts a response for columns of the same grid into m at
  // column `at`; it returns false (m unchanged) when the response has rows
  // that m lacks, so that the caller reads the whole window again.
  H.splice = function (m, resp, at) {
    var index = {};
    m.rows.forEach(function (r, i) { index[rowKey(r)] = i; });
    var rows = resp.rows || [];
    for (var i = 0; i < rows.length; i++) if (index[rowKey(rows[i])] === undefined) return false;
    var sparse = function (col) {
      if (col === null) return null;
      var out = new Array(m.rows.length);
      for (var r = 0; r < out.length; r++) out[r] = 0;
      for (var k = 0; k < col.length; k++) out[index[rowKey(rows[k])]] = col[k];
      return out;
    };
    for (var c = 0; c < resp.columns; c++) {
      var j = at + c;
      if (j < 0 || j >= m.n) continue;
      if (resp.frequency) { m.freq[j] = sparse(resp.frequency[c]); m.inten[j] = sparse(resp.intensity[c]); }
      m.events[j] = resp.events ? resp.events[c] : 0;
      m.observed[j] = resp.observed ? resp.observed[c] : 0;
      m.p50[j] = resp.p50 ? resp.p50[c] : null;
      m.p99[j] = resp.p99 ? resp.p99[c] : null;
      m.mean[j] = resp.mean ? resp.mean[c] : null;
    }
    (resp.means || []).forEach(function (s) {
      var mine = m.means.filter(function (x) { return x.series_id === s.series_id; })[0];
      if (!mine) { mine = { series_id: s.series_id, event: s.event, unit: s.unit, values: nulls(m.n) }; m.means.push(mine); }
      for (var c = 0; c < resp.columns; c++) if (at + c >= 0 && at + c < m.n) mine.values[at + c] = s.values[c];
    });
    m.version++;
    return true;
  };

  // H.shift moves the window k columns later: the oldest k go, k empty
  // (gap) columns come at the end.
  H.shift = function (m, k) {
    if (k <= 0) return;
    k = Math.min(k, m.n);
    [m.freq, m.inten, m.p50, m.p99, m.mean].concat(m.means.map(function (s) { return s.values; })).forEach(function (a) {
      a.splice(0, k);
      for (var i = 0; i < k; i++) a.push(null);
    });
    [m.events, m.observed].forEach(function (a) { a.splice(0, k); for (var i = 0; i < k; i++) a.push(0); });
    m.t0 += k * m.w;
    m.version++;
  };

  // H.lastObserved is the end (ms) of the newest column some source
  // observed, or NaN.
  H.lastObserved = function (m) {
    for (var c = m.n - 1; c >= 0; c--) if (m.observed[c] > 0) return m.t0 + (c + 1) * m.w;
    return NaN;
  };

  // ---- numbers ---------------------------------------------------------------
  // H.parseDuration("15m"), ("1m0s"), ("500ms"), ("7d") → milliseconds (NaN if not one).
  H.parseDuration = function (s) {
    var units = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 };
    var re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/g, total = 0, used = 0, hit;
    while ((hit = re.exec(s || ""))) { total += Number(hit[1]) * units[hit[2]]; used += hit[0].length; }
    return used > 0 && used === String(s).length ? total : NaN;
  };
  // H.fmtSpan(ms) → "15m", "1h30m", "2.5s".
  H.fmtSpan = function (ms) {
    if (!(ms > 0)) return "0s";
    if (ms < 1000) return LS.fmtSeconds(ms / 1000);
    if (ms % 86400000 === 0) return ms / 86400000 + "d";
    var s = ms / 1000, h = Math.floor(s / 3600), mi = Math.floor((s % 3600) / 60), sec = Math.round((s % 60) * 1000) / 1000;
    return (h ? h + "h" : "") + (mi ? mi + "m" : "") + (sec || (!h && !mi) ? sec + "s" : "");
  };
  // H.fmtRate: events per second as the static pages write them (1.2k).
  H.fmtRate = function (v) {
    if (v === null || v === undefined || isNaN(v)) return "–";
    var a = Math.abs(v), t = function (x) { return Number(x.toPrecision(3)).toString(); };
    if (a === 0) return "0";
    if (a >= 1e9) return t(v / 1e9) + "G";
    if (a >= 1e6) return t(v / 1e6) + "M";
    if (a >= 1e3) return t(v / 1e3) + "k";
    return t(v);
  };
  // H.iso: a time in ms as the URL and the API take it (UTC, ms).
  H.iso = function (ms) { return new Date(Math.round(ms)).toISOString(); };

  // level maps a value to 0..6 as heatmap.Level does.
  function level(v, minNZ, max, log) {
    if (!(v > 0)) return 0;
    if (!(max > 0)) return 1;
    var l;
    if (log) {
      if (max <= minNZ) return LEVELS;
      l = 1 + Math.floor(LEVELS * Math.log(v / minNZ) / Math.log(max / minNZ));
    } else l = Math.ceil(LEVELS * v / max);
    return Math.min(Math.max(l, 1), LEVELS);
  }
  function extent(cols) {
    var max = 0, minNZ = Infinity;
    for (var c = 0; c < cols.length; c++) {
      var col = cols[c];
      if (!col) continue;
      for (var r = 0; r < col.length; r++) {
        var v = col[r];
        if (v > max) max = v;
        if (v > 0 && v < minNZ) minNZ = v;
      }
    }
    return { max: max, minNZ: minNZ };
  }
  function rgba(hex) {
    var n = parseInt(hex.slice(1), 16);
    return (255 << 24 | (n & 255) << 16 | (n >> 8 & 255) << 8 | n >> 16) >>> 0;
  }

  // H.extent is the colour range of several models together.
  H.extent = function (models) {
    var out = {};
    [["frequency", "freq"], ["intensity", "inten"]].forEach(function (p) {
      var all = [];
      models.forEach(function (m) { all = all.concat(m[p[1]]); });
      out[p[0]] = extent(all);
    });
    return out;
  };
  // H.unifyRows puts models on the same latency rows (the union of
  // theirs, bottom-up), so that maps side by side share one axis.
  H.unifyRows = function (models) {
    var byKey = {};
    models.forEach(function (m) { m.rows.forEach(function (r) { byKey[rowKey(r)] = r; }); });
    var rows = Object.keys(byKey).map(function (k) { return byKey[k]; });
    rows.sort(function (a, b) { return a.low - b.low || (a.high === null) - (b.high === null) || a.high - b.high; });
    var index = {};
    rows.forEach(function (r, i) { index[rowKey(r)] = i; });
    models.forEach(function (m) {
      var map = m.rows.map(function (r) { return index[rowKey(r)]; });
      var remap = function (col) {
        if (!col) return col;
        var out = new Array(rows.length);
        for (var i = 0; i < out.length; i++) out[i] = 0;
        for (var k = 0; k < col.length; k++) out[map[k]] = col[k];
        return out;
      };
      m.freq = m.freq.map(remap); m.inten = m.inten.map(remap);
      m.rows = rows.map(function (r) { return { low: r.low, high: r.high, label: r.label, sub: r.sub }; });
      m.version++;
    });
    return rows;
  };

  // ---- time axis ---------------------------------------------------------------
  var STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800].map(function (s) { return s * 1000; });
  function pad(n) { return n < 10 ? "0" + n : String(n); }
  function clock(ms, withSeconds) {
    var d = new Date(ms);
    return pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + (withSeconds ? ":" + pad(d.getUTCSeconds()) : "");
  }
  function day(ms) { return new Date(ms).toISOString().slice(0, 10); }
  function ticks(t0, t1, width, minGap) {
    var span = t1 - t0, step = STEPS[STEPS.length - 1];
    for (var i = 0; i < STEPS.length; i++) if (STEPS[i] / span * width >= minGap) { step = STEPS[i]; break; }
    var out = [], prevDay = "";
    for (var t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      var dd = day(t);
      out.push({ t: t, label: clock(t, step < 60000), date: dd !== prevDay ? dd : "" });
      prevDay = dd;
    }
    return out;
  }
  H.fmtRange = function (a, b) {
    var sec = (b - a) < 60000 || a % 60000 !== 0 || b % 60000 !== 0;
    return day(a) + " " + clock(a, sec) + " – " + (day(a) === day(b) ? "" : day(b) + " ") + clock(b, sec) + "Z";
  };

  // ---- the view ------------------------------------------------------------------
  var PAD_L = 78, PAD_R = 14, TITLE = 20, GAP_Y = 30, MEAN_H = 64, AXIS = 34;

  // H.Map(opts) is one drawn heat map: opts.label names it; opts.scale
  // ("linear"|"log"); opts.select: true lets a drag select columns (and,
  // with shift, rows), reported to opts.onSelect({c0, c1, r0, r1});
  // opts.latency: {low, high} fixes the latency axis (compare's two maps);
  // opts.width: CSS pixels (default: the container's).
  H.Map = function (opts) {
    var self = this;
    this.opts = opts;
    this.scale = opts.scale === "log" ? "log" : "linear";
    this.model = null;
    this.sel = null;
    this.canvas = LS.el("canvas", { class: "heat", tabindex: 0, role: "img", "aria-label": (opts.label || "heat map") + ": loading" });
    this.tip = LS.el("div", { class: "heat-tip", role: "tooltip", hidden: true });
    this.legend = LS.el("div", { class: "heat-legend" });
    this.node = LS.el("figure", { class: "heat-figure" }, LS.el("div", { class: "heat-wrap" }, this.canvas, this.tip), this.legend);
    this.pending = false;
    this.base = document.createElement("canvas");
    this.baseVersion = -1;
    this.canvas.addEventListener("mousemove", function (e) { self.onMove(e); });
    this.canvas.addEventListener("mouseleave", function () { self.tip.hidden = true; });
    this.canvas.addEventListener("mousedown", function (e) { self.onDown(e); });
    window.addEventListener("mouseup", function (e) { self.onUp(e); });
    LS.heatmaps.push(this);
  };
  var P = H.Map.prototype;

  P.setModel = function (m) { this.model = m; this.invalidate(); };
  P.setScale = function (s) { this.scale = s === "log" ? "log" : "linear"; this.invalidate(); };
  P.setSelection = function (sel) { this.sel = sel; this.draw(); };
  P.invalidate = function () { this.baseVersion = -1; this.draw(); };
  // draw schedules one paint in the next animation frame, however many
  // changes come before it (20 live maps stay one paint per frame each).
  P.draw = function () {
    var self = this;
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(function () { self.pending = false; self.paint(); });
  };
  // mapWidth is the CSS width of the cell area: what history asks columns for.
  P.mapWidth = function () { return Math.max(50, this.cssWidth() - PAD_L - PAD_R); };
  P.cssWidth = function () {
    if (this.opts.width) return this.opts.width;
    var cs = getComputedStyle(this.node);
    var w = this.node.clientWidth - parseFloat(cs.paddingLeft || 0) - parseFloat(cs.paddingRight || 0);
    return Math.max(300, Math.min(Math.floor(w) || 1000, 1500 + PAD_L + PAD_R));
  };

  // geometry lays the figure out for the model's rows.
  P.geometry = function () {
    var m = this.model, rows = m.rows.length || 1;
    var cellH = Math.max(3, Math.min(16, Math.floor(220 / rows)));
    var g = { w: this.cssWidth(), x: PAD_L, cellH: cellH, rows: rows, mapH: rows * cellH };
    g.mapW = g.w - PAD_L - PAD_R;
    g.yF = TITLE;
    g.yI = g.yF + g.mapH + GAP_Y;
    g.yM = g.yI + g.mapH + GAP_Y;
    g.h = g.yM + MEAN_H + AXIS;
    return g;
  };

  P.paint = function () {
    var m = this.model;
    if (!m) return;
    var t = performance.now();
    var g = this.geometry(), dpr = window.devicePixelRatio || 1;
    if (this.baseVersion !== m.version || this.baseScale !== this.scale || this.baseW !== g.w) {
      this.paintBase(g, dpr);
      this.baseVersion = m.version; this.baseScale = this.scale; this.baseW = g.w;
      this.describe();
    }
    var c = this.canvas;
    if (c.width !== this.base.width || c.height !== this.base.height) {
      c.width = this.base.width; c.height = this.base.height;
      c.style.width = g.w + "px"; c.style.height = g.h + "px";
    }
    var ctx = c.getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.base, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.paintSelection(ctx, g, this.drag ? this.drag.sel : this.sel);
    this.lastPaintMs = performance.now() - t;
    c.setAttribute("data-paint-ms", this.lastPaintMs.toFixed(2));
    c.setAttribute("data-t0", H.iso(m.t0));
    c.setAttribute("data-columns", m.n);
    var last = H.lastObserved(m);
    c.setAttribute("data-last-observed", isNaN(last) ? "" : H.iso(last));
    c.setAttribute("data-version", m.version);
  };

  // paintBase draws everything but the selection into the cached canvas.
  P.paintBase = function (g, dpr) {
    var m = this.model, b = this.base;
    var bw = Math.round(g.w * dpr), bh = Math.round(g.h * dpr);
    if (b.width !== bw || b.height !== bh) { b.width = bw; b.height = bh; }
    var ctx = b.getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, b.width, b.height);
    var log = this.scale === "log";
    // opts.extent (compare) puts several maps on one colour scale.
    this.ext = this.opts.extent || { frequency: extent(m.freq), intensity: extent(m.inten) };
    this.cells(ctx, g, dpr, m.freq, this.ext.frequency, PALETTES.frequency, g.yF, log);
    this.cells(ctx, g, dpr, m.inten, this.ext.intensity, PALETTES.intensity, g.yI, log);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = "12px system-ui, sans-serif";
    ctx.fillStyle = "#1b1f24";
    ctx.textBaseline = "alphabetic";
    ctx.fillText("Frequency (events/s)", g.x, g.yF - 6);
    ctx.fillText("Intensity (time waited per second)", g.x, g.yI - 6);
    var unit = chartUnit(this.model);
    ctx.fillText(isQuantity(unit) ? this.model.means[0].event + " (" + unit.replace(/_/g, " ") + ")" : "Mean latency", g.x, g.yM - 6);
    [g.yF, g.yI].forEach(function (y0) {
      this.rowAxis(ctx, g, y0);
      this.percentiles(ctx, g, y0);
      ctx.strokeStyle = "#6b7480"; ctx.lineWidth = 1;
      ctx.strokeRect(g.x - 0.5, y0 - 0.5, g.mapW + 1, g.mapH + 1);
    }, this);
    this.meanChart(ctx, g);
    this.timeAxis(ctx, g);
    this.paintLegend();
  };

  // cells draws one map's cells: each device pixel column shows the
  // highest level of the columns it covers. The cells go into an image of
  // one pixel per row, stretched onto the map without smoothing (rows are
  // all the same height): putImageData is slow for large images.
  P.cells = function (ctx, g, dpr, cols, ext, palette, y0, log) {
    var m = this.model, W = Math.round(g.mapW * dpr), rows = g.rows, n = m.n;
    if (W <= 0 || !rows) return;
    var small = this.small || (this.small = document.createElement("canvas"));
    if (small.width !== W || small.height !== rows) { small.width = W; small.height = rows; }
    var sctx = small.getContext("2d");
    var img = sctx.createImageData(W, rows), buf = new Uint32Array(img.data.buffer);
    var colours = palette.map(rgba), gap = rgba(GAP), dots = [];
    var lev = new Int8Array(rows), cw = W / n;
    for (var x = 0; x < W; x++) {
      var ca = Math.floor(x * n / W), cb = Math.max(ca + 1, Math.floor((x + 1) * n / W));
      var observed = false, events = 0;
      lev.fill(0);
      for (var c = ca; c < cb && c < n; c++) {
        var col = cols[c];
        if (!col) continue;
        observed = true;
        events += m.events[c] || 0;
        for (var k = 0; k < rows; k++) {
          var v = col[k];
          if (v > 0) {
            var l = level(v, ext.minNZ, ext.max, log);
            if (l > lev[k]) lev[k] = l;
          }
        }
      }
      // Row 0 (shortest latencies) is the image's bottom line.
      for (var r = 0; r < rows; r++) buf[(rows - 1 - r) * W + x] = observed ? colours[lev[r]] : gap;
      // An observed column without events: a '.' in each row, as the
      // terminal draws it, where the column is wide enough to show one.
      if (observed && events === 0 && (cw >= 3 ? x === Math.floor((ca + 0.5) * cw) : x % 3 === 0)) dots.push(x);
    }
    sctx.putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(small, 0, 0, W, rows, Math.round(g.x * dpr), Math.round(y0 * dpr), W, Math.round(g.mapH * dpr));
    ctx.fillStyle = DOT;
    dots.forEach(function (dx) {
      for (var d = 0; d < rows; d++) ctx.fillRect(Math.round(g.x * dpr) + dx, Math.round((y0 + g.mapH - (d + 0.5) * g.cellH) * dpr), 1, 1);
    });
  };

  // rowAxis labels the rows: every octave (and folded row) by its lower
  // edge, sub-octave rows by a tick; labels at least 11 px apart.
  P.rowAxis = function (ctx, g, y0) {
    var rows = this.model.rows, lastY = Infinity;
    ctx.fillStyle = "#1b1f24"; ctx.strokeStyle = "#4f5863"; ctx.lineWidth = 1;
    ctx.textAlign = "right"; ctx.textBaseline = "middle"; ctx.font = "11px system-ui, sans-serif";
    for (var r = 0; r < rows.length; r++) {
      var yb = y0 + g.mapH - r * g.cellH; // the row's lower edge
      ctx.beginPath();
      ctx.moveTo(g.x - (rows[r].sub ? 3 : 6), yb + 0.5); ctx.lineTo(g.x, yb + 0.5); ctx.stroke();
      if (rows[r].sub) continue;
      var yl = g.cellH >= 11 ? yb - g.cellH / 2 : yb;
      if (lastY - yl < 11) continue;
      ctx.fillText(rows[r].label, g.x - 8, yl);
      lastY = yl;
    }
    ctx.textAlign = "left"; ctx.textBaseline = "alphabetic";
  };

  // latencyY places a latency (seconds) on the map: inside its row by
  // its log position, clamped to the map.
  P.latencyY = function (g, y0, v) {
    var rows = this.model.rows;
    if (!(v > 0) || !rows.length) return NaN;
    for (var r = 0; r < rows.length; r++) {
      var lo = rows[r].low, hi = rows[r].high;
      if (hi === null || v < hi || r === rows.length - 1) {
        var f = 0.5;
        if (hi !== null && v < lo) f = 0;
        else if (hi !== null && lo > 0) f = Math.log(v / lo) / Math.log(hi / lo);
        else if (hi !== null) f = v / hi;
        f = Math.min(Math.max(f, 0), 1);
        return y0 + g.mapH - (r + f) * g.cellH;
      }
    }
    return y0;
  };

  P.percentiles = function (ctx, g, y0) {
    var m = this.model, self = this, cw = g.mapW / m.n;
    [["p50", P50], ["p99", P99]].forEach(function (p) {
      var vals = m[p[0]], pen = false;
      ctx.beginPath();
      for (var c = 0; c < m.n; c++) {
        var y = self.latencyY(g, y0, vals[c]);
        if (isNaN(y)) { pen = false; continue; }
        var x = g.x + (c + 0.5) * cw;
        if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        pen = true;
      }
      ctx.strokeStyle = p[1]; ctx.lineWidth = 1.6; ctx.stroke();
    });
  };

  // meanChart: the histogram's mean per column and the source's mean
  // series, on one linear axis from 0; gap columns shaded.
  P.meanChart = function (ctx, g) {
    var m = this.model, cw = g.mapW / m.n, y0 = g.yM;
    var lines = [{ label: "mean", values: m.mean }].concat(m.means.map(function (s) { return { label: s.event, values: s.values }; }));
    var max = 0;
    lines.forEach(function (l) { l.values.forEach(function (v) { if (v > max) max = v; }); });
    ctx.fillStyle = GAP;
    for (var c = 0; c < m.n; c++) {
      if (m.observed[c] > 0) continue;
      var c1 = c;
      while (c1 + 1 < m.n && !(m.observed[c1 + 1] > 0)) c1++;
      ctx.fillRect(g.x + c * cw, y0, (c1 - c + 1) * cw, MEAN_H);
      c = c1;
    }
    ctx.strokeStyle = "#6b7480"; ctx.lineWidth = 1;
    ctx.strokeRect(g.x - 0.5, y0 - 0.5, g.mapW + 1, MEAN_H + 1);
    ctx.fillStyle = "#1b1f24"; ctx.font = "11px system-ui, sans-serif"; ctx.textAlign = "right";
    ctx.fillText(max > 0 ? fmtMean(chartUnit(m), max) : "–", g.x - 8, y0 + 8);
    ctx.fillText("0", g.x - 8, y0 + MEAN_H);
    ctx.textAlign = "left";
    if (!(max > 0)) return;
    lines.forEach(function (l, i) {
      var pen = false;
      ctx.beginPath();
      for (var c = 0; c < m.n; c++) {
        var v = l.values[c];
        if (v === null || v === undefined) { pen = false; continue; }
        var x = g.x + (c + 0.5) * cw, y = y0 + MEAN_H - v / max * (MEAN_H - 4);
        if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y);
        pen = true;
      }
      ctx.strokeStyle = MEAN_COLOURS[i % MEAN_COLOURS.length]; ctx.lineWidth = 1.4; ctx.stroke();
    });
  };

  // Host figures (host:, docs/host.md) come as mean series in their
  // quantity, not seconds: a chart of them alone is labelled in it.
  var SYMBOLS = { percent: "%", per_second: "/s", kB_per_second: " kB/s", kB: " kB", count: "", ratio: "" };
  function isQuantity(unit) { return !!unit && unit !== "s"; }
  function fmtMean(unit, v) {
    if (!isQuantity(unit)) return LS.fmtSeconds(v);
    if (v === null || v === undefined || isNaN(v)) return "–";
    return LS.fmtNumber(v, 2) + (SYMBOLS[unit] || "");
  }
  function chartUnit(m) {
    var u = m.means.length ? m.means[0].unit : "s";
    var same = m.means.every(function (s) { return s.unit === u; });
    var histMean = m.mean.some(function (v) { return v !== null && v !== undefined; });
    return same && !histMean ? u : "s";
  }

  P.timeAxis = function (ctx, g) {
    var m = this.model, t1 = m.t0 + m.n * m.w, y = g.yM + MEAN_H;
    ctx.fillStyle = "#1b1f24"; ctx.strokeStyle = "#4f5863"; ctx.font = "11px system-ui, sans-serif"; ctx.textAlign = "center";
    ticks(m.t0, t1, g.mapW, 90).forEach(function (tk) {
      var x = g.x + (tk.t - m.t0) / (t1 - m.t0) * g.mapW;
      [g.yF + g.mapH, g.yI + g.mapH, y].forEach(function (yy) { ctx.beginPath(); ctx.moveTo(x + 0.5, yy); ctx.lineTo(x + 0.5, yy + 4); ctx.stroke(); });
      // Labels stay inside the figure: shifted in at the edges.
      var half = ctx.measureText(tk.date || tk.label).width / 2;
      var lx = Math.min(Math.max(x, g.x - 30 + half), g.w - half - 1);
      ctx.fillText(tk.label, lx, y + 15);
      if (tk.date) ctx.fillText(tk.date, lx, y + 28);
    });
    ctx.textAlign = "right";
    ctx.fillText("UTC", g.x - 34, y + 15);
    ctx.textAlign = "left";
  };

  P.paintLegend = function () {
    var m = this.model, ext = this.ext, scale = this.scale;
    var box = LS.clear(this.legend);
    ["frequency", "intensity"].forEach(function (mode) {
      var e = ext[mode];
      var fmt = mode === "frequency" ? function (v) { return H.fmtRate(v) + "/s"; } : function (v) { return LS.fmtSeconds(v) + "/s"; };
      var swatches = [];
      for (var l = 1; l <= LEVELS; l++) swatches.push(LS.el("span", { class: "sw sw-" + mode[0] + l, title: "level " + l }));
      box.appendChild(LS.el("div", { class: "heat-legend-row", "data-mode": mode },
        LS.el("span", { class: "heat-legend-name" }, mode === "frequency" ? "Frequency" : "Intensity"), swatches,
        LS.el("span", { class: "muted" }, " " + scale + " scale, " + LEVELS + " levels up to " + (e.max > 0 ? fmt(e.max) : "–") +
          (scale === "log" && e.max > 0 ? " from " + fmt(e.minNZ) : ""))));
    });
    box.appendChild(LS.el("div", { class: "heat-legend-row" },
      LS.el("span", { class: "sw sw-gap" }), " no data (gap)  ", LS.el("span", { class: "sw sw-zero" }), " observed, no events  ",
      LS.el("span", { class: "line-p50" }), " p50  ", LS.el("span", { class: "line-p99" }), " p99  ",
      LS.el("span", { class: "line-mean" }), " mean" + (m.means.length ? " (" + m.means.map(function (s) { return s.event; }).join(", ") + ": mean series)" : "")));
    if (m.rowsNote) box.appendChild(LS.el("div", { class: "muted" }, m.rowsNote));
  };

  // describe keeps the canvas's accessible summary up to date.
  P.describe = function () {
    var m = this.model, events = 0, gaps = 0;
    for (var c = 0; c < m.n; c++) { events += m.events[c] || 0; if (!(m.observed[c] > 0)) gaps++; }
    var rows = m.rows.length ? m.rows[0].label + " to " + m.rows[m.rows.length - 1].label : "no rows";
    this.canvas.setAttribute("aria-label", (this.opts.label || "heat map") + ", " + H.fmtRange(m.t0, m.t0 + m.n * m.w) + ": " +
      m.n + " columns of " + H.fmtSpan(m.w) + ", latency rows " + rows + "; " + LS.fmtNumber(events, 0) + " events" +
      (m.totals && m.totals.p50 !== null ? ", p50 " + LS.fmtSeconds(m.totals.p50) + ", p99 " + LS.fmtSeconds(m.totals.p99) : "") +
      (gaps ? "; " + gaps + " columns without data" : "") + "; " + this.scale + " colour scale");
  };

  // ---- pointer -------------------------------------------------------------------
  // cellAt maps a mouse event to a column and, over a map, a row.
  P.cellAt = function (e) {
    if (!this.model) return null;
    var g = this.geometry(), rect = this.canvas.getBoundingClientRect();
    var x = e.clientX - rect.left, y = e.clientY - rect.top, m = this.model;
    if (x < g.x || x >= g.x + g.mapW) return null;
    var col = Math.min(m.n - 1, Math.floor((x - g.x) / g.mapW * m.n)), row = null, map = null;
    [["frequency", g.yF], ["intensity", g.yI]].forEach(function (p) {
      if (y >= p[1] && y < p[1] + g.mapH) { map = p[0]; row = g.rows - 1 - Math.floor((y - p[1]) / g.cellH); }
    });
    if (y >= g.yM && y < g.yM + MEAN_H) map = "mean";
    return map ? { col: col, row: row, map: map, x: x, y: y } : null;
  };

  P.onMove = function (e) {
    var cell = this.cellAt(e);
    if (this.drag) {
      if (cell) this.drag.sel = this.span(this.drag.start, cell, this.drag.rows);
      this.draw();
    }
    this.showTip(cell);
  };
  P.onDown = function (e) {
    if (!this.opts.select || e.button !== 0) return;
    var cell = this.cellAt(e);
    if (!cell || cell.map === "mean" && e.shiftKey) return;
    e.preventDefault();
    this.canvas.focus();
    this.drag = { start: cell, rows: e.shiftKey && cell.row !== null };
    this.drag.sel = this.span(cell, cell, this.drag.rows);
    this.draw();
  };
  P.onUp = function () {
    if (!this.drag) return;
    var sel = this.drag.sel;
    this.drag = null;
    this.sel = sel;
    this.draw();
    if (this.opts.onSelect) this.opts.onSelect(sel);
  };
  P.span = function (a, b, rows) {
    var sel = { c0: Math.min(a.col, b.col), c1: Math.max(a.col, b.col) };
    if (rows && a.row !== null) {
      var rb = b.row === null ? a.row : b.row;
      sel.r0 = Math.max(0, Math.min(a.row, rb)); sel.r1 = Math.min(this.model.rows.length - 1, Math.max(a.row, rb));
    }
    return sel;
  };

  P.paintSelection = function (ctx, g, sel) {
    if (!sel) return;
    var m = this.model, cw = g.mapW / m.n, x = g.x + sel.c0 * cw, w = Math.max((sel.c1 - sel.c0 + 1) * cw, 2);
    ctx.fillStyle = "rgba(11,61,145,0.18)"; ctx.strokeStyle = "#0b3d91"; ctx.lineWidth = 2;
    [g.yF, g.yI].forEach(function (y0) {
      var top = y0, h = g.mapH;
      if (sel.r0 !== undefined) { top = y0 + (g.rows - 1 - sel.r1) * g.cellH; h = (sel.r1 - sel.r0 + 1) * g.cellH; }
      ctx.fillRect(x, top, w, h); ctx.strokeRect(x, top, w, h);
    });
    ctx.fillRect(x, g.yM, w, MEAN_H);
  };

  P.showTip = function (cell) {
    var tip = this.tip, m = this.model;
    if (!cell || !m) { tip.hidden = true; return; }
    var c = cell.col, a = m.t0 + c * m.w, lines = [H.fmtRange(a, a + m.w)];
    if (cell.row !== null && m.rows[cell.row]) {
      var r = m.rows[cell.row];
      lines.push("latency " + (r.high === null ? "≥ " + LS.fmtSeconds(r.low) : LS.fmtSeconds(r.low) + " – " + LS.fmtSeconds(r.high)));
      if (!m.freq[c]) lines.push("no data (gap)");
      else {
        lines.push(H.fmtRate(m.freq[c][cell.row]) + " events/s");
        lines.push(LS.fmtSeconds(m.inten[c][cell.row]) + " waited/s");
      }
    } else if (!(m.observed[c] > 0)) lines.push("no data (gap)");
    if (m.observed[c] > 0) {
      lines.push(LS.fmtNumber(m.events[c], 0) + " events, p50 " + LS.fmtSeconds(m.p50[c]) + ", p99 " + LS.fmtSeconds(m.p99[c]) + ", mean " + LS.fmtSeconds(m.mean[c]));
      m.means.forEach(function (s) { lines.push(s.event + (isQuantity(s.unit) ? ": " : ": mean ") + fmtMean(s.unit, s.values[c])); });
    }
    LS.clear(tip);
    lines.forEach(function (l) { tip.appendChild(LS.el("div", {}, l)); });
    tip.hidden = false;
    var left = cell.x + 14, w = this.geometry().w;
    if (left > w - 260) left = Math.max(0, cell.x - 274);
    tip.style.left = left + "px";
    tip.style.top = (cell.y + 12) + "px";
  };


  // ---- the report of a selection ----------------------------------------------
  // H.glob escapes a name so that a --series glob matches it literally.
  H.glob = function (name) { return name.replace(/[*?[\]\\]/g, "\\$&"); };
  // H.reportArgs are the CLI's arguments that select series s alone: its
  // job (the archive's source) and its event, even when other jobs record
  // the same event.
  H.reportArgs = function (s) { return ["--series", H.glob(s.source), "--event", s.event]; };
  // H.report reads what `latscope report DATA --series JOB --event EVENT
  // --from --to --format json` answers for series s over [from, to) (ISO
  // times), and resolves to that series' entry (null: no events in the
  // window).
  H.report = function (s, from, to) {
    return LS.api("/api/v1/report?format=json&series=" + encodeURIComponent(H.glob(s.source)) + "&event=" + encodeURIComponent(s.event) +
      "&from=" + encodeURIComponent(from) + "&to=" + encodeURIComponent(to)).then(function (r) {
      var mine = (r.series || []).filter(function (x) { return x.event === s.event && x.instance === s.instance; });
      return mine[0] || null;
    });
  };
  // figure is one number of a report: its text, and its exact JSON value
  // in data-v for tests and copy-paste.
  function figure(name, key, v, text) {
    return [LS.el("dt", {}, name), LS.el("dd", { "data-k": key, "data-v": v === null || v === undefined ? "" : String(v) }, text)];
  }
  // H.reportNode shows a report's series entry: totals, percentiles and
  // the buckets. Percentiles beyond p99 and the maximum are not in the
  // report; the highest non-empty bucket bounds the maximum.
  H.reportNode = function (e, id) {
    if (!e) return LS.el("div", { id: id, class: "report", "data-empty": "1" }, LS.el("p", {}, "No events in this window."));
    var us = function (v) { return v === null ? null : v / 1e6; };
    var top = null;
    e.buckets.forEach(function (b) { if (b.count > 0) top = b; });
    return LS.el("div", { id: id, class: "report" },
      LS.el("dl", { class: "figures" },
        figure("events", "count", e.count, LS.fmtNumber(e.count, 2)),
        figure("time waited", "sum_us", e.sum_us, LS.fmtSeconds(e.sum_us / 1e6) + (e.sum_exact ? "" : " (estimated)")),
        figure("mean", "mean_us", e.mean_us, LS.fmtSeconds(us(e.mean_us))),
        figure("p50", "p50_us", e.p50_us, LS.fmtSeconds(us(e.p50_us))),
        figure("p90", "p90_us", e.p90_us, LS.fmtSeconds(us(e.p90_us))),
        figure("p99", "p99_us", e.p99_us, LS.fmtSeconds(us(e.p99_us))),
        figure("max in bucket", "max_bucket_us", top ? top.upper_us : null,
          top ? LS.fmtSeconds(top.lower_us / 1e6) + " – " + LS.fmtSeconds(top.upper_us / 1e6) : "–")),
      LS.table("Buckets", [
        { label: "latency", value: function (b) { return LS.fmtSeconds(b.lower_us / 1e6) + " – " + LS.fmtSeconds(b.upper_us / 1e6) + (b.capped ? " (open)" : ""); } },
        { label: "events", num: true, value: function (b) { return LS.el("span", { "data-v": b.count }, LS.fmtNumber(b.count, 2)); } },
        { label: "%", num: true, value: function (b) { return e.count ? (100 * b.count / e.count).toFixed(1) : "–"; } },
        { label: "time waited", num: true, value: function (b) { return LS.el("span", { "data-v": b.sum_us }, LS.fmtSeconds(b.sum_us / 1e6)); } }
      ], e.buckets, { class: "buckets" }));
  };

  // H.scaleControl is the labelled linear/log switch with its `l` key;
  // onChange(scale) applies it.
  H.scaleControl = function (scale, onChange) {
    var sel = LS.el("select", { id: "scale", onchange: function () { onChange(sel.value); } },
      LS.el("option", { value: "linear", selected: scale !== "log" }, "linear"), LS.el("option", { value: "log", selected: scale === "log" }, "log"));
    LS.key("l", "colour scale: linear / log", function () { sel.value = sel.value === "log" ? "linear" : "log"; onChange(sel.value); });
    return LS.el("label", { class: "control" }, "Colour scale ", sel);
  };
  // H.rowsControl picks rows per octave (1, 2, 4, 8).
  H.rowsControl = function (rows, onChange) {
    var sel = LS.el("select", { id: "rows", onchange: function () { onChange(Number(sel.value)); } },
      [1, 2, 4, 8].map(function (k) { return LS.el("option", { value: k, selected: k === rows }, String(k)); }));
    return LS.el("label", { class: "control" }, "Rows per octave ", sel);
  };
  H.rowsParam = function (q) {
    var k = Number(q.get("rows") || 1);
    return [1, 2, 4, 8].indexOf(k) >= 0 ? k : 1;
  };
  // H.seriesName names a series as the dashboard does.
  H.seriesName = function (s) {
    return s.event + (s.instance ? " [" + s.instance + "]" : "") + " — " + s.source;
  };
})();
