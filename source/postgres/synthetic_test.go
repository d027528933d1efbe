package postgres

// Synthetic cases: inputs no real server run here produces (other
// log_line_prefix and log_timezone settings, damaged lines, quiet gaps),
// written exactly as PostgreSQL 15's elog.c formats them.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"UPDATE pgbench_accounts SET abalance = abalance + -3793 WHERE aid = 70265;": "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?;",
		"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;":       "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?;",
		"select 'it''s',\n\t 1.5e-3, x-1, t1.c2 from t2":                             "select ?, ?, x-?, t1.c2 from t2",
		"select a in (-1, -2), f(x) -3":                                              "select a in (?, ?), f(x) -?",
		"  select\t'unterminated":                                                    "select ?",
		"select 'é' as \"é\"":                                                        "select ? as \"é\"",
		strings.Repeat("ab ", 100):                                                   strings.Repeat("ab ", 33) + "a…",
		strings.Repeat("é", 60):                                                      strings.Repeat("é", 50) + "…",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTimestampPrefixes(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tzdata")
	}
	want := time.Date(2026, 11, 22, 4, 53, 0, 440e6, time.UTC)
	for _, tc := range []struct {
		line string
		loc  *time.Location
		want time.Time
	}{
		{"2026-11-22 04:53:00.440 UTC [1] LOG:  x", time.UTC, want},                   // %m
		{"2026-11-22 04:53:00 UTC [1] LOG:  x", time.UTC, want.Truncate(time.Second)}, // %t
		{"1795323180.440 [1] LOG:  x", time.UTC, want},                                // %n
		{"2026-11-22 07:53:00.440 +03 [1] LOG:  x", time.UTC, want},
		{"2026-11-22 10:23:00.440 +0530 [1] LOG:  x", time.UTC, want},
		{"2026-11-22 05:53:00.440 CET [1] LOG:  x", paris, want},
	} {
		got, n := newZones(tc.loc, func(z string) { t.Errorf("unknown zone %s", z) }).parseStamp(tc.line)
		if n == 0 || !got.Equal(tc.want) || tc.line[n:n+4] != " [1]" {
			t.Errorf("%q: %s (%d), want %s", tc.line, got, n, tc.want)
		}
	}
	for _, bad := range []string{"2026-13-22 04:53:00.440 UTC x", "2026-11-22 04:53:00. UTC", "2026-11-22 04:53:00.440", "179540958.44 x", ""} {
		if _, n := newZones(time.UTC, func(string) {}).parseStamp(bad); n != 0 {
			t.Errorf("%q parsed", bad)
		}
	}
}

func run(t *testing.T, text string, opts source.Options) ([]stream.Interval, *input.Diagnostics) {
	t.Helper()
	var log strings.Builder
	diag := input.NewDiagnostics(&log, 10)
	src, _ := Open(source.Input{Name: "syn", Reader: strings.NewReader(text), Diag: diag}, opts)
	var ivs []stream.Interval
	if err := src.Run(context.Background(), func(iv stream.Interval) error { ivs = append(ivs, iv); return nil }); err != nil {
		t.Fatal(err)
	}
	return ivs, diag
}

func TestQuietStretchesAndLateLines(t *testing.T) {
	text := "" +
		"2026-11-22 04:53:00.100 UTC [1] LOG:  duration: 1.000 ms  statement: select 1\n" +
		"2026-11-22 04:53:01.100 UTC [2] LOG:  duration: 2.000 ms  statement: select 2\n" +
		"2026-11-22 04:53:00.900 UTC [3] LOG:  duration: 3.000 ms  statement: select 3\n" + // late, window still open
		"2026-11-22 04:53:10.000 UTC [1] LOG:  duration: 4.000 ms  execute <unnamed>: select $1\n" +
		"2026-11-22 04:53:10.000 UTC [1] LOG:  duration: 4.000 ms  parse <unnamed>: select $1\n" +
		"2026-11-22 04:53:10.000 UTC [1] LOG:  duration: 4.000 ms\n" +
		"2026-11-22 04:53:10.000 UTC [1] LOG:  duration: x ms  statement: select 1\n" +
		"garbage\n" +
		"2026-11-22 04:53:00.000 UTC [1] LOG:  duration: 5.000 ms  statement: select 5\n" // too late: oldest open window
	ivs, diag := run(t, text, source.Options{Interval: time.Second})
	type row struct {
		start string
		dur   time.Duration
		all   float64
	}
	var got []row
	for _, iv := range ivs {
		r := row{iv.Start.Format("05"), iv.Duration, 0}
		for _, s := range iv.Series {
			if s.Key.Event == AllStatements {
				r.all = s.Hist.Sum
			}
		}
		got = append(got, r)
	}
	want := []row{{"00", time.Second, 4000}, {"01", time.Second, 2000}, {"02", 7 * time.Second, 0}, {"09", time.Second, 5000}, {"10", time.Second, 4000}}
	if len(got) != len(want) {
		t.Fatalf("intervals %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("interval %d: %v, want %v", i, got[i], want[i])
		}
	}
	if n := diag.Count("syn"); n != 2 {
		t.Errorf("%d malformed, want 2 (bad duration, garbage)", n)
	}
	if w := diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "out of order") {
		t.Errorf("warnings %v", w)
	}
}

func TestDetect(t *testing.T) {
	for in, want := range map[string]input.Verdict{
		"2026-11-22 04:53:00.100 UTC [1] LOG:  starting\n":                                       input.Yes,
		"\n\tcontinued\n1795323180.440 [1] FATAL:  x\n":                                          input.Yes,
		"2026-11-22 04:53:00 CET [7] postgres@db ERROR:  boom\n":                                 input.Yes,
		"2026-11-22 04:53:00.100 UTC [1] LOG:  start":                                            input.NeedMore,
		"2026-11-22 04:53:00.100 UTC,,,1,,a.b,1,,x,,0,LOG,00000,\"multi\nline":                   input.NeedMore,
		"2026-11-22 04:53:00.100 UTC something else\n":                                           input.No,
		"2026-11-22 04:53:00.100 UTC,a,b\n":                                                      input.No,
		"{\"timestamp\":\"2026-11-22 04:53:00.100 UTC\",\"pid\":1,\"error_severity\":\"LOG\"}\n": input.Yes,
		"{\"timestamp\":\"x\"}\n":                                                                input.No,
		"<begin record>\n":                                                                       input.No,
		"WAIT #1: nam='x' ela= 1\n":                                                              input.No,
		"":                                                                                       input.NeedMore,
		strings.Repeat("x", 70<<10):                                                              input.No,
	} {
		if got := Detect([]byte(in)); got != want {
			t.Errorf("Detect(%.60q) = %v, want %v", in, got, want)
		}
	}
}
