"use strict";
// runform.js: see the issue-15 helpers.
LS.ready(function () { LS.main.appendChild(LS.el("p", {}, "This page is being built.")); });
