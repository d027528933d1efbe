"use strict";
// run.js: one run: who started it, when, its parameters and commands; its
// progress and log live from GET /api/v1/runs/{id}/events (Server-Sent
// Events); Cancel for operators while it runs; once it has ended, its
// HTML output (the iotest or nettest report, the flame graph) inside the
// page and every output to open or download. Flame runs link to the
// flame graph viewer, alone or as a diff against another flame run.
LS.ready(function () {
  var id = location.pathname.split("/").pop();
  if (!/^\d+$/.test(id)) { LS.banner("no such run: " + id); return; }
  var base = "/api/v1/runs/" + id;
  var title = document.getElementById("title");
  var facts = LS.el("div", { id: "run-facts" });
  var bar = LS.el("progress", { id: "run-progress", max: 100, "aria-label": "Progress" });
  var line = LS.el("span", { id: "run-line", class: "muted" });
  var progressBox = LS.el("div", { class: "panel progress-box", "aria-live": "polite" }, bar, " ", LS.el("span", { id: "run-percent" }), " ", line);
  var actions = LS.el("div", { class: "toolbar", id: "run-actions" });
  var outputs = LS.el("section", { id: "run-outputs", "aria-labelledby": "outputs-h", hidden: true }, LS.el("h2", { id: "outputs-h" }, "Outputs"));
  var log = LS.el("pre", { class: "log", id: "run-log", tabindex: 0, "aria-label": "Run log" });
  LS.main.appendChild(facts);
  LS.main.appendChild(actions);
  LS.main.appendChild(progressBox);
  LS.main.appendChild(outputs);
  LS.main.appendChild(LS.el("h2", {}, "Log"));
  LS.main.appendChild(log);
  var run = null, stream = null, shownOutputs = false, ticker = null, actionsFor = null;

  // drawFacts shows a state of the run. A run that has ended stays ended:
  // the answer to a cancel request (the run as it was) may come after the
  // stream's final state.
  function drawFacts(r) {
    if (run && LS.runFinal(run.state) && !LS.runFinal(r.state)) return;
    run = r;
    title.textContent = "Run #" + r.id + " · " + r.kind;
    document.title = "Run " + r.id + " · latscope";
    var rows = [
      ["State", [LS.runState(r), r.error && r.error !== r.state ? " — " + r.error : "", r.cancelled_by ? " by " + r.cancelled_by : ""]],
      ["Started by", r.user + " from " + r.remote],
      ["Created", LS.fmtTime(r.created_at)], ["Started", LS.fmtTime(r.started_at)], ["Ended", LS.fmtTime(r.ended_at)],
      ["Duration", LS.el("span", { id: "run-duration" }, LS.fmtDuration(LS.runSeconds(r)))],
      ["Exit code", r.exit_code === undefined ? "–" : String(r.exit_code)]
    ];
    var params = r.params || {};
    LS.clear(facts).appendChild(LS.el("div", { class: "facts" },
      LS.table("Run", [{ label: "", value: function (x) { return LS.el("span", { class: "key" }, x[0]); } }, { label: "", value: function (x) { return x[1]; } }], rows, { id: "run-info", class: "kv" }),
      LS.table("Parameters", [{ label: "Name", value: function (k) { return k; } },
        { label: "Value", value: function (k) { var v = params[k]; return Array.isArray(v) ? v.join(",") : String(v); } }],
      Object.keys(params), { id: "run-params" })));
    facts.appendChild(LS.el("details", { class: "commands" }, LS.el("summary", {}, "Commands"),
      (r.commands || []).map(function (c) { return LS.el("pre", {}, c.join(" ")); })));
    drawProgress(r.progress || {});
    if (r.state !== actionsFor) drawActions(r);
    if (LS.runFinal(r.state)) {
      progressBox.hidden = r.state === "succeeded";
      drawOutputs(r);
    }
  }
  function drawProgress(p) {
    if (p.percent !== undefined && p.percent !== null) {
      bar.value = p.percent;
      document.getElementById("run-percent").textContent = p.percent + " %";
    } else if (run && !LS.runFinal(run.state)) {
      bar.removeAttribute("value"); // indeterminate: the kind plans no time
    }
    if (p.line) line.textContent = p.line;
  }
  function drawActions(r) {
    actionsFor = r.state;
    LS.clear(actions);
    if (!LS.runFinal(r.state) && LS.can("operator")) {
      actions.appendChild(LS.el("button", { type: "button", class: "danger", id: "cancel", onclick: cancel }, "Cancel"));
    }
    if (r.kind === "flame" && LS.hasOutput(r, "flame.folded")) {
      actions.appendChild(LS.el("a", { class: "button", id: "open-flame", href: "/flame?run=" + r.id }, "Open in the flame graph viewer"));
      actions.appendChild(diffChooser(r));
    }
    actions.appendChild(LS.el("a", { href: "/runs" }, "All runs"));
  }
  // diffChooser offers the other flame runs as a base to compare with.
  function diffChooser(r) {
    var sel = LS.el("select", { id: "diff-base", "aria-label": "Diff against the flame run" }, LS.el("option", { value: "" }, "Diff against…"));
    LS.api("/api/v1/runs?limit=200").then(function (b) {
      (b.runs || []).forEach(function (o) {
        if (o.kind === "flame" && o.id !== r.id && LS.hasOutput(o, "flame.folded")) {
          sel.appendChild(LS.el("option", { value: o.id }, "#" + o.id + " " + LS.runTarget(o) + ", " + LS.fmtTime(o.started_at)));
        }
      });
    }, LS.fail("flame runs"));
    sel.addEventListener("change", function () { if (sel.value) location.assign("/flame?run=" + r.id + "&base=" + sel.value); });
    return sel;
  }
  function cancel() {
    if (!confirm("Cancel run #" + id + "?")) return;
    var btn = document.getElementById("cancel");
    btn.disabled = true;
    btn.textContent = "Cancelling…"; // the run ends when its children have stopped
    LS.api(base + "/cancel", { method: "POST" }).then(drawFacts, function (e) { btn.disabled = false; btn.textContent = "Cancel"; LS.fail("cancel")(e); });
  }
  function drawOutputs(r) {
    if (shownOutputs) return;
    shownOutputs = true;
    outputs.hidden = false;
    var list = r.outputs || [];
    outputs.appendChild(LS.table(null, [
      { label: "Output", value: function (o) { return LS.el("a", { href: base + "/outputs/" + o.name, target: "_blank", rel: "noopener" }, o.name); } },
      { label: "Type", value: function (o) { return o.content_type.split(";")[0]; } },
      { label: "Size", num: true, value: function (o) { return LS.fmtNumber(o.size, 0) + " B"; } },
      { label: "", value: function (o) { return LS.el("a", { href: base + "/outputs/" + o.name, download: "run-" + r.id + "-" + o.name }, "Download"); } }
    ], list, { id: "outputs" }));
    list.forEach(function (o) {
      if (o.content_type.indexOf("text/html") !== 0) return;
      outputs.appendChild(LS.el("h3", {}, o.name));
      outputs.appendChild(LS.el("iframe", { class: "output", src: base + "/outputs/" + o.name, title: o.name + " of run " + r.id, "data-output": o.name,
        onload: function () { this.setAttribute("data-loaded", "1"); } }));
    });
    if (!list.length) outputs.appendChild(LS.el("p", {}, "This run left no outputs."));
  }

  // follow reads the run's events: its log from the start, its progress,
  // its states; the stream ends after the final state.
  function follow() {
    stream = new EventSource(base + "/events");
    stream.addEventListener("state", function (ev) {
      var r = JSON.parse(ev.data);
      drawFacts(r);
      if (LS.runFinal(r.state)) { stream.close(); clearInterval(ticker); }
    });
    stream.addEventListener("log", function (ev) {
      var d = JSON.parse(ev.data);
      var atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      log.appendChild(document.createTextNode(d.text));
      if (atEnd) log.scrollTop = log.scrollHeight;
    });
    stream.addEventListener("progress", function (ev) { drawProgress(JSON.parse(ev.data)); });
    // EventSource retries a dropped connection by itself (resuming the
    // log); it gives up on a refusal (a session that ended).
    stream.onerror = function () {
      if (stream.readyState === EventSource.CLOSED && !(run && LS.runFinal(run.state))) LS.banner("the run's event stream was refused: reload the page (log in again?)");
    };
    ["unauthorized", "shutdown"].forEach(function (t) {
      stream.addEventListener(t, function (ev) { stream.close(); LS.banner("the run's stream ended: " + JSON.parse(ev.data).reason); });
    });
    // The duration ticks while the run runs.
    // Every 5 s the run is read again too, so that nothing that reaches
    // the page out of order (a stream that reconnected, a proxy's timeout)
    // can leave it showing a run that has ended as running.
    var ticks = 0;
    ticker = setInterval(function () {
      var d = document.getElementById("run-duration");
      if (d && run && run.state === "running") d.textContent = LS.fmtDuration(LS.runSeconds(run));
      if (++ticks % 5 === 0 && run && !LS.runFinal(run.state)) {
        LS.api(base).then(function (r) {
          drawFacts(r);
          if (LS.runFinal(r.state)) { stream.close(); clearInterval(ticker); }
        }, function () { /* the stream's own errors say what is wrong */ });
      }
    }, 1000);
  }

  return LS.api(base).then(function (r) { drawFacts(r); follow(); }, LS.fail("run"));
});
