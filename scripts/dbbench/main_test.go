package main

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/scripts/benchkit"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.servers, []string{"mariadb", "postgres"}) || c.sessions != 8 || c.duration != 20*time.Second || c.latscope != "" {
		t.Errorf("defaults: %+v", c)
	}
	// The default run stays within the brief's two minutes of sampling
	// and load (servers' start and the table fill come on top).
	if total := len(c.servers) * int((c.warmup+c.duration+5*time.Second)/time.Second); total > 120 {
		t.Errorf("default load time %d s", total)
	}
	c, err = parseFlags([]string{"-servers", "postgres", "-duration", "5s", "-sessions", "2", "-latscope", "/x/latscope"}, io.Discard)
	if err != nil || !slices.Equal(c.servers, []string{"postgres"}) || c.duration != 5*time.Second || c.sessions != 2 || c.latscope != "/x/latscope" {
		t.Errorf("parsed %+v, %v", c, err)
	}
	c, err = parseFlags([]string{"-mariadb-option", "--performance-schema-events-waits-history-long-size=100000", "-mariadb-option=--x=1"}, io.Discard)
	if err != nil || !slices.Equal(c.mariadbOptions, []string{"--performance-schema-events-waits-history-long-size=100000", "--x=1"}) {
		t.Errorf("-mariadb-option: %q, %v", c.mariadbOptions, err)
	}
	for _, bad := range [][]string{
		{"-servers", "oracle"}, {"-servers", ""}, {"-sessions", "0"}, {"-duration", "1s"}, {"-warmup", "-1s"}, {"extra"},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// reportOut is the shape of `latscope report --format json` for a mysql://
// source, trimmed to the fields dbbench reads plus a few others (synthetic
// figures; the format is docs/report-format.md's). A log line before the
// JSON is skipped as benchkit.JSONStart does.
const reportOut = `latscope: note before the JSON
{
  "series": [
    {"event": "wait/io/file/innodb/innodb_data_file", "count": 600000, "sum_us": 1.2e6},
    {"event": "statement: SELECT ` + "`pad`" + ` FROM ` + "`big`" + ` WHERE ID = ?", "count": 400000, "sum_us": 9e6}
  ],
  "sources": [{"name": "mysql://latscope@127.0.0.1:4000/", "malformed_lines": 0}],
  "warnings": [],
  "source": {"kind": "mysql events_waits_history_long sampler", "polls_per_s": 91.5, "capture_ratio": 0.995, "missed": 3000}
}
`

func TestSummariseAndVerdict(t *testing.T) {
	p := benchkit.Process{Stdout: []byte(reportOut), Wall: 20 * time.Second, User: 3 * time.Second, Sys: time.Second, MaxRSSKB: 21000}
	r, err := summarise("mariadb", p, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.Events != 1e6 || r.EventsPerS != 50000 || r.PollsPerS != 91.5 || *r.CaptureRatio != 0.995 || r.Missed != 3000 ||
		r.CPUSeconds != 4 || r.WallS != 20 || r.Cores != 0.2 || r.Kind != "mysql events_waits_history_long sampler" {
		t.Errorf("row %+v", r)
	}
	r.Sessions, r.LoadRate, r.LoadUnit = 8, 13370.2, "queries/s" // set by measure
	rows := []row{r}
	if !verdictAll(rows, 8) || rows[0].Verdict != "PASS" {
		t.Errorf("verdict %q at 8 sessions", rows[0].Verdict)
	}
	if verdictAll(rows, 4) || rows[0].Verdict != "FAIL" {
		t.Errorf("verdict %q at 4 sessions: the claim is about 8", rows[0].Verdict)
	}
	low := 0.9747
	for _, bad := range []row{
		{Server: "mariadb", CaptureRatio: &low, Cores: 0.2},
		{Server: "mariadb", CaptureRatio: r.CaptureRatio, Cores: 1.01},
		{Server: "mariadb", Cores: 0.2}, // no capture ratio: the claim is not shown
	} {
		if verdict(bad) != "FAIL" {
			t.Errorf("%+v passes", bad)
		}
	}
	pg := row{Server: "postgres", Cores: 0.03}
	rows = []row{r, pg}
	if !verdictAll(rows, 8) || rows[1].Verdict != "" {
		t.Errorf("postgres has no claim: %q", rows[1].Verdict)
	}
	var out bytes.Buffer
	writeTable(&out, rows, 8)
	for _, want := range []string{
		"mariadb         8  13370 queries/s", "91.5", "50000", "0.9950", "4.00 s / 20.0 s", "0.200", "21 MiB", "PASS", "n/a",
		"claim: MariaDB sampler capture >= 99 % at 8 busy sessions using <= 1 core\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSummariseRejects(t *testing.T) {
	for name, stdout := range map[string]string{
		"no JSON":    "latscope: mysql://u@h/: connection refused\n",
		"bad JSON":   "{\"series\": [\n",
		"no sampler": `{"series": [{"count": 3}], "sources": [], "warnings": []}`,
	} {
		if _, err := summarise("mariadb", benchkit.Process{Stdout: []byte(stdout)}, time.Second); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestHarnessT(t *testing.T) {
	var log bytes.Buffer
	h := newHarnessT("srv", &log)
	var order []int
	h.Cleanup(func() { order = append(order, 1) })
	if err := h.Do(func() { h.Cleanup(func() { order = append(order, 2) }) }); err != nil {
		t.Fatal(err)
	}
	reached := false
	err := h.Do(func() { h.Fatalf("boom %d", 7); reached = true })
	if err == nil || err.Error() != "srv: boom 7" || reached {
		t.Errorf("Fatalf: %v, continued %v", err, reached)
	}
	if !strings.Contains(log.String(), "dbbench: srv: boom 7") {
		t.Errorf("log %q", log.String())
	}
	h.Close()
	if !slices.Equal(order, []int{2, 1}) {
		t.Errorf("cleanups ran in order %v, want last first", order)
	}
	h2 := newHarnessT("srv2", io.Discard)
	err = h2.Do(func() { h2.Skipf("mariadbd not installed"); reached = true })
	if !errors.Is(err, errSkipped) || !strings.Contains(err.Error(), "mariadbd not installed") || reached {
		t.Errorf("Skipf: %v", err)
	}
	h3 := newHarnessT("srv3", io.Discard)
	if err := h3.Do(func() { h3.Fatal("a", 1) }); err == nil || err.Error() != "srv3: a 1" {
		t.Errorf("Fatal: %v", err)
	}
}
