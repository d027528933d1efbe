"use strict";
// audit.js (admin): the audit log, newest first, a page at a time
// (?before=ID keeps the page in the URL).
LS.ready(function () {
  var before = LS.query().get("before");
  var box = LS.el("div", { id: "audit-list" });
  LS.main.appendChild(box);
  var limit = 100;
  return LS.api("/api/v1/audit?limit=" + limit + (before ? "&before=" + encodeURIComponent(before) : "")).then(function (b) {
    var ev = b.events || [];
    box.appendChild(LS.table("Audit log" + (before ? " before event " + before : ""), [
      { label: "When", value: function (e) { return LS.fmtTime(e.at); } },
      { label: "Who", value: function (e) { return e.actor; } },
      { label: "Action", value: function (e) { return e.action; } },
      { label: "Target", value: function (e) { return e.target; } },
      { label: "From", value: function (e) { return e.remote; } },
      { label: "Result", value: function (e) { return LS.el("span", { class: e.ok ? "state-ok" : "state-failed" }, e.ok ? "ok" : "refused"); } },
      { label: "Detail", value: function (e) { return e.detail || ""; } }
    ], ev, { id: "audit" }));
    var nav = LS.el("p", {});
    if (before) nav.appendChild(LS.el("a", { href: "/admin/audit" }, "Newest"));
    if (ev.length === limit) {
      if (before) nav.appendChild(document.createTextNode(" · "));
      nav.appendChild(LS.el("a", { href: "/admin/audit?before=" + ev[ev.length - 1].id, id: "older" }, "Older"));
    }
    box.appendChild(nav);
  }, LS.fail("audit log"));
});
