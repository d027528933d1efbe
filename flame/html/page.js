// latscope flame graph viewer: canvas flame graph / icicle, regex search with
// next/previous match, function table (self and total, each sample counted
// once per stack), sandwich view (callers above, callees below) and a
// differential mode. Everything comes from the JSON in #flame-data.
(function () {
  "use strict";
  var t0 = performance.now();
  var data = JSON.parse(document.getElementById("flame-data").textContent);
  var tParsed = performance.now();
  var names = data.names, diff = data.diff, unit = data.countName;
  var ROW = 16, PAD = 2, MINW = data.minWidth;
  var state = { showBase: false, inverted: data.inverted, re: null, matchName: new Uint8Array(names.length),
    matches: [], cur: -1, sandwich: -1 };

  // buildTree derives each frame's start, self, parent and subtree end from
  // the pre-order arrays (depth of a child = its parent's depth + 1).
  function buildTree(n, d, t, b) {
    var len = n.length, tr = {
      len: len, name: Int32Array.from(n), depth: Int32Array.from(d), total: Float64Array.from(t),
      base: b ? Float64Array.from(b) : new Float64Array(len), x: new Float64Array(len), xb: new Float64Array(len),
      self: new Float64Array(len), bself: new Float64Array(len), end: new Int32Array(len), parent: new Int32Array(len),
      maxDepth: 0
    };
    var cur = new Float64Array(len), curb = new Float64Array(len), stack = [];
    for (var i = 0; i < len; i++) {
      var di = tr.depth[i];
      while (stack.length && tr.depth[stack[stack.length - 1]] >= di) tr.end[stack.pop()] = i;
      var p = stack.length ? stack[stack.length - 1] : -1;
      tr.parent[i] = p;
      tr.self[i] = tr.total[i]; tr.bself[i] = tr.base[i];
      if (p >= 0) {
        tr.x[i] = cur[p]; cur[p] += tr.total[i]; tr.self[p] -= tr.total[i];
        tr.xb[i] = curb[p]; curb[p] += tr.base[i]; tr.bself[p] -= tr.base[i];
      }
      cur[i] = tr.x[i]; curb[i] = tr.xb[i];
      if (di > tr.maxDepth) tr.maxDepth = di;
      stack.push(i);
    }
    while (stack.length) tr.end[stack.pop()] = len;
    return tr;
  }

  // Trie merges paths (arrays of name indices) into a tree, then flattens it
  // in pre-order for buildTree: used for the sandwich's two trees.
  function Trie(root) { this.root = { n: root, t: 0, b: 0, kids: new Map() }; }
  Trie.prototype.child = function (node, n) {
    var c = node.kids.get(n);
    if (!c) { c = { n: n, t: 0, b: 0, kids: new Map() }; node.kids.set(n, c); }
    return c;
  };
  Trie.prototype.tree = function () {
    var n = [], d = [], t = [], b = [], todo = [[this.root, 0]];
    while (todo.length) {
      var e = todo.pop(), node = e[0];
      n.push(node.n); d.push(e[1]); t.push(node.t); b.push(node.b);
      var kids = Array.from(node.kids.values()).sort(function (a, c) { return names[a.n] < names[c.n] ? -1 : names[a.n] > names[c.n] ? 1 : 0; });
      for (var k = kids.length - 1; k >= 0; k--) todo.push([kids[k], e[1] + 1]);
    }
    return buildTree(n, d, t, b);
  };

  var main = buildTree(data.n, data.d, data.t, data.b);
  var tLaid = performance.now();

  // ---- formatting and colours ----
  function fmtInt(v) { return Math.round(v).toLocaleString("en-US"); }
  function pct(v, of) { return of > 0 ? (100 * v / of).toFixed(2) + "%" : "0.00%"; }
  function hash(s) { var h = 2166136261; for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); } return h >>> 0; }
  var hotCache = [];
  function hot(ni) { // flamegraph.pl's "hot" palette, hashed by name so colours are stable
    var c = hotCache[ni];
    if (!c) {
      var h = hash(names[ni]), v1 = (h & 255) / 255, v2 = ((h >>> 8) & 255) / 255, v3 = ((h >>> 16) & 255) / 255;
      c = hotCache[ni] = "rgb(" + (205 + Math.round(50 * v3)) + "," + Math.round(230 * v1) + "," + Math.round(55 * v2) + ")";
    }
    return c;
  }
  // relChange compares a frame's share of all samples in NEW and BASE:
  // +1 = only in NEW, -1 = vanished, 0 = same share.
  function relChange(tr, i) {
    var nf = tr.total[0] > 0 ? tr.total[i] / tr.total[0] : 0, bf = tr.base[0] > 0 ? tr.base[i] / tr.base[0] : 0;
    var m = Math.max(nf, bf);
    return m > 0 ? (nf - bf) / m : 0;
  }
  function diffColour(tr, i) {
    var r = relChange(tr, i);
    if (Math.abs(r) < 1e-9) return "rgb(225,225,225)";
    var c = Math.round(210 * (1 - Math.abs(r)));
    return r > 0 ? "rgb(255," + c + "," + c + ")" : "rgb(" + c + "," + c + ",255)";
  }
  var SEARCH = "rgb(230,0,230)";

  // ---- the canvas view ----
  function View(wrap, tree, upward, onZoom) {
    this.wrap = wrap; this.tree = tree; this.upward = upward; this.zoom = 0; this.onZoom = onZoom;
    this.canvas = document.createElement("canvas");
    this.spacer = document.createElement("div");
    wrap.appendChild(this.canvas); wrap.appendChild(this.spacer);
    this.pending = false; this.mark = -1; this.drawn = 0;
    var v = this;
    wrap.addEventListener("scroll", function () { v.redraw(); });
    this.canvas.addEventListener("mousemove", function (e) { v.hover(e); });
    this.canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
    this.canvas.addEventListener("click", function (e) {
      var r = v.canvas.getBoundingClientRect(), i = v.hit(e.clientX - r.left, e.clientY - r.top);
      if (i >= 0) v.setZoom(i);
    });
  }
  View.prototype.W = function (i) { return state.showBase ? this.tree.base[i] : this.tree.total[i]; };
  View.prototype.X = function (i) { return state.showBase ? this.tree.xb[i] : this.tree.x[i]; };
  View.prototype.contentHeight = function () { return (this.tree.maxDepth + 1) * ROW + 2 * PAD; };
  View.prototype.rowY = function (d) { return this.upward ? PAD + (this.tree.maxDepth - d) * ROW : PAD + d * ROW; };
  View.prototype.layout = function (maxVH) {
    var h = this.contentHeight(), vh = Math.min(h, Math.max(120, Math.round(window.innerHeight * maxVH)));
    this.wrap.style.height = vh + "px";
    this.spacer.style.height = Math.max(0, h - vh) + "px";
    this.viewH = vh;
    if (this.upward) this.wrap.scrollTop = h;
    this.drawNow();
  };
  View.prototype.redraw = function () {
    if (this.pending) return;
    this.pending = true;
    var v = this;
    requestAnimationFrame(function () { if (v.pending) v.drawNow(); });
  };
  View.prototype.zoomed = function () { // falls back to the root when the zoomed frame has no width in this mode
    return this.W(this.zoom) > 0 ? this.zoom : 0;
  };
  View.prototype.drawNow = function () {
    this.pending = false;
    var tr = this.tree, cv = this.canvas, dpr = window.devicePixelRatio || 1;
    var cw = this.wrap.clientWidth, ch = this.viewH || this.wrap.clientHeight;
    if (cv.width !== Math.round(cw * dpr) || cv.height !== Math.round(ch * dpr)) {
      cv.width = Math.round(cw * dpr); cv.height = Math.round(ch * dpr); cv.style.height = ch + "px";
    }
    var ctx = cv.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, cw, ch);
    ctx.font = "12px monospace"; ctx.textBaseline = "middle";
    this.charW = this.charW || ctx.measureText("mmmmmmmmmm").width / 10;
    var z = this.zoomed(), x0 = this.X(z), span = this.W(z), top = this.wrap.scrollTop, drawn = 0;
    if (span <= 0) { ctx.fillStyle = "#666"; ctx.fillText("No " + unit + ".", 10, 20); this.drawn = 0; return; }
    var scale = cw / span;
    this.scale = scale; this.x0 = x0; this.z = z;
    for (var a = z; a >= 0; a = tr.parent[a]) { this.box(ctx, a, 0, cw, this.rowY(tr.depth[a]) - top); drawn++; }
    var i = z + 1, stop = tr.end[z];
    while (i < stop) {
      var w = this.W(i) * scale;
      if (w < MINW) { i = tr.end[i]; continue; }
      var y = this.rowY(tr.depth[i]) - top;
      if (this.upward ? y < -ROW : y > ch) { i = tr.end[i]; continue; } // deeper rows are further off-screen
      if (y < ch && y > -ROW) { this.box(ctx, i, (this.X(i) - x0) * scale, w, y); drawn++; }
      i++;
    }
    this.drawn = drawn;
  };
  View.prototype.colour = function (i) {
    var tr = this.tree, ni = tr.name[i];
    if (state.matchName[ni]) return SEARCH;
    if (diff) return diffColour(tr, i);
    if (names[ni] === "-") return "rgb(160,160,160)";
    return hot(ni);
  };
  View.prototype.box = function (ctx, i, x, w, y) {
    ctx.fillStyle = this.colour(i);
    ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW - 1);
    if (i === this.mark) { ctx.strokeStyle = "#000"; ctx.lineWidth = 2; ctx.strokeRect(x + 1, y + 1, Math.max(w - 2, 1), ROW - 3); }
    var chars = Math.floor((w - 6) / this.charW);
    if (chars >= 3) {
      var s = names[this.tree.name[i]];
      if (s.length > chars) s = s.slice(0, chars - 2) + "..";
      ctx.fillStyle = "#000"; ctx.fillText(s, x + 3, y + ROW / 2);
    }
  };
  // hit returns the frame drawn at canvas point (cx, cy), or -1.
  View.prototype.hit = function (cx, cy) {
    var tr = this.tree, y = cy + this.wrap.scrollTop - PAD;
    if (y < 0 || !this.scale) return -1;
    var row = Math.floor(y / ROW), d = this.upward ? tr.maxDepth - row : row, z = this.zoomed();
    if (d < 0 || d > tr.maxDepth) return -1;
    if (d <= tr.depth[z]) { var a = z; while (tr.depth[a] > d) a = tr.parent[a]; return a; }
    var xs = this.x0 + cx / this.scale, cur = z;
    while (tr.depth[cur] < d) {
      var found = -1;
      for (var j = cur + 1; j < tr.end[cur]; j = tr.end[j]) {
        var xj = this.X(j), wj = this.W(j);
        if (wj > 0 && xs >= xj && xs < xj + wj) { found = j; break; }
      }
      if (found < 0 || this.W(found) * this.scale < MINW) return -1;
      cur = found;
    }
    return cur;
  };
  // centre returns the canvas point of frame i's middle after scrolling its row into view.
  View.prototype.reveal = function (i) {
    var y = this.rowY(this.tree.depth[i]), top = this.wrap.scrollTop, h = this.viewH;
    if (y < top || y + ROW > top + h) this.wrap.scrollTop = Math.max(0, y - h / 2);
  };
  View.prototype.setZoom = function (i) {
    this.zoom = i; this.reveal(i); this.drawNow();
    if (this.onZoom) this.onZoom(i);
  };
  View.prototype.tipText = function (i) {
    var tr = this.tree, s = data.nameType + " " + names[tr.name[i]] + "\n";
    if (data.notes && data.notes[tr.name[i]]) s += data.notes[tr.name[i]] + "\n";
    if (!diff) {
      return s + fmtInt(tr.total[i]) + " " + unit + " (" + pct(tr.total[i], tr.total[0]) + "), self " +
        fmtInt(tr.self[i]) + " (" + pct(tr.self[i], tr.total[0]) + ")";
    }
    var dt = tr.total[i] - tr.base[i], r = relChange(tr, i);
    return s + "total " + fmtInt(tr.base[i]) + " → " + fmtInt(tr.total[i]) + " " + unit + " (Δ " + (dt >= 0 ? "+" : "") + fmtInt(dt) + ")\n" +
      "share " + pct(tr.base[i], tr.base[0]) + " → " + pct(tr.total[i], tr.total[0]) + " (relative change " + (r >= 0 ? "+" : "") + (100 * r).toFixed(1) + "%)\n" +
      "self " + fmtInt(tr.bself[i]) + " → " + fmtInt(tr.self[i]) + (tr.total[i] === 0 ? "\nvanished: only in BASE" : tr.base[i] === 0 ? "\nnew: only in NEW" : "");
  };
  View.prototype.hover = function (e) {
    var r = this.canvas.getBoundingClientRect(), i = this.hit(e.clientX - r.left, e.clientY - r.top);
    if (i < 0) { tip.hidden = true; return; }
    tip.textContent = this.tipText(i); tip.hidden = false;
    var x = e.clientX + 12, y = e.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, e.clientX - tip.offsetWidth - 12);
    if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, e.clientY - tip.offsetHeight - 14);
    tip.style.left = x + "px"; tip.style.top = y + "px";
  };

  // ---- function table: self, and total counted once per stack ----
  function functionTotals(tr) {
    var k = names.length, f = { self: new Float64Array(k), total: new Float64Array(k), bself: new Float64Array(k), btotal: new Float64Array(k) };
    var onPath = new Int32Array(k), stack = [];
    for (var i = 1; i < tr.len; i++) { // frame 0 is the root "all"
      while (stack.length && tr.end[stack[stack.length - 1]] <= i) onPath[tr.name[stack.pop()]]--;
      var ni = tr.name[i];
      f.self[ni] += tr.self[i]; f.bself[ni] += tr.bself[i];
      if (onPath[ni] === 0) { f.total[ni] += tr.total[i]; f.btotal[ni] += tr.base[i]; }
      onPath[ni]++; stack.push(i);
    }
    return f;
  }
  // outermost lists the frames named ni that have no ancestor of that name.
  function outermost(tr, ni) {
    var out = [];
    for (var i = 1; i < tr.len;) {
      if (tr.name[i] === ni) { out.push(i); i = tr.end[i]; } else i++;
    }
    return out;
  }
  var fn = null;

  // ---- page ----
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  var body = document.body;
  var header = el("header");
  header.appendChild(el("h1", {}, data.title));
  if (data.subtitle) header.appendChild(el("p", { "class": "sub" }, data.subtitle));
  header.appendChild(el("p", { "class": "sub" }, fmtInt(main.total[0]) + " " + unit + (diff ? " (base " + fmtInt(main.base[0]) + ")" : "") +
    ", " + fmtInt(main.len) + " frames, " + fmtInt(names.length) + " functions"));
  body.appendChild(header);
  var bar = el("div", { "class": "bar" });
  var search = el("input", { type: "search", id: "search", placeholder: "Search (regex)  /", "aria-label": "search regex" });
  var caseBox = el("input", { type: "checkbox", id: "case" });
  var caseLabel = el("label", { title: "match case" }); caseLabel.appendChild(caseBox); caseLabel.appendChild(document.createTextNode(" Aa"));
  var prevBtn = el("button", { id: "prev", title: "previous match (Shift+Enter, N)" }, "◀"), nextBtn = el("button", { id: "next", title: "next match (Enter, n)" }, "▶");
  var matched = el("span", { id: "matched" });
  var resetBtn = el("button", { id: "reset", title: "reset zoom (0, Esc)" }, "Reset zoom");
  var flipBtn = el("button", { id: "flip", title: "flame graph / icicle (i)" }, "Icicle");
  var helpBtn = el("button", { id: "helpbtn", title: "keyboard help (?)" }, "?");
  [search, caseLabel, prevBtn, nextBtn, matched, resetBtn, flipBtn].forEach(function (e) { bar.appendChild(e); });
  var baseBox = el("input", { type: "checkbox", id: "showbase" });
  if (diff) {
    var bl = el("label", { title: "draw the BASE profile's shape, so frames that vanished in NEW show (b)" });
    bl.appendChild(baseBox); bl.appendChild(document.createTextNode(" show base-only frames"));
    bar.appendChild(bl);
  }
  bar.appendChild(helpBtn);
  body.appendChild(bar);
  var crumbs = el("div", { id: "crumbs" });
  body.appendChild(crumbs);
  var tip = el("div", { id: "tip", role: "tooltip" }); tip.hidden = true;
  var help = el("div", { id: "help" }); help.hidden = true;
  help.innerHTML = "<b>Keys</b><br><kbd>/</kbd> or <kbd>Ctrl</kbd>+<kbd>F</kbd> search (regex) · <kbd>Enter</kbd>/<kbd>Shift</kbd>+<kbd>Enter</kbd> or <kbd>n</kbd>/<kbd>N</kbd> next/previous match<br>" +
    "<kbd>c</kbd> match case · <kbd>i</kbd> flame graph / icicle · <kbd>0</kbd> or <kbd>Esc</kbd> reset zoom" + (diff ? " · <kbd>b</kbd> show base-only frames" : "") + " · <kbd>?</kbd> this help<br>" +
    "Click a frame to zoom; click a table row for its callers and callees (sandwich)." +
    (diff ? "<br>Diff: widths from NEW, red = larger share of " + unit + " than in BASE, blue = smaller, deeper = larger relative change. Frames only in BASE have no width; tick \u201cshow base-only frames\u201d to draw BASE\u2019s shape." : "");
  var mainWrap = el("div", { "class": "wrap", id: "mainwrap" });
  body.appendChild(mainWrap);
  var sandwich = el("section", { "class": "card", id: "sandwich" }); sandwich.hidden = true;
  var tableCard = el("section", { "class": "card", id: "functions" });
  body.appendChild(sandwich); body.appendChild(tableCard); body.appendChild(tip); body.appendChild(help);
  var selftestOut = el("pre", { id: "selftest-result" }); selftestOut.hidden = true; body.appendChild(selftestOut);

  var view = new View(mainWrap, main, !state.inverted, function () { updateCrumbs(); });
  function updateCrumbs() {
    crumbs.textContent = "";
    var z = view.zoom, path = [];
    for (var a = z; a >= 0; a = main.parent[a]) path.unshift(a);
    if (path.length <= 1) { crumbs.appendChild(document.createTextNode("Click a frame to zoom.")); return; }
    path.forEach(function (a, k) {
      if (k) crumbs.appendChild(document.createTextNode(" › "));
      var link = el("a", {}, names[main.name[a]]);
      link.addEventListener("click", function () { view.setZoom(a); });
      crumbs.appendChild(link);
    });
  }

  // ---- search ----
  function applySearch() {
    var src = search.value, re = null;
    search.classList.remove("bad");
    if (src !== "") {
      try { re = new RegExp(src, caseBox.checked ? "" : "i"); } catch (e) { search.classList.add("bad"); }
    }
    state.re = re;
    var mn = state.matchName;
    for (var k = 0; k < names.length; k++) mn[k] = re && re.test(names[k]) ? 1 : 0;
    // Matched: each sample counted once, at the outermost matching frame.
    var sum = 0, bsum = 0, list = [];
    for (var i = 1; i < main.len;) {
      if (mn[main.name[i]]) {
        sum += main.total[i]; bsum += main.base[i];
        for (var j = i; j < main.end[i]; j++) if (mn[main.name[j]] && (main.total[j] > 0 || main.base[j] > 0)) list.push(j);
        i = main.end[i];
      } else i++;
    }
    state.matches = list; state.cur = -1; state.matchSum = sum; state.matchBase = bsum;
    if (!re) matched.textContent = "";
    else matched.textContent = "Matched: " + pct(sum, main.total[0]) + (diff ? " (base " + pct(bsum, main.base[0]) + ")" : "") + " · " + list.length + " frames";
    view.mark = -1;
    view.drawNow(); if (sandView) { sandView[0].drawNow(); sandView[1].drawNow(); }
    renderTable();
  }
  function step(dir) {
    var m = state.matches;
    if (!m.length) return;
    state.cur = ((state.cur + dir) % m.length + m.length) % m.length;
    var i = m[state.cur];
    if (diff && main.total[i] === 0 && !state.showBase) setBase(true); // a vanished frame: show BASE's shape
    view.mark = i;
    view.setZoom(i);
    matched.textContent = matched.textContent.replace(/ · .*$/, "") + " · " + (state.cur + 1) + "/" + m.length + " frames";
  }
  function setBase(on) {
    state.showBase = on; baseBox.checked = on;
    view.drawNow(); if (sandView) { sandView[0].drawNow(); sandView[1].drawNow(); }
  }

  // ---- table ----
  var sortKey = "self", sortDesc = true;
  function renderTable() {
    if (!fn) fn = functionTotals(main);
    tableCard.textContent = "";
    tableCard.appendChild(el("h2", {}, "Functions"));
    var cols = diff ?
      [["name", "Function"], ["bself", "Base self"], ["self", "Self"], ["btotal", "Base total"], ["total", "Total"], ["delta", "Δ share of total"]] :
      [["name", "Function"], ["self", "Self"], ["selfp", "Self %"], ["total", "Total"], ["totalp", "Total %"]];
    var rows = [];
    for (var k = 0; k < names.length; k++) {
      if (fn.total[k] === 0 && fn.btotal[k] === 0) continue; // the root
      if (state.re && !state.matchName[k]) continue;
      rows.push(k);
    }
    var T = main.total[0], B = main.base[0];
    function delta(k) { return (T > 0 ? fn.total[k] / T : 0) - (B > 0 ? fn.btotal[k] / B : 0); }
    function key(k) {
      switch (sortKey) {
        case "name": return names[k];
        case "self": case "selfp": return fn.self[k];
        case "total": case "totalp": return fn.total[k];
        case "bself": return fn.bself[k];
        case "btotal": return fn.btotal[k];
        case "delta": return delta(k);
      }
    }
    rows.sort(function (a, b) {
      var ka = key(a), kb = key(b), c = ka < kb ? -1 : ka > kb ? 1 : 0;
      if (sortDesc) c = -c;
      return c || (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0);
    });
    var LIMIT = 500;
    tableCard.appendChild(el("p", { "class": "note" }, rows.length + " functions" + (state.re ? " matching the search" : "") +
      (rows.length > LIMIT ? ", showing the first " + LIMIT : "") + ". Total counts each sample once even when a function recurs on a stack. Click a row for its sandwich view."));
    var box = el("div", { id: "tablebox" }), table = el("table", { id: "fntable" }), thead = el("thead"), hr = el("tr");
    cols.forEach(function (c) {
      var th = el("th", { "class": c[0] === "name" ? "name" : "", "data-key": c[0] }, c[1] + (sortKey === c[0] ? (sortDesc ? " ▼" : " ▲") : ""));
      th.addEventListener("click", function () {
        if (sortKey === c[0]) sortDesc = !sortDesc; else { sortKey = c[0]; sortDesc = c[0] !== "name"; }
        renderTable();
      });
      hr.appendChild(th);
    });
    thead.appendChild(hr); table.appendChild(thead);
    var tb = el("tbody");
    rows.slice(0, LIMIT).forEach(function (k) {
      var tr = el("tr", { "data-fn": String(k) });
      tr.appendChild(el("td", { "class": "name" }, names[k]));
      if (diff) {
        var dv = delta(k);
        [fmtInt(fn.bself[k]), fmtInt(fn.self[k]), fmtInt(fn.btotal[k]), fmtInt(fn.total[k])].forEach(function (v) { tr.appendChild(el("td", {}, v)); });
        tr.appendChild(el("td", { "class": dv > 0 ? "grow" : dv < 0 ? "shrink" : "" }, (dv >= 0 ? "+" : "") + (100 * dv).toFixed(2) + " pp"));
      } else {
        [fmtInt(fn.self[k]), pct(fn.self[k], T), fmtInt(fn.total[k]), pct(fn.total[k], T)].forEach(function (v) { tr.appendChild(el("td", {}, v)); });
      }
      tr.addEventListener("click", function () { openSandwich(k); });
      tb.appendChild(tr);
    });
    table.appendChild(tb); box.appendChild(table); tableCard.appendChild(box);
  }

  // ---- sandwich: callers (paths leading to the function) above, callees below ----
  var sandView = null;
  function sandwichTrees(ni) {
    var callers = new Trie(ni), callees = new Trie(ni), tops = outermost(main, ni);
    tops.forEach(function (m) {
      var t = main.total[m], b = main.base[m], node = callers.root;
      node.t += t; node.b += b;
      for (var a = main.parent[m]; a > 0; a = main.parent[a]) { node = callers.child(node, main.name[a]); node.t += t; node.b += b; }
      var base = main.depth[m], path = [callees.root];
      callees.root.t += t; callees.root.b += b;
      for (var j = m + 1; j < main.end[m]; j++) {
        var k = main.depth[j] - base, c = callees.child(path[k - 1], main.name[j]);
        c.t += main.total[j]; c.b += main.base[j]; path[k] = c;
      }
    });
    return [callers.tree(), callees.tree()];
  }
  function openSandwich(ni) {
    state.sandwich = ni;
    var trees = sandwichTrees(ni);
    sandwich.textContent = ""; sandwich.hidden = false;
    var close = el("button", { style: "float:right" }, "Close");
    close.addEventListener("click", function () { sandwich.hidden = true; sandView = null; state.sandwich = -1; });
    sandwich.appendChild(close);
    sandwich.appendChild(el("h2", {}, "Sandwich: " + names[ni]));
    sandwich.appendChild(el("p", { "class": "note" }, "Callers (every path leading to the function, nearest caller just above it), then callees. " +
      fmtInt(trees[0].total[0]) + " " + unit + " (" + pct(trees[0].total[0], main.total[0]) + ")."));
    var up = el("div", { "class": "wrap", id: "callers" }), down = el("div", { "class": "wrap", id: "callees" });
    sandwich.appendChild(el("h2", {}, "Callers")); sandwich.appendChild(up);
    sandwich.appendChild(el("h2", {}, "Callees")); sandwich.appendChild(down);
    sandView = [new View(up, trees[0], true), new View(down, trees[1], false)];
    sandView[0].layout(0.35); sandView[1].layout(0.35);
    sandwich.scrollIntoView();
  }

  // ---- wiring ----
  search.addEventListener("input", applySearch);
  caseBox.addEventListener("change", applySearch);
  search.addEventListener("keydown", function (e) {
    if (e.key === "Enter") { e.preventDefault(); step(e.shiftKey ? -1 : 1); }
    else if (e.key === "Escape") search.blur();
  });
  prevBtn.addEventListener("click", function () { step(-1); });
  nextBtn.addEventListener("click", function () { step(1); });
  resetBtn.addEventListener("click", function () { view.mark = -1; view.setZoom(0); });
  function flip() {
    state.inverted = !state.inverted; view.upward = !state.inverted;
    flipBtn.textContent = state.inverted ? "Flame graph" : "Icicle";
    view.layout(0.7); if (view.zoom) view.reveal(view.zoom); view.drawNow();
  }
  flipBtn.addEventListener("click", flip);
  baseBox.addEventListener("change", function () { setBase(baseBox.checked); });
  helpBtn.addEventListener("click", function () { help.hidden = !help.hidden; });
  document.addEventListener("keydown", function (e) {
    if (e.target === search) return;
    if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); search.focus(); search.select(); return; }
    if (e.ctrlKey || e.metaKey || e.altKey || (e.target.tagName === "INPUT" && e.target.type !== "checkbox")) return;
    switch (e.key) {
      case "/": e.preventDefault(); search.focus(); search.select(); break;
      case "n": step(1); break;
      case "N": step(-1); break;
      case "c": caseBox.checked = !caseBox.checked; applySearch(); break;
      case "i": flip(); break;
      case "b": if (diff) setBase(!state.showBase); break;
      case "0": case "Escape": view.mark = -1; view.setZoom(0); help.hidden = true; break;
      case "?": help.hidden = !help.hidden; break;
    }
  });
  var resizeTimer = 0;
  window.addEventListener("resize", function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { view.redraw(); if (sandView) { sandView[0].redraw(); sandView[1].redraw(); } }, 50);
  });

  if (state.inverted) flipBtn.textContent = "Flame graph";
  view.layout(0.7);
  updateCrumbs();
  var tDrawn = performance.now();
  renderTable();
  var tTable = performance.now();
  body.setAttribute("data-flame", "ready");
  body.setAttribute("data-timing", JSON.stringify({ parse: Math.round(tParsed - t0), layout: Math.round(tLaid - tParsed),
    draw: Math.round(tDrawn - tLaid), table: Math.round(tTable - tDrawn), total: Math.round(tTable - t0), drawn: view.drawn }));

  // ---- #selftest=JSON: steps driven through the page's own handlers, for
  // the headless-browser tests; results go to #selftest-result as JSON. ----
  function frameNamed(v, name) {
    var tr = v.tree;
    for (var i = 0; i < tr.len; i++) if (names[tr.name[i]] === name && v.W(i) > 0) return i;
    return -1;
  }
  function framePoint(v, i) {
    var z = v.zoomed();
    if (i > z && i >= v.tree.end[z] || i < z && v.tree.end[i] <= z) v.setZoom(0); // not drawn under the zoom
    v.reveal(i); v.drawNow();
    var x = (v.X(i) - v.x0) * v.scale, w = v.W(i) * v.scale;
    if (i <= v.z) { x = 0; w = v.wrap.clientWidth; }
    return [x + w / 2, v.rowY(v.tree.depth[i]) - v.wrap.scrollTop + ROW / 2];
  }
  function nonBlank(v) {
    var cv = v.canvas, px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data, n = 0;
    for (var k = 0; k < px.length; k += 4) if (px[k] !== 255 || px[k + 1] !== 255 || px[k + 2] !== 255) n++;
    return n;
  }
  function level1(tr) {
    var out = [];
    for (var j = 1; j < tr.len; j = tr.end[j]) out.push([names[tr.name[j]], tr.total[j], tr.base[j]]);
    return out;
  }
  var ops = {
    render: function () { return { nonBlank: nonBlank(view), drawn: view.drawn, timing: JSON.parse(body.getAttribute("data-timing")) }; },
    search: function (s) {
      search.value = s.re; caseBox.checked = !!s["case"];
      search.dispatchEvent(new Event("input"));
      return { matched: matched.textContent, sum: state.matchSum, base: state.matchBase, frames: state.matches.length };
    },
    key: function (s) {
      var target = s.target === "search" ? search : document.body;
      target.dispatchEvent(new KeyboardEvent("keydown", { key: s.key, shiftKey: !!s.shift, bubbles: true }));
      var z = view.zoom;
      return { zoom: names[main.name[z]], zoomTotal: main.total[z], zoomBase: main.base[z], cur: state.cur, showBase: state.showBase, crumbs: crumbs.textContent, matched: matched.textContent };
    },
    table: function (s) {
      if (s.sort) { var th = tableCard.querySelector('th[data-key="' + s.sort + '"]'); th.dispatchEvent(new MouseEvent("click", { bubbles: true })); }
      var out = [];
      tableCard.querySelectorAll("tbody tr").forEach(function (tr, k) {
        if (k < (s.rows || 5)) out.push(Array.prototype.map.call(tr.children, function (td) { return td.textContent; }));
      });
      return { rows: out, note: tableCard.querySelector(".note").textContent };
    },
    row: function (s) {
      var tr = null;
      tableCard.querySelectorAll("tbody tr").forEach(function (r) { if (!tr && r.firstChild.textContent === s.name) tr = r; });
      if (!tr) return { error: "no row " + s.name };
      tr.dispatchEvent(new MouseEvent("click", { bubbles: true }));
      return { title: sandwich.querySelector("h2").textContent, callers: level1(sandView[0].tree), callees: level1(sandView[1].tree),
        nonBlank: [nonBlank(sandView[0]), nonBlank(sandView[1])] };
    },
    pixel: function (s) {
      var i = frameNamed(view, s.name);
      if (i < 0) return { error: "no drawn frame " + s.name };
      var p = framePoint(view, i), dpr = window.devicePixelRatio || 1;
      var d = view.canvas.getContext("2d").getImageData(Math.round(p[0] * dpr), Math.round((p[1] - ROW / 2 + 2) * dpr), 1, 1).data;
      return { rgb: [d[0], d[1], d[2]], colour: view.colour(i) };
    },
    hover: function (s) {
      var i = frameNamed(view, s.name);
      if (i < 0) return { error: "no drawn frame " + s.name };
      var p = framePoint(view, i), r = view.canvas.getBoundingClientRect();
      view.canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + p[0], clientY: r.top + p[1], bubbles: true }));
      return { tip: tip.hidden ? "" : tip.textContent };
    },
    click: function (s) { // a real click on frame NAME's centre
      var i = frameNamed(view, s.name);
      if (i < 0) return { error: "no drawn frame " + s.name };
      var p = framePoint(view, i), r = view.canvas.getBoundingClientRect();
      view.canvas.dispatchEvent(new MouseEvent("click", { clientX: r.left + p[0], clientY: r.top + p[1], bubbles: true }));
      return { zoom: names[main.name[view.zoom]], crumbs: crumbs.textContent };
    },
    base: function (s) {
      baseBox.checked = !!s.on; baseBox.dispatchEvent(new Event("change"));
      return { showBase: state.showBase, nonBlank: nonBlank(view) };
    }
  };
  function selftest() {
    var m = /^#selftest=(.*)$/.exec(location.hash);
    if (!m) return;
    var steps = JSON.parse(decodeURIComponent(m[1])), out = [];
    steps.forEach(function (s) {
      try { out.push(ops[s.op](s)); } catch (e) { out.push({ error: String(e) }); }
    });
    selftestOut.textContent = JSON.stringify(out);
    selftestOut.hidden = false;
  }
  selftest();
})();
