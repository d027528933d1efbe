// latscope heat-map page: cell tooltips computed from the embedded JSON by
// mouse position, and a #selftest mode used by the headless-browser test.
// Number and time formats follow view/static/format.go.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("latscope-data").textContent);
  var tip = document.getElementById("tip");
  var decoded = {}; // series index → {f, i, gaps}

  function trimZeros(s) {
    return s.indexOf(".") >= 0 ? s.replace(/0+$/, "").replace(/\.$/, "") : s;
  }
  function trim3(v) {
    var a = Math.abs(v);
    return trimZeros(a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2));
  }
  function g2(v) {
    if (Math.floor(Math.log10(Math.abs(v))) < -4) {
      var p = v.toExponential(1).split("e");
      return trimZeros(p[0]) + "e" + Number(p[1]);
    }
    return trimZeros(v.toPrecision(2));
  }
  function fmtNum(v) {
    var a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1e9) return trim3(v / 1e9) + "G";
    if (a >= 1e6) return trim3(v / 1e6) + "M";
    if (a >= 1e3) return trim3(v / 1e3) + "k";
    if (a >= 0.01) return trim3(v);
    return g2(v);
  }
  // fmtDur mirrors hist.FormatDuration.
  function fmtDur(ns) {
    var a = Math.abs(ns);
    if (a === 0) return "0";
    if (a < 1e3) return trim3(ns) + "ns";
    if (a < 1e6) return trim3(ns / 1e3) + "\u00b5s";
    if (a < 1e9) return trim3(ns / 1e6) + "ms";
    if (a < 100e9) return trim3(ns / 1e9) + "s";
    var secs = Math.round(a / 1e9), h = Math.floor(secs / 3600), m = Math.floor((secs % 3600) / 60);
    return (ns < 0 ? "-" : "") + (h ? h + "h" : "") + (h || m ? m + "m" : "") + (secs % 60) + "s";
  }
  function pad(n, w) {
    var s = String(n);
    while (s.length < (w || 2)) s = "0" + s;
    return s;
  }
  function span(ms) {
    if (ms <= 0) return "0s";
    if (ms < 1000) return fmtDur(ms * 1e6);
    ms = Math.round(ms);
    var h = Math.floor(ms / 3600000), m = Math.floor((ms % 3600000) / 60000), s = (ms % 60000) / 1000;
    var out = (h ? h + "h" : "") + (h || m ? m + "m" : "") + s + "s";
    if (/m0s$/.test(out)) out = out.slice(0, -2);
    if (/h0m$/.test(out)) out = out.slice(0, -2);
    return out;
  }
  function rel(ms) {
    if (ms === 0) return "+0s";
    return ms < 0 ? "-" + span(-ms) : "+" + span(ms);
  }
  function local(ms) { return new Date(Math.round(ms) + D.off * 1000); }
  function day(ms) {
    var d = local(ms);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate());
  }
  function clock(ms) {
    var d = local(ms);
    var s = pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds());
    return D.ms ? s + "." + pad(d.getUTCMilliseconds(), 3) : s;
  }
  function timeRange(col) {
    var a = D.t0 + col * D.w, b = a + D.w;
    if (D.rel) return rel(a) + " \u2013 " + rel(b);
    var end = day(a) === day(b) ? clock(b) : day(b) + " " + clock(b);
    return day(a) + " " + clock(a) + " \u2013 " + end;
  }

  function decode(si) {
    if (decoded[si]) return decoded[si];
    var s = D.series[si];
    var num = function (t) { return t === "" ? 0 : Number(t); };
    var gaps = {};
    s.gaps.forEach(function (c) { gaps[c] = true; });
    decoded[si] = { f: s.f.split(",").map(num), i: s.i.split(",").map(num), gaps: gaps };
    return decoded[si];
  }

  // cellAt maps a client point over a series' SVG to a cell.
  function cellAt(svg, si, clientX, clientY) {
    var ctm = svg.getScreenCTM();
    if (!ctm) return null;
    var p = new DOMPoint(clientX, clientY).matrixTransform(ctm.inverse());
    var s = D.series[si], rows = s.rows.length;
    for (var k = 0; k < s.maps.length; k++) {
      var m = s.maps[k];
      var col = Math.floor((p.x - m.x) / m.cw), fromTop = Math.floor((p.y - m.y) / m.ch);
      if (col >= 0 && col < D.n && fromTop >= 0 && fromTop < rows) {
        return { map: k, col: col, row: rows - 1 - fromTop, m: m, rows: rows };
      }
    }
    return null;
  }

  function tipLines(si, cell) {
    var s = D.series[si], v = decode(si);
    var lines = [s.label, timeRange(cell.col), "bucket " + s.rows[cell.row]];
    if (v.gaps[cell.col]) return lines.concat(["no data"]);
    var idx = cell.col * cell.rows + cell.row;
    return lines.concat([fmtNum(v.f[idx]) + " events/s", fmtDur(v.i[idx] * 1e9) + " waited/s"]);
  }

  function highlight(svg, cell) {
    var h = svg.querySelector("rect.hover");
    if (!h) {
      h = document.createElementNS(svg.namespaceURI, "rect");
      h.setAttribute("class", "hover");
      svg.appendChild(h);
    }
    if (!cell) { h.setAttribute("visibility", "hidden"); return; }
    h.setAttribute("x", cell.m.x + cell.col * cell.m.cw);
    h.setAttribute("y", cell.m.y + (cell.rows - 1 - cell.row) * cell.m.ch);
    h.setAttribute("width", Math.max(cell.m.cw, 1));
    h.setAttribute("height", cell.m.ch);
    h.setAttribute("visibility", "visible");
  }

  function show(svg, si, e) {
    var cell = cellAt(svg, si, e.clientX, e.clientY);
    highlight(svg, cell);
    if (!cell) { tip.hidden = true; return; }
    tip.textContent = "";
    tipLines(si, cell).forEach(function (line, n) {
      var div = document.createElement("div");
      div.textContent = line;
      if (n === 0) div.className = "t";
      if (line === "no data") div.className = "nodata";
      tip.appendChild(div);
    });
    tip.hidden = false;
    var x = e.clientX + 14, y = e.clientY + 14, w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 4) x = Math.max(4, e.clientX - w - 14);
    if (y + h > window.innerHeight - 4) y = Math.max(4, e.clientY - h - 14);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  var svgs = document.querySelectorAll("svg.maps");
  Array.prototype.forEach.call(svgs, function (svg) {
    var si = Number(svg.getAttribute("data-series"));
    if (!D.series[si]) return;
    var handler = function (e) { show(svg, si, e); };
    svg.addEventListener("mousemove", handler);
    svg.addEventListener("click", handler);
    svg.addEventListener("mouseleave", function () { tip.hidden = true; highlight(svg, null); });
  });
  document.documentElement.setAttribute("data-latscope", "ready " + svgs.length);

  // #selftest=SERIES,MAP,COL,ROW[;SERIES,MAP,COL,ROW...] moves a real mouse
  // event over each cell (row 0 is the bottom row) and copies the tooltips,
  // separated by blank lines, into #selftest-result.
  function probe(si, k, col, row) {
    var svg = document.querySelector('svg.maps[data-series="' + si + '"]');
    var s = D.series[si];
    if (!svg || !s || !s.maps[k]) return { text: "selftest: no such map" };
    var g = s.maps[k], rows = s.rows.length;
    var point = function () {
      return new DOMPoint(g.x + (col + 0.5) * g.cw, g.y + (rows - 1 - row + 0.5) * g.ch).matrixTransform(svg.getScreenCTM());
    };
    var p = point();
    if (p.y < 0 || p.y >= window.innerHeight || p.x < 0 || p.x >= window.innerWidth) {
      window.scrollBy(p.x - window.innerWidth / 2, p.y - window.innerHeight / 2);
      p = point();
    }
    var target = document.elementFromPoint(p.x, p.y);
    if (!target) return { text: "selftest: nothing at the cell's point" };
    tip.hidden = true;
    target.dispatchEvent(new MouseEvent("mousemove", { clientX: p.x, clientY: p.y, bubbles: true }));
    return {
      target: target.tagName.toLowerCase(),
      text: tip.hidden ? "selftest: no tooltip" :
        Array.prototype.map.call(tip.children, function (d) { return d.textContent; }).join("\n")
    };
  }
  function selftest() {
    var m = /^#selftest(?:=([\d,;]+))?$/.exec(location.hash);
    if (!m) return;
    var out = document.getElementById("selftest-result"), texts = [], targets = [];
    (m[1] || "0,0,0,0").split(";").forEach(function (spec) {
      var a = spec.split(",").map(Number);
      var r = probe(a[0] || 0, a[1] || 0, a[2] || 0, a[3] || 0);
      texts.push(r.text);
      targets.push(r.target || "none");
    });
    out.setAttribute("data-target", targets.join(" "));
    out.textContent = texts.join("\n\n");
    out.hidden = false;
  }
  // #selftest-format=V1,V2,... prints "fmtNum(V)|fmtDur(V)" per value, so a
  // test can hold the script's formats to the Go ones.
  function formatTest() {
    var m = /^#selftest-format=([-+\d.e,]+)$/.exec(location.hash);
    if (!m) return;
    var out = document.getElementById("selftest-result");
    out.textContent = m[1].split(",").map(function (v) {
      return fmtNum(Number(v)) + "|" + fmtDur(Number(v));
    }).join("\n");
    out.hidden = false;
  }
  function selftests() { selftest(); formatTest(); }
  if (document.readyState === "complete") selftests();
  else window.addEventListener("load", selftests);
})();
