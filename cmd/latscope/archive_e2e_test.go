package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/recording"
	"github.com/latscope/latscope/stream"
)

// TestArchiveIsASourceForEveryCommand archives real data with record
// --archive, then reads it back with report, heatmap, record and convert:
// the same results as the original files, windows selected by --from and
// --until (or --to), series by --series.
func TestArchiveIsASourceForEveryCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, rel := range []string{"pylatencymap/example_latency_data.txt", realTrace} {
		f := testenv.DataFile(t, rel)
		if r := run(t, "", "record", f, "--archive", dir); r.code != 0 || !strings.Contains(r.stderr, "archived") {
			t.Fatalf("record --archive: exit %d: %s", r.code, r.stderr)
		}
	}
	// One source at a time: --series selects it by its (file) name.
	example := "*example_latency_data.txt"
	orig := run(t, "", "report", "--format", "json", testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if got := run(t, "", "report", "--format", "json", dir, "--series", example); got.stdout != orig.stdout || got.code != 0 {
		t.Fatalf("report of the archive differs from the file's: %s", got.stderr)
	}
	trace := testenv.DataFile(t, realTrace)
	for _, args := range [][]string{{"report", "--format", "json"}, {"heatmap", "--once", "--plain"}, {"convert", "--to", "jsonl"}} {
		want := run(t, "", append(args, trace)...)
		got := run(t, "", append(args, dir, "--series", "*"+filepath.Base(trace))...)
		if got.code != 0 || got.stdout != want.stdout {
			t.Errorf("%v: the archive reads differently from the trace: exit %d %s", args, got.code, got.stderr)
		}
	}
	// The database file is an ARCHIVE too, and record copies a window of it.
	lsr := filepath.Join(t.TempDir(), "window.lsr")
	from, until := "2013-08-26T16:27:30+02:00", "2013-08-26T16:28:00+02:00"
	if r := run(t, "", "record", filepath.Join(dir, "latscope.db"), "--from", from, "--to", until, "-o", lsr); r.code != 0 {
		t.Fatalf("record from the archive: %s", r.stderr)
	}
	window := reportJSON(t, lsr, "--intervals")
	whole := reportJSON(t, testenv.DataFile(t, "pylatencymap/example_latency_data.txt"), "--from", from, "--until", until, "--intervals")
	if len(window.Series) != 1 || window.Series[0].Count != whole.Series[0].Count || window.Series[0].Count == 0 {
		t.Fatalf("window of the archive: %+v, of the file: %+v", window.Series, whole.Series)
	}
	for _, bad := range [][]string{
		{"report", dir, "--from", "yesterday"},
		{"report", dir, "--series", "[a-"},
		{"report", dir, "--from", "-1h", "--until", "-2h"},
		{"report", dir, "--until", "-1h", "--to", "-2h"},
		{"record", trace, "-o", lsr, "--archive", dir},
	} {
		if r := run(t, "", bad...); r.code != 2 {
			t.Errorf("%v: exit %d, want a usage error: %s", bad, r.code, r.stderr)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "latscope.db")); err != nil || st.Size() == 0 {
		t.Fatalf("no database: %v", err)
	}
}

// TestRecordArchiveLive records a live probe into the archive and reads the
// last minute back as a heat map image.
func TestRecordArchiveLive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	scratch := t.TempDir()
	if r := run(t, "", "record", "iotest:"+scratch, "--archive", dir, "--duration", "3s"); r.code != 0 {
		t.Fatalf("record iotest --archive: exit %d: %s", r.code, r.stderr)
	}
	html := filepath.Join(t.TempDir(), "x.html")
	if r := run(t, "", "heatmap", dir, "--from", "-1m", "-o", html); r.code != 0 {
		t.Fatalf("heatmap of the archive: exit %d: %s", r.code, r.stderr)
	}
	rep := reportJSON(t, dir, "--from", time.Now().Add(-time.Minute).Format(time.RFC3339))
	if len(rep.Series) == 0 || rep.Series[0].Count == 0 {
		t.Fatalf("nothing archived: %+v", rep)
	}
}

// TestArchiveKeepsGaps archives a recording with a gap and an observed
// window without events: the heat map of the archive draws them as the
// recording's does (blank and '.').
func TestArchiveKeepsGaps(t *testing.T) {
	tmp := t.TempDir()
	lsr := filepath.Join(tmp, "gaps.lsr")
	f, err := os.Create(lsr)
	if err != nil {
		t.Fatal(err)
	}
	w, err := recording.NewWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	for i := 0; i < 12; i++ {
		iv := stream.Interval{Source: "db", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second}
		switch {
		case i >= 4 && i < 7:
			iv.Gap = true
		case i == 9: // observed, no events
		default:
			h := &hist.Histogram{Unit: hist.Millisecond, Offset: 2, Counts: []float64{float64(10 + i), 3}, Sum: float64(50 + i)}
			iv.Series = []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}
		}
		if err := w.Write(iv); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f.Close()
	dir := filepath.Join(tmp, "data")
	if r := run(t, "", "record", lsr, "--archive", dir); r.code != 0 {
		t.Fatalf("record --archive: %s", r.stderr)
	}
	want := run(t, "", "heatmap", lsr, "--once", "--plain")
	got := run(t, "", "heatmap", dir, "--once", "--plain")
	if got.code != 0 || got.stdout != want.stdout {
		t.Fatalf("heat map of the archive:\n%s\nof the recording:\n%s", got.stdout, want.stdout)
	}
	wantReport := run(t, "", "report", lsr, "--intervals")
	if gotReport := run(t, "", "report", dir, "--intervals"); gotReport.stdout != wantReport.stdout {
		t.Fatalf("report of the archive:\n%s\nof the recording:\n%s", gotReport.stdout, wantReport.stdout)
	}
	t.Logf("\n%s", got.stdout)
}
