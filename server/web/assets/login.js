"use strict";
// The login page: POST /api/v1/login sets the session cookie; then back to
// the page that sent the user here (same origin paths only).
(function () {
  var form = document.getElementById("login");
  var err = document.getElementById("error");
  function target() {
    var next = new URLSearchParams(location.search).get("next") || "/";
    return next.charAt(0) === "/" && next.charAt(1) !== "/" && next.charAt(1) !== "\\" ? next : "/";
  }
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    err.textContent = "";
    fetch("/api/v1/login", {
      method: "POST", headers: { "Content-Type": "application/json" }, credentials: "same-origin",
      body: JSON.stringify({ user: form.user.value, password: form.password.value })
    }).then(function (resp) {
      if (resp.ok) { location.assign(target()); return; }
      return resp.json().then(function (b) { err.textContent = b.error || ("login failed (" + resp.status + ")"); },
        function () { err.textContent = "login failed (" + resp.status + ")"; });
    }, function (e) { err.textContent = "the server cannot be reached: " + e.message; });
  });
})();
