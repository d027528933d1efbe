// latscope flame graph interaction (written for latscope; MIT-style, no
// external resources). Click a frame to zoom, "Reset Zoom" or Escape to
// unzoom; Ctrl-F / F3 or "Search" for a regular expression (the share of
// samples matched is shown bottom right), Ctrl-I toggles case; the view is
// kept in the URL: ?s=REGEX&x=SAMPLE&y=Y (x = first sample of the zoomed
// frame, y = its rectangle's y).
"use strict";
var ls = {frames: [], total: 1, width: 1200, zoomed: null, term: null, icase: false};

function init(evt) {
	var framesEl = document.getElementById("frames");
	ls.total = +framesEl.getAttribute("total_samples") || 1;
	ls.width = +document.documentElement.getAttribute("width") || 1200;
	ls.details = document.getElementById("details").firstChild;
	ls.matched = document.getElementById("matched").firstChild;
	ls.search = document.getElementById("search");
	ls.unzoom = document.getElementById("unzoom");
	var gs = framesEl.children;
	for (var i = 0; i < gs.length; i++) {
		var g = gs[i], r = g.querySelector("rect"), title = g.querySelector("title").textContent;
		var cut = title.lastIndexOf(" (");
		ls.frames.push({g: g, r: r, t: g.querySelector("text"), title: title,
			name: cut >= 0 ? title.substring(0, cut) : title,
			x: +r.getAttribute("fg:x"), w: +r.getAttribute("fg:w"), y: +r.getAttribute("y"),
			fill: r.getAttribute("fill")});
		g.lsIndex = i;
	}
	framesEl.addEventListener("click", function (e) {
		var f = frameOf(e.target);
		if (f) { zoom(f); }
	});
	framesEl.addEventListener("mouseover", function (e) {
		var f = frameOf(e.target);
		if (f) { ls.details.nodeValue = nametype + " " + f.title; }
	});
	framesEl.addEventListener("mouseout", function () { ls.details.nodeValue = " "; });
	ls.unzoom.addEventListener("click", unzoom);
	ls.search.addEventListener("click", function () {
		if (ls.term === null) { searchPrompt(); } else { resetSearch(); }
	});
	window.addEventListener("keydown", function (e) {
		var ctrl = e.ctrlKey || e.metaKey;
		if (e.key === "F3" || (ctrl && (e.key === "f" || e.key === "F"))) {
			e.preventDefault();
			searchPrompt();
		} else if (ctrl && (e.key === "i" || e.key === "I")) {
			e.preventDefault();
			ls.icase = !ls.icase;
			ls.search.firstChild.nodeValue = ls.icase ? "Search (ic)" : "Search";
			if (ls.term !== null) { search(ls.term); }
		} else if (e.key === "Escape") {
			unzoom();
		}
	});
	var params = new URLSearchParams(window.location.search);
	if (params.has("x") && params.has("y")) {
		var x = +params.get("x"), y = +params.get("y");
		for (var j = 0; j < ls.frames.length; j++) {
			if (ls.frames[j].x === x && ls.frames[j].y === y) { zoom(ls.frames[j]); break; }
		}
	}
	if (params.get("s")) { search(params.get("s")); }
}

function frameOf(el) {
	while (el && el.parentNode && el.parentNode.id !== "frames") { el = el.parentNode; }
	return el && el.lsIndex !== undefined ? ls.frames[el.lsIndex] : null;
}

// place draws a frame at xp% with width wp% of the frames area and
// refits its label (same rule as the renderer).
function place(f, xp, wp) {
	f.r.setAttribute("x", xp.toFixed(4) + "%");
	f.r.setAttribute("width", wp.toFixed(4) + "%");
	f.t.setAttribute("x", (xp + 300 / ls.width).toFixed(4) + "%");
	var fit = Math.floor(wp / (100 * fontsize * fontwidth / ls.width));
	var name = f.name;
	var label = "";
	if (fit >= 3) {
		var chars = Array.from(name);
		label = name.length < fit ? name : chars.slice(0, fit - 2).join("") + "..";
	}
	f.t.textContent = label;
}

function isAncestorSide(f, of) { return inverted ? f.y < of.y : f.y > of.y; }

function zoom(z) {
	ls.zoomed = z;
	ls.unzoom.classList.remove("hide");
	var end = z.x + z.w;
	for (var i = 0; i < ls.frames.length; i++) {
		var f = ls.frames[i];
		f.g.classList.remove("parent");
		if (isAncestorSide(f, z)) {
			if (f.x <= z.x && f.x + f.w >= end) {
				f.g.classList.remove("hide");
				f.g.classList.add("parent");
				place(f, 0, 100);
			} else {
				f.g.classList.add("hide");
			}
		} else if (f.x >= z.x && f.x + f.w <= end && z.w > 0) {
			f.g.classList.remove("hide");
			place(f, (f.x - z.x) * 100 / z.w, f.w * 100 / z.w);
		} else {
			f.g.classList.add("hide");
		}
	}
	setParams({x: z.x, y: z.y});
	if (ls.term !== null) { search(ls.term); }
}

function unzoom() {
	if (ls.zoomed === null) { return; }
	ls.zoomed = null;
	ls.unzoom.classList.add("hide");
	for (var i = 0; i < ls.frames.length; i++) {
		var f = ls.frames[i];
		f.g.classList.remove("hide", "parent");
		place(f, f.x * 100 / ls.total, f.w * 100 / ls.total);
	}
	setParams({x: null, y: null});
	if (ls.term !== null) { search(ls.term); }
}

function searchPrompt() {
	var term = window.prompt("Search for (regular expression):" + (ls.icase ? " [ignoring case]" : ""), ls.term || "");
	if (term === null) { return; }
	if (term === "") { resetSearch(); return; }
	search(term);
}

// search highlights matching frames and shows the share of samples under
// them: overlapping matches (a frame and its callee) count once.
function search(term) {
	var re;
	try { re = new RegExp(term, ls.icase ? "i" : ""); } catch (err) {
		ls.matched.nodeValue = "Bad regular expression";
		return;
	}
	ls.term = term;
	var spans = [];
	for (var i = 0; i < ls.frames.length; i++) {
		var f = ls.frames[i];
		if (re.test(f.name)) {
			f.r.setAttribute("fill", searchcolor);
			spans.push([f.x, f.x + f.w]);
		} else {
			f.r.setAttribute("fill", f.fill);
		}
	}
	spans.sort(function (a, b) { return a[0] - b[0]; });
	var covered = 0, end = -1;
	for (var j = 0; j < spans.length; j++) {
		var s = Math.max(spans[j][0], end), e = spans[j][1];
		if (e > s) { covered += e - s; }
		end = Math.max(end, e);
	}
	ls.search.classList.add("show");
	ls.matched.nodeValue = "Matched: " + (100 * covered / ls.total).toFixed(1) + "%";
	setParams({s: term});
}

function resetSearch() {
	ls.term = null;
	for (var i = 0; i < ls.frames.length; i++) { ls.frames[i].r.setAttribute("fill", ls.frames[i].fill); }
	ls.search.classList.remove("show");
	ls.matched.nodeValue = " ";
	setParams({s: null});
}

function setParams(kv) {
	try {
		var params = new URLSearchParams(window.location.search);
		for (var k in kv) {
			if (kv[k] === null) { params.delete(k); } else { params.set(k, kv[k]); }
		}
		var q = params.toString();
		window.history.replaceState(null, "", q ? "?" + q : window.location.pathname);
	} catch (err) { /* file: URLs may refuse; the view still works */ }
}
