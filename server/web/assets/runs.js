"use strict";
// runs.js: the on-demand runs, newest first, a page at a time (?before=ID
// in the URL, as the API pages); operators get a "New run" button per
// kind. While a run on the page is queued or running, the list reloads.
LS.ready(function () {
  var before = LS.query().get("before");
  var kinds = ["iotest", "nettest", "flame", "report"];
  if (LS.can("operator")) {
    LS.main.appendChild(LS.el("div", { class: "toolbar", id: "new-runs", role: "group", "aria-label": "New run" },
      kinds.map(function (k) { return LS.el("a", { class: "button", href: "/runs/new?kind=" + k, "data-kind": k }, "New " + k); })));
    LS.key("n", "start a new run", function () { location.assign("/runs/new?kind=iotest"); });
  }
  var box = LS.el("div", { id: "run-list", "aria-live": "polite" });
  var pager = LS.el("nav", { class: "toolbar", "aria-label": "Pages of runs" });
  LS.main.appendChild(box);
  LS.main.appendChild(pager);
  var next = null, timer = null;

  function draw(b) {
    var list = b.runs || [];
    next = b.next_before || null;
    LS.clear(box);
    if (!list.length) box.appendChild(LS.el("p", { id: "no-runs" }, before ? "No older runs." : "No runs yet."));
    else box.appendChild(LS.table(null, [
      { label: "Run", num: true, value: function (r) { return LS.el("a", { href: "/runs/" + r.id }, "#" + r.id); } },
      { label: "Kind", value: function (r) { return r.kind; } },
      { label: "What", value: LS.runTarget },
      { label: "State", value: function (r) { return [LS.runState(r), r.error ? LS.el("div", { class: "muted" }, r.error) : null]; } },
      { label: "User", value: function (r) { return r.user; } },
      { label: "Started", value: function (r) { return LS.fmtTime(r.started_at || r.created_at); } },
      { label: "Duration", num: true, value: function (r) { return LS.fmtDuration(LS.runSeconds(r)); } }
    ], list, { id: "runs" }));
    LS.clear(pager);
    if (before) pager.appendChild(LS.el("a", { href: "/runs", id: "newest" }, "← Newest"));
    if (next) pager.appendChild(LS.el("a", { href: "/runs?before=" + next, id: "older" }, "Older →"));
    clearTimeout(timer);
    if (list.some(function (r) { return !LS.runFinal(r.state); })) timer = setTimeout(load, 2000);
  }
  function load() {
    return LS.api("/api/v1/runs" + (before ? "?before=" + encodeURIComponent(before) : "")).then(draw, LS.fail("runs"));
  }
  LS.key("o", "older runs", function () { if (next) location.assign("/runs?before=" + next); });
  return load();
});
