package main

// End-to-end tests of the load tests' HTML exports: one real run writes its
// JSON report on stdout and its page with -o, and the page must show every
// figure of that report, load in a real browser without a console message,
// and mark the steps on the heat maps.

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// loadTestRun runs a load test with --format json and -o PAGE.html and
// returns the JSON report (as generic values, so every field is compared)
// and the page.
func loadTestRun(t *testing.T, args ...string) (map[string]any, string) {
	t.Helper()
	page := filepath.Join(t.TempDir(), "run.html")
	r := run(t, "", append(args, "--format", "json", "-o", page)...)
	if r.code != 0 {
		t.Fatalf("latscope %v: exit %d\n%s", args, r.code, r.stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, r.stdout)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	checkInBrowser(t, page)
	return rep, string(b)
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr data-(?:step|mode|interval|row)="(\d+)">(.*?)</tr>`)
	cellRE = regexp.MustCompile(`<td data-k="([a-z0-9_]+)"(?: data-v="([^"]*)")?>(.*?)</td>`)
	attrRE = regexp.MustCompile(`data-([a-z0-9-]+)="([^"]*)"`)
)

// element returns the opening tag and content of the element with id.
func element(t *testing.T, page, tag, id string) (attrs map[string]string, inner string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<` + tag + ` id="` + id + `"([^>]*)>(.*?)</` + tag + `>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the page has no <%s id=%q>", tag, id)
	}
	attrs = map[string]string{}
	for _, a := range attrRE.FindAllStringSubmatch(m[1], -1) {
		attrs[a[1]] = html.UnescapeString(a[2])
	}
	return attrs, m[2]
}

// tableRows returns each body row's cells by JSON name: the exact value
// (data-v) or, for text cells, the text.
func tableRows(t *testing.T, page, id string) []map[string]string {
	t.Helper()
	_, inner := element(t, page, "table", id)
	var rows []map[string]string
	for _, r := range rowRE.FindAllStringSubmatch(inner, -1) {
		cells := map[string]string{}
		for _, c := range cellRE.FindAllStringSubmatch(r[2], -1) {
			v := c[2]
			if !strings.Contains(c[0], "data-v=") {
				v = html.UnescapeString(c[3])
			}
			cells[c[1]] = v
		}
		rows = append(rows, cells)
	}
	return rows
}

// sameAs checks that every field of a JSON object (but those in skip) is
// on the page with the same value; a field the JSON omits (zero) may be
// absent or zero.
func sameAs(t *testing.T, what string, want map[string]any, got map[string]string, skip ...string) {
	t.Helper()
	for k, v := range want {
		if contains(skip, k) {
			continue
		}
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: %s = %v is not on the page", what, k, v)
			continue
		}
		if !sameValue(v, g) {
			t.Errorf("%s: %s is %q on the page, %v in the JSON", what, k, g, v)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && g != "0" && g != "" {
			t.Errorf("%s: the page shows %s = %q, which the JSON omits", what, k, g)
		}
	}
}

func sameValue(want any, got string) bool {
	switch w := want.(type) {
	case float64:
		g, err := strconv.ParseFloat(got, 64)
		return err == nil && g == w
	case bool:
		return got == strconv.FormatBool(w)
	case string:
		return got == w
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// listItems returns the texts of a list's items.
func listItems(t *testing.T, page, id string) []string {
	t.Helper()
	_, inner := element(t, page, "ul", id)
	var items []string
	for _, m := range regexp.MustCompile(`(?s)<li>(.*?)</li>`).FindAllStringSubmatch(inner, -1) {
		items = append(items, html.UnescapeString(m[1]))
	}
	return items
}

func strings_(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func objects(v any) []map[string]any {
	var out []map[string]any
	if v == nil {
		return nil
	}
	for _, x := range v.([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// checkRows compares a table's rows with a JSON array of objects.
func checkRows(t *testing.T, page, id string, want []map[string]any, skip ...string) {
	t.Helper()
	got := tableRows(t, page, id)
	if len(got) != len(want) {
		t.Fatalf("table %s: %d rows, the JSON has %d", id, len(got), len(want))
	}
	for i := range want {
		sameAs(t, id+" row "+strconv.Itoa(i+1), want[i], got[i], skip...)
	}
}

func checkList(t *testing.T, page, id string, want any) {
	t.Helper()
	var w []string
	if want != nil {
		w = strings_(want)
	}
	if got := listItems(t, page, id); strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("%s on the page:\n%q\nin the JSON:\n%q", id, got, w)
	}
}

// checkAttrs compares an element's data attributes with a JSON object.
func checkAttrs(t *testing.T, page, tag, id string, want map[string]any, skip ...string) {
	t.Helper()
	attrs, inner := element(t, page, tag, id)
	got := map[string]string{}
	for k, v := range attrs {
		got[strings.ReplaceAll(k, "-", "_")] = v
	}
	if m := regexp.MustCompile(`<span data-k="reason">(.*?)</span>`).FindStringSubmatch(inner); m != nil {
		got["reason"] = html.UnescapeString(m[1])
	}
	sameAs(t, id, want, got, skip...)
}

// checkInBrowser loads the page in headless Chromium: no console message
// (script error, refused resource), and a screenshot that is not blank.
func checkInBrowser(t *testing.T, page string) {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "page.png")
	_, log := testenv.RunChromiumLog(t, "file://"+page, 90*time.Second, "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=3000", "--window-size=1300,2400", "--screenshot="+shot)
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") {
			t.Errorf("console message: %s", line)
		}
	}
	st, err := os.Stat(shot)
	if err != nil || st.Size() < 20_000 {
		t.Errorf("screenshot %s: %v, %d bytes: blank?", shot, err, sizeOf(st))
	}
}

func sizeOf(st os.FileInfo) int64 {
	if st == nil {
		return 0
	}
	return st.Size()
}

func TestIOTestPageShowsTheReport(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		fit  string // usl or queue
	}{
		{"closed", []string{"--steps", "1,2,4", "--duration", "500ms"}, "usl"},
		{"open", []string{"--rate", "300,600", "--duration", "1s", "--concurrency", "4"}, "queue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"iotest", t.TempDir(), "--size", "16M", "--warmup", "200ms", "--interval", "250ms"}, tc.args...)
			rep, page := loadTestRun(t, args...)
			steps := objects(rep["steps"])
			checkRows(t, page, "steps", steps, "modes")
			if rep["knee"] == nil {
				if attrs, _ := element(t, page, "p", "knee"); attrs["none"] != "true" {
					t.Errorf("the JSON has no knee, the page %v", attrs)
				}
			} else {
				checkAttrs(t, page, "p", "knee", rep["knee"].(map[string]any))
			}
			fit, ok := rep[tc.fit].(map[string]any)
			if !ok {
				t.Fatalf("the JSON has no %s fit: %v", tc.fit, rep)
			}
			checkAttrs(t, page, "p", tc.fit, fit)
			modes := tableRows(t, page, "modes")
			if attrs, _ := element(t, page, "table", "modes"); attrs["step"] != strconv.FormatFloat(rep["modes_step"].(float64), 'g', -1, 64) {
				t.Errorf("modes of step %s, the JSON says %v", attrs["step"], rep["modes_step"])
			}
			want := objects(rep["modes"])
			if len(modes) != len(want) || len(want) == 0 {
				t.Fatalf("%d modes on the page, %d in the JSON", len(modes), len(want))
			}
			for i := range want {
				sameAs(t, "mode "+strconv.Itoa(i+1), want[i], modes[i])
			}
			checkList(t, page, "reading", rep["reading"])
			checkList(t, page, "warnings", rep["warnings"])
			// The chart: a point per step on each line, the fit curve, and
			// each step marked on both heat maps.
			chart := page[strings.Index(page, `id="chart"`):]
			for _, line := range []string{"p50", "p99", "mean"} {
				if n := strings.Count(chart, `<circle class="`+line+`"`); n != len(steps) {
					t.Errorf("%d %s points, %d steps", n, line, len(steps))
				}
			}
			if !strings.Contains(chart, `<polyline class="fit"`) {
				t.Error("the chart has no fit curve")
			}
			if rep["knee"] != nil && !strings.Contains(chart, `class="knee"`) {
				t.Error("the chart does not mark the knee")
			}
			for _, s := range steps {
				label := html.EscapeString(stepLoadLabel(s))
				if n := strings.Count(page, ">"+label+"</text>"); n != 2 {
					t.Errorf("step %q marked %d times on the maps, want 2", label, n)
				}
			}
		})
	}
}

// stepLoadLabel is how a step is named on the page.
func stepLoadLabel(s map[string]any) string {
	if r, ok := s["rate"].(float64); ok && r > 0 {
		return strconv.FormatFloat(r, 'f', 0, 64) + " IOPS offered"
	}
	if n := s["concurrency"].(float64); n != 1 {
		return strconv.FormatFloat(n, 'f', 0, 64) + " readers"
	}
	return "1 reader"
}

func TestNetTestPageShowsTheReport(t *testing.T) {
	addr, _ := startNetServer(t)
	rep, page := loadTestRun(t, "nettest", "client", addr, "--size", "250", "--duration", "2s", "--interval", "500ms", "--tps", "2356")
	totals := map[string]string{}
	_, inner := element(t, page, "table", "totals")
	for _, c := range cellRE.FindAllStringSubmatch(inner, -1) {
		totals[c[1]] = c[2]
	}
	want := map[string]any{}
	for k, v := range rep {
		if _, ok := v.(float64); ok {
			want[k] = v
		}
	}
	sameAs(t, "totals", want, totals, "request_bytes", "reply_bytes", "connections")
	checkRows(t, page, "intervals", objects(rep["intervals"]), "start")
	modes := objects(rep["modes"])
	checkRows(t, page, "modes", modes)
	w := rep["what_if"].(map[string]any)
	checkRows(t, page, "whatif", objects(w["rows"]))
	checkAttrs(t, page, "table", "whatif", w, "rows")
	chart := page[strings.Index(page, `id="chart"`):]
	if n := strings.Count(chart, `<circle class="p50"`); n != len(objects(rep["intervals"])) {
		t.Errorf("%d points for %d intervals", n, len(objects(rep["intervals"])))
	}
}
