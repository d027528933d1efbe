"use strict";
// app.js: what every page of latscope's browser view shares. Pages call
// LS.ready(function (me) { ... }) and build their content into LS.main
// with LS.el (no innerHTML: data from the archive is text, never markup).
(function () {
  var LS = {};
  window.LS = LS;
  LS.main = document.getElementById("main");
  var meKnown = null;

  // ---- requests -------------------------------------------------------
  function errorOf(resp) {
    return resp.json().then(function (b) { return b && b.error ? b.error : resp.status + " " + resp.statusText; },
      function () { return resp.status + " " + resp.statusText; }).then(function (msg) {
      var e = new Error(msg);
      e.status = resp.status;
      throw e;
    });
  }
  function toLogin() { location.assign("/login?next=" + encodeURIComponent(location.pathname + location.search)); }

  // LS.fetch calls the API with the session cookie and, on a state change,
  // the session's CSRF token; it resolves to the Response (ok only).
  LS.fetch = function (path, opts) {
    opts = opts || {};
    var method = opts.method || "GET";
    var headers = {};
    if (opts.body !== undefined) headers["Content-Type"] = "application/json";
    if (method !== "GET" && method !== "HEAD" && meKnown && meKnown.csrf_token) headers["X-CSRF-Token"] = meKnown.csrf_token;
    return fetch(path, {
      method: method, headers: headers, credentials: "same-origin", signal: opts.signal,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body)
    }).then(function (resp) {
      if (resp.status === 401 && !opts.noRedirect) { toLogin(); throw new Error("logged out"); }
      if (!resp.ok) return errorOf(resp);
      return resp;
    });
  };
  // LS.api resolves to the JSON body (null for 204).
  LS.api = function (path, opts) {
    return LS.fetch(path, opts).then(function (resp) { return resp.status === 204 ? null : resp.json(); });
  };

  // ---- the DOM ----------------------------------------------------------
  // LS.el("a", {href: "/", class: "x", onclick: fn}, "text", child, ...)
  LS.el = function (tag, attrs) {
    var node = tag.indexOf("svg:") === 0 ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4)) : document.createElement(tag);
    for (var k in attrs || {}) {
      var v = attrs[k];
      if (v === undefined || v === null || v === false) continue;
      if (k.slice(0, 2) === "on" && typeof v === "function") node.addEventListener(k.slice(2), v);
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  };
  function append(node, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { append(node, x); }); return; }
    node.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
  LS.clear = function (node) { while (node.firstChild) node.removeChild(node.firstChild); return node; };

  // LS.table(columns, rows): columns are {label, value(row) → text|node,
  // num: right-aligned}; an accessible table with a caption.
  LS.table = function (caption, columns, rows, attrs) {
    return LS.el("table", attrs || {},
      caption ? LS.el("caption", {}, caption) : null,
      LS.el("thead", {}, LS.el("tr", {}, columns.map(function (c) { return LS.el("th", { scope: "col", class: c.num ? "num" : null }, c.label); }))),
      LS.el("tbody", {}, rows.map(function (r) {
        return LS.el("tr", {}, columns.map(function (c) { return LS.el("td", { class: c.num ? "num" : null }, c.value(r)); }));
      })));
  };

  // LS.banner shows an error (or clears it with no message).
  LS.banner = function (msg) {
    var b = document.getElementById("banner");
    b.textContent = msg || "";
    b.hidden = !msg;
  };
  LS.fail = function (what) { return function (e) { if (e.message !== "logged out") LS.banner(what + ": " + e.message); }; };

  // ---- formats ----------------------------------------------------------
  // LS.fmtSeconds(0.000052) → "52µs": latency as the terminal writes it.
  LS.fmtSeconds = function (s) {
    if (s === null || s === undefined || isNaN(s)) return "–";
    var a = Math.abs(s);
    if (a === 0) return "0";
    if (a < 1e-6) return round3(s * 1e9) + "ns";
    if (a < 1e-3) return round3(s * 1e6) + "µs";
    if (a < 1) return round3(s * 1e3) + "ms";
    return round3(s) + "s";
  };
  function round3(v) { return Number(v.toPrecision(3)).toString(); }
  LS.fmtNumber = function (v, digits) {
    if (v === null || v === undefined || isNaN(v)) return "–";
    return Number(v).toLocaleString("en-US", { maximumFractionDigits: digits === undefined ? 2 : digits });
  };
  function pad(n) { return n < 10 ? "0" + n : String(n); }
  // LS.fmtTime: UTC, as the API and the CLI write times.
  LS.fmtTime = function (t) {
    if (!t) return "–";
    var d = t instanceof Date ? t : new Date(t);
    if (isNaN(d)) return String(t);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) + "Z";
  };
  LS.fmtAgo = function (t) {
    if (!t) return "never";
    var s = (Date.now() - new Date(t).getTime()) / 1000;
    if (s < 0) s = 0;
    if (s < 90) return Math.round(s) + " s ago";
    if (s < 5400) return Math.round(s / 60) + " min ago";
    if (s < 172800) return Math.round(s / 3600) + " h ago";
    return Math.round(s / 86400) + " d ago";
  };

  // ---- the URL holds the view ----------------------------------------------
  LS.query = function () { return new URLSearchParams(location.search); };
  // LS.setQuery(values) replaces the URL's query (null removes a key), so
  // that a link reproduces the view without adding history entries.
  LS.setQuery = function (values) {
    var q = LS.query();
    for (var k in values) {
      if (values[k] === null || values[k] === undefined || values[k] === "") q.delete(k);
      else q.set(k, values[k]);
    }
    var s = q.toString();
    history.replaceState(null, "", location.pathname + (s ? "?" + s : ""));
  };

  // ---- roles --------------------------------------------------------------
  var ranks = { viewer: 1, operator: 2, admin: 3 };
  LS.can = function (role) { return !!meKnown && (ranks[meKnown.role] || 0) >= ranks[role]; };

  // ---- keyboard -------------------------------------------------------------
  var keys = [];
  // LS.key("+", "zoom in", fn): a shortcut, listed in the "?" dialog.
  LS.key = function (key, what, fn) { keys.push({ key: key, what: what, fn: fn }); };
  var pendingG = false;
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    if (pendingG) {
      pendingG = false;
      var dest = { d: "/", h: "/history", c: "/compare", r: "/runs", t: "/tokens", u: "/admin/users", a: "/admin/audit" }[ev.key];
      if (dest) { ev.preventDefault(); location.assign(dest); }
      return;
    }
    if (ev.key === "g") { pendingG = true; return; }
    if (ev.key === "?") { ev.preventDefault(); showKeys(); return; }
    for (var i = 0; i < keys.length; i++) {
      if (keys[i].key === ev.key) { ev.preventDefault(); keys[i].fn(ev); return; }
    }
  });
  function showKeys() {
    var body = document.querySelector("#keys-table tbody");
    LS.clear(body);
    var all = keys.concat([{ key: "?", what: "this list" }, { key: "g d / g h / g c / g r", what: "go to dashboard, history, compare, runs" },
      { key: "g t / g u / g a", what: "go to tokens, users, audit log" }]);
    all.forEach(function (k) { body.appendChild(LS.el("tr", {}, LS.el("th", { scope: "row" }, LS.el("kbd", {}, k.key)), LS.el("td", {}, k.what))); });
    var d = document.getElementById("keys");
    if (!d.open) d.showModal();
  }

  // ---- navigation -------------------------------------------------------------
  function buildNav(me) {
    var links = [["/", "Dashboard", "viewer"], ["/history", "History", "viewer"], ["/compare", "Compare", "viewer"], ["/runs", "Runs", "viewer"],
      ["/runs/new", "New run", "operator"], ["/audit-watches", "DB audit", "viewer"], ["/tokens", "Tokens", "viewer"], ["/admin/users", "Users", "admin"], ["/admin/audit", "Audit log", "admin"]];
    var nav = document.getElementById("nav");
    links.forEach(function (l) {
      if (!LS.can(l[2])) return;
      var here = location.pathname === l[0];
      nav.appendChild(LS.el("a", { href: l[0], "aria-current": here ? "page" : null, "data-role": l[2] }, l[1]));
    });
    var who = document.getElementById("who");
    who.appendChild(LS.el("span", { id: "whoami" }, me.user + " (" + me.role + ")"));
    who.appendChild(LS.el("button", { id: "logout", type: "button", onclick: logout }, "Log out"));
    who.appendChild(LS.el("button", { type: "button", class: "link", "aria-label": "Keyboard shortcuts", onclick: showKeys }, "?"));
  }
  function logout() {
    LS.fetch("/api/v1/logout", { method: "POST" }).then(function () { location.assign("/login"); }, LS.fail("log out"));
  }

  // LS.ready(fn) runs fn(me) once the session is known and the navigation
  // built; a page without a session goes to the login page. When what fn
  // returns (a promise: the page's first data drawn) settles, <body> gets
  // data-ready="1", which tests and screenshots wait for.
  var me = fetch("/api/v1/me", { credentials: "same-origin" }).then(function (resp) {
    if (resp.status === 401) { toLogin(); throw new Error("logged out"); }
    if (!resp.ok) return errorOf(resp);
    return resp.json();
  }).then(function (m) { meKnown = m; buildNav(m); return m; });
  me.catch(LS.fail("session"));
  LS.ready = function (fn) {
    me.then(function (m) {
      var drawn;
      try { drawn = fn(m); } catch (e) { LS.banner("page error: " + e.message); throw e; }
      return drawn;
    }).then(ready, ready);
  };
  // ready marks the page drawn: data-ready for tests and screenshots, and
  // a performance mark ("ready") for the first-paint benchmark.
  function ready() {
    if (!performance.getEntriesByName("ready").length) performance.mark("ready");
    document.body.setAttribute("data-ready", "1");
  }
})();

// ---- runs (shared by runs.js, run.js, runform.js and flame.js) ------------
(function (LS) {
  // LS.fmtDuration(75.2) → "1:15": a run's length.
  LS.fmtDuration = function (s) {
    if (s === null || s === undefined || isNaN(s)) return "–";
    if (s < 60) return (Math.round(s * 10) / 10) + " s";
    var m = Math.floor(s / 60), sec = Math.round(s - m * 60);
    if (sec === 60) { m++; sec = 0; }
    return m + ":" + (sec < 10 ? "0" : "") + sec;
  };
  // LS.runSeconds: from start to end (or to now while it runs).
  LS.runSeconds = function (r) {
    if (!r.started_at) return null;
    var end = r.ended_at ? new Date(r.ended_at) : new Date();
    return (end - new Date(r.started_at)) / 1000;
  };
  LS.runFinal = function (state) { return state === "succeeded" || state === "failed" || state === "cancelled"; };
  LS.runState = function (r) {
    var pct = r.progress && r.progress.percent;
    return LS.el("span", { class: "state-" + r.state, "data-state": r.state }, r.state + (r.state === "running" && pct !== undefined ? " " + pct + " %" : ""));
  };
  // LS.runTarget: the one parameter that says what a run measured.
  LS.runTarget = function (r) {
    var p = r.params || {};
    switch (r.kind) {
      case "iotest": return p.dir;
      case "nettest": return p.target;
      case "flame": return p.all ? "every CPU" : "pid " + p.pid;
      case "report": return p.series || "every series";
    }
    return "";
  };
  LS.hasOutput = function (r, name) { return (r.outputs || []).some(function (o) { return o.name === name; }); };
})(window.LS);
