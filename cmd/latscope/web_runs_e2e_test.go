package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/browsertest"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// webRunsServer is a latscope serve whose runs may use a scratch
// directory and a local nettest server, with an operator and a viewer
// whose passwords the browser types.
func webRunsServer(t *testing.T) (*runsEnv, string) {
	t.Helper()
	netAddr, _ := startNetServer(t)
	e := startRunsServe(t, func(scratch string) string {
		return "runs:\n  iotest_dirs: [" + scratch + "]\n  nettest_targets: [\"" + netAddr + "\"]\n"
	})
	for _, u := range []struct{ name, role, password string }{{"otto", "operator", webOperatorPassword}, {"vera", "viewer", webViewerPassword}} {
		body := `{"name":"` + u.name + `","role":"` + u.role + `","password":"` + u.password + `"}`
		if status, b := e.admin.call("POST", "/api/v1/users", body, "X-CSRF-Token", e.adminCSRF); status != http.StatusCreated {
			t.Fatalf("add %s: %d %s", u.name, status, b)
		}
	}
	return e, netAddr
}

// startFromForm fills the form of a kind and starts the run; it returns
// the run's id once its page is open.
func startFromForm(t *testing.T, b *browsertest.Browser, base, kind string, fields map[string]string) int64 {
	t.Helper()
	b.Open(base + "/runs/new?kind=" + kind)
	for name, v := range fields {
		b.Fill("#p-"+name, v)
	}
	b.Screenshot("runform-" + kind + "-filled")
	browsertest.Eval[bool](b, `document.body.removeAttribute("data-ready"); true`)
	b.Click("#start")
	b.WaitFor("the run's page", `/^\/runs\/\d+$/.test(location.pathname) && document.body.getAttribute("data-ready") === "1"`, 20*time.Second)
	id, err := strconv.ParseInt(strings.TrimPrefix(b.Location(), base+"/runs/"), 10, 64)
	if err != nil {
		t.Fatalf("run page %s: %v", b.Location(), err)
	}
	return id
}

// waitOutputs waits for a run's page to show its final state and its
// outputs, the HTML ones loaded in their frames.
func waitOutputs(b *browsertest.Browser, state string, timeout time.Duration) {
	b.WaitFor("the run's end", `!!document.querySelector("#run-info [data-state=`+state+`]") && !document.getElementById("run-outputs").hidden`, timeout)
	waitFrames(b)
}

// waitFrames waits until every iframe of the page has loaded and been
// drawn, for a screenshot.
func waitFrames(b *browsertest.Browser) {
	b.WaitFor("the frames loaded", `Array.prototype.every.call(document.querySelectorAll("iframe"), function (f) { return f.getAttribute("data-loaded") === "1"; })`, 20*time.Second)
	// A frame out of view may not be drawn for the screenshot.
	srcs := browsertest.Eval[[]string](b, `Array.from(document.querySelectorAll("iframe")).map(function (f) { f.scrollIntoView(); return f.getAttribute("src"); })`)
	for _, src := range srcs {
		b.FramePainted(src)
	}
}

// TestWebRuns drives the runs pages in a real Chromium against a real
// server: an operator starts an iotest, a nettest and two flame captures
// from the forms, follows them live and reads their results in the page
// (the report's step table equal to the run's JSON), opens the flame
// graphs and their diff; a validation error shows beside its field; a
// viewer sees no run controls and is refused when forcing them.
func TestWebRuns(t *testing.T) {
	e, netAddr := webRunsServer(t)
	base := e.srv.base
	b := browsertest.New(t)
	loginTo(b, base, "otto", webOperatorPassword)

	b.Open(base + "/runs")
	if n := browsertest.Eval[int](b, `document.querySelectorAll("#new-runs a").length`); n != 4 {
		t.Errorf("an operator sees %d New run buttons; want one per kind", n)
	}
	b.Screenshot("runs-empty")
	for _, kind := range []string{"iotest", "nettest", "flame", "report"} {
		b.Open(base + "/runs/new?kind=" + kind)
		if got := browsertest.Eval[string](b, `document.querySelector("[role=tab][aria-selected=true]").textContent`); got != kind {
			t.Errorf("form of %s: the selected tab is %q", kind, got)
		}
		b.Screenshot("runform-" + kind)
	}
	// The form offers the configured directory and target.
	b.Open(base + "/runs/new?kind=nettest")
	if got := browsertest.Eval[[]string](b, `Array.from(document.querySelectorAll("#p-target option")).map(function (o) { return o.value; })`); len(got) != 1 || got[0] != netAddr {
		t.Errorf("nettest targets offered %v; want %s", got, netAddr)
	}

	// The API's refusal shows beside the field it names.
	b.Open(base + "/runs/new?kind=iotest")
	b.Fill("#p-dir", "/etc")
	b.Expect("/api/v1/runs", http.StatusBadRequest)
	b.Click("#start")
	b.WaitFor("the error beside dir", `document.getElementById("err-dir").textContent.indexOf("is not in the configured runs.iotest_dirs") >= 0`, 10*time.Second)
	if inv := browsertest.Eval[string](b, `document.getElementById("p-dir").getAttribute("aria-invalid") || ""`); inv != "true" {
		t.Errorf("dir's aria-invalid %q after the refusal", inv)
	}
	b.Screenshot("runform-error")

	// iotest: progress live, then the report inside the page.
	iot := startFromForm(t, b, base, "iotest", map[string]string{"dir": e.scratch, "steps": "1,2", "duration": "1s", "size": "16m"})
	b.WaitFor("the run running with a percentage", `!!document.querySelector("#run-info [data-state=running]") && document.getElementById("run-progress").value > 0 && document.getElementById("run-log").textContent.indexOf("latscope iotest") >= 0`, 30*time.Second)
	b.Screenshot("run-iotest-running")
	waitOutputs(b, "succeeded", 90*time.Second)
	outURL := "/api/v1/runs/" + strconv.FormatInt(iot, 10) + "/outputs/report.html"
	page := b.FrameOuterHTML(outURL, "#steps")
	b.Screenshot("run-iotest-done")
	raw, _ := e.op.output(iot, "report.json")
	var rep map[string]any
	decodeJSON(t, raw, &rep)
	steps := objects(rep["steps"])
	if len(steps) != 2 {
		t.Fatalf("iotest JSON has %d steps; want 2", len(steps))
	}
	checkRows(t, page, "steps", steps, "modes")
	if log := browsertest.Eval[string](b, `document.getElementById("run-log").textContent`); !strings.Contains(log, "run "+strconv.FormatInt(iot, 10)+" succeeded") {
		t.Errorf("the page's log lacks the end:\n%s", log)
	}

	// nettest against the local server: the interval table in the page.
	nt := startFromForm(t, b, base, "nettest", map[string]string{"duration": "1s", "size": "512"})
	waitOutputs(b, "succeeded", 60*time.Second)
	page = b.FrameOuterHTML("/api/v1/runs/"+strconv.FormatInt(nt, 10)+"/outputs/report.html", "#intervals")
	b.Screenshot("run-nettest-done")
	raw, _ = e.op.output(nt, "report.json")
	decodeJSON(t, raw, &rep)
	checkRows(t, page, "intervals", objects(rep["intervals"]), "start")

	// The list links every run.
	b.Open(base + "/runs")
	if got := browsertest.Eval[int](b, `document.querySelectorAll("#runs tbody tr").length`); got != 2 {
		t.Errorf("the list shows %d runs; want 2", got)
	}
	b.Screenshot("runs-list")
	b.Open(base + "/runs?before=" + strconv.FormatInt(nt, 10))
	if got := browsertest.Eval[string](b, `document.querySelector("#runs tbody a").textContent`); got != "#"+strconv.FormatInt(iot, 10) {
		t.Errorf("the page before run %d starts with %s", nt, got)
	}

	flameRuns(t, b, e)
	viewerSeesNoControls(t, b, e)
}

// flameRuns captures a busy process twice, from the form and through the
// API, and opens the first in the viewer and the diff of the two.
func flameRuns(t *testing.T, b *browsertest.Browser, e *runsEnv) {
	testenv.RecordingPerf(t)
	base := e.srv.base
	p := busy(t)
	pid := strconv.Itoa(p.Process.Pid)
	first := startFromForm(t, b, base, "flame", map[string]string{"pid": pid, "duration": "1s"})
	second := e.op.startRun("flame", map[string]any{"pid": p.Process.Pid, "duration": "1s"}).ID
	waitOutputs(b, "succeeded", 60*time.Second)
	e.op.waitRun(second, "succeeded", 60*time.Second, nil)
	if data := b.FrameOuterHTML("/outputs/flame.html", "#flame-data"); !strings.Contains(data, `"sh"`) {
		t.Errorf("the flame graph in the run page lacks the profiled shell: %.300s", data)
	}
	b.Screenshot("run-flame-done")

	b.ClickAndWait("#open-flame")
	if loc := b.Location(); loc != base+"/flame?run="+strconv.FormatInt(first, 10) {
		t.Errorf("open in the viewer went to %s", loc)
	}
	waitFrames(b)
	b.Screenshot("flame-viewer")
	// Choosing a base draws the diff and puts it in the URL.
	browsertest.Eval[bool](b, `var s = document.getElementById("flame-base"); s.value = "`+strconv.FormatInt(second, 10)+`"; s.dispatchEvent(new Event("change")); true`)
	diffURL := "/api/v1/runs/" + strconv.FormatInt(first, 10) + "/flame?base=" + strconv.FormatInt(second, 10)
	b.WaitFor("the diff frame", `document.getElementById("flame-view").getAttribute("src") === `+strconv.Quote(diffURL), 10*time.Second)
	if loc := b.Location(); !strings.HasSuffix(loc, "/flame?run="+strconv.FormatInt(first, 10)+"&base="+strconv.FormatInt(second, 10)) {
		t.Errorf("the diff's URL %s", loc)
	}
	// The shared URL reopens the diff.
	b.Open(b.Location())
	data := b.FrameOuterHTML("/flame?base=", "#flame-data")
	var d struct {
		Diff  bool
		Names []string
	}
	inner := regexp.MustCompile(`(?s)>(.*)</script>`).FindStringSubmatch(data)
	if inner == nil || json.Unmarshal([]byte(inner[1]), &d) != nil || !d.Diff || !strings.Contains(strings.Join(d.Names, ";"), "sh") {
		t.Errorf("the diff's data %+v from %.300s", d, data)
	}
	if got := browsertest.Eval[string](b, `document.getElementById("flame-base").value`); got != strconv.FormatInt(second, 10) {
		t.Errorf("the reopened diff selects base %q", got)
	}
	waitFrames(b)
	b.Screenshot("flame-diff")
}

// viewerSeesNoControls: a long run shows Cancel to the operator (who
// uses it), never to a viewer, whom the API refuses when forced.
func viewerSeesNoControls(t *testing.T, b *browsertest.Browser, e *runsEnv) {
	base := e.srv.base
	long := e.op.startRun("iotest", map[string]any{"dir": e.scratch, "duration": "10m", "size": "16m"}).ID
	runPage := base + "/runs/" + strconv.FormatInt(long, 10)
	b.Open(runPage)
	b.WaitFor("the Cancel button", `!!document.getElementById("cancel")`, 10*time.Second)
	logoutBrowser(t, b, base)

	loginTo(b, base, "vera", webViewerPassword)
	b.Open(runPage)
	b.WaitFor("the run running", `!!document.querySelector("#run-info [data-state=running]")`, 10*time.Second)
	b.Screenshot("viewer-run-running")
	if n := browsertest.Eval[int](b, `document.querySelectorAll("#cancel").length`); n != 0 {
		t.Error("a viewer sees Cancel")
	}
	b.Open(base + "/runs")
	if n := browsertest.Eval[int](b, `document.querySelectorAll("#new-runs").length`); n != 0 {
		t.Error("a viewer sees New run buttons")
	}
	for _, forced := range []struct{ path, body string }{
		{"/api/v1/runs", `{"kind":"iotest","params":{"dir":` + strconv.Quote(e.scratch) + `}}`},
		{"/api/v1/runs/" + strconv.FormatInt(long, 10) + "/cancel", ""},
	} {
		b.Expect(forced.path, http.StatusForbidden)
		js := `LS.fetch(` + strconv.Quote(forced.path) + `, {method: "POST", body: ` + orUndefined(forced.body) + `}).then(function () { return 200; }, function (e) { return e.status; })`
		if status := browsertest.Eval[int](b, js); status != http.StatusForbidden {
			t.Errorf("a viewer's POST %s from the page: %d; want 403", forced.path, status)
		}
	}
	logoutBrowser(t, b, base)

	// The operator cancels it from its page.
	loginTo(b, base, "otto", webOperatorPassword)
	b.Open(runPage)
	browsertest.Eval[bool](b, `window.confirm = function () { return true; }; true`)
	// Once the stream has drawn the run (its log), the button stays put.
	b.WaitFor("the run's log", `document.getElementById("run-log").textContent.indexOf("latscope iotest") >= 0`, 10*time.Second)
	b.Click("#cancel")
	b.WaitFor("the cancel sent", `(function () { var c = document.getElementById("cancel"); return !c || c.disabled; })()`, 10*time.Second)
	e.op.waitRun(long, "cancelled", 60*time.Second, nil)
	b.WaitFor("the page showing the run cancelled", `!!document.querySelector("#run-info [data-state=cancelled]")`, 60*time.Second)
	waitFrames(b)
	b.Screenshot("run-cancelled")
}

// loginTo logs in and lands on the runs (the pages under test, not the
// dashboard, whose sparklines read a route built elsewhere).
func loginTo(b *browsertest.Browser, base, user, password string) {
	b.Navigate(base + "/login?next=%2Fruns")
	b.WaitFor("the login form", `!!document.getElementById("user")`, 10*time.Second)
	b.SubmitLogin(user, password)
	b.WaitFor("the runs page", `location.pathname === "/runs" && document.body.getAttribute("data-ready") === "1"`, 20*time.Second)
}

// logoutBrowser logs out through the page's button.
func logoutBrowser(t *testing.T, b *browsertest.Browser, base string) {
	t.Helper()
	b.Click("#logout")
	b.WaitFor("the login page", `location.pathname === "/login"`, 10*time.Second)
}
