package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// profileJSON mirrors the parts of the profile JSON the tests read.
type profileJSON struct {
	Rounding      string `json:"rounding"`
	SpanUS        int64  `json:"span_us"`
	TimSpanUS     int64  `json:"tim_span_us"`
	StartSpanUS   int64  `json:"start_span_us"`
	CPUUS         int64  `json:"cpu_us"`
	WaitUS        int64  `json:"wait_us"`
	UnaccountedUS int64  `json:"unaccounted_us"`
	Events        []struct {
		Event string `json:"event"`
		US    int64  `json:"us"`
	} `json:"events"`
	Statements []struct {
		Key        string `json:"key"`
		Executions int64  `json:"executions"`
	} `json:"statements"`
}

func TestProfileCommand(t *testing.T) {
	trace := testenv.DataFile(t, "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc")
	r := run(t, "", "profile", trace, "--format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var p profileJSON
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	var waits int64
	for _, e := range p.Events {
		waits += e.US
	}
	if p.SpanUS <= 0 || waits != p.WaitUS || p.SpanUS != p.CPUUS+p.WaitUS+p.UnaccountedUS || p.Rounding == "" || len(p.Statements) == 0 {
		t.Errorf("profile does not add up: %+v", p)
	}

	r = run(t, "", "profile", trace, "--format", "json", "--span", "start")
	var fromStart profileJSON
	if err := json.Unmarshal([]byte(r.stdout), &fromStart); err != nil {
		t.Fatal(err)
	}
	if fromStart.SpanUS != p.StartSpanUS || fromStart.SpanUS <= p.SpanUS || p.SpanUS != p.TimSpanUS ||
		fromStart.SpanUS != fromStart.CPUUS+fromStart.WaitUS+fromStart.UnaccountedUS {
		t.Errorf("--span start: span %d µs, want %d (> %d) and adding up: %+v", fromStart.SpanUS, p.StartSpanUS, p.SpanUS, fromStart)
	}

	table := run(t, "", "profile", trace)
	for _, want := range []string{"Response-time profile", "CPU (top-level calls, c=)", "unaccounted-for", "total (span)", "transactions (XCTEND)", "Statements by elapsed time", "call latency", "call CPU (c=)"} {
		if !strings.Contains(table.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, table.stdout)
		}
	}

	// The same trace gzipped, written as a page.
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(data)
	zw.Close()
	gzPath := filepath.Join(dir, "t.trc.gz")
	if err := os.WriteFile(gzPath, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "p.html")
	if h := run(t, "", "profile", gzPath, "-o", page, "--top", "2"); h.code != 0 {
		t.Fatalf("-o html: exit %d: %s", h.code, h.stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Content-Security-Policy", "unaccounted-for", `id="profile-data"`, "call latency", "calls by c="} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://") {
		t.Errorf("page refers to the network")
	}
}

func TestProfileCommandErrors(t *testing.T) {
	if h := run(t, "", "profile", "--help"); h.code != 0 || !strings.Contains(h.stdout, "Examples:") {
		t.Errorf("profile --help: exit %d, no examples", h.code)
	}
	if r := run(t, "", "profile"); r.code != 2 {
		t.Errorf("profile without a trace: exit %d, want 2", r.code)
	}
	if r := run(t, "", "profile", "-", "--format", "csv"); r.code != 2 {
		t.Errorf("--format csv: exit %d, want 2", r.code)
	}
	if r := run(t, "", "profile", "-", "--span", "wall"); r.code != 2 {
		t.Errorf("--span wall: exit %d, want 2", r.code)
	}
	if r := run(t, "not a trace\n", "profile", "-"); r.code == 0 || !strings.Contains(r.stderr, "not a 10046 trace") {
		t.Errorf("profile of text: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestProfileDocExample: every line docs/profile.md shows of its examples
// is in the output of the command it shows.
func TestProfileDocExample(t *testing.T) {
	checkDocExamples(t, "profile.md", 2)
}
