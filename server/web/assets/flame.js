"use strict";
// flame.js: a flame graph stored by a flame run, in latscope's flame graph
// viewer (search, table, sandwich, diff) inside the page:
// /flame?run=ID[&output=NAME] shows the run's output (flame.html), and
// &base=ID2 the differential flame graph of run ID2 (the base) against
// run ID, which the server draws from the two runs' folded stacks.
LS.ready(function () {
  var q = LS.query();
  var id = q.get("run"), base = q.get("base"), output = q.get("output") || "flame.html";
  if (!/^\d+$/.test(id || "")) {
    LS.main.appendChild(LS.el("p", {}, "Open a flame graph from a flame run's page: ", LS.el("a", { href: "/runs" }, "runs"), "."));
    return;
  }
  if (base && !/^\d+$/.test(base)) base = null;
  var title = document.getElementById("title");
  var bar = LS.el("div", { class: "toolbar", id: "flame-bar" });
  var frameBox = LS.el("div", { id: "flame-frame" });
  LS.main.appendChild(bar);
  LS.main.appendChild(frameBox);

  function frameURL() {
    return base ? "/api/v1/runs/" + id + "/flame?base=" + base : "/api/v1/runs/" + id + "/outputs/" + encodeURIComponent(output);
  }
  function draw() {
    title.textContent = base ? "Differential flame graph: run #" + id + " against #" + base : "Flame graph of run #" + id;
    LS.clear(frameBox).appendChild(LS.el("iframe", { class: "output flame", src: frameURL(), id: "flame-view",
      title: title.textContent, "data-run": id, "data-base": base || "", onload: function () { this.setAttribute("data-loaded", "1"); } }));
  }

  return Promise.all([LS.api("/api/v1/runs/" + id), LS.api("/api/v1/runs?limit=200")]).then(function (res) {
    var run = res[0], others = (res[1].runs || []).filter(function (o) {
      return o.kind === "flame" && o.id !== run.id && LS.hasOutput(o, "flame.folded");
    });
    if (run.kind !== "flame") { LS.banner("run #" + id + " is a " + run.kind + " run, not a flame capture"); return; }
    var sel = LS.el("select", { id: "flame-base", "aria-label": "Compare with (base)" }, LS.el("option", { value: "" }, "no diff"),
      others.map(function (o) { return LS.el("option", { value: o.id, selected: String(o.id) === base }, "#" + o.id + " " + LS.runTarget(o) + ", " + LS.fmtTime(o.started_at)); }));
    sel.addEventListener("change", function () {
      base = sel.value || null;
      LS.setQuery({ base: base });
      draw();
    });
    bar.appendChild(LS.el("a", { href: "/runs/" + id }, "Run #" + id));
    bar.appendChild(document.createTextNode(" · " + LS.runTarget(run) + ", " + LS.fmtTime(run.started_at) + " · "));
    bar.appendChild(LS.el("label", { for: "flame-base" }, "Diff against"));
    bar.appendChild(sel);
    if (base) bar.appendChild(LS.el("span", { class: "muted" }, "widths: run #" + id + "; colours: the change from #" + base + " (red grew, blue shrank)"));
    draw();
  }, LS.fail("flame run"));
});
