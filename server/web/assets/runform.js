"use strict";
// runform.js (operator): start a run. The kinds and their parameters come
// from GET /api/v1/runs/options (the CLI's flags, defaults, bounds and the
// directories and targets the configuration allows); the kind is in the
// URL (?kind=iotest), as are values to start from (?dir=/var/tmp). Fields
// left empty take the server's defaults; the API's refusal is shown
// beside the form (and the field it names); a started run opens its page.
LS.ready(function () {
  var tabs = LS.el("div", { class: "tabs", role: "tablist", "aria-label": "Kind of run" });
  var panel = LS.el("div", { id: "run-form-panel", role: "tabpanel" });
  LS.main.appendChild(tabs);
  LS.main.appendChild(panel);
  var kinds = [];

  function show(kind) {
    var spec = kinds.filter(function (k) { return k.kind === kind; })[0] || kinds[0];
    Array.prototype.forEach.call(tabs.children, function (t) {
      var on = t.getAttribute("data-kind") === spec.kind;
      t.setAttribute("aria-selected", on ? "true" : "false");
      t.tabIndex = on ? 0 : -1;
    });
    panel.setAttribute("aria-labelledby", "tab-" + spec.kind);
    LS.setQuery({ kind: spec.kind });
    LS.clear(panel).appendChild(buildForm(spec));
  }

  function tabKeys(ev) {
    var list = Array.prototype.slice.call(tabs.children), i = list.indexOf(ev.target);
    var to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: list.length - 1 }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    var t = list[(to + list.length) % list.length];
    t.focus();
    show(t.getAttribute("data-kind"));
  }

  // field builds one parameter's label, input and hint.
  function field(p, initial) {
    var id = "p-" + p.name, input;
    var attrs = { id: id, name: p.name, "data-type": p.type, "aria-describedby": "hint-" + p.name + " err-" + p.name };
    if (p.type === "boolean") {
      attrs.type = "checkbox";
      attrs.checked = initial === "true" || initial === "1";
      input = LS.el("input", attrs);
    } else if (p.choices && p.choices.length) {
      input = LS.el("select", attrs, p.choices.map(function (c) {
        return LS.el("option", { value: c, selected: c === (initial || p.default) }, c + (c === p.default ? " (default)" : ""));
      }));
    } else {
      attrs.value = initial || "";
      attrs.placeholder = p.default || "";
      attrs.required = !!p.required;
      if (p.type === "integer" || p.type === "number") {
        attrs.type = "number";
        attrs.step = p.type === "integer" ? "1" : "any";
        if (p.min !== undefined) attrs.min = p.min;
        if (p.max !== undefined) attrs.max = p.max;
      } else {
        attrs.type = "text";
        attrs.autocomplete = "off";
        if (p.type === "integers") { attrs.pattern = "\\s*\\d+(\\s*,\\s*\\d+)*\\s*"; attrs.inputmode = "numeric"; }
        if (p.type === "numbers") attrs.pattern = "\\s*[0-9.eE+]+(\\s*,\\s*[0-9.eE+]+)*\\s*";
      }
      if (p.suggest && p.suggest.length) attrs.list = "list-" + p.name;
      input = LS.el("input", attrs);
    }
    var flag = LS.el("code", {}, p.flag);
    var hint = LS.el("span", { class: "hint", id: "hint-" + p.name }, flag, p.default ? " (default " + p.default + ")" : "", p.hint ? ": " + p.hint : "");
    return [LS.el("label", { for: id }, p.label + (p.required ? " *" : "")), input,
      p.suggest && p.suggest.length ? LS.el("datalist", { id: "list-" + p.name }, p.suggest.map(function (s) { return LS.el("option", { value: s }); })) : null,
      hint, LS.el("span", { class: "field-error", id: "err-" + p.name, role: "alert" })];
  }

  // value reads a field as the API wants it (undefined: left to the server).
  function value(p, el) {
    if (p.type === "boolean") return el.checked ? true : undefined;
    var v = el.value.trim();
    if (v === "") return undefined;
    switch (p.type) {
      case "integer": return parseInt(v, 10);
      case "number": return parseFloat(v);
      case "integers": return v.split(",").map(function (x) { return parseInt(x, 10); });
      case "numbers": return v.split(",").map(function (x) { return parseFloat(x); });
    }
    return v;
  }

  function buildForm(spec) {
    var q = LS.query();
    var error = LS.el("div", { class: "form-error", id: "form-error", role: "alert", hidden: true });
    var form = LS.el("form", { class: "form", id: "run-form", "data-kind": spec.kind },
      LS.el("h2", { class: "span" }, spec.title),
      LS.el("p", { class: "span muted" }, LS.el("code", {}, spec.command), " — outputs: " + spec.outputs.join(", ")),
      spec.params.map(function (p) { return field(p, q.get(p.name)); }),
      error,
      LS.el("div", { class: "actions" }, LS.el("button", { class: "primary", type: "submit", id: "start" }, "Start " + spec.kind)));
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var params = {};
      spec.params.forEach(function (p) {
        var v = value(p, form.elements[p.name]);
        if (v !== undefined) params[p.name] = v;
      });
      showError(form, error, spec, null);
      var btn = form.querySelector("#start");
      btn.disabled = true;
      LS.api("/api/v1/runs", { method: "POST", body: { kind: spec.kind, params: params } }).then(function (run) {
        location.assign("/runs/" + run.id);
      }, function (e) {
        btn.disabled = false;
        if (e.message !== "logged out") showError(form, error, spec, e.message);
      });
    });
    return form;
  }

  // showError shows the API's refusal under the form and, when it names a
  // parameter ("params of iotest: dir ..."), beside that field.
  function showError(form, box, spec, msg) {
    Array.prototype.forEach.call(form.querySelectorAll(".field-error"), function (s) { s.textContent = ""; });
    Array.prototype.forEach.call(form.querySelectorAll("[aria-invalid]"), function (s) { s.removeAttribute("aria-invalid"); });
    box.hidden = !msg;
    box.textContent = msg || "";
    if (!msg) return;
    var detail = msg.replace(/^invalid request: /, "").replace(/^params of \w+: /, "");
    var named = spec.params.filter(function (p) {
      return detail.indexOf(p.name + " ") === 0 || detail.indexOf(p.name + ":") === 0 || detail.indexOf("field \"" + p.name + "\"") >= 0;
    })[0];
    if (named) {
      document.getElementById("err-" + named.name).textContent = detail;
      form.elements[named.name].setAttribute("aria-invalid", "true");
      form.elements[named.name].focus();
    }
  }

  return LS.api("/api/v1/runs/options").then(function (o) {
    kinds = o.kinds || [];
    kinds.forEach(function (k) {
      tabs.appendChild(LS.el("button", { type: "button", role: "tab", id: "tab-" + k.kind, "data-kind": k.kind, "aria-controls": "run-form-panel",
        onclick: function () { show(k.kind); }, onkeydown: tabKeys }, k.kind));
    });
    show(LS.query().get("kind") || "iotest");
  }, LS.fail("run options"));
});
