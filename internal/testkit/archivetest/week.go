// Package archivetest builds archives for benchmarks: a week of one
// series at 1 s, as latscope serve would have recorded it.
package archivetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// WeekStart is where the week begins; WeekSeconds its one-second windows.
var WeekStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const WeekSeconds = 7 * 24 * 3600

// WeekEnd is the end of the week's last window.
func WeekEnd() time.Time { return WeekStart.Add(WeekSeconds * time.Second) }

// WeekSource and WeekEvent name the week's one series (series id 1).
const (
	WeekSource = "db01"
	WeekEvent  = "db file sequential read"
)

// Week returns the data directory of an archive holding 7 days of one
// series at 1 s (604 800 windows of PyLatencyMap's real histograms in
// turn) with its 1-minute tier built as latscope serve maintains it. It
// is built once (about 15 s) and kept in $TMPDIR/latscope-bench-7d; open
// it read-only, or copy it (CopyWeek) to write.
func Week(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), "latscope-bench-7d")
	if _, err := os.Stat(dir); err != nil {
		build := dir + ".building"
		os.RemoveAll(build)
		buildWeek(tb, build)
		if err := os.Rename(build, dir); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// CopyWeek copies the week's database into dir (a data directory to
// serve).
func CopyWeek(tb testing.TB, dir string) {
	tb.Helper()
	src := filepath.Join(Week(tb), "latscope.db")
	b, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "latscope.db"), b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

func buildWeek(tb testing.TB, dir string) {
	ctx := context.Background()
	var hs []*hist.Histogram
	for _, iv := range sourcetest.ReadShared(tb, pylatencymap.Format(), "pylatencymap/example_latency_data.txt", source.Options{}) {
		for _, s := range iv.Series {
			if s.Hist.Count() > 0 {
				hs = append(hs, s.Hist)
			}
		}
	}
	a, err := archive.Open(dir, archive.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer a.Close()
	key := stream.Key{Event: WeekEvent}
	batch := make([]stream.Interval, 0, 3600)
	for i := range WeekSeconds {
		batch = append(batch, stream.Interval{Source: WeekSource, Start: WeekStart.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: key, Hist: hs[i%len(hs)]}}})
		if len(batch) == cap(batch) || i == WeekSeconds-1 {
			if err := a.WriteBatch(ctx, batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	// As serve maintains it just after the last window: the 1-minute tier
	// is built, and raw data is kept for 7 days.
	if err := a.Maintain(ctx, WeekEnd().Add(time.Minute)); err != nil {
		tb.Fatal(err)
	}
}
