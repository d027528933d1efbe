"use strict";
// tokens.js: the caller's API tokens (an admin: everyone's, with ?all=1):
// create one (its secret is shown once), revoke.
LS.ready(function (me) {
  var all = LS.query().get("all") === "1" && LS.can("admin");
  var list = LS.el("div", { id: "token-list" });
  var created = LS.el("div", { id: "token-created", "aria-live": "polite" });
  if (LS.can("admin")) {
    LS.main.appendChild(LS.el("p", {}, all ? LS.el("a", { href: "/tokens" }, "Show my tokens only") : LS.el("a", { href: "/tokens?all=1" }, "Show every user's tokens")));
  }
  LS.main.appendChild(list);
  if (LS.can("operator")) LS.main.appendChild(createForm());
  LS.main.appendChild(created);

  function load() {
    return LS.api("/api/v1/tokens" + (all ? "?all=true" : "")).then(function (b) {
      var tokens = b.tokens || [];
      LS.clear(list);
      if (!tokens.length) { list.appendChild(LS.el("p", {}, "No tokens.")); return; }
      list.appendChild(LS.table("API tokens (secrets are never shown again)", [
        { label: "Name", value: function (t) { return t.name; } },
        { label: "User", value: function (t) { return t.user; } },
        { label: "Role", value: function (t) { return t.role; } },
        { label: "Created", value: function (t) { return LS.fmtTime(t.created_at); } },
        { label: "Expires", value: function (t) { return LS.fmtTime(t.expires_at); } },
        { label: "Last used", value: function (t) { return t.last_used_at ? LS.fmtTime(t.last_used_at) : "never"; } },
        { label: "", value: function (t) {
          if (!LS.can("operator") || (t.user !== me.user && !LS.can("admin"))) return "";
          return LS.el("button", { type: "button", class: "danger", "aria-label": "Revoke token " + t.name, onclick: function () { revoke(t); } }, "Revoke");
        } }
      ], tokens, { id: "tokens" }));
    }, LS.fail("tokens"));
  }
  function revoke(t) {
    if (!confirm("Revoke the token " + t.name + " of " + t.user + "?")) return;
    LS.api("/api/v1/tokens/" + encodeURIComponent(t.id), { method: "DELETE" }).then(load, LS.fail("revoke"));
  }
  function createForm() {
    var roles = ["viewer", "operator", "admin"].filter(function (r) { return LS.can(r); });
    var form = LS.el("form", { class: "form", id: "new-token", "aria-labelledby": "new-token-h" },
      LS.el("h2", { id: "new-token-h", style: null }, "New token"), LS.el("span"),
      LS.el("label", { for: "tok-name" }, "Name"), LS.el("input", { id: "tok-name", name: "name", required: true, maxlength: 64 }),
      LS.el("label", { for: "tok-role" }, "Role"), LS.el("select", { id: "tok-role", name: "role" }, roles.map(function (r) { return LS.el("option", { value: r }, r); })),
      LS.el("label", { for: "tok-expires" }, "Expires in"), LS.el("input", { id: "tok-expires", name: "expires_in", value: "2160h", pattern: "[0-9hms.]+" }),
      LS.el("span", { class: "hint" }, "A Go duration: 720h is 30 days."),
      LS.can("admin") ? [LS.el("label", { for: "tok-user" }, "For user"), LS.el("input", { id: "tok-user", name: "user", placeholder: me.user })] : null,
      LS.el("div", { class: "actions" }, LS.el("button", { class: "primary", type: "submit" }, "Create token")));
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var body = { name: form.name.value, role: form.role.value, expires_in: form.expires_in.value };
      if (form.user && form.user.value) body.user = form.user.value;
      LS.api("/api/v1/tokens", { method: "POST", body: body }).then(function (t) {
        LS.clear(created).appendChild(LS.el("div", { class: "panel" }, LS.el("p", {}, "The token's secret, shown once: copy it now."),
          LS.el("p", { class: "secret", id: "token-secret" }, t.token)));
        form.reset();
        load();
      }, LS.fail("create token"));
    });
    return form;
  }
  return load();
});
