package audittimeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/audit/correlate"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/htmlpage"
	"github.com/latscope/latscope/internal/testkit/testenv"
)

// scenarioPage renders the synthetic scenario (testdata/audit/
// correlate-synthetic): alice's sqlplus SHUTDOWN and bob's srvctl stop.
func scenarioPage(t *testing.T) string {
	t.Helper()
	dir := filepath.Dir(testenv.DataFile(t, "audit/correlate-synthetic/audit.log"))
	files, _ := filepath.Glob(filepath.Join(dir, "*.aud"))
	files = append(files, filepath.Join(dir, "audit.log"), filepath.Join(dir, "auth.log"))
	diag := input.NewDiagnostics(nil, 5)
	m, err := correlate.Load(context.Background(), files, diag, correlate.Options{Year: 2026})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := Write(&page, Report{Files: m.Files, Chains: m.Chains(correlate.Filter{}), Problems: diag.Problems(), Warnings: diag.Warnings()}); err != nil {
		t.Fatal(err)
	}
	return page.String()
}

func TestScenarioPage(t *testing.T) {
	page := scenarioPage(t)
	t.Logf("page: %d bytes", len(page))
	for _, want := range []string{
		htmlpage.ContentSecurityPolicy,
		`<svg class="timeline"`,
		`<text x="4" y="`, `db1 · ORCL</text>`,
		`alice from 203.0.113.7</text>`, `bob from 198.51.100.9</text>`,
		`alice from 203.0.113.7 port 51022`, `bob from 198.51.100.9 port 40022`,
		`<span class="conf c-by">by process id</span>`,
		`<span class="conf c-by">by execute watch and time</span>`,
		`<span class="conf c-exact">exact: same ses</span>`,
		`<span class="conf c-exact">exact: same process</span>`,
		"link  by execute watch and time  execute watch (key oracrs) 5s before",
		"srvctl stop database",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, `data-kind="SHUTDOWN"`); n != 2 {
		t.Errorf("%d SHUTDOWN markers, want 2", n)
	}
	if n := strings.Count(page, `<g class="span `); n != 4 {
		t.Errorf("%d login spans, want 4 (connect, two stops, srvctl)", n)
	}
	for _, want := range []string{"audit.log</td><td>linux-audit</td><td>17 events</td>", "auth.log</td><td>auth-log</td><td>10 records</td>", "No input skipped"} {
		if !strings.Contains(page, want) {
			t.Errorf("files table lacks %q", want)
		}
	}
	if strings.Contains(page, "http://") && strings.Count(page, "http://") != strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("page names an external resource")
	}
}

// TestEmptyAndProblems: no chain still gives a page that says so, and
// skipped input is listed with its file:line.
func TestEmptyAndProblems(t *testing.T) {
	var page bytes.Buffer
	err := Write(&page, Report{Title: "a <b>", Files: []correlate.FileSummary{{Name: "x.log", Format: "auth-log", Read: 3}},
		Problems: []input.SourceProblems{{Source: "x.log", Count: 7, First: []input.Problem{{Source: "x.log", Line: 2, Reason: "no syslog timestamp"}}}},
		Warnings: []string{"x.log: year taken from the file"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>a &lt;b&gt;</title>", "No database start", "<li>skipped x.log:2: no syslog timestamp</li>",
		"x.log: 7 skipped in all", "<td>3 records</td><td>0</td><td>7</td>", "warning: x.log: year taken"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page.String(), "<svg") {
		t.Error("an empty timeline drawn")
	}
}

// TestScenarioPageInChromium opens the page in headless Chromium: no
// console message (script error, refused resource), and the DOM has the
// SVG's markers and spans.
func TestScenarioPageInChromium(t *testing.T) {
	path := filepath.Join(t.TempDir(), "timeline.html")
	if err := os.WriteFile(path, []byte(scenarioPage(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := testenv.RunChromiumLog(t, "file://"+path, 90*time.Second, "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=2000", "--dump-dom")
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") {
			t.Errorf("console message: %s", line)
		}
	}
	svg := regexp.MustCompile(`(?s)<svg class="timeline".*?</svg>`).FindString(dom)
	if svg == "" {
		t.Fatalf("no timeline SVG in the DOM:\n%.2000s", dom)
	}
	if n := strings.Count(svg, "<circle "); n != 3 {
		t.Errorf("%d database markers in the DOM's SVG, want 3 (connect, two stops)", n)
	}
	if n := strings.Count(svg, `<g class="m k-crs"`); n != 1 {
		t.Errorf("%d clusterware markers, want 1", n)
	}
	if n := strings.Count(svg, `<g class="span `); n != 4 {
		t.Errorf("%d login spans, want 4", n)
	}
}

// TestAmbiguousChain: an ambiguous chain draws its candidates' login spans
// dashed and marked "?", and lists them with their logins in the table and
// the marker's title.
func TestAmbiguousChain(t *testing.T) {
	at := time.Date(2026, 11, 20, 10, 6, 5, 0, time.UTC)
	c := correlate.Chain{Subject: correlate.Subject{Time: at, Host: "db1", DB: "ORCL", Action: "SHUTDOWN", Kind: "oracle", Source: "x.aud", Line: 16},
		Links:      []correlate.Link{{Confidence: correlate.Ambiguous, What: "2 clusterware commands of different sessions or databases within 2m0s before it: none taken"}},
		Candidates: []correlate.Candidate{{Link: correlate.Link{Confidence: correlate.Ambiguous, Time: at.Add(-2 * time.Second), What: "execute watch `srvctl stop database -d ORCL`, ses 42", Source: "audit.log", Line: 24}, Login: &correlate.Login{User: "alice", Addr: "203.0.113.7", Session: "42", Time: at.Add(-6 * time.Minute)}}},
		Confidence: correlate.Ambiguous}
	var page bytes.Buffer
	if err := Write(&page, Report{Chains: []correlate.Chain{c}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<span class="conf c-unknown">ambiguous</span> 1`, `<span class="conf c-unknown">candidate</span> execute watch`,
		"→ alice from 203.0.113.7, login 2026-11-20 10:00:05Z", "\ncandidate  execute watch `srvctl stop database -d ORCL`, ses 42 → alice"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page.String(), `<g class="span `); n != 1 || !strings.Contains(page.String(), `<g class="span c-unknown cand"><title>candidate login span (ambiguous: not taken): alice from 203.0.113.7`) ||
		!strings.Contains(page.String(), ">? alice from 203.0.113.7</text>") {
		t.Errorf("%d spans; want the candidate's, dashed", n)
	}
}

// TestCloseMarkersMoved: subjects seconds apart (a real STARTUP, MOUNT and
// OPEN sequence) are drawn apart, each with a tick at its true time.
func TestCloseMarkersMoved(t *testing.T) {
	at := time.Date(2020, 10, 7, 17, 5, 33, 0, time.UTC)
	var chains []correlate.Chain
	for i, action := range []string{"ALTER DATABASE OPEN", "STARTUP", "ALTER DATABASE MOUNT"} { // not in time order
		chains = append(chains, correlate.Chain{Subject: correlate.Subject{Time: at.Add(time.Duration(2-i) * time.Second), Host: "db1", DB: "ORCL", Action: action, Kind: "oracle", Line: i + 1}, Confidence: correlate.Unknown})
	}
	var page bytes.Buffer
	if err := Write(&page, Report{Chains: chains}); err != nil {
		t.Fatal(err)
	}
	xs := regexp.MustCompile(`<circle cx="([0-9.]+)"`).FindAllStringSubmatch(page.String(), -1)
	if len(xs) != 3 || strings.Count(page.String(), `<line class="moved"`) != 2 {
		t.Fatalf("markers %v, %d moved", xs, strings.Count(page.String(), `<line class="moved"`))
	}
	for i := 1; i < 3; i++ {
		a, _ := strconv.ParseFloat(xs[i-1][1], 64)
		b, _ := strconv.ParseFloat(xs[i][1], 64)
		if b-a < markerGap-0.1 {
			t.Errorf("markers at %v and %v overlap", a, b)
		}
	}
}
