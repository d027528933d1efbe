package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/latscope/latscope/internal/testkit/browsertest"
)

// The heat-map pages of the browser view (live, history, compare) in a
// real Chromium against a real `latscope serve`.

// TestWebLiveMapGainsColumns opens a series' live map and appends a
// record to the followed file: the map shows the new window within two
// job intervals (1 s) of the job reading it, and the job reads a file at
// most one interval after it grows, so within 3 s of the append.
func TestWebLiveMapGainsColumns(t *testing.T) {
	ws := startWebServer(t, 20)
	id := ws.admin.seriesOf(ws.file)
	b := browsertest.New(t)
	b.Login(ws.base, "vera", webViewerPassword)
	b.Open(fmt.Sprintf("%s/live?series=%d", ws.base, id))
	b.WaitFor("the stream is live", `document.getElementById("conn").getAttribute("data-state") === "live"`, 10*time.Second)
	b.WaitFor("the map drawn", `!!LS.heatmaps[0].canvas.getAttribute("data-last-observed")`, 10*time.Second)
	before := lastObserved(t, b, 0)
	if before.IsZero() {
		t.Fatal("the live map shows no observed column")
	}
	b.Screenshot("live")

	for i := range 3 {
		appended := time.Now()
		appendRecords(t, ws.file, ws.rest[i:i+1])
		b.WaitFor("a new column", fmt.Sprintf(`LS.heatmaps[0].canvas.getAttribute("data-last-observed") > %q`, iso(before)), 10*time.Second)
		took := time.Since(appended)
		after := lastObserved(t, b, 0)
		t.Logf("record %d: the map's last observed column %s → %s, %v after the append", i, iso(before), iso(after), took.Round(time.Millisecond))
		if took > 3*time.Second {
			t.Errorf("record %d: the new column came %v after the append; want within 3 s (one poll and two intervals of 1 s)", i, took)
		}
		before = after
	}
	b.Screenshot("live-after")
}

// TestWebHistorySelectionReport drags across a history map with real
// mouse events: the report the page shows equals `latscope report` on the
// server's archive for the same window, number for number. After a zoom,
// the selection and the log scale, the page's URL opened in another
// browser (through the login page) shows the same view and report. The
// compare page opens from the history page's link.
func TestWebHistorySelectionReport(t *testing.T) {
	ws := startWebServer(t, 60)
	id := ws.admin.seriesOf(ws.file)
	eventually(t, "the file's windows archived", func() bool { return len(ws.admin.windows(id)) >= 50 })
	data := dataDir(t, ws)
	from, to := archiveSpan(t, ws, id)

	b := browsertest.New(t)
	b.Login(ws.base, "vera", webViewerPassword)
	b.Open(fmt.Sprintf("%s/history?series=%d&from=%s&to=%s", ws.base, id, url.QueryEscape(iso(from)), url.QueryEscape(iso(to))))
	if n := browsertest.Eval[int](b, `LS.heatmaps[0].model.n`); n < 500 || n > 1500 {
		t.Errorf("the history map has %d columns; want one per pixel of a 1400-pixel window", n)
	}
	b.Screenshot("history")
	checkPaintSpeed(t, b)

	dragOnMap(b, 0.2, 0.7, false)
	b.WaitFor("the selection's report", `!!document.querySelector("#selection[data-ready] #report")`, 20*time.Second)
	checkReport(t, b, data)
	b.Screenshot("history-selection")

	// Zoom in (the key), select again, log scale (the key): the URL holds it.
	b.Do(10*time.Second, chromedp.KeyEvent("+"))
	b.WaitFor("the zoomed map", `Date.parse(LS.heatmaps[0].canvas.getAttribute("data-t0")) > `+strconv.FormatInt(from.UnixMilli(), 10), 20*time.Second)
	dragOnMap(b, 0.3, 0.6, false)
	b.WaitFor("the selection's report", `!!document.querySelector("#selection[data-ready] #report")`, 20*time.Second)
	b.Do(10*time.Second, chromedp.KeyEvent("l"))
	b.WaitFor("the log scale", `document.getElementById("scale").value === "log" && location.search.indexOf("scale=log") >= 0`, 5*time.Second)
	shared := b.Location()
	want := viewState(t, b)
	wantReport := checkReport(t, b, data)
	b.Screenshot("history-zoom-log")

	b2 := browsertest.New(t)
	b2.Navigate(shared)
	if loc := b2.Location(); !strings.HasPrefix(loc, ws.base+"/login?next=") {
		t.Fatalf("a stranger opening %s got %s", shared, loc)
	}
	b2.SubmitLogin("vera", webViewerPassword)
	b2.WaitFor("the shared view", `document.body.getAttribute("data-ready") === "1" && !!document.querySelector("#selection[data-ready] #report")`, 20*time.Second)
	if loc := b2.Location(); loc != shared {
		t.Errorf("the shared link landed on\n%s\nwant\n%s", loc, shared)
	}
	if got := viewState(t, b2); got != want {
		t.Errorf("the shared view:\n%s\nwant\n%s", got, want)
	}
	if got := pageReport(t, b2); !equalFigures(got, wantReport) {
		t.Errorf("the shared view's report %v; want %v", got, wantReport)
	}
	b2.Screenshot("history-shared")

	// A rectangle (shift-drag) counts the events within its rows.
	dragOnMap(b2, 0.1, 0.9, true)
	b2.WaitFor("the rectangle's figures", `!!document.querySelector("#selection[data-ready] #rect")`, 20*time.Second)
	if got := browsertest.Eval[string](b2, `location.search`); !regexp.MustCompile(`sel=[^&]+%2C[^&]+%2C[^&]+%2C`).MatchString(got) {
		t.Errorf("the rectangle is not in the URL: %s", got)
	}
	b2.Screenshot("history-rectangle")

	// Compare with the previous period.
	b.ClickAndWait("#compare-link")
	b.WaitFor("both reports", `!!document.querySelector("#report-a") && !!document.querySelector("#report-b") && document.querySelectorAll("#diff-rows tbody tr").length > 0`, 20*time.Second)
	if loc := b.Location(); !strings.Contains(loc, "/compare?series=") || !strings.Contains(loc, "a_from=") {
		t.Errorf("the compare link opened %s", loc)
	}
	b.Screenshot("compare")
}

// TestWebLiveTwentySeries follows 20 files (20 jobs, 20 series) on one
// live page while they grow: every map keeps within two intervals of the
// newest window archived for its series.
func TestWebLiveTwentySeries(t *testing.T) {
	dir := t.TempDir()
	records := restampedRecords(t)
	const n = 20
	var files []string
	for i := range n {
		f := filepath.Join(dir, fmt.Sprintf("w%02d.txt", i))
		if err := os.WriteFile(f, []byte(strings.Join(records[:10], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	srv := startServe(t, append([]string{"--data", filepath.Join(dir, "data"), "--listen", freePort(t)}, files...)...)
	api := &apiClient{t: t, base: srv.base, token: viewerToken(t, srv), bodies: &strings.Builder{}}
	var ids []string
	idOf := map[string]int64{}
	for _, f := range files {
		eventually(t, "the series of "+f, func() bool { return api.seriesOf(f) > 0 })
		idOf[f] = api.seriesOf(f)
		ids = append(ids, strconv.FormatInt(idOf[f], 10))
	}
	b := browsertest.New(t)
	m := regexp.MustCompile(`created the user admin with the password\n\s+(\S+)`).FindStringSubmatch(srv.stderr())
	b.Login(srv.base, "admin", m[1])
	b.Open(srv.base + "/live?series=" + strings.Join(ids, ","))
	b.WaitFor("the stream is live", `document.getElementById("conn").getAttribute("data-state") === "live"`, 10*time.Second)
	if got := browsertest.Eval[int](b, `LS.heatmaps.length`); got != n {
		t.Fatalf("%d maps on the page; want %d", got, n)
	}

	worst := time.Duration(0)
	for step := range 8 {
		for _, f := range files {
			appendRecords(t, f, records[10+step:11+step])
		}
		// What the archive has once the jobs read the records, then the
		// page must show it within two intervals.
		time.Sleep(1200 * time.Millisecond)
		ends := map[int]time.Time{}
		for i, f := range files {
			ends[i] = archiveEnd(t, api, idOf[f])
		}
		start := time.Now()
		var cond []string
		for i := range n {
			cond = append(cond, fmt.Sprintf(`LS.heatmaps[%d].canvas.getAttribute("data-last-observed") >= %q`, i, iso(ends[i].Add(-2*time.Second))))
		}
		b.WaitFor(fmt.Sprintf("step %d: every map within two intervals of the archive", step), strings.Join(cond, " && "), 2*time.Second)
		worst = max(worst, time.Since(start))
	}
	t.Logf("20 live maps: the slowest caught up with the archive %v after it was read", worst.Round(time.Millisecond))
	// checkPaintSpeed times painting; here the machine also runs 20 jobs.
	t.Logf("the slowest of 20 live maps' last paint: %.1f ms",
		browsertest.Eval[float64](b, `Math.max.apply(null, LS.heatmaps.map(function (h) { return Number(h.canvas.getAttribute("data-paint-ms")); }))`))
	b.Screenshot("live-20")
}

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// lastObserved is the end of the newest observed column of map i.
func lastObserved(t *testing.T, b *browsertest.Browser, i int) time.Time {
	t.Helper()
	s := browsertest.Eval[string](b, fmt.Sprintf(`LS.heatmaps[%d].canvas.getAttribute("data-last-observed") || ""`, i))
	if s == "" {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// archiveEnd is the end of a series' newest archived window.
func archiveEnd(t *testing.T, api *apiClient, id int64) time.Time {
	t.Helper()
	var resp struct{ Window struct{ To time.Time } }
	api.get(fmt.Sprintf("/api/v1/series/%d/heatmap?columns=1", id), &resp)
	return resp.Window.To
}

// archiveSpan is the window of a series' archived data, widened to
// whole minutes.
func archiveSpan(t *testing.T, ws *webServer, id int64) (time.Time, time.Time) {
	t.Helper()
	var resp struct{ Intervals []struct{ Start time.Time } }
	ws.admin.get(fmt.Sprintf("/api/v1/series/%d/intervals?resolution=raw", id), &resp)
	if len(resp.Intervals) == 0 {
		t.Fatal("no windows archived")
	}
	end := archiveEnd(t, ws.admin, id)
	return resp.Intervals[0].Start.Truncate(time.Minute), end.Truncate(time.Minute).Add(time.Minute)
}

func dataDir(t *testing.T, ws *webServer) string {
	t.Helper()
	m := regexp.MustCompile(`data in (\S+)`).FindStringSubmatch(ws.stderr())
	if m == nil {
		t.Fatalf("no data directory on stderr:\n%s", ws.stderr())
	}
	return m[1]
}

// dragOnMap drags across the first map from fraction x0 to x1 of its
// width, in the middle of the frequency map, with real mouse events
// (shift held: a rectangle of rows).
func dragOnMap(b *browsertest.Browser, x0, x1 float64, shift bool) {
	box := browsertest.Eval[[]float64](b, `(function () { var v = LS.heatmaps[0], g = v.geometry(); v.canvas.scrollIntoView({block: "center"});
		var r = v.canvas.getBoundingClientRect(); return [r.left + g.x, r.top + g.yF, g.mapW, g.mapH]; })()`)
	y := box[1] + box[3]*0.3
	y2 := box[1] + box[3]*0.7
	if !shift {
		y2 = y
	}
	var mods []chromedp.MouseOption
	if shift {
		mods = append(mods, chromedp.ButtonModifiers(kb.ModifierShift))
	}
	opts := func(extra ...chromedp.MouseOption) []chromedp.MouseOption {
		return append(append([]chromedp.MouseOption{chromedp.ButtonLeft}, mods...), extra...)
	}
	ax, bx := box[0]+box[2]*x0, box[0]+box[2]*x1
	b.Do(10*time.Second,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, ax, y, opts()...),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, ax, y, opts(chromedp.ClickCount(1))...),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (ax+bx)/2, (y+y2)/2, opts()...),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, bx, y2, opts()...),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, bx, y2, opts(chromedp.ClickCount(1))...))
}

// figures are a report's numbers by name: the totals, then bucket i's
// count and time as bucket.i.count, bucket.i.sum_us.
type figures map[string]float64

func equalFigures(a, b figures) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// pageReport reads the exact values the history page shows for its
// selection (data-v).
func pageReport(t *testing.T, b *browsertest.Browser) figures {
	t.Helper()
	raw := browsertest.Eval[map[string]string](b, `(function () {
		var out = {};
		document.querySelectorAll("#report dd[data-k]").forEach(function (d) { out[d.getAttribute("data-k")] = d.getAttribute("data-v"); });
		document.querySelectorAll("#report table.buckets tbody tr").forEach(function (tr, i) {
			var v = tr.querySelectorAll("[data-v]");
			out["bucket." + i + ".count"] = v[0].getAttribute("data-v");
			out["bucket." + i + ".sum_us"] = v[1].getAttribute("data-v");
		});
		return out; })()`)
	out := figures{}
	for k, v := range raw {
		if k == "max_bucket_us" || v == "" {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("the page's %s: %q", k, v)
		}
		out[k] = f
	}
	return out
}

// checkReport compares the page's report with `latscope report DATA
// --series JOB --event EVENT --from F --to T --format json` for the
// page's selection,
// and returns it.
func checkReport(t *testing.T, b *browsertest.Browser, data string) figures {
	t.Helper()
	from, to := selectionWindow(b)
	selects := browsertest.Eval[[]string](b, `LS.heat.reportArgs(LS.heatmaps[0].model.series)`)
	return compareReport(t, b, from, to, append(append([]string{"report", data}, selects...), "--from", from, "--to", to))
}

// selectionWindow is the window of the history page's selection.
func selectionWindow(b *browsertest.Browser) (from, to string) {
	return browsertest.Eval[string](b, `document.getElementById("sel-window").getAttribute("data-from")`),
		browsertest.Eval[string](b, `document.getElementById("sel-window").getAttribute("data-to")`)
}

// compareReport compares the page's report for the selection [from, to)
// with what the latscope command args prints as JSON, and returns it.
func compareReport(t *testing.T, b *browsertest.Browser, from, to string, args []string) figures {
	t.Helper()
	out, err := exec.Command(binary, append(args, "--format", "json")...).Output()
	if err != nil {
		t.Fatalf("latscope report: %v", err)
	}
	var cli struct {
		Series []map[string]json.RawMessage `json:"series"`
	}
	if err := json.Unmarshal(out, &cli); err != nil || len(cli.Series) != 1 {
		t.Fatalf("latscope report --format json: %v\n%s", err, out)
	}
	want := figures{}
	for _, k := range []string{"count", "sum_us", "mean_us", "p50_us", "p90_us", "p99_us"} {
		var v *float64
		json.Unmarshal(cli.Series[0][k], &v)
		if v != nil {
			want[k] = *v
		}
	}
	var buckets []struct {
		Count float64 `json:"count"`
		SumUs float64 `json:"sum_us"`
	}
	json.Unmarshal(cli.Series[0]["buckets"], &buckets)
	for i, bk := range buckets {
		want[fmt.Sprintf("bucket.%d.count", i)] = bk.Count
		want[fmt.Sprintf("bucket.%d.sum_us", i)] = bk.SumUs
	}
	got := pageReport(t, b)
	if !equalFigures(got, want) {
		t.Errorf("the page's report for %s – %s:\n%v\nlatscope report:\n%v", from, to, got, want)
	}
	if want["count"] == 0 || math.IsNaN(want["count"]) {
		t.Errorf("the selection %s – %s holds no events", from, to)
	}
	t.Logf("selection %s – %s: %v events, p99 %v µs, as latscope report", from, to, want["count"], want["p99_us"])
	return got
}

// viewState is what the history page shows, as text: range, scale,
// rows, columns and the selection.
func viewState(t *testing.T, b *browsertest.Browser) string {
	t.Helper()
	return browsertest.Eval[string](b, `[LS.heatmaps[0].canvas.getAttribute("data-t0"), LS.heatmaps[0].model.n, LS.heatmaps[0].model.w,
		document.getElementById("scale").value, LS.heatmaps[0].scale, document.getElementById("rows").value,
		JSON.stringify(LS.heatmaps[0].sel), document.getElementById("sel-window").getAttribute("data-from"),
		document.getElementById("sel-window").getAttribute("data-to")].join(" | ")`)
}

// checkPaintSpeed draws a map of 1500 columns × 40 rows (every cell
// non-zero, p50/p99 and a mean series on every column) in the page and
// logs how long the whole paint takes (19–36 ms on the 2-core VM).
func checkPaintSpeed(t *testing.T, b *browsertest.Browser) {
	t.Helper()
	ms := browsertest.Eval[float64](b, `(function () {
		var n = 1500, rows = 40, resp = {series: {id: 0, event: "synthetic", source: "x", instance: ""},
			window: {from: "2026-01-01T00:00:00Z", to: "2026-01-08T00:00:00Z", resolution: "1m0s"}, column_seconds: 403.2, columns: n,
			rows: [], frequency: [], intensity: [], events: [], observed: [], p50: [], p99: [], mean: [],
			means: [{series_id: 9, event: "mean", values: []}]};
		for (var r = 0; r < rows; r++) resp.rows.push({low: Math.pow(2, r) * 1e-6, high: Math.pow(2, r + 1) * 1e-6, label: r + ""});
		for (var c = 0; c < n; c++) {
			var f = [], i = [];
			for (var r = 0; r < rows; r++) { f.push((c * 7 + r * 13) % 97 + 1); i.push(((c + r) % 31 + 1) / 100); }
			resp.frequency.push(c % 100 === 5 ? null : f); resp.intensity.push(c % 100 === 5 ? null : i);
			resp.events.push(1000); resp.observed.push(c % 100 === 5 ? 0 : 403.2);
			resp.p50.push(0.001 * (1 + c % 5)); resp.p99.push(0.05); resp.mean.push(0.002); resp.means[0].values.push(0.003);
		}
		var v = new LS.heat.Map({label: "speed", width: 1500 + 92});
		v.setModel(LS.heat.model(resp));
		var best = Infinity;
		for (var k = 0; k < 5; k++) { v.invalidate(); var t0 = performance.now(); v.paint(); best = Math.min(best, performance.now() - t0); }
		LS.heatmaps.pop();
		return best; })()`)
	// Logged, not bounded: speed is the benchmark's to prove
	// (TestWebHistoryWeek, make bench), not a timed test's on a shared machine.
	t.Logf("painting 1500 columns × 40 rows: %.1f ms", ms)
}
