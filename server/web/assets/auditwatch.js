"use strict";
// auditwatch.js: the server's audit watches (who started or stopped a
// database, from which login): each watch's state and, for the one chosen
// (?watch=NAME, ?since=, ?until=), its timeline page in a sandboxed frame
// and links to its chains as JSON and JSON lines.
LS.ready(function () {
  var q = LS.query();
  var list = LS.el("div", { id: "watch-list" });
  var view = LS.el("div", { id: "watch-view" });
  LS.main.appendChild(list);
  LS.main.appendChild(view);
  return LS.api("/api/v1/audit-watches").then(function (b) {
    var watches = b.watches || [];
    if (!watches.length) {
      list.appendChild(LS.el("p", {}, "No audit watches are configured: add audit_watches to the server's configuration (docs/audit.md)."));
      return;
    }
    var chosen = q.get("watch") || watches[0].name;
    list.appendChild(LS.table("Audit watches", [
      { label: "Watch", value: function (w) { return LS.el("a", { href: "/audit-watches?watch=" + encodeURIComponent(w.name) }, w.name); } },
      { label: "State", value: function (w) { return w.state + (w.error ? ": " + w.error : ""); } },
      { label: "Chains", value: function (w) { return String(w.chains); } },
      { label: "Last", value: function (w) { return w.last_chain ? LS.fmtTime(w.last_chain) : "none yet"; } },
      { label: "Restarts", value: function (w) { return String(w.restarts); } },
      { label: "Files", value: function (w) { return w.files.join(", "); } }
    ], watches, { id: "audit-watches" }));
    var sel = "";
    ["since", "until"].forEach(function (k) { if (q.get(k)) sel += (sel ? "&" : "?") + k + "=" + encodeURIComponent(q.get(k)); });
    var base = "/api/v1/audit-watches/" + encodeURIComponent(chosen);
    view.appendChild(LS.el("h2", {}, "Timeline of " + chosen));
    view.appendChild(LS.el("p", {},
      LS.el("a", { href: base + "/chains" + sel }, "chains as JSON"), " · ",
      LS.el("a", { href: base + "/chains" + (sel ? sel + "&" : "?") + "format=jsonl" }, "as JSON lines")));
    view.appendChild(LS.el("iframe", { class: "output", id: "timeline", src: base + "/timeline" + sel, title: "Timeline of audit watch " + chosen,
      onload: function () { this.setAttribute("data-loaded", "1"); } }));
  }, LS.fail("audit watches"));
});
