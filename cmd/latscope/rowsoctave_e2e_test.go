package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// TestRowsPerOctaveFlag: the heat-map commands take 1, 2, 4 or 8 rows per
// octave and refuse anything else as a usage error; a bucketed source says
// on stderr that its rows stay per octave, a trace does not.
func TestRowsPerOctaveFlag(t *testing.T) {
	trace := testenv.DataFile(t, "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc")
	buckets := testenv.DataFile(t, "pylatencymap/example_latency_data.txt")
	for _, args := range [][]string{
		{"heatmap", trace, "--rows-per-octave", "3"},
		{"heatmap", trace, "--rows-per-octave", "16"},
		{"report", trace, "--rows-per-octave", "3", "-o", filepath.Join(t.TempDir(), "x.html")},
		{"iotest", t.TempDir(), "--rows-per-octave", "0"},
		{"nettest", "client", "127.0.0.1:1", "--rows-per-octave", "5"},
	} {
		if r := run(t, "", args...); r.code != 2 || !strings.Contains(r.stderr, "want 1, 2, 4 or 8") {
			t.Errorf("%v: exit %d %q", args, r.code, r.stderr)
		}
	}
	r := run(t, "", "heatmap", trace, "--rows-per-octave", "8", "--once", "--plain", "--tz", "UTC")
	if r.code != 0 || strings.Contains(r.stderr, "rows stay per octave") || !strings.Contains(r.stdout, "  - ") {
		t.Errorf("trace: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, "", "heatmap", buckets, "--rows-per-octave", "2", "--format", "csv")
	if r.code != 0 || !strings.Contains(r.stderr, "--rows-per-octave 2: rows stay per octave (power-of-two buckets, not exact durations) for db file sequential read") {
		t.Errorf("bucketed: exit %d, stderr %q", r.code, r.stderr)
	}
	if plain := run(t, "", "heatmap", buckets, "--format", "csv"); plain.stdout != r.stdout {
		t.Error("bucketed: the matrix changed with --rows-per-octave 2")
	}
}

// TestReportImageMapStyle: report -o x.svg draws its heat maps with
// --scale and --rows-per-octave, the very image heatmap -o writes with the
// same flags; a bucketed source says its rows stay per octave.
func TestReportImageMapStyle(t *testing.T) {
	trace := testenv.DataFile(t, "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc")
	dir := t.TempDir()
	image := func(name string, args ...string) []byte {
		t.Helper()
		out := filepath.Join(dir, name)
		if r := run(t, "", append(append(args[:1:1], trace, "--tz", "UTC", "-o", out), args[1:]...)...); r.code != 0 {
			t.Fatalf("%v: exit %d %s", args, r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	styled := image("report.svg", "report", "--rows-per-octave", "4", "--scale", "log")
	if !bytes.Equal(styled, image("heatmap.svg", "heatmap", "--rows-per-octave", "4", "--scale", "log")) {
		t.Error("report -o x.svg --rows-per-octave 4 --scale log differs from heatmap -o x.svg with the same flags")
	}
	if bytes.Equal(styled, image("plain.svg", "report")) {
		t.Error("the flags changed nothing in the report's image")
	}
	buckets := testenv.DataFile(t, "pylatencymap/example_latency_data.txt")
	r := run(t, "", "report", buckets, "--rows-per-octave", "2", "-o", filepath.Join(dir, "b.svg"))
	if r.code != 0 || !strings.Contains(r.stderr, "rows stay per octave") {
		t.Errorf("bucketed: exit %d, stderr %q", r.code, r.stderr)
	}
}
