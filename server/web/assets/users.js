"use strict";
// users.js (admin): users and their roles: add (a password is generated
// and shown once, or given), reset a password, change a role, remove.
LS.ready(function () {
  var list = LS.el("div", { id: "user-list" });
  var shown = LS.el("div", { id: "user-secret", "aria-live": "polite" });
  LS.main.appendChild(list);
  LS.main.appendChild(shown);
  LS.main.appendChild(addForm());
  var roles = ["viewer", "operator", "admin"];

  function load() {
    return LS.api("/api/v1/users").then(function (b) {
      LS.clear(list).appendChild(LS.table("Users", [
        { label: "Name", value: function (u) { return u.name; } },
        { label: "Role", value: function (u) {
          var sel = LS.el("select", { "aria-label": "Role of " + u.name, "data-user": u.name }, roles.map(function (r) { return LS.el("option", { value: r, selected: r === u.role }, r); }));
          sel.addEventListener("change", function () {
            LS.api("/api/v1/users/" + encodeURIComponent(u.name) + "/role", { method: "PUT", body: { role: sel.value } }).then(load, function (e) { LS.fail("role")(e); load(); });
          });
          return sel;
        } },
        { label: "Created", value: function (u) { return LS.fmtTime(u.created_at); } },
        { label: "Changed", value: function (u) { return LS.fmtTime(u.updated_at); } },
        { label: "", value: function (u) {
          return [LS.el("button", { type: "button", "aria-label": "Reset the password of " + u.name, onclick: function () { reset(u); } }, "Reset password"), " ",
            LS.el("button", { type: "button", class: "danger", "aria-label": "Remove " + u.name, onclick: function () { remove(u); } }, "Remove")];
        } }
      ], b.users || [], { id: "users" }));
    }, LS.fail("users"));
  }
  function showSecret(p) {
    LS.clear(shown);
    if (p && p.password) shown.appendChild(LS.el("div", { class: "panel" }, LS.el("p", {}, "The password of " + p.user + ", shown once:"), LS.el("p", { class: "secret" }, p.password)));
  }
  function reset(u) {
    if (!confirm("Reset the password of " + u.name + "? Their sessions end.")) return;
    LS.api("/api/v1/users/" + encodeURIComponent(u.name) + "/password", { method: "POST", body: {} }).then(showSecret, LS.fail("reset"));
  }
  function remove(u) {
    if (!confirm("Remove the user " + u.name + "? Their sessions and tokens end.")) return;
    LS.api("/api/v1/users/" + encodeURIComponent(u.name), { method: "DELETE" }).then(load, LS.fail("remove"));
  }
  function addForm() {
    var form = LS.el("form", { class: "form", id: "add-user" },
      LS.el("h2", {}, "Add a user"), LS.el("span"),
      LS.el("label", { for: "user-name" }, "Name"), LS.el("input", { id: "user-name", name: "name", required: true, pattern: "[a-z0-9][a-z0-9._-]*", maxlength: 64 }),
      LS.el("span", { class: "hint" }, "a-z, 0-9, '.', '_', '-'"),
      LS.el("label", { for: "user-role" }, "Role"), LS.el("select", { id: "user-role", name: "role" }, ["viewer", "operator", "admin"].map(function (r) { return LS.el("option", { value: r }, r); })),
      LS.el("label", { for: "user-password" }, "Password"), LS.el("input", { id: "user-password", name: "password", type: "password", autocomplete: "new-password" }),
      LS.el("span", { class: "hint" }, "Leave empty for a generated one, shown once."),
      LS.el("div", { class: "actions" }, LS.el("button", { class: "primary", type: "submit" }, "Add user")));
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var body = { name: form.name.value, role: form.role.value };
      if (form.password.value) body.password = form.password.value;
      LS.api("/api/v1/users", { method: "POST", body: body }).then(function (p) { showSecret(p); form.reset(); load(); }, LS.fail("add user"));
    });
    return form;
  }
  return load();
});
